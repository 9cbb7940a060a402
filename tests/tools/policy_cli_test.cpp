// `convlab train --policy` as a user writes it: every
// documented form reaches the trainer intact, a fixed algorithm that cannot run
// here is skipped with its reason and never replaced under its name, and the
// report names the algorithm that actually ran in every layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "core/json_value.hpp"
#include "core/device.hpp"
#include "core/problem.hpp"
#include "tests/support/cli_fixture.hpp"

namespace convlab {
namespace {

using Result = testing::CliResult;
class PolicyCli : public testing::CliTest {
 protected:

  // The "policies" array of a train JSON file.
  std::vector<json::Value> policies(const std::string& file) const {
    std::string err;
    const auto doc = json::parse(slurp(file), &err);
    EXPECT_TRUE(doc.has_value()) << err;
    if (!doc || !doc->get("policies")) return {};
    return doc->get("policies")->arr;
  }
  static std::vector<std::string> names(const std::vector<json::Value>& ps) {
    std::vector<std::string> out;
    for (const auto& p : ps) out.push_back(p.get("policy")->str);
    return out;
  }
};

// Item 7: constraints, ';'-lists, repeated --policy, paths with commas, the old comma list.
TEST_F(PolicyCli, EveryDocumentedFormReachesTheTrainer) {
  const std::string cache = path("a,b.jsonl");  // a cache path with a comma
  { std::ofstream touch(cache); }                // get:F must exist up front; cache:F then fills it
  const Result r = run(std::string(kTiny) +
                       "--policy 'default,deterministic;find,max-error=1e-3' --policy 'find,deterministic,tf32' "
                       "--policy 'get,workspace=64M' --policy 'cache:" + cache + "' --policy 'get:" + cache +
                       ",workspace=1M;' --json " + path("t.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto ps = policies(path("t.json"));
  const std::vector<std::string> want = {"default,deterministic", "find,max-error=0.001", "find,deterministic,tf32",
                                         "get,workspace=67108864", "cache:" + cache,
                                         "get:" + cache + ",workspace=1048576"};
  EXPECT_EQ(names(ps), want);
  for (const auto& p : ps) EXPECT_TRUE(p.get("ran")->b) << p.get("policy")->str;
  EXPECT_GT(std::filesystem::file_size(cache), 0u) << "cache:PATH with a comma wrote somewhere else";

  // The plain comma list of simple policies still means a list.
  const Result legacy = run(std::string(kTiny) + "--policy default,get,fixed:cpu.direct --json " + path("l.json"));
  ASSERT_EQ(legacy.code, 0) << legacy.err;
  EXPECT_EQ(names(policies(path("l.json"))), (std::vector<std::string>{"default", "get", "fixed:cpu.direct"}));
}

TEST_F(PolicyCli, BadOrAmbiguousPoliciesAreOneLineErrorsBeforeAnyWork) {
  expect_one_line_error(std::string(kTiny) + "--policy 'find,deterministic,nope'", "unknown policy");
  expect_one_line_error(std::string(kTiny) + "--policy 'default,find,deterministic'", "separate policies with ';'");
  expect_one_line_error(std::string(kTiny) + "--policy 'find,max-error=abc'", "max-error=abc");
  expect_one_line_error(std::string(kTiny) + "--policy 'find,workspace=12Q'", "12Q");
  expect_one_line_error(std::string(kTiny) + "--policy 'default,,get'", "empty policy");
  expect_one_line_error(std::string(kTiny) + "--policy ';'", "empty policy list");
  expect_one_line_error(std::string(kTiny) + "--policy fixed:cpu.nosuch", "unknown algorithm 'cpu.nosuch'");
  // One policy with a path, or a list? Refused, with both spellings offered.
  expect_one_line_error(std::string(kTiny) + "--policy 'cache:" + path("c.jsonl") + ",find'", "ambiguous");
  EXPECT_FALSE(std::filesystem::exists(path("c.jsonl,find")));
  // Control characters in a policy name are escaped, and the message stays one line.
  const Result r = run(std::string(kTiny) + "--policy \"$(printf 'fixed:a\\nb\\033[31m')\"");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown algorithm 'a\\x0ab\\x1b[31m'"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// Item 4: a fixed algorithm of the other device (or unavailable here) is never run under its name.
TEST_F(PolicyCli, FixedAlgorithmThatCannotRunIsSkippedNotSubstituted) {
  // Alone: nothing can run, one line, exit 2, before any work (whether or not a GPU exists: the run is on the CPU).
  for (const char* algo : {"cuda.direct", "cudnn.fft"}) {
    if (!find_algorithm(algo)) continue;
    expect_one_line_error(std::string(kTiny) + "--policy fixed:" + algo, std::string(algo) + " runs on cuda");
  }
  // Beside a policy that runs: recorded as skipped with the reason in stdout, --md and --json; no row ran under it.
  const Result r = run(std::string(kTiny) + "--policy 'default;fixed:cuda.direct' --json " + path("t.json") + " --md " +
                       path("t.md") + " --csv " + path("t.csv"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto ps = policies(path("t.json"));
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_TRUE(ps[0].get("ran")->b);
  EXPECT_FALSE(ps[1].get("ran")->b);
  EXPECT_NE(ps[1].get("skipped")->str.find("cuda.direct runs on cuda"), std::string::npos);
  for (const std::string& md : {r.out, slurp(path("t.md"))})
    EXPECT_NE(md.find("| fixed:cuda.direct | skipped: cuda.direct runs on cuda"), std::string::npos) << md;
  EXPECT_EQ(slurp(path("t.csv")).find("fixed:cuda.direct"), std::string::npos);
  EXPECT_NE(r.err.find("policy fixed:cuda.direct: skipped (cuda.direct runs on cuda"), std::string::npos) << r.err;

  // report refuses it for the CPU half before any work, and creates no results folder.
  expect_one_line_error("report --net tiny --policy fixed:cuda.direct --out " + path("r"), "cuda.direct runs on cuda");
  EXPECT_FALSE(std::filesystem::exists(path("r")));

  // --device cuda with a CPU algorithm: same rule the other way round (needs a GPU to get that far).
  if (cuda_info().available)
    expect_one_line_error(
        "train tiny --device cuda --batch 1 --iters 1 --warmup 0 --classes 4 --policy fixed:cpu.direct",
        "cpu.direct runs on cpu");
}

// Every policy skipped while choosing (nothing meets its constraints): the run is reported, exit 1, one error line.
TEST_F(PolicyCli, EveryPolicySkippedWhileChoosingExitsOne) {
  const Result r = run(std::string(kTiny) + "--policy 'find,max-error=1e-30' --json " + path("t.json"));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("No policy could run"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("\nerror: no policy could run"), std::string::npos) << r.err;
  size_t error_lines = 0;
  for (size_t at = r.err.find("error:"); at != std::string::npos; at = r.err.find("error:", at + 1)) ++error_lines;
  EXPECT_EQ(error_lines, 1u) << r.err;
  const auto ps = policies(path("t.json"));
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_FALSE(ps[0].get("ran")->b);
  EXPECT_NE(ps[0].get("skipped")->str.find("no algorithm meets the constraints"), std::string::npos);
}

// Item 4: where fixed:NAME does not support a layer it falls back to default there, and the
// report names the algorithm that ran in each layer and direction, never NAME.
TEST_F(PolicyCli, FixedFallbackNamesTheAlgorithmThatRan) {
  // tiny's two conv layers at batch 1 (net/net.cpp).
  const ConvProblem conv[2] = {parse_problem("mb1ic3ih16oc8oh16kh3ph1"), parse_problem("mb1g2ic8ih7oc16oh7kh3ph1")};
  const Algorithm* partial = nullptr;  // an available CPU algorithm that supports some but not all (layer, direction)
  for (const Algorithm* a : registry()) {
    if (a->device() != DeviceKind::cpu || a->family() == "reference" || !a->unavailable_reason().empty()) continue;
    int n = 0;
    for (const auto& p : conv)
      for (Direction d : kAllDirections) n += bool(a->supports(p, d));
    if (n > 0 && n < 6) {
      partial = a;
      break;
    }
  }
  if (!partial) GTEST_SKIP() << "every available CPU algorithm supports all or none of tiny's layers here";
  const std::string name(partial->name());
  const Result r = run(std::string(kTiny) + "--policy fixed:" + name + " --json " + path("t.json"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto ps = policies(path("t.json"));
  ASSERT_EQ(ps.size(), 1u);
  int li = 0, fell_back = 0;
  for (const auto& layer : ps[0].get("layers")->arr) {
    if (layer.get("kind")->str != "conv") continue;
    ASSERT_LT(li, 2);
    for (Direction d : kAllDirections) {
      const json::Value& a = *layer.get("algos")->get(std::string(to_string(d)));
      const bool supported = bool(partial->supports(conv[li], d));
      // conv1's bwd-data is not computed (no --first-layer-grad): default's choice, whatever the policy.
      if (li == 0 && d == Direction::bwd_data) continue;
      if (supported) {
        EXPECT_EQ(a.get("algo")->str, name) << layer.get("name")->str << " " << to_string(d);
      } else {
        ++fell_back;
        EXPECT_NE(a.get("algo")->str, name) << layer.get("name")->str << " " << to_string(d);
        EXPECT_TRUE(get_algorithm(a.get("algo")->str).supports(conv[li], d)) << a.get("algo")->str;
        EXPECT_NE(a.get("why")->str.find("unsupported"), std::string::npos) << a.get("why")->str;
        // The Markdown table names the same algorithm.
        EXPECT_NE(r.out.find("| " + layer.get("name")->str + " | " + std::string(to_string(d)) + " | " +
                             a.get("algo")->str + " |"),
                  std::string::npos)
            << r.out;
      }
    }
    ++li;
  }
  EXPECT_EQ(li, 2);
  if (fell_back == 0) GTEST_SKIP() << name << " is unsupported only where the policy does not choose (conv1 bwd-data)";
}

}  // namespace
}  // namespace convlab
