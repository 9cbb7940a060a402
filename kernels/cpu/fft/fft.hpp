// Hand-written FFTs for convolution: batched real-to-complex and complex-to-real
// 2-D transforms of sizes 2^a 3^b 5^c, plus the per-frequency complex GEMM of
// the fbfft formulation. Plain data in; no registry, no ConvProblem.
//
// Batching ("lanes"): every transform works on kLanes = 16 independent signals
// at once, interleaved element by element, so every butterfly is SIMD over the
// signals and no shuffles are needed: one zmm per element on AVX-512, two ymm
// slices (four xmm on the SSE2 baseline) walked one after the other, so the
// live set fits 16 registers (fft_impl.inc). Layouts (floats):
//   real frame   x[h][w][lane]                       (Lh, Lw, 16)
//   spectrum     X[f][re|im][lane] at out + f*fstride, f = u*Wc + v,  Wc = Lw/2+1
//                (re: 16 floats, im: the next 16; fstride >= 32, a multiple of 16)
// The 1-D transforms are Stockham autosort, decimation in frequency, radices
// 4, 2, 3, 5. Real rows go two at a time through one complex FFT (z = a + i b).
//
// Threads: none here. Callers run one transform per thread with their own
// scratch (scratch_floats()). Every ISA variant computes the same arithmetic
// (no FMA contraction differences matter for the tests, but results can differ
// in the last bit between the AVX-512, AVX2 and portable builds).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace convlab::cpu::fft {

inline constexpr int kLanes = 16;

// n = 2^a 3^b 5^c (n >= 1).
bool is_smooth(int n);
// Smallest smooth number >= n.
int next_smooth(int n);

// Stockham stages of one complex 1-D transform of length n.
struct Stage {
  int radix;  // 2, 3, 4 or 5
  int m;      // n_cur / radix: butterflies per sub-transform
  int s;      // product of the radices before this stage
  int tw;     // offset into Plan1D::cos_/sin_: (m, radix-1) twiddles exp(-2 pi i j u / n_cur)
};

struct Plan1D {
  int n = 0;
  std::vector<Stage> stages;
  std::vector<float> cos_, sin_;
  explicit Plan1D(int n);
};

// An Lh x Lw real 2-D transform (both smooth).
struct Plan2D {
  int lh, lw, wc;  // wc = lw/2 + 1 complex columns
  Plan1D rows, cols;
  Plan2D(int lh, int lw);
  int64_t frequencies() const { return int64_t(lh) * wc; }
  // Scratch floats forward()/inverse() need (64-byte aligned by the caller).
  size_t scratch_floats() const;
};

// Forward r2c. frame rows outside [row_begin, row_end) must be zero and are not
// read (pruning: zero rows cost no row transform). Writes every frequency.
void r2c_2d(const Plan2D& plan, const float* frame, int row_begin, int row_end, float* out, ptrdiff_t fstride,
            float* scratch);
// Inverse c2r (unnormalised: the result is Lh*Lw times the true inverse).
// Writes only frame rows [row_begin, row_end) (the rest are not needed).
void c2r_2d(const Plan2D& plan, const float* in, ptrdiff_t fstride, int row_begin, int row_end, float* frame,
            float* scratch);

// Complex GEMM over lanes (one frequency of the fbfft formulation):
//   C(i, jb) = sum_l A(i, l) * op(B(l, jb))      op = identity or conjugate
// A is an M x L complex matrix packed by pack_a(); B(l, jb) is a 16-lane
// complex vector at b + l*b_ls + jb*32 (re then im); C(i, jb) likewise at
// c + i*c_is + jb*32. C is overwritten.
inline constexpr int kGemmMr = 6;
size_t packed_a_floats(int m, int l);
// A(i, l) re at a + (i/16)*ia + (i%16)*ib + (l/16)*la + (l%16)*lb, im 16 floats later.
void pack_a(int m, int l, const float* a, ptrdiff_t ia, ptrdiff_t ib, ptrdiff_t la, ptrdiff_t lb, bool conj,
            float* packed);
void cgemm(int m, int nb, int l, const float* packed_a, const float* b, ptrdiff_t b_ls, float* c, ptrdiff_t c_is,
           bool conj_b);

// Which implementation the dispatchers use here: "avx512", "avx2" or "portable".
const char* isa_used();

}  // namespace convlab::cpu::fft
