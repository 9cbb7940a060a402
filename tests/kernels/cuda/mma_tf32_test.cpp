// The emulator's tensor-core pair: simt::to_tf32 (cvt.rna.tf32.f32) and
// simt::mma_m16n8k8_tf32 (mma.sync m16n8k8 .tf32, PTX's fragment layout).
// The layout is checked with small integers (exact in TF32 and in any
// summation order), so a fragment element in the wrong row or column changes
// the result; rounding with values whose TF32 neighbours are known.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/simt/memory.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::simt {
namespace {

// One warp per block: D (16 x 8, row-major) = C + A (16 x 8, row-major) * B (8 x 8, B[k][n]),
// each lane loading its fragments as PTX lays them out.
__global__ void mma_kernel(const float* a, const float* b, const float* c, float* d) {
  const int lane = int(threadIdx.x) % 32, g = lane / 4, t = lane % 4;
  const float fa[4] = {a[g * 8 + t], a[(g + 8) * 8 + t], a[g * 8 + t + 4], a[(g + 8) * 8 + t + 4]};
  const float fb[2] = {b[t * 8 + g], b[(t + 4) * 8 + g]};
  float acc[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
  mma_m16n8k8_tf32(acc, fa, fb);
  d[g * 8 + 2 * t] = acc[0], d[g * 8 + 2 * t + 1] = acc[1];
  d[(g + 8) * 8 + 2 * t] = acc[2], d[(g + 8) * 8 + 2 * t + 1] = acc[3];
}

__global__ void round_kernel(const float* in, float* out, int n) {
  const int i = int(threadIdx.x);
  if (i < n) out[i] = to_tf32(in[i]);
}

std::vector<float> run_mma(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c) {
  DeviceArray<float> da(a), db(b), dc(c), dd(128);
  CONVLAB_LAUNCH(mma_kernel, dim3(1), dim3(32), 0, nullptr, da.get(), db.get(), dc.get(), dd.get());
  return dd.download();
}

TEST(MmaTf32, FragmentLayoutGivesTheMatrixProduct) {
  std::vector<float> a(128), b(64), c(128);
  for (int i = 0; i < 128; ++i) a[size_t(i)] = float((i * 7) % 13 - 6);  // row r, column k: a[r*8 + k]
  for (int i = 0; i < 64; ++i) b[size_t(i)] = float((i * 5) % 11 - 5);   // b[k*8 + n]
  for (int i = 0; i < 128; ++i) c[size_t(i)] = float(i % 9 - 4);
  const std::vector<float> d = run_mma(a, b, c);
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) {
      double want = c[size_t(r * 8 + n)];
      for (int k = 0; k < 8; ++k) want += double(a[size_t(r * 8 + k)]) * b[size_t(k * 8 + n)];
      EXPECT_EQ(d[size_t(r * 8 + n)], float(want)) << "D(" << r << ", " << n << ")";
    }
}

// A single non-zero in A and in B: D is non-zero in exactly one element.
TEST(MmaTf32, EachFragmentElementLandsInItsRowAndColumn) {
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 8; ++k) {
      const int n = (r + k) % 8;
      std::vector<float> a(128, 0.0f), b(64, 0.0f), c(128, 0.0f);
      a[size_t(r * 8 + k)] = 2.0f, b[size_t(k * 8 + n)] = 3.0f;
      const std::vector<float> d = run_mma(a, b, c);
      for (int i = 0; i < 128; ++i) EXPECT_EQ(d[size_t(i)], i == r * 8 + n ? 6.0f : 0.0f) << r << " " << k;
    }
}

float bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The tensor cores read TF32: the low 13 mantissa bits of an input are ignored.
TEST(MmaTf32, InputsAreReadAsTf32) {
  std::vector<float> a(128, 0.0f), b(64, 0.0f), c(128, 0.0f);
  a[0] = bits(0x3f800000u | 0x1fffu);  // 1 + (2^13 - 1) * 2^-23: TF32 reads 1
  b[0] = 1.0f;
  EXPECT_EQ(run_mma(a, b, c)[0], 1.0f);
}

TEST(MmaTf32, RoundsToNearestTiesAwayFromZero) {
  const float u = std::ldexp(1.0f, -10);  // TF32's unit at 1
  const std::vector<float> in = {
      1.0f + u / 2,                          // a tie: away from zero
      -(1.0f + u / 2),                       // a negative tie: away from zero
      1.0f + u / 2 - std::ldexp(1.0f, -23),  // just below the tie: down
      1.0f + 3 * u / 4,                      // above the tie: up
      1.0f + u + u / 2,                      // a tie at an odd TF32 value: away (not to even)
      0.0f,
      std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::max(),  // rounds past the largest finite TF32: infinity
  };
  const std::vector<float> want = {1.0f + u, -(1.0f + u), 1.0f, 1.0f + u, 1.0f + 2 * u, 0.0f,
                                   std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
  DeviceArray<float> din(in), dout(in.size());
  CONVLAB_LAUNCH(round_kernel, dim3(1), dim3(32), 0, nullptr, din.get(), dout.get(), int(in.size()));
  const std::vector<float> got = dout.download();
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(got[i], want[i]) << "input " << i;
  EXPECT_TRUE(std::isnan(to_tf32(std::numeric_limits<float>::quiet_NaN())));
}

#if CONVLAB_SIMT_EMULATED
// A warp-level MMA needs every lane of a full warp.
TEST(MmaTf32, APartialWarpIsAnError) {
  DeviceArray<float> a(128), b(64), c(128), d(128);
  try {
    CONVLAB_LAUNCH(mma_kernel, dim3(1), dim3(16), 0, nullptr, a.get(), b.get(), c.get(), d.get());
    FAIL() << "a 16-thread MMA launched";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("all 32 lanes"), std::string::npos) << e.what();
  }
  reset_device_for_tests();
}
#endif

}  // namespace
}  // namespace convlab::simt
