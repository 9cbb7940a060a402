// The convlab CLI as a user runs it: exit codes, one-line errors, .npy in/out.
#include <gtest/gtest.h>

#include "tests/support/cli_fixture.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "algorithms/execute.hpp"
#include "core/json_value.hpp"
#include "core/npy.hpp"
#include "core/problem.hpp"

namespace convlab {
namespace {

using Result = testing::CliResult;
class Cli : public testing::CliTest {};

TEST_F(Cli, HelpEverywhere) {
  EXPECT_EQ(run("--help").code, 0);
  for (const char* c : {"algos", "problem", "conv", "demo"}) {
    const Result r = run(std::string(c) + " --help");
    EXPECT_EQ(r.code, 0) << c;
    EXPECT_NE(r.out.find("usage: convlab " + std::string(c)), std::string::npos) << c;
  }
  EXPECT_EQ(run("").code, 2);
}

// Every option states its default once: the help's own "(default: X)" is the only one.
TEST_F(Cli, HelpStatesEachDefaultOnce) {
  for (const char* c : {"algos", "problem", "conv", "peak", "demo", "tune", "cache", "layers", "train", "report", "html"}) {
    const Result r = run(std::string(c) + " --help");
    ASSERT_EQ(r.code, 0) << c;
    std::string all = r.out;
    for (char& ch : all)
      if (ch == '\n') ch = ' ';
    // One option's text runs to the next "  --"; none holds "(default:" twice.
    size_t at = 0;
    while ((at = all.find("  --", at)) != std::string::npos) {
      const size_t next = all.find("  --", at + 4);
      const std::string opt = all.substr(at, next == std::string::npos ? std::string::npos : next - at);
      const size_t first = opt.find("(default:");
      EXPECT_TRUE(first == std::string::npos || opt.find("(default:", first + 1) == std::string::npos)
          << c << ": " << opt;
      at += 4;
    }
  }
}

TEST_F(Cli, AlgosListsReference) {
  Result r = run("algos");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("cpu.reference"), std::string::npos);
  r = run("algos --json");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("\"name\": \"cpu.reference\""), std::string::npos);
  EXPECT_EQ(r.out.front(), '[');
}

TEST_F(Cli, AlgosShowsMath) {
  const Result r = run("algos");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find(" math "), std::string::npos) << r.out;
  const Result j = run("algos --json");
  EXPECT_NE(j.out.find("\"math\": \"fp32\""), std::string::npos);
#if CONVLAB_HAS_CUDA
  EXPECT_NE(r.out.find("cudnn.implicit_precomp_gemm_tf32"), std::string::npos) << r.out;
  EXPECT_NE(j.out.find("\"math\": \"tf32\""), std::string::npos);
#endif
}

// `convlab layers` JSON: the vendor array beside the rows.
TEST_F(Cli, LayersJsonHasVendorArray) {
  const Result r = run("layers mb1ic8ih8oc8kh3ph1 --dir fwd --threads 1 --max-seconds 0.02 --json " + path("l.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  vendor "), std::string::npos) << r.out;
  std::string err;
  const auto v = json::parse(slurp(path("l.json")), &err);
  ASSERT_TRUE(v) << err;
  ASSERT_TRUE(v->get("rows") && !v->get("rows")->arr.empty());
  const json::Value* vendor = v->get("vendor");
  ASSERT_TRUE(vendor && vendor->arr.size() == 1u);
  const json::Value& e = vendor->arr[0];
  EXPECT_EQ(e.get("layer")->str, v->get("rows")->arr[0].get("layer")->str);
  EXPECT_EQ(e.get("direction")->str, "fwd");
  EXPECT_EQ(e.get("threads")->num, 1);
#ifdef CONVLAB_HAS_ONEDNN
  EXPECT_EQ(e.get("status")->str, "ok");
  EXPECT_EQ(e.get("source")->str, "onednn_auto");
  EXPECT_FALSE(e.get("implementation")->str.empty());
  EXPECT_EQ(e.get("time_ms")->type, json::Value::Type::number);
#else
  EXPECT_EQ(e.get("source")->type, json::Value::Type::null);
  EXPECT_NE(e.get("status")->str.find("oneDNN not built"), std::string::npos);
#endif
}

TEST_F(Cli, ProblemPrintsCanonical) {
  const Result r = run("problem 'g2mb32ic96ih27oc256oh27kh5ph2n\"alexnet:conv2\"' alexnet.conv1");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("g2mb32ic96ih27oc256oh27kh5ph2n\"alexnet:conv2\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mb32ic3ih227oc96oh55kh11sh4"), std::string::npos) << r.out;
}

TEST_F(Cli, ConvCheckPasses) {
  for (const char* dir : {"fwd", "bwd-data", "bwd-filter"}) {
    const Result r = run(std::string("conv g2mb2ic4ih7oc6kh3ph1sh2 --algo cpu.reference --check --reps 2 --dir ") + dir);
    EXPECT_EQ(r.code, 0) << dir << r.err;
    EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  }
}

TEST_F(Cli, ConvNpyInOut) {
  const ConvProblem p = parse_problem("mb2ic3ih6oc4kh3ph1");
  ConvData d = ConvData::random(p, 77);
  write_npy(path("x.npy"), d.src);
  write_npy(path("w.npy"), d.wei);
  const Result r = run("conv mb2ic3ih6oc4kh3ph1 --algo cpu.reference --x " + path("x.npy") + " --w " + path("w.npy") +
                       " --out " + path("y.npy") + " --check");
  ASSERT_EQ(r.code, 0) << r.err;
  const Tensor y = read_npy(path("y.npy"));
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 4, 6, 6}));
  const Reference ref = compute_reference(p, Direction::fwd, d);
  for (int64_t i = 0; i < y.size(); ++i) ASSERT_EQ(y.data()[i], float(ref.value[size_t(i)]));

  // bwd-filter from files: x and dy in, diff_wei out
  write_npy(path("dy.npy"), d.dst);
  const Result b = run("conv mb2ic3ih6oc4kh3ph1 --algo cpu.reference --dir bwd-filter --x " + path("x.npy") +
                       " --dy " + path("dy.npy") + " --out " + path("dw.npy"));
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(read_npy(path("dw.npy")).shape, (std::vector<int64_t>{4, 3, 3, 3}));
}

TEST_F(Cli, BadProblemStrings) {
  expect_one_line_error("conv mb1ic3ih5oc4kh3xx2 --algo cpu.reference", "unknown key 'xx'");
  expect_one_line_error("conv g2mb1ic3ih5oc4kh3 --algo cpu.reference", "does not divide");
  expect_one_line_error("conv mb1ic3ih2oc4kh5 --algo cpu.reference", "empty output");
  expect_one_line_error("conv mb0ic3ih5oc4kh3 --algo cpu.reference", "mb must be positive");
  expect_one_line_error("conv alexnet.conv9 --algo cpu.reference", "unknown layer");
  expect_one_line_error("problem mb1ic3", "missing");
}

TEST_F(Cli, BadArguments) {
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo cpu.nope", "unknown algorithm 'cpu.nope'");
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo cpu.reference --dir sideways", "unknown direction");
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo cpu.reference --reps abc", "expects an integer");
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo cpu.reference --reps 0", "must be in");
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo", "needs a value");
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo cpu.reference --bogus 1", "unknown option '--bogus'");
  expect_one_line_error("conv mb1ic3ih5oc4kh3", "--algo NAME is required");
  expect_one_line_error("conv", "missing PROBLEM");
  expect_one_line_error("nosuchcommand", "unknown command");
}

TEST_F(Cli, BadNpyFiles) {
  std::ofstream(path("junk.npy")) << "this is not numpy";
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo cpu.reference --x " + path("junk.npy"), "bad magic");
  Tensor wrong({1, 3, 5, 6});
  write_npy(path("wrong.npy"), wrong);
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo cpu.reference --x " + path("wrong.npy"), "has shape (1, 3, 5, 6)");
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo cpu.reference --x " + path("missing.npy"), "cannot open");
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo cpu.reference --dy " + path("wrong.npy"), "not an input of fwd");
  // truncated copy of a valid file
  Tensor ok({1, 3, 5, 5});
  write_npy(path("ok.npy"), ok);
  std::filesystem::resize_file(path("ok.npy"), std::filesystem::file_size(path("ok.npy")) - 8);
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo cpu.reference --x " + path("ok.npy"), "truncated");
}

TEST_F(Cli, OutputToMissingDirectoryFailsCleanly) {
  // Checked before the work.
  expect_one_line_error("conv mb1ic3ih5oc4kh3 --algo cpu.reference --out " + path("nodir/y.npy"), "does not exist");
  EXPECT_FALSE(std::filesystem::exists(path("nodir")));
}

}  // namespace
}  // namespace convlab

namespace convlab {
namespace {

// Sizes are printed one way in every command: binary units with their name (KiB, MiB, GiB), never raw bytes in one
// command and decimal "MB" glued to the number in another.
TEST_F(Cli, SizesArePrintedOneWay) {
  const Result p = run("problem alexnet.conv1 --batch 2");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find(" MiB"), std::string::npos) << p.out;
  const Result c = run("conv alexnet.conv1 --batch 1 --algo cpu.im2col_gemm --reps 1");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("workspace  "), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find(" bytes\n"), std::string::npos) << c.out;
  const Result l = run("layers alexnet.conv1 --batch 1 --dir fwd --threads 1");
  ASSERT_EQ(l.code, 0) << l.err;
  EXPECT_EQ(l.out.find("MB "), std::string::npos) << l.out;
  EXPECT_NE(l.out.find(" MiB"), std::string::npos) << l.out;
}

// `convlab layers --device cuda --model h100`: modelled rows, labelled so in the text and the JSON, with no GPU.
TEST_F(Cli, LayersModelPricesTheEmulatedKernelsAndSaysSo) {
  const char* moved = std::getenv("CONVLAB_BINARY_DIR");
  const std::string counter = std::string(moved && *moved ? moved : CONVLAB_BINARY_DIR) + "/simt_counts";
  if (::access(counter.c_str(), X_OK) != 0) {
    const Result r = run("layers mb1ic4ih6oc4oh6kh3ph1 --device cuda --model h100 --dir fwd");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("simt_counts"), std::string::npos) << r.err;
    GTEST_SKIP() << "this build has no counting emulator (simt_counts): only its absence was checked";
  }
  const Result r = run("layers mb1ic4ih6oc4oh6kh3ph1 --device cuda --model h100 --dir fwd,bwd-data --json " +
                       path("m.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("MODELLED"), std::string::npos) << r.out;
  std::string err;
  const auto v = json::parse(slurp(path("m.json")), &err);
  ASSERT_TRUE(v) << err;
  EXPECT_NE(v->get("fingerprint")->str.find("modelled"), std::string::npos);
  int modelled = 0;
  for (const json::Value& row : v->get("rows")->arr) {
    const std::string algo = row.get("algorithm")->str, status = row.get("status")->str;
    EXPECT_TRUE(algo.rfind("cuda.", 0) == 0 || algo.rfind("cudnn.", 0) == 0) << algo;
    EXPECT_NE(status, "ok") << algo << ": nothing is measured";
    if (status == "modelled") {
      ++modelled;
      EXPECT_EQ(algo.rfind("cuda.", 0), 0u) << algo;
      EXPECT_GT(row.get("time_ms")->num, 0) << algo;
    }
    if (algo.rfind("cudnn.", 0) == 0) {
      EXPECT_TRUE(status == "not modelled" || status == "unsupported") << algo;
    }
  }
  EXPECT_GE(modelled, 4);  // implicit GEMM, direct, im2col, Winograd in both directions at least
}

TEST_F(Cli, LayersModelRefusesWhatItCannotPrice) {
  Result r = run("layers mb1ic4ih6oc4oh6kh3ph1 --model h100");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--device cuda"), std::string::npos) << r.err;
  r = run("layers mb1ic4ih6oc4oh6kh3ph1 --device cuda --model a100");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("h100, h200"), std::string::npos) << r.err;
  r = run("layers mb1ic4ih6oc4oh6kh3ph1 --device cuda --model h100 --cache " + path("c.jsonl"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--cache"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace convlab
