// Problem files (benchdnn-style lists and oneDNN verbose
// logs) and the one expansion of NET|PROBLEM|@FILE arguments.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/layers.hpp"
#include "core/problem_list.hpp"

namespace convlab {
namespace {

// Real oneDNN 2.6 output (ONEDNN_VERBOSE=1, then =2 with ONEDNN_VERBOSE_TIMESTAMP=1).
const char* kV26Fwd =
    "onednn_verbose,exec,cpu,convolution,jit:avx512_core,forward_training,src_f32::blocked:abcd:f0 "
    "wei_f32::blocked:Acdb16a:f0 bia_undef::undef::f0 dst_f32::blocked:aBcd16b:f0,,alg:convolution_direct,"
    "mb2_ic3oc96_ih227oh55kh11sh4dh0ph0_iw227ow55kw11sw4dw0pw0,3.00488";
const char* kV26Groups =
    "onednn_verbose,exec,cpu,convolution,jit:avx512_core,forward_training,src_f32::blocked:aBcd16b:f0 "
    "wei_f32::blocked:aBCde16c16b:f0 bia_undef::undef::f0 dst_f32::blocked:aBcd16b:f0,,alg:convolution_direct,"
    "g2mb2_ic96oc256_ih27oh27kh5sh1dh0ph2_iw27ow27kw5sw1dw0pw2,4.16113";
const char* kV26BwdData =
    "onednn_verbose,exec,cpu,convolution,jit:avx512_core,backward_data,src_f32::blocked:aBcd16b:f0 "
    "wei_f32::blocked:ABcd16a16b:f0 bia_undef::undef::f0 dst_f32::blocked:aBcd16b:f0,,alg:convolution_direct,"
    "mb2_ic16oc32_ih13oh13kh3sh1dh0ph1_iw13ow13kw3sw1dw0pw1,0.0668945";
const char* kV26Timestamp =
    "onednn_verbose,1795416250392.580078,exec,cpu,convolution,jit:avx512_core,backward_weights,"
    "src_f32::blocked:aBcd16b:f0 wei_f32::blocked:ABcd16b16a:f0 bia_undef::undef::f0 dst_f32::blocked:aBcd16b:f0,,"
    "alg:convolution_direct,mb2_ic16oc32_ih13oh9kh3sh1dh1ph0_iw13ow9kw3sw1dw1pw0,4.13501";
// oneDNN 3.x: the "primitive" (and from 3.4 the "v1") field, attributes, timestamps.
const char* kV3 =
    "onednn_verbose,v1,1700000000.123,primitive,exec,cpu,convolution,brg:avx2,forward_inference,"
    "src_f32::blocked:acdb::f0 wei_f32::blocked:Acdb8a::f0 bia_f32::blocked:a::f0 dst_f32::blocked:acdb::f0,"
    "attr-scratchpad:user attr-post-ops:eltwise_relu,alg:convolution_direct,"
    "mb1_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1,0.25";
// DNNL 1.x prefix.
const char* kDnnl =
    "dnnl_verbose,exec,cpu,convolution,gemm:jit,forward_training,src_f32::blocked:abcd:f0 "
    "wei_f32::blocked:abcd:f0 bia_undef::undef::f0 dst_f32::blocked:abcd:f0,,alg:convolution_direct,"
    "mb4_ic8oc8_ih7oh7kh1sh1dh0ph0_iw7ow7kw1sw1dw0pw0,0.1";

TEST(OnednnVerbose, ReadsConvolutionExecLines) {
  struct Case {
    const char* line;
    const char* desc;
    Direction dir;
  };
  for (const Case& c : {Case{kV26Fwd, "mb2_ic3oc96_ih227oh55kh11sh4dh0ph0_iw227ow55kw11sw4dw0pw0", Direction::fwd},
                        Case{kV26Groups, "g2mb2_ic96oc256_ih27oh27kh5sh1dh0ph2_iw27ow27kw5sw1dw0pw2", Direction::fwd},
                        Case{kV26BwdData, "mb2_ic16oc32_ih13oh13kh3sh1dh0ph1_iw13ow13kw3sw1dw0pw1", Direction::bwd_data},
                        Case{kV26Timestamp, "mb2_ic16oc32_ih13oh9kh3sh1dh1ph0_iw13ow9kw3sw1dw1pw0", Direction::bwd_filter},
                        Case{kV3, "mb1_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1", Direction::fwd},
                        Case{kDnnl, "mb4_ic8oc8_ih7oh7kh1sh1dh0ph0_iw7ow7kw1sw1dw0pw0", Direction::fwd}}) {
    const auto v = parse_onednn_verbose_line(c.line);
    ASSERT_TRUE(v) << c.line;
    EXPECT_EQ(v->descriptor, c.desc);
    EXPECT_EQ(v->dir, c.dir);
    EXPECT_EQ(parse_problem(v->descriptor).validate(), "");
  }
  EXPECT_EQ(parse_problem("g2mb2_ic96oc256_ih27oh27kh5sh1dh0ph2_iw27ow27kw5sw1dw0pw2").groups, 2);
  EXPECT_EQ(parse_problem("mb2_ic16oc32_ih13oh9kh3sh1dh1ph0_iw13ow9kw3sw1dw1pw0").dil_h, 2);
}

TEST(OnednnVerbose, SkipsOtherLines) {
  for (const char* line :
       {"onednn_verbose,info,oneDNN v2.6.3 (commit N/A)",
        "onednn_verbose,info,prim_template:operation,engine,primitive,implementation,prop_kind,memory_descriptors,"
        "attributes,auxiliary,problem_desc,exec_time",
        "onednn_verbose,create:cache_miss,cpu,convolution,jit:avx2,forward_training,src_f32::blocked:abcd:f0,,"
        "alg:convolution_direct,mb2_ic3oc96_ih227oh55kh11sh4dh0ph0_iw227ow55kw11sw4dw0pw0,0.4",
        "onednn_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd16b:f0,,,"
        "2x3x227x227,0.2",
        "onednn_verbose,exec,cpu,deconvolution,jit:avx2,forward_training,src_f32,,alg:deconvolution_direct,"
        "mb2_ic3oc96_ih5oh7kh3,0.1",
        "onednn_verbose,v1,graph,exec,cpu,100002,sdp,,,0.3", "epoch 1 loss 0.25", ""})
    EXPECT_FALSE(parse_onednn_verbose_line(line)) << line;
  EXPECT_THROW(parse_onednn_verbose_line("onednn_verbose,exec,cpu,convolution,jit:avx2"), Error);
  EXPECT_THROW(parse_onednn_verbose_line("onednn_verbose,exec,cpu,convolution,jit,sideways,src,,alg:x,mb1,1"), Error);
  EXPECT_THROW(parse_onednn_verbose_line("onednn_verbose,exec,cpu,convolution,jit,forward_training,src,,alg:x"), Error);
}

TEST(ProblemFile, ListWithCommentsBlankLinesAndNames) {
  std::vector<std::string> notes = {"x"};
  const auto items = parse_problem_file(
      "# AlexNet, benchdnn style\n"
      "\n"
      "g2mb32ic96ih27oc256oh27kh5ph2n\"alexnet:conv2 #2\"  # trailing comment\r\n"
      "   mb1ic3ih5oc4kh3   \n"
      "alexnet.conv3\n"
      "mb1ic3ih5oc4kh3\n",
      "shapes.txt", 0, 32, &notes);
  EXPECT_TRUE(notes.empty());
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].label, "alexnet:conv2 #2");
  EXPECT_EQ(items[0].problem.groups, 2);
  EXPECT_EQ(items[0].origin, "shapes.txt:3");
  EXPECT_FALSE(items[0].dir);
  EXPECT_EQ(items[1].label, "mb1ic3ih5oc4oh3kh3");
  EXPECT_EQ(items[1].count, 2);  // duplicates collapse
  EXPECT_EQ(items[2].label, "alexnet.conv3");
  EXPECT_EQ(items[2].problem.n, 32);
  // --batch overrides everything, file entries included.
  for (const auto& it : parse_problem_file("mb1ic3ih5oc4kh3\nalexnet.conv3\nalexnet\n", "f", 4))
    EXPECT_EQ(it.problem.n, 4) << it.label;
}

TEST(ProblemFile, ErrorsNameFileAndLine) {
  auto expect_error = [](const std::string& text, const std::string& fragment) {
    try {
      parse_problem_file(text, "shapes.txt");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(fragment), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  };
  expect_error("mb1ic3ih5oc4kh3\n# ok\nmb1ic3ih5oc4kh3xx1\n", "shapes.txt:3: problem");
  expect_error("# nothing\n\n", "no problems");
  expect_error("", "no problems");
  expect_error("mb1ic3ih5oc4kh3\n@other.txt\n", "shapes.txt:2: a problem file may not name another file");
  expect_error("--dir=FWD_B\n--batch=shapes_basic\n",
               "shapes.txt: nothing in it can be run here (2 lines skipped; first: shapes.txt:1: skipped: benchdnn "
               "options ('--dir=FWD_B') are not read here");
  expect_error("mb1ic3ih5oc4kh3\nnosuchnet\n", "shapes.txt:2: 'nosuchnet' is neither");
  expect_error(std::string("mb1ic3\0ih5\n", 11), "shapes.txt:1: binary data");
  expect_error(std::string(kMaxProblemLineBytes + 1, 'm'), "shapes.txt:1: line longer than");
  expect_error("mb1ic3ih5oc4kh3n\"\x1b[2J\"\n", "\\x1b");
}

// A list's lines convlab cannot run (3-D, options, sizes past 32 bits) are
// notes naming FILE:LINE and the reason; the rest of the file is read.
TEST(ProblemFile, UnsupportedLinesAreNotesAndTheRestIsRead) {
  std::string text = "mb1ic3ih5oc4kh3\n";
  for (int i = 0; i < 24; ++i) text += "ic3oc16_id5od5kd3pd1_n\"conv_3d:" + std::to_string(i) + "\"\n";
  text += "--dir=BWD_D\nmb1ic1oc1iw4294967311kw3\ng1ic16oc16_ih5oh8kh3ph3\nmb1ic32iw100oc32ow98kw3pw0sw1\n";
  std::vector<std::string> notes;
  const auto items = parse_problem_file(text, "shapes.txt", 0, 32, &notes);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[1].problem.pad_h_end, 2);
  EXPECT_EQ(items[1].origin, "shapes.txt:28");
  EXPECT_EQ(items[2].problem.h, 1);
  ASSERT_EQ(notes.size(), kMaxSkippedLineNotes + 1);
  EXPECT_EQ(notes[0], "shapes.txt:2: skipped: problem 'ic3oc16_id5od5kd3pd1_n\"conv_3d:0\"': 3-D convolutions ('id') "
                      "are not supported");
  EXPECT_EQ(notes[kMaxSkippedLineNotes - 1].substr(0, 23), "shapes.txt:21: skipped:");
  EXPECT_EQ(notes.back(), "shapes.txt: 6 more lines skipped (not named one by one)");
  // Few enough: every one named, the option line and the large one too.
  std::vector<std::string> few;
  parse_problem_file("--dir=BWD_D\nmb1ic1oc1iw4294967311kw3\nmb1ic3ih5oc4kh3\n", "s.txt", 0, 32, &few);
  ASSERT_EQ(few.size(), 2u);
  EXPECT_EQ(few[0], "s.txt:1: skipped: benchdnn options ('--dir=BWD_D') are not read here: one problem per line");
  EXPECT_EQ(few[1], "s.txt:2: skipped: problem 'mb1ic1oc1iw4294967311kw3': value of 'iw' does not fit in 32 bits");
  // Bad input still stops the file: a typo is not "unsupported".
  EXPECT_THROW(parse_problem_file("ic3oc16_id5od5kd3pd1\nmb1ic3ih5oc4kh3xx1\nmb1ic3ih5oc4kh3\n", "s.txt"), Error);
}

TEST(ProblemFile, VerboseLogUsesConvolutionLinesOnly) {
  const std::string log = std::string("loading model...\n") +
                          "onednn_verbose,info,oneDNN v2.6.3 (commit N/A)\n" + kV26Fwd + "\n" + kV26Fwd + "\n" +
                          kV26Groups + "\n" + kV26BwdData + "\n" +
                          "onednn_verbose,exec,cpu,reorder,jit:uni,undef,src dst,,,2x3,0.2\n"
                          "epoch 1 loss 0.25\n" +
                          // 3-D: skipped with the reason in the note, not fatal
                          "onednn_verbose,exec,cpu,convolution,jit:avx2,forward_training,src,,alg:convolution_direct,"
                          "mb1_ic3oc4_id5od3kd3_ih5oh3kh3_iw5ow3kw3,0.1\n" +
                          kV26Fwd + "\n";
  std::vector<std::string> notes;
  const auto items = parse_problem_file(log, "log.txt", 0, 32, &notes);
  ASSERT_EQ(notes.size(), 1u);
  const std::string& note = notes[0];
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].problem.key(), "mb2ic3ih227oc96oh55kh11sh4");
  EXPECT_EQ(items[0].dir, Direction::fwd);
  EXPECT_EQ(items[0].count, 3);
  EXPECT_EQ(items[0].origin, "log.txt:3");
  EXPECT_EQ(items[1].problem.groups, 2);
  EXPECT_EQ(items[2].dir, Direction::bwd_data);
  EXPECT_NE(note.find("5 convolution executions, 3 distinct"), std::string::npos) << note;
  EXPECT_NE(note.find("1 convolution lines skipped (first: log.txt:9: "), std::string::npos) << note;
  EXPECT_NE(note.find("3-D"), std::string::npos) << note;
  // Same problem in two directions stays two entries.
  const auto two = parse_problem_file(std::string(kV26BwdData) + "\n" +
                                          std::string(kV26BwdData).replace(std::string(kV26BwdData).find("backward_data"),
                                                                           13, "forward_training"),
                                      "log");
  EXPECT_EQ(two.size(), 2u);
  // A log without any usable convolution is an error.
  EXPECT_THROW(parse_problem_file("onednn_verbose,info,oneDNN v2.6.3\n", "log"), Error);
}

class ProblemFileIo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("convlab_problem_list_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::filesystem::path dir_;
};

TEST_F(ProblemFileIo, ExpandsArgumentsInOrder) {
  const std::string f = write("s.txt", "mb1ic3ih5oc4kh3\n");
  const ProblemSet set = expand_problems({"alexnet", "@" + f, "mb1ic3ih5oc4kh3n\"x\"", "mb2ic3ih5oc4kh3n\"a.b\""}, 0);
  ASSERT_EQ(set.items.size(), 5u + 1 + 1 + 1);
  EXPECT_EQ(set.networks, std::vector<std::string>{"alexnet"});
  EXPECT_EQ(set.items[0].label, "alexnet.conv1");
  EXPECT_EQ(set.items[5].label, "mb1ic3ih5oc4oh3kh3");
  EXPECT_EQ(set.items[5].origin, f + ":1");
  EXPECT_EQ(set.items[6].label, "x");  // the same shape under another name stays its own entry
  // A dotted name is not a layer id: its own mb without --batch, the batch with it.
  EXPECT_EQ(set.items[7].label, "a.b");
  EXPECT_EQ(set.items[7].problem.n, 2);
  EXPECT_EQ(expand_problems({"mb2ic3ih5oc4kh3n\"a.b\""}, 7).items.at(0).problem.n, 7);
  EXPECT_TRUE(set.notes.empty());
}

// The same entry twice -- a layer beside its network, a network or problem given twice, one problem
// in two files -- runs once, counted, with one note; a network's own rows of one shape stay apart.
TEST_F(ProblemFileIo, RepeatedEntriesAreMergedWithANote) {
  const std::string a = write("a.txt", "mb1ic3ih5oc4kh3\n"), b = write("b.txt", "mb1_ic3_ih5_oc4_kh3\n");
  const ProblemSet set = expand_problems({"alexnet", "alexnet.conv2", "alexnet", "@" + a, "@" + b}, 0);
  ASSERT_EQ(set.items.size(), 6u);
  EXPECT_EQ(set.networks, std::vector<std::string>{"alexnet"});
  EXPECT_EQ(set.items[1].label, "alexnet.conv2");
  EXPECT_EQ(set.items[1].count, 3);
  EXPECT_EQ(set.items[0].count, 2);
  EXPECT_EQ(set.items[5].count, 2);
  ASSERT_EQ(set.notes.size(), 1u);
  EXPECT_NE(set.notes[0].find("7 repeated entries merged, each run once (first: alexnet.conv2)"), std::string::npos)
      << set.notes[0];
  const ProblemSet vgg = expand_problems({"vgg16"}, 0);
  EXPECT_TRUE(vgg.notes.empty());
  EXPECT_EQ(vgg.items.size(), network_layers("vgg16", 32).size());
}

// A FIFO, a socket or a device as @FILE is refused before it is opened (a FIFO would block the open
// forever); a file over the entry limit names its location once.
TEST_F(ProblemFileIo, SpecialFilesAreRefusedWithoutBlocking) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  try {
    expand_problems({"@" + fifo});
    ADD_FAILURE() << "a FIFO was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO (named pipe), not a regular file"), std::string::npos) << e.what();
  }
  std::string many;
  for (size_t i = 1; i <= kMaxProblemFileEntries + 1; ++i) many += "mb1ic1ih1oc" + std::to_string(i) + "kh1\n";
  const std::string big = write("big.txt", many);
  try {
    expand_problems({"@" + big});
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    const std::string m = e.what(), where = big + ":" + std::to_string(kMaxProblemFileEntries + 1);
    EXPECT_NE(m.find(where + ": more than"), std::string::npos) << m;
    EXPECT_EQ(m.find(where, m.find(where) + 1), std::string::npos) << "the location twice: " << m;
  }
}

TEST_F(ProblemFileIo, BadFilesAreOneLineErrors) {
  auto expect_error = [](const std::string& arg, const std::string& fragment) {
    try {
      expand_problems({arg});
      ADD_FAILURE() << "accepted: " << arg;
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(fragment), std::string::npos) << arg << " -> " << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  };
  expect_error("@" + (dir_ / "missing.txt").string(), "cannot open: No such file");
  expect_error("@" + dir_.string(), "is a folder");
  expect_error("@", "needs a file name");
  expect_error("@/dev/zero", "is a device, not a regular file");
  expect_error("@" + write("long.txt", std::string(200000, 'x')), "line longer than");
  expect_error("@" + write("bin.dat", std::string("\x93NUMPY\x01\x00\xff\xfe", 10)), "bin.dat:1:");
}

}  // namespace
}  // namespace convlab
