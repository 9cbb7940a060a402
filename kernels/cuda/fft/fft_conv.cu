// FFT convolution's hand-written kernels: pad / crop and the pointwise complex
// multiply-accumulate across channels (contract in fft_conv.hpp).
//
// pad / crop: one thread per element of the larger side, grid-stride, 256 per block.
// cgemm: the multiply-accumulate as a complex GEMM per frequency (the
//   reduction over input channels of the group for fwd, output channels for
//   bwd-data, images for bwd-filter), register-tiled; layout below.
#include "kernels/cuda/fft/fft_conv.hpp"

#include <algorithm>
#include <climits>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/fft/fft_cgemm_tiles.hpp"

#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return unsigned(std::min<int64_t>((n + kThreads - 1) / kThreads, 16384)); }

__global__ void fft_pad_kernel(const float* __restrict__ in, int planes, int rows, int cols, int off_h, int off_w,
                               int fh, int fw, float* __restrict__ out) {
  const int64_t total = int64_t(planes) * fh * fw;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int x = int(i % fw), y = int(i / fw % fh);
    const int64_t pl = i / (int64_t(fw) * fh);
    const int r = y - off_h, c = x - off_w;
    out[i] = (r >= 0 && r < rows && c >= 0 && c < cols) ? in[(pl * rows + r) * cols + c] : 0.0f;  // (planes, rows, cols)
  }
}

__global__ void fft_crop_kernel(const float* __restrict__ in, int planes, int rows, int cols, int off_h, int off_w,
                                int fh, int fw, float scale, float* __restrict__ out) {
  const int64_t total = int64_t(planes) * rows * cols;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int c = int(i % cols), r = int(i / cols % rows);
    const int64_t pl = i / (int64_t(cols) * rows);
    out[i] = scale * in[(pl * fh + r + off_h) * fw + c + off_w];  // (planes, fh, fw)
  }
}

// ---- the pointwise stage: a batched complex GEMM over frequencies ----------
// One 256-thread block per (group, group of 4 consecutive frequencies, 32 x 32
// tile of out): the 4 frequencies are one 32-byte sector of every plane (the
// spectra stay plane-major: no transpose), so each staged row is a whole
// sector. Slabs of BK = 8 along the reduction, double-buffered in shared
// memory as [k][row][f] (conj applied while staging); while the block computes
// slab s, each thread's 4 + 4 global loads of slab s + 1 are in registers.
// Each thread a 4 x 4 complex register tile: 16 complex multiply-adds (64 FMA)
// per 8 fragment reads, conflict-free (geometry in fft_cgemm_tiles.hpp).
constexpr int kBM = kCgemmBM, kBN = kCgemmBN, kBK = kCgemmBK, kF = kCgemmF, kTM = kCgemmTM, kTN = kCgemmTN;
static_assert(kCgemmThreads == kThreads, "one block size");

// This thread's 4 values of one operand's slab from k0: rows (tid / 4 % 32),
// reduction indices tid / 128 + 2i; p points at (row, reduction index tid / 128,
// frequency) or is null outside the matrix / spectrum. kstep: planes per
// reduction index times spec.
__device__ __forceinline__ void load_slab(const float2* __restrict__ p, int64_t kstep, int k0, int kk0, int k,
                                          bool conj, float2 v[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int kk = k0 + kk0 + 2 * i;
    float2 z = float2{0.0f, 0.0f};
    if (p != nullptr && kk < k) z = p[int64_t(k0 + 2 * i) * kstep];
    v[i] = float2{z.x, conj ? -z.y : z.y};
  }
}

__global__ void __launch_bounds__(kThreads)
    fft_cgemm_kernel(FftCgemm g, int tiles_m, int tiles_n, int64_t fgroups, const float2* __restrict__ a,
                     const float2* __restrict__ b, float2* __restrict__ out) {
  CONVLAB_SHARED(float2, as, [2][kBK][kBM][kF]);
  CONVLAB_SHARED(float2, bs, [2][kBK][kBN][kF]);
  const int tid = int(threadIdx.x);
  // block -> (group, frequency group, tile): tiles fastest, so the blocks in
  // flight together share their frequencies' operand panels in L2
  const int64_t bid = blockIdx.x, tiles = int64_t(tiles_m) * tiles_n;
  const int tile = int(bid % tiles);
  const int64_t f0 = bid / tiles % fgroups * kF;
  const int grp = int(bid / tiles / fgroups);
  const int m0 = tile % tiles_m * kBM, n0 = tile / tiles_m * kBN;
  const int f = cgemm_f(tid);
  const bool f_ok = f0 + f < g.spec;

  // staging: row x, reduction indices kk0 + 2i
  const int x = cgemm_stage_row(tid), kk0 = cgemm_stage_kk(tid);
  const float2* pa = nullptr;
  const float2* pb = nullptr;
  if (f_ok && m0 + x < g.m) pa = a + (grp * g.a_g + (m0 + x) * g.a_m + kk0 * g.a_k) * g.spec + f0 + f;
  if (f_ok && n0 + x < g.n) pb = b + (grp * g.b_g + (n0 + x) * g.b_n + kk0 * g.b_k) * g.spec + f0 + f;
  const int64_t astep = g.a_k * g.spec, bstep = g.b_k * g.spec;

  float2 acc[kTM][kTN];
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = float2{0.0f, 0.0f};

  float2 va[4], vb[4];
  load_slab(pa, astep, 0, kk0, g.k, g.conj_a, va);
  load_slab(pb, bstep, 0, kk0, g.k, g.conj_b, vb);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    as[0][kk0 + 2 * i][x][f] = va[i];
    bs[0][kk0 + 2 * i][x][f] = vb[i];
  }
  __syncthreads();

  const int tm = cgemm_tm(tid), tn = cgemm_tn(tid);
  int buf = 0;
  for (int k0 = 0; k0 < g.k; k0 += kBK) {
    const bool next = k0 + kBK < g.k;  // uniform across the block
    if (next) {
      load_slab(pa, astep, k0 + kBK, kk0, g.k, g.conj_a, va);
      load_slab(pb, bstep, k0 + kBK, kk0, g.k, g.conj_b, vb);
    }
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float2 ra[kTM], rb[kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i) ra[i] = as[buf][kk][tm + 8 * i][f];
#pragma unroll
      for (int j = 0; j < kTN; ++j) rb[j] = bs[buf][kk][tn + 8 * j][f];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) {
          acc[i][j].x = fmaf(ra[i].x, rb[j].x, acc[i][j].x);
          acc[i][j].x = fmaf(-ra[i].y, rb[j].y, acc[i][j].x);
          acc[i][j].y = fmaf(ra[i].x, rb[j].y, acc[i][j].y);
          acc[i][j].y = fmaf(ra[i].y, rb[j].x, acc[i][j].y);
        }
    }
    if (next) {  // the other buffer: last read in the previous step, before the last barrier
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        as[buf ^ 1][kk0 + 2 * i][x][f] = va[i];
        bs[buf ^ 1][kk0 + 2 * i][x][f] = vb[i];
      }
    }
    __syncthreads();
    buf ^= 1;
  }

  if (!f_ok) return;
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int row = m0 + tm + 8 * i;
    if (row >= g.m) continue;
#pragma unroll
    for (int j = 0; j < kTN; ++j) {
      const int col = n0 + tn + 8 * j;
      if (col < g.n) out[(grp * g.o_g + row * g.o_m + col * g.o_n) * g.spec + f0 + f] = acc[i][j];
    }
  }
}

}  // namespace

void fft_pad(const float* in, int planes, int rows, int cols, int off_h, int off_w, FftSize fs, float* out,
             void* stream) {
  CONVLAB_LAUNCH(fft_pad_kernel, dim3(blocks_for(int64_t(planes) * fs.fh * fs.fw)), dim3(kThreads), 0, stream, in,
                 planes, rows, cols, off_h, off_w, fs.fh, fs.fw, out);
}

void fft_crop(const float* in, int planes, int rows, int cols, int off_h, int off_w, FftSize fs, float scale,
              float* out, void* stream) {
  CONVLAB_LAUNCH(fft_crop_kernel, dim3(blocks_for(int64_t(planes) * rows * cols)), dim3(kThreads), 0, stream, in,
                 planes, rows, cols, off_h, off_w, fs.fh, fs.fw, scale, out);
}

void fft_cgemm(const FftCgemm& g, const float2* a, const float2* b, float2* out, void* stream) {
  if (g.m < 1 || g.n < 1 || g.k < 1 || g.groups < 1 || g.spec < 1) return;
  const int tiles_m = (g.m + kBM - 1) / kBM, tiles_n = (g.n + kBN - 1) / kBN;
  const int64_t fgroups = (g.spec + kF - 1) / kF;
  const int64_t blocks = int64_t(tiles_m) * tiles_n * fgroups * g.groups;
  if (blocks > INT_MAX) fail("fft_cgemm: " + std::to_string(blocks) + " blocks exceed the grid's 2^31 - 1");
  CONVLAB_LAUNCH(fft_cgemm_kernel, dim3(unsigned(blocks)), dim3(kThreads), 0, stream, g, tiles_m, tiles_n, fgroups, a,
                 b, out);
}

// Operands as fft_cmac receives them (a, b) and the output, per direction
// (see fft_conv.hpp), with m, n, k the GEMM's:
//   fwd        m = image, n = kl, k = cl:  A = X(n, g cg + cl), B = conj W(g kg + kl, cl)
//   bwd-data   m = image, n = cl, k = kl:  A = DY(n, g kg + kl), B = W(g kg + kl, cl)
//   bwd-filter m = cl, n = kl, k = image:  A = X(n, g cg + cl), B = conj DY(n, g kg + kl)
FftCgemm fft_cmac_gemm(const ConvShape& sh, Direction mode, int64_t spec) {
  const int64_t cg = sh.c / sh.groups, kg = sh.k / sh.groups, c = sh.c, k = sh.k;
  FftCgemm g{};
  g.groups = sh.groups;
  g.spec = spec;
  if (mode == Direction::fwd) {
    g.m = sh.n; g.n = int(kg); g.k = int(cg);
    g.a_m = c; g.a_k = 1; g.a_g = cg;
    g.b_k = 1; g.b_n = cg; g.b_g = kg * cg; g.conj_b = true;
    g.o_m = k; g.o_n = 1; g.o_g = kg;
  } else if (mode == Direction::bwd_data) {
    g.m = sh.n; g.n = int(cg); g.k = int(kg);
    g.a_m = k; g.a_k = 1; g.a_g = kg;
    g.b_k = cg; g.b_n = 1; g.b_g = kg * cg;
    g.o_m = c; g.o_n = 1; g.o_g = cg;
  } else {
    g.m = int(cg); g.n = int(kg); g.k = sh.n;
    g.a_m = 1; g.a_k = c; g.a_g = cg;
    g.b_k = k; g.b_n = 1; g.b_g = kg; g.conj_b = true;
    g.o_m = 1; g.o_n = cg; g.o_g = kg * cg;
  }
  return g;
}

void fft_cmac(const ConvShape& sh, Direction mode, int64_t spec, const float2* a, const float2* b, float2* out,
              void* stream) {
  fft_cgemm(fft_cmac_gemm(sh, mode, spec), a, b, out, stream);
}

}  // namespace convlab::cuda
