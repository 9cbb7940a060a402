// Direct-convolution micro-kernels over a blocked channel layout (NCHW16c-style
// activations, OIhw16i16o-style weights), one table per ISA (BLIS-style): the
// algorithm (algorithms/cpu/direct.cpp) walks the loops and never names an ISA.
//
// conv  : out[kb][j][0..V) (+)= sum_{ib < nib} sum_{t < ntaps} sum_{i < bi}
//             in[ib*in_ib_stride + in_off[t] + j*in_pix_stride + i]
//           * wei[kb*wei_kb_stride + ib*wei_ib_stride + wei_off[t] + i*V + (0..V)]
//         for kb < nkb (1, 2, 3 or 4) output blocks x j < nj pixels, written at
//         out + kb*out_kb_stride + j*out_pix_stride (V floats each).
//         Serves forward (in = blocked src, taps = (r,s)), backward-data
//         (in = blocked diff_dst, taps = the (r,s) of one stride phase) and the
//         small-channel backward-data scatter (ntaps = 1).
// wgrad : acc[kb][t][0..V) (+)= sum_{n < nn} sum_{p < np} sum_{q < nq}
//             in[n*in_n_stride + p*in_row_stride + q*in_pix_stride + t]
//           * dd[kb*dd_kb_stride + n*dd_n_stride + p*dd_row_stride + q*V + (0..V)]
//         for kb < nkb (1 or 2) x t < nt contiguous taps, written at
//         out + kb*out_kb_stride + t*V.
// pix   : out[c*out_c_stride + j*V + (0..V)] = sum_{t < ntaps} sum_{k < nk}
//             wei[wei_off[t] + k*nc + c]
//           * in[in_off[t] + k*in_k_stride + j*V + (0..V)]
//         for c < nc (<= 4) channels x j < njv (<= 4) vectors of V pixels: the
//         small-channel backward-data, vectorised over pixels instead of
//         channels (in = one stride phase of zero-padded planar diff_dst).
// All keep every accumulator in registers for the whole call; summation order
// is fixed by the arguments (deterministic). Threads: none inside; the caller
// gives each thread disjoint outputs.
// Assumes nj * nkb <= max_nj, nt * nkb <= max_nt, pointers valid for every index above.
#pragma once
#include <cstdint>

namespace convlab::cpu::direct {

struct ConvUkernelArgs {
  const float* in;
  const float* wei;
  float* out;
  const int64_t* in_off;   // (ntaps)
  const int64_t* wei_off;  // (ntaps)
  int ntaps;
  int nib;
  int64_t in_ib_stride, wei_ib_stride;
  int bi;  // reduction depth of one tap: input values at +i, weight rows of V at +i*V
  int64_t in_pix_stride, out_pix_stride;
  int nj;
  int nkb;  // 1, 2, 3 or 4; nj <= max_nj / nkb
  int64_t wei_kb_stride, out_kb_stride;
  bool accumulate;
  // (nj) pixel j's input offset in place of j*in_pix_stride, or nullptr. Lets
  // one call's pixels run across output rows (AVX2's 13-wide rows fill 6-pixel tiles).
  const int64_t* pix_off = nullptr;
};

struct WgradUkernelArgs {
  const float* in;
  const float* dd;
  float* out;
  int nt;
  int nn, np, nq;
  int64_t in_n_stride, in_row_stride, in_pix_stride;
  int64_t dd_n_stride, dd_row_stride;
  int nkb;  // 1 or 2; nt <= max_nt / nkb
  int64_t dd_kb_stride, out_kb_stride;
  bool accumulate;
  // (np*nq) src offset of pixel (p, q) at p*nq + q, in place of p*in_row_stride
  // + q*in_pix_stride, or nullptr. Needs dd_row_stride == nq*V; the pixels then
  // run as one loop (no loop exit per row: 13-wide rows lose ~15% to it).
  const int64_t* pix_off = nullptr;
};

struct PixUkernelArgs {
  const float* in;
  const float* wei;
  float* out;
  const int64_t* in_off;   // (ntaps)
  const int64_t* wei_off;  // (ntaps)
  int ntaps;
  int nk;
  int64_t in_k_stride;
  int nc, njv;
  int64_t out_c_stride;
};

struct Ukernels {
  const char* isa;
  int v;       // vector width in floats: the channel block
  int max_nj;  // conv: most pixels per call
  int max_nt;  // wgrad: most taps per call
  void (*conv)(const ConvUkernelArgs&);
  void (*wgrad)(const WgradUkernelArgs&);
  void (*pix)(const PixUkernelArgs&);
};

inline constexpr int kPixMaxC = 4, kPixMaxJ = 4;
// The largest max_nj of any table (pixel-offset arrays are sized for it).
inline constexpr int kMaxNj = 28;

const Ukernels& ukernels_avx512();
const Ukernels& ukernels_avx2();
const Ukernels& ukernels_portable();
// The widest table this CPU runs (cpu_info()), or the override below.
const Ukernels& select_ukernels();
// Tests only: make select_ukernels() return `uk` (nullptr: back to the CPU's
// choice), to run the whole algorithm on the narrower ISAs. Not thread-safe.
void override_ukernels(const Ukernels* uk);

}  // namespace convlab::cpu::direct
