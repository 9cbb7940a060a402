// The direct micro-kernels of every ISA this CPU runs against naive loops, on
// small integers (exact in fp32, so the comparison is equality): conv with
// 1/2/3/4 output blocks and every pixel count, wgrad with 1/2 blocks and every
// tap count, pix with every (channels, vectors) pair, accumulate on and off,
// conv and wgrad also with per-pixel offset tables, conv also at pixel strides V
// and 2V (its constant-offset variants).
#include <gtest/gtest.h>

#include <vector>

#include "core/device.hpp"
#include "kernels/cpu/direct/direct_ukernel.hpp"

namespace convlab::cpu::direct {
namespace {

std::vector<const Ukernels*> tables() {
  std::vector<const Ukernels*> v{&ukernels_portable()};
  if (cpu_info().avx2 && cpu_info().fma) v.push_back(&ukernels_avx2());
  if (cpu_info().isa() == "avx512") v.push_back(&ukernels_avx512());
  return v;
}

std::vector<float> ints(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(int((i * 7 + size_t(seed) * 13) % 5) - 2);
  return v;
}

TEST(DirectUkernel, ConvMatchesLoops) {
  for (const Ukernels* uk : tables()) {
    const int V = uk->v;
    for (int nkb : {1, 2, 3, 4})
      for (int nj = 1; nj * nkb <= uk->max_nj; ++nj)
        for (int mode = 0; mode < 5; ++mode) {  // accumulate off / on; pixel offsets across "rows"; stride V, 2V
          const bool acc = mode == 1, offs = mode == 2;
          const int ntaps = 3, nib = 2, bi = V - 1, ips = mode == 3 ? V : mode == 4 ? 2 * V : bi + 2;
          const int64_t in_ib = 4 * 64 + ips * nj, wei_ib = ntaps * bi * V + 3, wei_kb = nib * wei_ib + 5;
          const std::vector<int64_t> in_off = {0, 17, 64}, wei_off = {0, bi * V, 2 * bi * V};
          const auto in = ints(size_t(nib * in_ib + 64 + (2 * nj + 5) * ips), 1);
          const auto wei = ints(size_t(nkb * wei_kb), 2);
          const int64_t ops = V + 3, out_kb = nj * ops + 1;
          const auto init = ints(size_t(nkb * out_kb), 3);
          std::vector<float> out = init;
          // Rows of 3 pixels, a row 5*ips further on: pixel j at (j/3)*5*ips + (j%3)*ips.
          std::vector<int64_t> pix(static_cast<size_t>(nj));
          for (int j = 0; j < nj; ++j) pix[size_t(j)] = offs ? (j / 3) * 5 * ips + (j % 3) * ips : j * ips;
          ConvUkernelArgs a{in.data(), wei.data(), out.data(), in_off.data(), wei_off.data(), ntaps, nib, in_ib,
                            wei_ib, bi, ips, ops, nj, nkb, wei_kb, out_kb, acc, offs ? pix.data() : nullptr};
          uk->conv(a);
          for (int kb = 0; kb < nkb; ++kb)
            for (int j = 0; j < nj; ++j)
              for (int l = 0; l < V; ++l) {
                float want = acc ? init[kb * out_kb + j * ops + l] : 0.f;
                for (int ib = 0; ib < nib; ++ib)
                  for (int t = 0; t < ntaps; ++t)
                    for (int i = 0; i < bi; ++i)
                      want += in[ib * in_ib + in_off[t] + pix[size_t(j)] + i] *
                              wei[kb * wei_kb + ib * wei_ib + wei_off[t] + i * V + l];
                ASSERT_EQ(out[kb * out_kb + j * ops + l], want)
                    << uk->isa << " nkb=" << nkb << " nj=" << nj << " mode=" << mode << " kb=" << kb << " j=" << j;
              }
        }
  }
}

TEST(DirectUkernel, WgradMatchesLoops) {
  for (const Ukernels* uk : tables()) {
    const int V = uk->v;
    for (int nkb : {1, 2})
      for (int nt = 1; nt * nkb <= uk->max_nt; ++nt)
        for (int mode = 0; mode < 3; ++mode) {  // accumulate off / on; one pixel loop over a table
          const bool acc = mode == 1, offs = mode == 2;
          const int nn = 2, np = 3, nq = 5, ips = 3;
          const int64_t in_row = nq * ips + nt + 2, in_n = np * in_row + 1;
          const int64_t dd_row = nq * V + (offs ? 0 : 4), dd_n = np * dd_row, dd_kb = nn * dd_n + 8;
          const auto in = ints(size_t(nn * in_n + nt), 4);
          const auto dd = ints(size_t(nkb * dd_kb), 5);
          const int64_t out_kb = nt * V + 16;
          const auto init = ints(size_t(nkb * out_kb), 6);
          std::vector<float> out = init;
          std::vector<int64_t> pix;
          for (int p = 0; p < np; ++p)
            for (int q = 0; q < nq; ++q) pix.push_back(p * in_row + q * ips);
          WgradUkernelArgs a{in.data(), dd.data(), out.data(), nt, nn, np, nq, in_n, in_row, ips, dd_n, dd_row,
                             nkb, dd_kb, out_kb, acc, offs ? pix.data() : nullptr};
          uk->wgrad(a);
          for (int kb = 0; kb < nkb; ++kb)
            for (int t = 0; t < nt; ++t)
              for (int l = 0; l < V; ++l) {
                float want = acc ? init[kb * out_kb + t * V + l] : 0.f;
                for (int n = 0; n < nn; ++n)
                  for (int p = 0; p < np; ++p)
                    for (int q = 0; q < nq; ++q)
                      want += in[n * in_n + p * in_row + q * ips + t] * dd[kb * dd_kb + n * dd_n + p * dd_row + q * V + l];
                ASSERT_EQ(out[kb * out_kb + t * V + l], want) << uk->isa << " nkb=" << nkb << " nt=" << nt << " mode=" << mode;
              }
        }
  }
}

TEST(DirectUkernel, PixMatchesLoops) {
  for (const Ukernels* uk : tables()) {
    const int V = uk->v;
    for (int nc = 1; nc <= kPixMaxC; ++nc)
      for (int njv = 1; njv <= kPixMaxJ; ++njv) {
        const int ntaps = 3, nk = 5;
        const int64_t ks = njv * V + 9;
        const std::vector<int64_t> in_off = {0, 3, 2 * ks * nk + 1}, wei_off = {0, nk * nc, 2 * nk * nc};
        const auto in = ints(size_t(3 * ks * nk + 1 + njv * V), 7);
        const auto wei = ints(size_t(ntaps * nk * nc), 8);
        const int64_t ocs = njv * V + 5;
        std::vector<float> out(size_t(nc * ocs), -99.f);
        PixUkernelArgs a{in.data(), wei.data(), out.data(), in_off.data(), wei_off.data(), ntaps, nk, ks, nc, njv, ocs};
        uk->pix(a);
        for (int c = 0; c < nc; ++c)
          for (int x = 0; x < njv * V; ++x) {
            float want = 0;
            for (int t = 0; t < ntaps; ++t)
              for (int k = 0; k < nk; ++k) want += wei[wei_off[t] + k * nc + c] * in[in_off[t] + k * ks + x];
            ASSERT_EQ(out[c * ocs + x], want) << uk->isa << " nc=" << nc << " njv=" << njv;
          }
      }
  }
}

}  // namespace
}  // namespace convlab::cpu::direct
