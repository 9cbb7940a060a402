#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/layers.hpp"
#include "core/problem.hpp"
#include "core/problem_list.hpp"
#include "convlab/testing.hpp"

namespace convlab {
namespace {

TEST(Problem, ParsesBenchdnnAlexNetConv2) {
  const ConvProblem p = parse_problem("g2mb32ic96ih27oc256oh27kh5ph2n\"alexnet:conv2\"");
  EXPECT_EQ(p.groups, 2);
  EXPECT_EQ(p.n, 32);
  EXPECT_EQ(p.c, 96);
  EXPECT_EQ(p.h, 27);
  EXPECT_EQ(p.w, 27);
  EXPECT_EQ(p.k, 256);
  EXPECT_EQ(p.r, 5);
  EXPECT_EQ(p.s, 5);
  EXPECT_EQ(p.pad_h, 2);
  EXPECT_EQ(p.pad_w, 2);
  EXPECT_EQ(p.stride_h, 1);
  EXPECT_EQ(p.dil_h, 1);
  EXPECT_EQ(p.p(), 27);
  EXPECT_EQ(p.q(), 27);
  EXPECT_EQ(p.name, "alexnet:conv2");
  // 2 * N * K * P * Q * (C/g) * R * S
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 32 * 256 * 27 * 27 * 48 * 25);
}

TEST(Problem, BenchdnnDefaultsAndUnderscores) {
  const ConvProblem p = parse_problem("ic3ih227iw227_oc96oh55ow55_kh11kw11_sh4sw4ph0pw0_n\"alexnet:conv1\"");
  EXPECT_EQ(p.n, 2);  // benchdnn's default minibatch
  EXPECT_EQ(p.stride_w, 4);
  EXPECT_EQ(p.p(), 55);
  EXPECT_EQ(p.name, "alexnet:conv1");
}

TEST(Problem, DilationIsZeroBasedInText) {
  const ConvProblem p = parse_problem("mb1ic4ih12oc5kh3ph2dh1");
  EXPECT_EQ(p.dil_h, 2);
  EXPECT_EQ(p.dil_w, 2);
  EXPECT_EQ(p.p(), 12);  // (12 + 4 - 5) / 1 + 1
  EXPECT_EQ(parse_problem("mb1ic4ih12oc5kh3dh0").dil_h, 1);
}

TEST(Problem, HeightLettersOnlyIsSquare) {
  const ConvProblem p = parse_problem("mb1ic1ih9oc1kh3sh2ph1dh1");
  EXPECT_EQ(p.w, 9);
  EXPECT_EQ(p.s, 3);
  EXPECT_EQ(p.stride_w, 2);
  EXPECT_EQ(p.pad_w, 1);
  EXPECT_EQ(p.dil_w, 2);
  EXPECT_TRUE(p.symmetric_padding());
}

// benchdnn reads a string with only w letters as a 1-D convolution (H = 1).
TEST(Problem, WidthLettersOnlyIs1D) {
  const ConvProblem p = parse_problem("mb1ic32iw100oc32ow98kw3pw0sw1");
  EXPECT_EQ(p.h, 1);
  EXPECT_EQ(p.r, 1);
  EXPECT_EQ(p.w, 100);
  EXPECT_EQ(p.s, 3);
  EXPECT_EQ(p.p(), 1);
  EXPECT_EQ(p.q(), 98);
  EXPECT_TRUE(p.is_1d());
  EXPECT_EQ(p.canonical(), "mb1ic32iw100oc32ow98kw3");
  const ConvProblem s = parse_problem("mb1ic1iw9oc1kw3sw2pw1");  // was read as 9x9
  EXPECT_EQ(s.h, 1);
  EXPECT_EQ(s.stride_h, 1);
  EXPECT_EQ(s.pad_h, 0);
  EXPECT_EQ(s.q(), 5);
  // Unset-valued h letters (benchdnn: sh1, ph0, dh0, ih0) keep it 1-D.
  EXPECT_EQ(parse_problem("ic3iw10oc3kw3sh1ph0dh0ih0").canonical(), "mb2ic3iw10oc3ow8kw3");
  // The same convolution written as 2-D with H = 1 is the same problem.
  EXPECT_EQ(parse_problem("mb1ic32ih1iw100oc32kh1kw3"), p);
  // benchdnn's 1-D sets written in 5-D form with a unit depth.
  const ConvProblem d = parse_problem("mb1_ic1oc16_kd1kh1kw3_id1ih1iw1_od1oh1ow1_sd1sh1sw2_pd0ph0pw1_dd0dh0dw3");
  EXPECT_TRUE(d.is_1d());
  EXPECT_EQ(d.pad_w, 1);
  EXPECT_EQ(d.pad_w_end, 7);  // the file's name for it: "pw-right(7)"
}

// benchdnn's padding: ph/pw are the top/left side; with an output size the
// bottom/right side is (oh-1)*sh - ih + (kh-1)*(dh+1) + 1 - ph.
TEST(Problem, AsymmetricPaddingFromOutputSize) {
  const ConvProblem p = parse_problem("g1ic16oc16_ih5oh8kh3ph3");
  EXPECT_EQ(p.pad_h, 3);
  EXPECT_EQ(p.pad_h_end, 2);
  EXPECT_EQ(p.pad_w, 3);
  EXPECT_EQ(p.pad_w_end, 2);
  EXPECT_EQ(p.p(), 8);
  EXPECT_FALSE(p.symmetric_padding());
  EXPECT_EQ(p.canonical(), "mb2ic16ih5oc16oh8kh3ph3");
  const ConvProblem s = parse_problem("g1ic17oc17_ih8oh5kh3ph3sh2");
  EXPECT_EQ(s.pad_h_end, 0);
  EXPECT_EQ(s.p(), 5);
  // Each axis on its own: 1 above and 1 below, none left and one right.
  const ConvProblem hw = parse_problem("mb1ic16oc16_ih16kh3ph1oh16_iw16kw3pw0ow15");
  EXPECT_EQ(hw.pad_h_end, 1);
  EXPECT_EQ(hw.pad_w, 0);
  EXPECT_EQ(hw.pad_w_end, 1);
  EXPECT_EQ(hw.q(), 15);
  // Not given, the top padding is half of what the output needs, rounded
  // down (benchdnn's compute_pad): ResNet's conv1 written without ph pads 2
  // above and 3 below, not 3 and 3.
  const ConvProblem r = parse_problem("mb1ic3ih224oc64oh112kh7sh2");
  EXPECT_EQ(r.pad_h, 2);
  EXPECT_EQ(r.pad_h_end, 3);
  EXPECT_EQ(r.canonical(), "mb1ic3ih224oc64oh112kh7sh2ph2");
  // An end padding that gives the same output as the top one is stored as it
  // (benchdnn derives 1 for AlexNet-OWT's conv1 and 2 for ResNet's: the stride
  // leaves those rows unread either way).
  EXPECT_TRUE(parse_problem("ic3ih224oc64oh55kh11sh4ph2").symmetric_padding());
  EXPECT_TRUE(parse_problem("mb1ic3ih224oc64oh112kh7sh2ph3").symmetric_padding());
  EXPECT_EQ(parse_problem("mb1ic3ih224oc64oh112kh7sh2ph3"), parse_problem("mb1ic3ih224oc64kh7sh2ph3"));
  // No output size: benchdnn's (iw - kw + 2 pw) / sw + 1 truncates toward 0, so a
  // filter one column longer than the input still has an output, over one
  // zero column on the right.
  const ConvProblem t = parse_problem("mb1ic1iw8oc1kw9sw4");
  EXPECT_EQ(t.q(), 1);
  EXPECT_EQ(t.pad_w, 0);
  EXPECT_EQ(t.pad_w_end, 1);
  EXPECT_EQ(t.canonical(), "mb1ic1iw8oc1ow1kw9sw4pw0");
  // Negative, above -stride: the last row is not read.
  const ConvProblem n = parse_problem("mb1ic3ih5oc4oh2kh3sh2ph1");
  EXPECT_EQ(n.pad_h, 1);
  EXPECT_EQ(n.pad_h_end, -1);
  EXPECT_EQ(n.p(), 2);
  EXPECT_EQ(n.validate(), "");
}

// Both axes given: letters not given take benchdnn's defaults (stride 1,
// dilation 0, output computed), not the other axis' value.
TEST(Problem, BothAxesGivenAreReadOnTheirOwn) {
  const ConvProblem s = parse_problem("mb4ic400ih16iw123oc176oh16ow62kh1kw1sw2");
  EXPECT_EQ(s.stride_h, 1);
  EXPECT_EQ(s.stride_w, 2);
  EXPECT_EQ(s.q(), 62);
  const ConvProblem d = parse_problem("mb20ic16ih1iw8oc6oh1kh1kw3sh1pw0ph0sw1dh0dw2");
  EXPECT_EQ(d.q(), 2);  // ow computed, not copied from oh1
  const ConvProblem p = parse_problem("mb1ic3ih9iw8oc4kh3kw3ph1");
  EXPECT_EQ(p.pad_w, 0);
  EXPECT_EQ(p.pad_w_end, 0);
  // Sizes given for one axis only serve both (benchdnn would refuse them).
  EXPECT_EQ(parse_problem("mb1ic3ih9iw8oc4kh3").s, 3);
}

TEST(Problem, PaddingDeducedFromOutputSize) {
  const ConvProblem p = parse_problem("mb1ic3ih13oc8oh13kh3");
  EXPECT_EQ(p.pad_h, 1);
  EXPECT_EQ(p.pad_w, 1);
}

TEST(Problem, CanonicalRoundTrips) {
  const char* cases[] = {
      "g2mb32ic96ih27oc256oh27kh5ph2n\"alexnet:conv2\"", "mb1ic3ih10iw12oc4oh4ow4kh3sh2sw3",
      "mb2ic4ih12oc5kh3ph2dh1",                          "mb1ic2ih11oc3kh3ph1dh1dw2",
      "mb2ic3ih8iw6oc4kh3ph2pw0",                        "g8mb2ic8ih9oc8kh3ph1",
      "mb1ic3ih9oc1kh3kw1sh1sw2ph0pw1",                  "mb7ic1ih1oc1kh1",
      "mb1ic32iw100oc32ow98kw3pw0sw1",                   "g1ic16oc16_ih5oh8kh3ph3",
      "g1ic17oc17_ih8oh5kh3ph3sh2",                      "mb1ic16oc16_ih16kh3ph1oh16_iw16kw3pw0ow15",
      "mb1ic3ih224oc64oh112kh7sh2",                      "mb1ic3ih5oc4oh2kh3sh2ph1",
      "mb2ic4iw23oc5ow7kw3sw3dw1pw2",                    "mb4ic400ih16iw123oc176oh16ow62kh1kw1sw2",
      "ic8oc8_iw5ow2kw3sw1dw2pw3",                       "mb1ic2ih2iw2oc1oh3ow2kh2kw2ph2pw0",
      "mb1ic1iw8oc1kw9sw4",                              "mb2ic4ih5oc1oh1kh5sh4ph5",
  };
  for (const char* text : cases) {
    const ConvProblem p = parse_problem(text);
    const ConvProblem q = parse_problem(p.canonical());
    EXPECT_EQ(p, q) << text << " -> " << p.canonical();
    EXPECT_EQ(q.canonical(), p.canonical());
  }
  EXPECT_EQ(parse_problem("g2mb32ic96ih27oc256oh27kh5ph2n\"alexnet:conv2\"").canonical(),
            "g2mb32ic96ih27oc256oh27kh5ph2n\"alexnet:conv2\"");
  EXPECT_EQ(parse_problem("mb4ic3ih5oc2kh3").key(), "mb4ic3ih5oc2oh3kh3");
}

TEST(Problem, RandomShapesRoundTrip) {
  uint64_t state = 7;
  int checked = 0;
  for (int i = 0; i < 2000; ++i) {
    const ConvProblem p = testing::random_problem(state, {4, 9, 9, 40, 7, 4, 3, 3});
    if (!p.validate().empty()) continue;
    EXPECT_EQ(parse_problem(p.canonical()), p) << p.canonical();
    ++checked;
  }
  EXPECT_GT(checked, 500);  // most draws are valid problems
}

void expect_rejected(const char* text, const char* fragment) {
  try {
    parse_problem(text);
    ADD_FAILURE() << "accepted '" << text << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(fragment), std::string::npos) << "'" << text << "' -> " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message is more than one line: " << msg;
  }
}

TEST(Problem, RejectsImpossibleProblemsWithOneLine) {
  expect_rejected("", "empty problem string");
  expect_rejected("mb0ic3ih5oc4kh3", "mb must be positive");
  expect_rejected("mb1ic0ih5oc4kh3", "ic must be positive");
  expect_rejected("mb1ic3ih0oc4kh3", "ih must be positive");
  expect_rejected("mb1ic3ih5oc4kh0", "kh must be positive");
  expect_rejected("mb1ic3ih5oc4kh3sh0", "sh must be positive");
  expect_rejected("g2mb1ic3ih5oc4kh3", "does not divide ic3");
  expect_rejected("g3mb1ic3ih5oc4kh3", "does not divide oc4");
  expect_rejected("mb1ic3ih2oc4kh5", "empty output");
  expect_rejected("mb1ic3ih5oc4kh3dh4", "empty output");
  expect_rejected("mb1ic3ih5oc4", "filter size");
  expect_rejected("mb1ic3oc4kh3", "input size");
  expect_rejected("mb1ih5oc4kh3", "'ic' missing");
  expect_rejected("mb1ic3ih5kh3", "'oc' missing");
  expect_rejected("mb1ic3ih5oc4kh3xx2", "unknown key 'xx'");
  expect_rejected("mb1ic3ih5oc4kh3ph", "expected a non-negative number after 'ph'");
  expect_rejected("mb1ic3ih5oc4kh3ph-1", "expected a non-negative number after 'ph'");
  expect_rejected("mb1ic3ih5oc4kh3kh3", "given twice");
  expect_rejected("mb1ic3ih5oc4kh3 ", "unexpected character");
  expect_rejected("mb1ic3id5ih5oc4kh3", "3-D");
  EXPECT_THROW(parse_problem("mb1ic3id5ih5oc4kh3"), UnsupportedProblem);
  EXPECT_THROW(parse_problem("mb1ic3id1ih5oc4kd3kh3"), UnsupportedProblem);
  EXPECT_EQ(parse_problem("mb1ic3id1ih5oc4kd1kh3").h, 5);  // a unit depth is the 2-D problem
  EXPECT_EQ(parse_problem("mb1ic3ih5oc4kh3sd1pd0").h, 5);  // unset-valued depth letters: benchdnn's no depth
  expect_rejected("mb1ic3ih5oc4kh3ph99999999999", "does not fit in 32 bits");
  expect_rejected("mb1ic3ih5oc4oh2kh3ph1", "oh2 leaves input rows unread (ih5, kh3, sh1, ph1, dh0 give at least oh4)");
  expect_rejected("mb1ic3ih9iw8oc4kh3ow1pw1", "ow1 leaves input columns unread");
  expect_rejected("mb1ic3ih5oc4kh3n\"unterminated", "unterminated");
  expect_rejected("mb1ic3ih5oc4kh3n\"x\"mb2", "must come last");
  expect_rejected("mb65536ic256ih256oc256kh3ph1", "32-bit index overflow");
  EXPECT_THROW(parse_problem("mb65536ic256ih256oc256kh3ph1"), UnsupportedProblem);
  EXPECT_THROW(parse_problem("mb1ic1oc1iw4294967311kw3"), UnsupportedProblem);
  EXPECT_THROW(parse_problem("mb1ic3ih5oc4kh3xx2"), Error);
  try {  // bad input is not "unsupported": a problem file stops there
    parse_problem("mb1ic3ih5oc4kh3xx2");
  } catch (const UnsupportedProblem&) {
    ADD_FAILURE() << "an unknown key was reported as unsupported";
  } catch (const Error&) {
  }
}

// Output and padded sizes that wrap past 32 bits used to be
// accepted (p() cast the 64-bit size to int; 2 * pad_h was an int product).
TEST(Problem, SizesThatWrapPast32BitsAreRejected) {
  for (const char* text : {"mb1ic4ih8oc4kh3ph2147483647", "mb1ic4ih8oc4kh3pw2147483647", "mb1ic4ih8oc4kh3ph2147483646",
                           "mb1ic4ih1000oc4kh3ph2147483200", "mb1ic4ih8oc4kh3ph1073741823",
                           "mb1ic1ih2147483647oc1kh1ph1", "mb1ic1ih1iw2147483647oc1kh1pw1"})
    expect_rejected(text, "does not fit in 32 bits");
  // The largest padded extent that fits is accepted, and its sizes are exact.
  const ConvProblem p = parse_problem("mb1ic1ih1iw1oc1kh1ph1073741823pw0");
  EXPECT_EQ(p.p64(), 2147483647);
  EXPECT_EQ(p.p(), 2147483647);
  // A deduced padding that would need more than 32 bits (oh*sh overflows 2^62).
  expect_rejected("mb1ic1ih1oc1oh2147483647kh2147483647sh2147483647dh2147483646", "32 bits");
}

TEST(Problem, EndPaddingMustBeAboveMinusTheStride) {
  ConvProblem p = parse_problem("mb1ic1ih8oc1kh3sh2");
  p.pad_h_end = -1;
  EXPECT_EQ(p.validate(), "");
  p.pad_h_end = -2;
  EXPECT_NE(p.validate().find("end padding (bottom -2, right 0) must be greater than minus the stride"),
            std::string::npos)
      << p.validate();
}

TEST(Problem, P64IsExactOnUnvalidatedFields) {
  ConvProblem p;
  p.n = 1, p.c = 4, p.h = 8, p.w = 8, p.k = 4, p.r = 3, p.s = 3;
  p.pad_h = p.pad_h_end = INT32_MAX;
  EXPECT_EQ(p.p64(), int64_t(8) + 2 * int64_t(INT32_MAX) - 2);  // not the wrapped 4
  EXPECT_NE(p.validate().find("does not fit in 32 bits"), std::string::npos) << p.validate();
  p.pad_h = p.pad_h_end = 0;
  p.stride_h = INT32_MAX;
  p.r = INT32_MAX;
  p.dil_h = INT32_MAX;
  EXPECT_NE(p.validate(), "");  // dilated extent ~2^62: no overflow, just too big
}

// Names.
TEST(Problem, NamesMustBeNonEmptyAndPrintable) {
  expect_rejected("mb1ic3ih5oc4kh3n", "empty name");
  expect_rejected("mb1ic3ih5oc4kh3n\"\"", "empty name");
  expect_rejected("mb1ic3ih5oc4kh3n\"a\x1b[31mb\"", "control characters");
  expect_rejected("mb1ic3ih5oc4kh3na\tb", "control characters");
  expect_rejected("mb1ic3ih5oc4kh3na\"b", "quote");
  EXPECT_EQ(parse_problem("mb1ic3ih5oc4kh3n\"conv \xc3\xa9t\xc3\xa9\"").name, "conv \xc3\xa9t\xc3\xa9");  // UTF-8 is fine
  // A right-to-left override would print the rest of every line it appears in backwards; a name
  // of invisible characters prints as nothing.
  expect_rejected("mb1ic3ih5oc4kh3n\"conv\xe2\x80\xae" "2vnoc\"", "bidirectional controls");
  expect_rejected("mb1ic3ih5oc4kh3n\"a\xe2\x81\xa7" "b\"", "bidirectional controls");
  expect_rejected("mb1ic3ih5oc4kh3n\"\xe2\x80\x8b\"", "no visible character");
  expect_rejected("mb1ic3ih5oc4kh3n\"\xe2\x80\x8b\xe2\x80\x8c\xef\xbb\xbf\"", "no visible character");
  expect_rejected("mb1ic3ih5oc4kh3n\"   \"", "no visible character");
  EXPECT_EQ(parse_problem("mb1ic3ih5oc4kh3n\" a\xe2\x80\x8b \"").name, " a\xe2\x80\x8b ");  // one visible is enough
  // Control characters in bad input are never echoed raw.
  try {
    parse_problem("mb1ic3\x1b[2Jih5");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\\x1b"), std::string::npos) << e.what();
  }
}

TEST(Problem, NeitherNetworkLayerNorProblemSaysSo) {
  for (const char* text : {"nosuchnet", "resnet51", "AlexNet", "alex.net"}) {
    try {
      problem_from_text(text);
      FAIL() << text << " accepted";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("is neither a network (alexnet"), std::string::npos) << m;
      EXPECT_NE(m.find("layer id"), std::string::npos) << m;
      EXPECT_NE(m.find("unknown key"), std::string::npos) << m;
    }
  }
  // Problem-looking strings keep the parser's own reason.
  try {
    problem_from_text("mb1ic3");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'oc' missing"), std::string::npos) << e.what();
  }
  // An unknown layer of a known network lists the layers.
  try {
    problem_from_text("alexnet.conv9");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conv1, conv2"), std::string::npos) << e.what();
  }
  try {
    problem_from_text("no\x07net");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\x07'), std::string::npos) << e.what();
  }
}

TEST(Problem, Directions) {
  EXPECT_EQ(parse_direction("fwd"), Direction::fwd);
  EXPECT_EQ(parse_direction("bwd-data"), Direction::bwd_data);
  EXPECT_EQ(parse_direction("bwd-filter"), Direction::bwd_filter);
  EXPECT_THROW(parse_direction("backward"), Error);
  for (Direction d : kAllDirections) EXPECT_EQ(parse_direction(to_string(d)), d);
}

// A direction named twice runs once (the same pair twice would be tuned and counted twice).
TEST(Problem, RepeatedDirectionsAreKeptOnceWithANote) {
  std::string note;
  EXPECT_EQ(parse_directions("fwd,fwd", &note), std::vector<Direction>{Direction::fwd});
  EXPECT_NE(note.find("names fwd more than once"), std::string::npos) << note;
  EXPECT_EQ(parse_directions("bwd-data,fwd,bwd_data", &note), (std::vector<Direction>{Direction::bwd_data, Direction::fwd}));
  EXPECT_NE(note.find("bwd-data"), std::string::npos) << note;
  EXPECT_EQ(parse_directions("fwd,bwd-data", &note).size(), 2u);
  EXPECT_EQ(note, "");
  EXPECT_EQ(parse_directions("all", &note).size(), 3u);
  EXPECT_EQ(note, "");
}

TEST(Problem, ANetworkWhereOneProblemIsExpectedSaysSo) {
  try {
    problem_from_text("alexnet");
    FAIL() << "accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'alexnet' is a network (5 convolution layers), not one layer or problem"), std::string::npos) << m;
    EXPECT_EQ(m.find("is neither"), std::string::npos) << m;
  }
}

TEST(Problem, ReductionLengths) {
  const ConvProblem p = parse_problem("g2mb3ic8ih9oc6kh3ph1");
  EXPECT_EQ(p.reduction_length(Direction::fwd), 4 * 9);
  EXPECT_EQ(p.reduction_length(Direction::bwd_data), 3 * 9);
  EXPECT_EQ(p.reduction_length(Direction::bwd_filter), 3 * 9 * 9);
}

TEST(Layers, AlexNetTable) {
  const auto layers = network_layers("alexnet", 32);
  ASSERT_EQ(layers.size(), 5u);
  EXPECT_EQ(layers[0].id, "alexnet.conv1");
  EXPECT_EQ(layers[0].problem.p(), 55);
  EXPECT_EQ(layers[1].problem.groups, 2);
  EXPECT_EQ(layers[1].problem.canonical(), "g2mb32ic96ih27oc256oh27kh5ph2n\"alexnet.conv2\"");
  EXPECT_EQ(layers[3].problem.groups, 2);
  EXPECT_EQ(layers[4].problem.k, 256);
  for (const auto& l : layers) EXPECT_EQ(l.problem.n, 32);
}

TEST(Layers, EveryNetworkIsValidAndChained) {
  for (const auto& net : network_names()) {
    const auto layers = network_layers(net, 2);
    EXPECT_FALSE(layers.empty()) << net;
    for (const auto& l : layers) EXPECT_EQ(l.problem.validate(), "") << l.id;
  }
  // owt: conv1 -> pool -> conv2 at 27x27, conv3..5 at 13x13
  const auto owt = network_layers("alexnet-owt", 1);
  EXPECT_EQ(owt[0].problem.p(), 55);
  EXPECT_EQ(owt[1].problem.h, 27);
  EXPECT_EQ(owt[1].problem.c, owt[0].problem.k);
  EXPECT_EQ(network_layers("vgg16", 1).size(), 9u);
  EXPECT_EQ(network_layer("resnet50.res3.3x3_s2", 1).problem.p(), 28);
}

TEST(Layers, UnknownNamesAreErrors) {
  EXPECT_THROW(network_layers("lenet", 1), Error);
  EXPECT_THROW(network_layer("alexnet.conv9", 1), Error);
  EXPECT_THROW(network_layers("alexnet", 0), Error);
  EXPECT_EQ(problem_from_text("alexnet.conv3", 4).n, 4);
  EXPECT_EQ(problem_from_text("mb1ic3ih5oc4kh3", 6).n, 6);
}

}  // namespace
}  // namespace convlab
