// Plans (radix factorisation, twiddle tables), A packing for the complex GEMM,
// and the run-time choice between the AVX-512, AVX2 and portable builds of
// fft_impl.inc.
#include "kernels/cpu/fft/fft.hpp"

#include <cassert>
#include <cmath>
#include <string>

#include "core/device.hpp"

namespace convlab::cpu::fft {

#define CONVLAB_FFT_DECLARE(isa)                                                                                \
  namespace isa {                                                                                               \
  void r2c_2d(const Plan2D&, const float*, int, int, float*, ptrdiff_t, float*);                                \
  void c2r_2d(const Plan2D&, const float*, ptrdiff_t, int, int, float*, float*);                                \
  void cgemm(int, int, int, const float*, const float*, ptrdiff_t, float*, ptrdiff_t, bool);                    \
  }
CONVLAB_FFT_DECLARE(avx512)
CONVLAB_FFT_DECLARE(avx2)
CONVLAB_FFT_DECLARE(portable)
#undef CONVLAB_FFT_DECLARE

namespace {

enum class Isa { avx512, avx2, portable };
Isa pick_isa() {
  const CpuInfo& ci = cpu_info();
  if (ci.avx512f && ci.avx512vl && ci.avx512bw && ci.avx512dq) return Isa::avx512;
  if (ci.avx2 && ci.fma) return Isa::avx2;
  return Isa::portable;
}
Isa isa() {
  static const Isa i = pick_isa();
  return i;
}

}  // namespace

bool is_smooth(int n) {
  if (n < 1) return false;
  for (int p : {2, 3, 5})
    while (n % p == 0) n /= p;
  return n == 1;
}

int next_smooth(int n) {
  if (n < 1) n = 1;
  while (!is_smooth(n)) ++n;
  return n;
}

Plan1D::Plan1D(int n_) : n(n_) {
  assert(is_smooth(n));
  std::vector<int> radices;
  int rest = n;
  while (rest % 4 == 0) { radices.push_back(4); rest /= 4; }
  while (rest % 2 == 0) { radices.push_back(2); rest /= 2; }
  while (rest % 3 == 0) { radices.push_back(3); rest /= 3; }
  while (rest % 5 == 0) { radices.push_back(5); rest /= 5; }
  int n_cur = n, s = 1;
  for (int p : radices) {
    Stage sg{p, n_cur / p, s, int(cos_.size())};
    for (int j = 0; j < sg.m; ++j)
      for (int u = 1; u < p; ++u) {
        const double a = 2.0 * M_PI * double(j) * double(u) / double(n_cur);
        cos_.push_back(float(std::cos(a)));
        sin_.push_back(float(std::sin(a)));
      }
    stages.push_back(sg);
    s *= p;
    n_cur /= p;
  }
}

Plan2D::Plan2D(int lh_, int lw_) : lh(lh_), lw(lw_), wc(lw_ / 2 + 1), rows(lw_), cols(lh_) {}

size_t Plan2D::scratch_floats() const {
  const size_t maxn = size_t(lh > lw ? lh : lw);
  return size_t(lh) * wc * 2 * kLanes + size_t(lw) * 2 * kLanes + 2 * maxn * 2 * kLanes + 2 * size_t(lw) * kLanes;
}

void r2c_2d(const Plan2D& plan, const float* frame, int row_begin, int row_end, float* out, ptrdiff_t fstride,
            float* scratch) {
  assert(0 <= row_begin && row_begin <= row_end && row_end <= plan.lh && fstride % kLanes == 0);
  switch (isa()) {
    case Isa::avx512: return avx512::r2c_2d(plan, frame, row_begin, row_end, out, fstride, scratch);
    case Isa::avx2: return avx2::r2c_2d(plan, frame, row_begin, row_end, out, fstride, scratch);
    case Isa::portable: return portable::r2c_2d(plan, frame, row_begin, row_end, out, fstride, scratch);
  }
}

void c2r_2d(const Plan2D& plan, const float* in, ptrdiff_t fstride, int row_begin, int row_end, float* frame,
            float* scratch) {
  assert(0 <= row_begin && row_begin <= row_end && row_end <= plan.lh && fstride % kLanes == 0);
  switch (isa()) {
    case Isa::avx512: return avx512::c2r_2d(plan, in, fstride, row_begin, row_end, frame, scratch);
    case Isa::avx2: return avx2::c2r_2d(plan, in, fstride, row_begin, row_end, frame, scratch);
    case Isa::portable: return portable::c2r_2d(plan, in, fstride, row_begin, row_end, frame, scratch);
  }
}

size_t packed_a_floats(int m, int l) { return size_t((m + kGemmMr - 1) / kGemmMr) * kGemmMr * size_t(l) * 2; }

void pack_a(int m, int l, const float* a, ptrdiff_t ia, ptrdiff_t ib, ptrdiff_t la, ptrdiff_t lb, bool conj,
            float* packed) {
  const float sign = conj ? -1.f : 1.f;
  for (int i0 = 0; i0 < m; i0 += kGemmMr) {
    float* panel = packed + ptrdiff_t(i0 / kGemmMr) * l * kGemmMr * 2;  // (L, MR, re|im)
    for (int r = 0; r < kGemmMr; ++r) {
      const int i = i0 + r;
      if (i >= m) {
        for (int j = 0; j < l; ++j) panel[(j * kGemmMr + r) * 2] = panel[(j * kGemmMr + r) * 2 + 1] = 0.f;
        continue;
      }
      const float* ai = a + (i / kLanes) * ia + (i % kLanes) * ib;
      for (int j = 0; j < l; ++j) {
        const float* e = ai + (j / kLanes) * la + (j % kLanes) * lb;
        panel[(j * kGemmMr + r) * 2] = e[0];
        panel[(j * kGemmMr + r) * 2 + 1] = sign * e[kLanes];
      }
    }
  }
}

void cgemm(int m, int nb, int l, const float* packed_a, const float* b, ptrdiff_t b_ls, float* c, ptrdiff_t c_is,
           bool conj_b) {
  switch (isa()) {
    case Isa::avx512: return avx512::cgemm(m, nb, l, packed_a, b, b_ls, c, c_is, conj_b);
    case Isa::avx2: return avx2::cgemm(m, nb, l, packed_a, b, b_ls, c, c_is, conj_b);
    case Isa::portable: return portable::cgemm(m, nb, l, packed_a, b, b_ls, c, c_is, conj_b);
  }
}

const char* isa_used() {
  switch (isa()) {
    case Isa::avx512: return "avx512";
    case Isa::avx2: return "avx2";
    case Isa::portable: return "portable";
  }
  return "portable";
}

}  // namespace convlab::cpu::fft
