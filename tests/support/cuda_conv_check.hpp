// The SIMT-emulated kernel tests' check (tests/kernels/cuda: kernels and their
// launchers, which take plain data and have no tolerance() of their own): one
// direction against the fp64 reference (kernels/ref), NaN-prefilled outputs,
// the K*eps (or a given) bound. The cuda.* algorithms go through the shared
// tester instead (ConvTester(...).emulated(), <convlab/testing.hpp>).
#pragma once

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "convlab/testing.hpp"
#include "kernels/conv_shape.hpp"
#include "kernels/cuda/simt/memory.hpp"
#include "kernels/cuda/simt/simt.hpp"
#include "kernels/ref/conv_ref.hpp"

namespace convlab::cuda::test {

using Dir = Direction;  // the one Direction type (core/direction.hpp, via kernels/conv_shape.hpp)
inline const char* name(Dir d) { return d == Dir::fwd ? "fwd" : d == Dir::bwd_data ? "bwd-data" : "bwd-filter"; }
inline constexpr const Dir (&kDirs)[3] = kAllDirections;

// sh with its bottom / right padding set and p, q following from it.
inline ConvShape with_end_padding(ConvShape sh, int pad_h_end, int pad_w_end) {
  sh.pad_h_end = pad_h_end;
  sh.pad_w_end = pad_w_end;
  sh.p = (sh.padded_h() - sh.dil_h * (sh.r - 1) - 1) / sh.stride_h + 1;
  sh.q = (sh.padded_w() - sh.dil_w * (sh.s - 1) - 1) / sh.stride_w + 1;
  return sh;
}

// Symmetric padding (with_end_padding() for the other kind).
inline ConvShape shape(int n, int c, int h, int w, int k, int r, int s, int pad_h, int pad_w, int stride_h,
                       int stride_w, int dil = 1, int groups = 1) {
  const ConvShape sh{n, c, h, w, k, r, s, 0, 0, pad_h, pad_w, pad_h, pad_w, stride_h, stride_w, dil, dil, groups};
  return with_end_padding(sh, pad_h, pad_w);
}

inline std::string label(const ConvShape& sh) {
  return "n" + std::to_string(sh.n) + "c" + std::to_string(sh.c) + "h" + std::to_string(sh.h) + "w" +
         std::to_string(sh.w) + "k" + std::to_string(sh.k) + "r" + std::to_string(sh.r) + "s" + std::to_string(sh.s) +
         "p" + std::to_string(sh.pad_h) + "x" + std::to_string(sh.pad_w) +
         (sh.symmetric_padding() ? ""
                                 : "e" + std::to_string(sh.pad_h_end) + "x" + std::to_string(sh.pad_w_end)) +
         "st" + std::to_string(sh.stride_h) + "x" +
         std::to_string(sh.stride_w) + "d" + std::to_string(sh.dil_h) + "g" + std::to_string(sh.groups);
}

// The shared tester's sweeps (<convlab/testing.hpp>) as kernel shapes: one
// definition of the shapes both the kernels' launchers and the cuda.*
// algorithms (through ConvTester(...).emulated()) are checked on.
inline std::vector<ConvShape> shapes_of(const std::vector<testing::TestProblem>& sweep) {
  std::vector<ConvShape> v;
  for (const testing::TestProblem& t : sweep) v.push_back(to_shape(t.problem));
  return v;
}
// Small ragged shapes around a kernel's tiles (testing::tile_sweep()).
inline std::vector<ConvShape> general_shapes() { return shapes_of(testing::tile_sweep()); }
// Strided backward data's phases (testing::strided_sweep()).
inline std::vector<ConvShape> strided_shapes() { return shapes_of(testing::strided_sweep()); }

inline int64_t reduction(const ConvShape& sh, Dir d) {
  const int64_t cg = sh.c / sh.groups, kg = sh.k / sh.groups;
  switch (d) {
    case Dir::fwd: return cg * sh.r * sh.s;
    case Dir::bwd_data: return kg * sh.r * sh.s;
    case Dir::bwd_filter: return int64_t(sh.n) * sh.p * sh.q;
  }
  return 1;
}

// run(dir, sh, src, wei, dst): device pointers; writes the output of `dir`.
using ConvRun = std::function<void(Dir, const ConvShape&, float*, float*, float*)>;

// A family's three entry points without workspace (kernel(sh, in, in, out, stream),
// in each direction's own argument order) as one ConvRun.
using NoWsKernel = void (*)(const ConvShape&, const float*, const float*, float*, void*);
inline ConvRun by_direction(NoWsKernel fwd, NoWsKernel bwd_data, NoWsKernel bwd_filter) {
  return [=](Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
    if (d == Dir::fwd) fwd(sh, src, wei, dst, nullptr);
    if (d == Dir::bwd_data) bwd_data(sh, dst, wei, src, nullptr);
    if (d == Dir::bwd_filter) bwd_filter(sh, src, dst, wei, nullptr);
  };
}

// elem / global as in algorithms/algorithm.hpp's Tolerance; elem < 0 means K*eps.
// Returns max_i |y_i - ref_i| / mag_i (the measured error per unit of sum |terms|);
// *global_form, when given, gets max_i |y_i - ref_i| / max_j mag_j (the error in
// the transform algorithms' bound form, eps x max sum|terms|).
inline double check_conv(const ConvShape& sh, Dir d, const ConvRun& run, double elem = -1, double global = 0,
                         double* global_form = nullptr) {
  const int64_t ns = int64_t(sh.n) * sh.c * sh.h * sh.w, nw = int64_t(sh.k) * (sh.c / sh.groups) * sh.r * sh.s,
                nd = int64_t(sh.n) * sh.k * sh.p * sh.q;
  std::vector<float> src(ns), wei(nw), dst(nd);
  uint64_t x = 0x9E3779B97F4A7C15ull ^ uint64_t(ns * 31 + nw * 7 + nd);
  auto uni = [&] {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return float(double(x >> 11) / double(1ull << 53) * 2.0 - 1.0);
  };
  for (float& v : src) v = uni();
  for (float& v : wei) v = uni();
  for (float& v : dst) v = uni();
  std::vector<double> ref, mag;
  const int64_t nout = d == Dir::fwd ? nd : d == Dir::bwd_data ? ns : nw;
  ref.resize(nout);
  mag.resize(nout);
  if (d == Dir::fwd) ref::conv_fwd(sh, src.data(), wei.data(), ref.data(), mag.data());
  if (d == Dir::bwd_data) ref::conv_bwd_data(sh, dst.data(), wei.data(), ref.data(), mag.data());
  if (d == Dir::bwd_filter) ref::conv_bwd_filter(sh, src.data(), dst.data(), ref.data(), mag.data());

  simt::DeviceArray<float> dsrc(src), dwei(wei), ddst(dst);
  simt::DeviceArray<float>& out = d == Dir::fwd ? ddst : d == Dir::bwd_data ? dsrc : dwei;
  out.fill_bytes(0xFF);  // NaN: an element the kernel forgets fails
  run(d, sh, dsrc.get(), dwei.get(), ddst.get());
  const std::vector<float> got = out.download();

  if (elem < 0) elem = double(reduction(sh, d)) * FLT_EPSILON;
  double max_mag = 0;
  for (double m : mag) max_mag = std::max(max_mag, m);
  int bad = 0;
  double worst = 0, worst_err = 0;
  for (int64_t i = 0; i < nout; ++i) {
    const double err = std::fabs(double(got[i]) - ref[i]);
    if (mag[i] > 0) worst = std::max(worst, err / mag[i]);
    if (!(err <= worst_err)) worst_err = err;  // NaN sticks
    const double allowed = elem * mag[i] + global * max_mag;
    if (!(err <= allowed) && ++bad <= 3)
      ADD_FAILURE() << label(sh) << " " << name(d) << " element " << i << ": " << got[i] << " vs " << ref[i]
                    << " (allowed " << allowed << ")";
  }
  EXPECT_EQ(bad, 0) << label(sh) << " " << name(d);
  if (global_form) *global_form = max_mag > 0 ? worst_err / max_mag : 0;
  return worst;
}

// Launchers whose grid grows with N or groups must split a grid over the
// device's limits (grid.y, grid.z <= 65535) into launches that fit. Emulating
// 65536 blocks is slow, so this fixture lowers the emulator's limits to 3 (y)
// and 2 (z) (simt::set_grid_limits_for_tests): every launcher chunks by
// simt::grid_limits(), and the emulator rejects any launch over them, so a
// launcher that forgets to chunk fails here exactly as it would on a GPU.
class LowGridLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = simt::grid_limits();
    simt::set_grid_limits_for_tests({saved_.x, 3, 2});
  }
  void TearDown() override { simt::set_grid_limits_for_tests(saved_); }
  simt::GridLimits saved_{};
};
// N = 5 images (grid.z 5 > 2), 4 groups of one channel block (grid.y 4 > 3).
inline const ConvShape kLowGridShape = shape(5, 4, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 4);

}  // namespace convlab::cuda::test

#include "core/layers.hpp"

namespace convlab::cuda::test {

// ThreadSanitizer makes the emulator ~10x slower: the AlexNet-size runs skip there.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Under the sanitizers (5-10x slower emulation) every other shape of a sweep:
// still every code path of the kernels, at half the cost.
template <typename T>
std::vector<T> sanitized_subset(std::vector<T> v) {
  if (!kSanitized) return v;
  std::vector<T> out;
  for (size_t i = 0; i < v.size(); i += 2) out.push_back(v[i]);
  return out;
}

// The 3x3 stride-1 layers of AlexNet (both variants) at batch 1, from core's table.
inline std::vector<std::pair<std::string, ConvShape>> alexnet_3x3_layers() {
  std::vector<std::pair<std::string, ConvShape>> v;
  for (const char* net : {"alexnet", "alexnet-owt"})
    for (const NetLayer& l : network_layers(net, 1)) {
      const ConvProblem& p = l.problem;
      if (p.r != 3 || p.s != 3 || p.stride_h != 1 || p.stride_w != 1) continue;
      v.emplace_back(l.id, ConvShape{p.n, p.c, p.h, p.w, p.k, p.r, p.s, p.p(), p.q(), p.pad_h, p.pad_w,
                                       p.pad_h_end, p.pad_w_end, p.stride_h, p.stride_w, p.dil_h, p.dil_w,
                                       p.groups});
    }
  return v;
}

}  // namespace convlab::cuda::test
