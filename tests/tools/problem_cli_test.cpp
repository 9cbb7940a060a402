// Problems as the CLI reads them: sizes that wrap
// past 32 bits, misleading or unsafe messages, problem files and oneDNN
// verbose logs on every command that takes PROBLEM...
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "core/json_value.hpp"
#include "tests/support/cli_fixture.hpp"

namespace convlab {
namespace {

using Result = testing::CliResult;
class ProblemCli : public testing::CliTest {
 protected:
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

const std::string kLogLine =
    "onednn_verbose,exec,cpu,convolution,jit:avx2,backward_data,src_f32::blocked:abcd:f0 wei_f32::blocked:abcd:f0 "
    "bia_undef::undef::f0 dst_f32::blocked:abcd:f0,,alg:convolution_direct,"
    "mb1_ic2oc3_ih6oh6kh3sh1dh0ph1_iw6ow6kw3sw1dw0pw1,0.05";

TEST_F(ProblemCli, WrappedSizesAreRejectedEverywhere) {
  for (const char* p : {"mb1ic4ih8oc4kh3ph2147483647", "mb1ic4ih8oc4kh3pw2147483647", "mb1ic4ih8oc4kh3ph2147483646",
                        "mb1ic4ih1000oc4kh3ph2147483200"}) {
    expect_one_line_error(std::string("problem ") + p, "does not fit in 32 bits");
    for (const char* algo : {"cpu.direct", "cpu.fft", "cpu.im2col_gemm"})
      expect_one_line_error(std::string("conv ") + p + " --algo " + algo + " --dir bwd-data", "does not fit in 32 bits");
    expect_one_line_error(std::string("tune ") + p + " --mode find --quiet", "does not fit in 32 bits");
  }
}

TEST_F(ProblemCli, MessagesSayWhatTheTextIsNot) {
  expect_one_line_error("problem nosuchnet",
                        "'nosuchnet' is neither a network (alexnet, alexnet-owt, vgg16, resnet50, mobilenet_v2, densenet121, tiny), a layer id");
  expect_one_line_error("tune nosuchnet --mode get", "is neither a network");
  expect_one_line_error("problem alexnet.conv9", "alexnet has conv1, conv2, conv3, conv4, conv5");
  expect_one_line_error("problem mb1ic3ih5oc4kh3n", "empty name");
  // Control characters are never printed raw (an escape sequence would
  // rewrite the user's terminal).
  for (const char* arg : {"$'mb1ic3ih5oc4kh3n\"a\\x1b[2Jb\"'", "$'no\\x1b[2Jnet'", "$'mb1ic3\\x1b[2Jih5oc4kh3'"}) {
    const Result r = run(std::string("problem ") + arg);
    EXPECT_EQ(r.code, 2) << arg;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\\x1b"), std::string::npos) << r.err;
  }
}

TEST_F(ProblemCli, ProblemFilesAndStdin) {
  const std::string f = write("shapes.txt",
                              "# my layers\n"
                              "mb1ic3ih5oc4kh3n\"first\"\n"
                              "\n"
                              "alexnet.conv3   # a layer id\n"
                              "mb1ic3ih5oc4kh3n\"first\"\n");
  const Result r = run("problem @" + f);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("mb1ic3ih5oc4oh3kh3n\"first\""), std::string::npos) << r.out;
  const Result s = run("problem @- < " + f);
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_EQ(s.out, r.out);
  EXPECT_NE(r.out.find("x2"), std::string::npos) << r.out;  // the repeated line is counted
  EXPECT_NE(r.out.find("mb32ic256ih13oc384oh13kh3ph1n\"alexnet.conv3\""), std::string::npos) << r.out;
  // A bad line names file and line.
  expect_one_line_error("problem @" + write("bad.txt", "mb1ic3ih5oc4kh3\nmb1ic3ih5oc4kh3yy2\n"), "bad.txt:2: problem");
}

// benchdnn's 1-D strings and asymmetric padding as benchdnn reads them (a 1-D
// string was printed as a 100x100 layer; ih5oh8kh3ph3 was "oh8 does not follow").
TEST_F(ProblemCli, OneDimensionalAndAsymmetricProblems) {
  const Result r = run("problem 'mb1ic32iw100oc32ow98kw3pw0sw1' 'g1ic16oc16_ih5oh8kh3ph3'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("mb1ic32iw100oc32ow98kw3 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("P=1 Q=98"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mb2ic16ih5oc16oh8kh3ph3 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("P=8 Q=8"), std::string::npos) << r.out;
  expect_one_line_error("problem mb1ic3ih5oc4oh2kh3ph1", "oh2 leaves input rows unread");
}

// oneDNN's shape file with 3-D lines: each one a note naming FILE:LINE, the
// 1-D and 2-D problems all printed, exit 0.
TEST_F(ProblemCli, BenchdnnShapeFileReadPastLinesItCannotRun) {
  const std::string file = std::string(CONVLAB_SOURCE_DIR) + "/tests/data/benchdnn/shapes_basic";
  const Result r = run("problem @" + file);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 36) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 18) << r.err;
  EXPECT_NE(r.err.find("note: " + file + ":54: skipped: problem 'ic3oc16_id5od5kd3pd1_n\"conv_basic_3d:1st\"': 3-D "
                       "convolutions ('id') are not supported\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("mb2ic16ih5oc16oh8kh3ph3n\"conv_basic_2d:gemm\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("g17mb2ic17iw8oc17ow4kw3sw2pw1n\"conv_basic_1d:depthwise_stride_tail\""), std::string::npos)
      << r.out;
  // A file with nothing convlab can run is bad input: one line, exit 2.
  expect_one_line_error("problem @" + std::string(CONVLAB_SOURCE_DIR) + "/tests/data/benchdnn/shapes_large_conv",
                        "nothing in it can be run here (6 lines skipped; first: ");
}

TEST_F(ProblemCli, BadProblemFilesAreOneLine) {
  expect_one_line_error("problem @" + path("missing.txt"), "cannot open");
  expect_one_line_error("problem @" + dir_.string(), "is a folder");
  expect_one_line_error("problem @/dev/zero", "is a device, not a regular file");
  expect_one_line_error("tune @/dev/zero --mode get", "is a device, not a regular file");
  expect_one_line_error("problem @" + write("huge.txt", std::string(1 << 20, 'm')), "line longer than");
  expect_one_line_error("problem @" + write("bin.dat", std::string("\x7f" "ELF\x02\x01\x01\x00\x00", 9)), "binary data");
  expect_one_line_error("layers @" + write("empty.txt", "# nothing\n"), "no problems");
  expect_one_line_error("problem @- @- < /dev/null", "given twice");
}

TEST_F(ProblemCli, VerboseLogOnStdinGivesProblemAndDirection) {
  const std::string log = write("log.txt", "model: starting\nonednn_verbose,info,oneDNN v2.6.3 (commit N/A)\n" + kLogLine +
                                               "\n" + kLogLine + "\nmodel: done\n");
  const Result p = run("problem @- < " + log);
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("mb1ic2ih6oc3oh6kh3ph1"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("bwd-data  x2"), std::string::npos) << p.out;
  EXPECT_NE(p.err.find("note: <stdin>: oneDNN verbose log: 2 convolution executions, 1 distinct"), std::string::npos)
      << p.err;
  // tune takes the line's direction when --dir is not given ...
  const Result t = run("tune @- --mode get --json --quiet < " + log);
  ASSERT_EQ(t.code, 0) << t.err;
  const auto j = json::parse(t.out);
  ASSERT_TRUE(j && j->get("pairs")) << t.out;
  ASSERT_EQ(j->get("pairs")->arr.size(), 1u) << t.out;
  EXPECT_EQ(j->get("pairs")->arr[0].get("dir")->str, "bwd-data");
  // ... and every asked direction when it is.
  const Result all = run("tune @- --mode get --json --quiet --dir all < " + log);
  ASSERT_EQ(all.code, 0) << all.err;
  const auto ja = json::parse(all.out);
  ASSERT_TRUE(ja && ja->get("pairs")) << all.out;
  EXPECT_EQ(ja->get("pairs")->arr.size(), 3u);
}

TEST_F(ProblemCli, LayersUsesVerboseDirectionAndBatchForDottedNames) {
  const std::string log = write("log.txt", kLogLine + "\n");
  const Result r = run("layers @" + log + " --json " + path("a.json") + " --max-seconds 0.001");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(slurp(path("a.json")));
  ASSERT_TRUE(j && j->get("rows")) << slurp(path("a.json"));
  ASSERT_GT(j->get("rows")->arr.size(), 0u);
  for (const auto& row : j->get("rows")->arr) {
    ASSERT_TRUE(row.get("direction"));
    EXPECT_EQ(row.get("direction")->str, "bwd-data");
  }
  // --batch applies to a problem string even when its name has a dot.
  const Result b = run("layers 'mb1ic2ih6oc3kh3ph1n\"my.layer\"' --dir fwd --batch 3 --json " + path("b.json") +
                       " --max-seconds 0.001");
  ASSERT_EQ(b.code, 0) << b.err;
  const auto jb = json::parse(slurp(path("b.json")));
  ASSERT_TRUE(jb && jb->get("rows")) << slurp(path("b.json"));
  ASSERT_GT(jb->get("rows")->arr.size(), 0u);
  EXPECT_EQ(jb->get("rows")->arr[0].get("problem")->str.substr(0, 3), "mb3") << slurp(path("b.json"));
  EXPECT_EQ(jb->get("rows")->arr[0].get("layer")->str, "my.layer");
}

}  // namespace
}  // namespace convlab
