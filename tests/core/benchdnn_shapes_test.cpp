// oneDNN's own benchdnn shape files (tests/data/benchdnn, see its README) read
// as benchdnn reads them. The oracle below is a transcription of benchdnn's
// conv::str2desc, sanitize_desc and desc_t::init_pad_r (oneDNN
// tests/benchdnn/conv/conv_aux.cpp, common.cpp, conv/conv.hpp): every problem
// of every file must give the sizes, strides, dilations, top / left padding and
// output size benchdnn gives it, an end padding that computes the same output,
// and a canonical() form that benchdnn reads back as the same problem.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/problem.hpp"
#include "core/problem_list.hpp"

namespace convlab {
namespace {

const std::string kData = std::string(CONVLAB_SOURCE_DIR) + "/tests/data/benchdnn/";

// benchdnn's desc_t: d, h, w values; -1 = "not given" for the paddings.
struct Desc {
  int64_t g = -1, mb = 2, ic = 0, oc = 0;
  int64_t i[3] = {0, 0, 0}, o[3] = {0, 0, 0}, k[3] = {0, 0, 0}, s[3] = {1, 1, 1}, p[3] = {-1, -1, -1},
          d[3] = {0, 0, 0}, pr[3] = {0, 0, 0};
  int ndims = 0;
};

// conv::str2desc + sanitize_desc + init_pad_r; nullopt where benchdnn fails.
std::optional<Desc> benchdnn_str2desc(const std::string& text) {
  Desc d;
  const char* s = text.c_str();
  struct Key {
    const char* name;
    int64_t* v;
  };
  const Key keys[] = {{"g", &d.g},     {"mb", &d.mb},    {"ic", &d.ic},    {"id", &d.i[0]}, {"ih", &d.i[1]},
                      {"iw", &d.i[2]}, {"oc", &d.oc},    {"od", &d.o[0]},  {"oh", &d.o[1]}, {"ow", &d.o[2]},
                      {"kd", &d.k[0]}, {"kh", &d.k[1]},  {"kw", &d.k[2]},  {"sd", &d.s[0]}, {"sh", &d.s[1]},
                      {"sw", &d.s[2]}, {"pd", &d.p[0]},  {"ph", &d.p[1]},  {"pw", &d.p[2]}, {"dd", &d.d[0]},
                      {"dh", &d.d[1]}, {"dw", &d.d[2]}};
  while (*s) {
    bool ok = false;
    for (const Key& k : keys) {  // CASE_N: each key in turn, in this order
      if (std::strncmp(k.name, s, std::strlen(k.name)) != 0) continue;
      ok = true;
      s += std::strlen(k.name);
      char* end = nullptr;
      *k.v = std::strtoll(s, &end, 10);
      if (end == s || *k.v < 0) return std::nullopt;
      s = end;
    }
    if (*s == 'n') break;
    if (*s == '_') ++s;
    if (!ok) return std::nullopt;
  }
  if (d.g >= 0) {
    if (d.g <= 0) return std::nullopt;
  } else {
    d.g = 1;
  }
  if (d.ic <= 0 || d.oc <= 0 || d.s[0] <= 0 || d.s[1] <= 0 || d.s[2] <= 0) return std::nullopt;
  auto compute_out = [](int64_t i, int64_t k, int64_t s, int64_t p, int64_t dl) {
    return (i - ((k - 1) * (dl + 1) + 1) + 2 * p) / s + 1;
  };
  auto compute_pad = [](int64_t o, int64_t i, int64_t k, int64_t s, int64_t dl) {
    return ((o - 1) * s - i + ((k - 1) * (dl + 1) + 1)) / 2;
  };
  for (int x = 0; x < 3; ++x) {
    const bool none = (d.i[x] | d.k[x] | d.o[x] | d.d[x]) == 0 && d.s[x] == 1 && d.p[x] < 1;
    if (none) continue;
    if (d.i[x] <= 0 || d.k[x] <= 0) return std::nullopt;
    if (!d.o[x]) {
      if (d.p[x] < 0) d.p[x] = 0;
      d.o[x] = compute_out(d.i[x], d.k[x], d.s[x], d.p[x], d.d[x]);
      if (d.o[x] <= 0) return std::nullopt;
    } else if (d.p[x] < 0) {
      d.p[x] = compute_pad(d.o[x], d.i[x], d.k[x], d.s[x], d.d[x]);
    }
  }
  // sanitize_desc: the dimensions from the output sizes, missing ones copied or defaulted.
  int64_t* all[6] = {d.o, d.i, d.k, d.s, d.p, d.d};
  const int64_t defaults[6] = {1, 1, 1, 1, 0, 0};
  const bool no_d = d.o[0] == 0, no_h = d.o[1] == 0, no_w = d.o[2] == 0;
  d.ndims = 5 - int(no_d) - int(no_d && no_h) - int(no_d && no_h && no_w);
  if (d.ndims <= 2) return std::nullopt;
  if (d.ndims == 5) {
    if (no_h && no_w) {
      for (int64_t* a : all) a[1] = a[2] = a[0];
    } else if (no_h || no_w) {
      return std::nullopt;
    }
  } else if (d.ndims == 4 && no_w) {
    for (int64_t* a : all) a[2] = a[1];
  }
  for (int n = 0; n < 6; ++n) {
    if (d.ndims < 5) all[n][0] = defaults[n];
    if (d.ndims < 4) all[n][1] = defaults[n];
  }
  for (int x = 0; x < 3; ++x)  // init_pad_r
    d.pr[x] = (d.o[x] - 1) * d.s[x] - d.i[x] + ((d.k[x] - 1) * (d.d[x] + 1) + 1) - d.p[x];
  return d;
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT32_MAX; }

// The problem lines of a file: comments and blank lines out, as the file reader does.
std::vector<std::pair<int, std::string>> problem_lines(const std::string& file) {
  std::ifstream in(kData + file);
  EXPECT_TRUE(in) << kData + file;
  std::vector<std::pair<int, std::string>> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = line.substr(0, line.find('#'));
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    while (!line.empty() && line.front() == ' ') line.erase(0, 1);
    if (!line.empty()) out.emplace_back(n, line);
  }
  return out;
}

const char* const kFiles[] = {"shapes_1d",          "shapes_basic",       "shapes_dilated",
                              "shapes_regression_padding", "shapes_large_padding", "shapes_mem_strided",
                              "shapes_large_conv",  "shapes_dilated_1d_1st_strided_padding.head60"};

// An end padding of this axis computes what benchdnn's does: the same output
// size with the same top padding (the rows past the last window are unread).
void expect_same_axis(const ConvProblem& p, const Desc& d, int x, const std::string& where) {
  const bool h = x == 1;
  EXPECT_EQ(h ? p.h : p.w, d.i[x]) << where;
  EXPECT_EQ(h ? p.r : p.s, d.k[x]) << where;
  EXPECT_EQ(h ? p.stride_h : p.stride_w, d.s[x]) << where;
  EXPECT_EQ((h ? p.dil_h : p.dil_w) - 1, d.d[x]) << where;
  EXPECT_EQ(h ? p.pad_h : p.pad_w, d.p[x]) << where;
  EXPECT_EQ(h ? p.p64() : p.q64(), d.o[x]) << where;
  const int64_t end = h ? p.pad_h_end : p.pad_w_end, stride = d.s[x];
  EXPECT_GE(end, d.pr[x]) << where;
  EXPECT_LE(end, d.pr[x] + stride - 1) << where;
  EXPECT_GT(end + stride, 0) << where;
}

TEST(BenchdnnShapes, EveryProblemReadsAsBenchdnnReadsIt) {
  int checked = 0, unit_depth = 0, one_d = 0, asym = 0, unsupported = 0;
  for (const char* file : kFiles) {
    for (const auto& [n, line] : problem_lines(file)) {
      const std::string where = std::string(file) + ":" + std::to_string(n) + " " + line;
      if (line.rfind("--", 0) == 0) continue;  // benchdnn options: the file reader's notes (below)
      const std::optional<Desc> d = benchdnn_str2desc(line);
      ASSERT_TRUE(d) << where << ": benchdnn itself rejects it";
      const bool depth = d->ndims == 5 && !(d->i[0] == 1 && d->k[0] == 1 && d->o[0] == 1 && d->s[0] == 1 &&
                                            d->p[0] == 0 && d->d[0] == 0);
      bool big = false;
      for (int64_t v : {d->mb, d->ic, d->oc, d->i[1], d->i[2], d->o[1], d->o[2]}) big = big || !fits_int(v);
      big = big || double(d->mb) * d->ic * d->i[1] * d->i[2] > INT32_MAX ||
            double(d->mb) * d->oc * d->o[1] * d->o[2] > INT32_MAX;
      if (depth || big) {
        EXPECT_THROW(parse_problem(line), UnsupportedProblem) << where;
        ++unsupported;
        continue;
      }
      ConvProblem p;
      try {
        p = parse_problem(line);
      } catch (const Error& e) {
        ADD_FAILURE() << where << ": " << e.what();
        continue;
      }
      EXPECT_EQ(p.groups, d->g) << where;
      EXPECT_EQ(p.n, d->mb) << where;
      EXPECT_EQ(p.c, d->ic) << where;
      EXPECT_EQ(p.k, d->oc) << where;
      expect_same_axis(p, *d, 1, where);
      expect_same_axis(p, *d, 2, where);
      EXPECT_EQ(p.is_1d(), d->ndims == 3 || (d->i[1] == 1 && d->k[1] == 1 && d->s[1] == 1 && d->p[1] == 0 &&
                                             d->pr[1] == 0 && d->d[1] == 0))
          << where;
      // benchdnn reads convlab's canonical form as the same problem.
      const std::optional<Desc> back = benchdnn_str2desc(p.key());
      ASSERT_TRUE(back) << where << " -> " << p.key();
      for (int x = 1; x < 3; ++x) {
        EXPECT_EQ(back->i[x], d->i[x]) << where << " -> " << p.key();
        EXPECT_EQ(back->o[x], d->o[x]) << where << " -> " << p.key();
        EXPECT_EQ(back->k[x], d->k[x]) << where << " -> " << p.key();
        EXPECT_EQ(back->s[x], d->s[x]) << where << " -> " << p.key();
        EXPECT_EQ(back->p[x], d->p[x]) << where << " -> " << p.key();
        EXPECT_EQ(back->d[x], d->d[x]) << where << " -> " << p.key();
        EXPECT_EQ(back->pr[x], d->pr[x]) << where << " -> " << p.key();
      }
      EXPECT_EQ(parse_problem(p.canonical()), p) << where << " -> " << p.canonical();
      // The 5-D 1-D sets name their right padding: "pw-right(7)".
      if (const size_t at = p.name.find("pw-right("); at != std::string::npos) {
        EXPECT_EQ(p.pad_w_end, std::atoi(p.name.c_str() + at + 9)) << where;
      }
      unit_depth += d->ndims == 5;
      one_d += p.is_1d();
      asym += !p.symmetric_padding();
      ++checked;
    }
  }
  // What the files hold (so a reader that skipped them would fail here).
  EXPECT_GE(checked, 150);
  EXPECT_GE(unit_depth, 20);
  EXPECT_GE(one_d, 60);
  EXPECT_GE(asym, 20);
  EXPECT_GE(unsupported, 20);
}

// The README's example and the line that stopped benchdnn's shape files.
TEST(BenchdnnShapes, TheExamplesOfTheRequest) {
  const ConvProblem one_d = parse_problem("mb1ic32iw100oc32ow98kw3pw0sw1");
  EXPECT_EQ(one_d.h, 1);
  EXPECT_EQ(one_d.q(), 98);
  const ConvProblem gemm = parse_problem("g1ic16oc16_ih5oh8kh3ph3");
  EXPECT_EQ(gemm.p(), 8);
  EXPECT_EQ(gemm.pad_h, 3);
  EXPECT_EQ(gemm.pad_h_end, 2);
}

// A file: every problem line it can run is read, each one it cannot is a note
// naming FILE:LINE with the reason, and the rest of the file is used.
TEST(BenchdnnShapes, FilesAreReadPastLinesThatCannotRun) {
  std::vector<std::string> notes;
  const auto basic = read_problem_file(kData + "shapes_basic", 0, 32, &notes);
  EXPECT_EQ(basic.size(), 36u);  // 18 1-D, 18 2-D
  ASSERT_EQ(notes.size(), 18u);  // the 18 3-D lines
  EXPECT_NE(notes[0].find("shapes_basic:54: skipped: problem 'ic3oc16_id5od5kd3pd1_n\"conv_basic_3d:1st\"': 3-D "
                          "convolutions ('id') are not supported"),
            std::string::npos)
      << notes[0];
  EXPECT_EQ(basic.back().label, "conv_basic_2d:depthwise_stride_tail");
  int asym = 0;
  for (const auto& it : basic) asym += !it.problem.symmetric_padding();
  EXPECT_EQ(asym, 6);  // the gemm shapes, 1-D and 2-D

  // benchdnn options on every line (--strides=...): not ours to apply, so
  // nothing is left to run.
  try {
    read_problem_file(kData + "shapes_mem_strided");
    ADD_FAILURE() << "shapes_mem_strided accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("shapes_mem_strided: nothing in it can be run here (49 lines skipped; first: "), std::string::npos)
        << m;
    EXPECT_NE(m.find("shapes_mem_strided:1: skipped: benchdnn options ('--strides="), std::string::npos) << m;
  }

  // Only sizes past 32 bits: nothing to run is an error naming the first line.
  try {
    read_problem_file(kData + "shapes_large_conv");
    ADD_FAILURE() << "shapes_large_conv accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("shapes_large_conv: nothing in it can be run here (6 lines skipped; first: "), std::string::npos) << m;
    EXPECT_NE(m.find("shapes_large_conv:2: skipped: problem 'mb1ic32oc1iw134217732kw3': src (mb*ic*ih*iw) has more "
                     "than 2^31-1 elements"),
              std::string::npos)
        << m;
  }
}

}  // namespace
}  // namespace convlab
