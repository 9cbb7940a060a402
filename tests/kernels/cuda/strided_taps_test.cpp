// kernels/strided_taps.hpp against its definition: for every coordinate, the
// taps that reach it (and the outputs they land on) are exactly those a test of
// every tap for divisibility finds.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/strided_taps.hpp"

namespace convlab {
namespace {

TEST(StridedTaps, MatchEveryTapTested) {
  int checked = 0;
  for (int stride = 1; stride <= 5; ++stride)
    for (int dil = 1; dil <= 4; ++dil)
      for (int taps = 1; taps <= 11; ++taps)
        for (int pad = 0; pad <= 4; ++pad)
          for (int outs = 1; outs <= 6; ++outs)
            for (int x = 0; x < 20; ++x) {
              std::vector<std::pair<int, int>> want, all;  // (tap, output)
              for (int t = 0; t < taps; ++t) {
                const int v = x + pad - t * dil;
                if (v % stride != 0) continue;
                all.emplace_back(t, v / stride);
                if (v >= 0 && v / stride < outs) want.emplace_back(t, v / stride);
              }
              const StridedTaps u = strided_taps(x, pad, stride, dil, taps), c = clamp_taps(u, outs);
              std::vector<std::pair<int, int>> got_all, got;
              for (int j = 0; j < u.count; ++j) got_all.emplace_back(u.first + j * u.step, u.out - j * u.out_step);
              for (int j = 0; j < c.count; ++j) got.emplace_back(c.first + j * c.step, c.out - j * c.out_step);
              ASSERT_EQ(got_all, all) << "stride " << stride << " dil " << dil << " taps " << taps << " pad " << pad
                                      << " x " << x;
              ASSERT_EQ(got, want) << "stride " << stride << " dil " << dil << " taps " << taps << " pad " << pad
                                   << " outs " << outs << " x " << x;
              // Same phase, same taps: x + stride reaches the next outputs.
              const StridedTaps v = strided_taps(x + stride, pad, stride, dil, taps);
              ASSERT_EQ(v.count, u.count);
              if (u.count > 0) {
                ASSERT_EQ(v.first, u.first);
                ASSERT_EQ(v.out, u.out + 1);
              }
              ++checked;
            }
  EXPECT_EQ(checked, 5 * 4 * 11 * 5 * 6 * 20);
}

}  // namespace
}  // namespace convlab
