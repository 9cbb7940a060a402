// Implicit GEMM, one kernel template for the three directions.
//
// Work split: one 256-thread block per 64 x 64 tile of the direction's GEMM
// output (blockIdx.x along the GEMM's N, blockIdx.y along M, blockIdx.z =
// group); each thread owns a 4 x 4 register tile (rows ty*4.., cols tx*4..).
// K loop in steps of 16: every thread gathers 4 elements of the A slice and 4
// of the B slice through the direction's Op (index math + bounds = padding /
// stride holes read as zero) into shared memory, k-major, then 16 rank-1
// updates from float4 shared-memory reads. The Op also scatters C back to NCHW.
// Consecutive threads gather consecutive GEMM columns (output pixels), so the
// image reads are coalesced along rows.
#include "kernels/cuda/implicit_gemm/implicit_gemm.hpp"

#include <cstdint>

#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4, kThreads = 256;

struct FwdOp {  // M = Kg, N = N*P*Q, K = Cg*R*S
  ConvShape sh;
  const float* src;
  const float* wei;
  float* dst;
  __device__ float a(int g, int i, int kk) const {
    const int kg = sh.k / sh.groups, crs = sh.c / sh.groups * sh.r * sh.s;
    return wei[int64_t(g * kg + i) * crs + kk];  // (K, Cg*R*S)
  }
  __device__ float b(int g, int kk, int j) const {
    const int cg = sh.c / sh.groups, pq = sh.p * sh.q;
    const int s = kk % sh.s, r = kk / sh.s % sh.r, cl = kk / (sh.r * sh.s);
    const int n = j / pq, p = j % pq / sh.q, q = j % sh.q;
    const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h, iw = q * sh.stride_w - sh.pad_w + s * sh.dil_w;
    if (ih < 0 || ih >= sh.h || iw < 0 || iw >= sh.w) return 0.0f;
    return src[((int64_t(n) * sh.c + g * cg + cl) * sh.h + ih) * sh.w + iw];  // (N, C, H, W)
  }
  __device__ void store(int g, int i, int j, float v) const {
    const int kg = sh.k / sh.groups, pq = sh.p * sh.q;
    dst[(int64_t(j / pq) * sh.k + g * kg + i) * pq + j % pq] = v;  // (N, K, P*Q)
  }
};

struct BwdDataOp {  // M = Cg, N = N*H*W, K = Kg*R*S
  ConvShape sh;
  const float* diff_dst;
  const float* wei;
  float* diff_src;
  __device__ float a(int g, int i, int kk) const {
    const int kg = sh.k / sh.groups, cg = sh.c / sh.groups, rs = sh.r * sh.s;
    return wei[(int64_t(g * kg + kk / rs) * cg + i) * rs + kk % rs];  // (K, Cg, R*S)
  }
  __device__ float b(int g, int kk, int j) const {
    const int kg = sh.k / sh.groups, hw = sh.h * sh.w;
    const int s = kk % sh.s, r = kk / sh.s % sh.r, kl = kk / (sh.r * sh.s);
    const int n = j / hw, h = j % hw / sh.w, w = j % sh.w;
    const int ph = h + sh.pad_h - r * sh.dil_h, qw = w + sh.pad_w - s * sh.dil_w;
    if (ph < 0 || qw < 0 || ph % sh.stride_h != 0 || qw % sh.stride_w != 0) return 0.0f;
    const int p = ph / sh.stride_h, q = qw / sh.stride_w;
    if (p >= sh.p || q >= sh.q) return 0.0f;
    return diff_dst[((int64_t(n) * sh.k + g * kg + kl) * sh.p + p) * sh.q + q];  // (N, K, P, Q)
  }
  __device__ void store(int g, int i, int j, float v) const {
    const int cg = sh.c / sh.groups, hw = sh.h * sh.w;
    diff_src[(int64_t(j / hw) * sh.c + g * cg + i) * hw + j % hw] = v;  // (N, C, H*W)
  }
};

struct BwdFilterOp {  // M = Kg, N = Cg*R*S, K = N*P*Q
  ConvShape sh;
  const float* src;
  const float* diff_dst;
  float* diff_wei;
  __device__ float a(int g, int i, int kk) const {
    const int kg = sh.k / sh.groups, pq = sh.p * sh.q;
    return diff_dst[(int64_t(kk / pq) * sh.k + g * kg + i) * pq + kk % pq];  // (N, K, P*Q)
  }
  __device__ float b(int g, int kk, int j) const {
    const int cg = sh.c / sh.groups, pq = sh.p * sh.q;
    const int n = kk / pq, p = kk % pq / sh.q, q = kk % sh.q;
    const int s = j % sh.s, r = j / sh.s % sh.r, cl = j / (sh.r * sh.s);
    const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h, iw = q * sh.stride_w - sh.pad_w + s * sh.dil_w;
    if (ih < 0 || ih >= sh.h || iw < 0 || iw >= sh.w) return 0.0f;
    return src[((int64_t(n) * sh.c + g * cg + cl) * sh.h + ih) * sh.w + iw];  // (N, C, H, W)
  }
  __device__ void store(int g, int i, int j, float v) const {
    const int kg = sh.k / sh.groups, crs = sh.c / sh.groups * sh.r * sh.s;
    diff_wei[int64_t(g * kg + i) * crs + j] = v;  // (K, Cg*R*S)
  }
};

template <typename Op>
__global__ void __launch_bounds__(kThreads) implicit_gemm_kernel(Op op, int m, int n, int k, unsigned y0, unsigned z0) {
  constexpr int LD4 = (BM + 4) / 4;  // padded shared rows, in float4s (BM == BN)
  CONVLAB_SHARED(float4, as4, [BK][LD4]);    // (BK, BM + 4): A slice, k-major
  CONVLAB_SHARED(float4, bs4, [BK][LD4]);    // (BK, BN + 4): B slice
  float* as = reinterpret_cast<float*>(&as4[0][0]);
  float* bs = reinterpret_cast<float*>(&bs4[0][0]);
  const int tid = int(threadIdx.x), tx = tid % (BN / TN), ty = tid / (BN / TN);
  // grid chunks: (M tiles, groups) = (y0 + blockIdx.y, z0 + blockIdx.z)
  const int m0 = int(blockIdx.y + y0) * BM, n0 = int(blockIdx.x) * BN, g = int(blockIdx.z + z0);

  float acc[TM][TN];
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < k; k0 += BK) {
    for (int e = tid; e < BM * BK; e += kThreads) {
      const int i = e / BK, kk = e % BK;  // A: consecutive threads walk k
      as[kk * LD4 * 4 + i] = (m0 + i < m && k0 + kk < k) ? op.a(g, m0 + i, k0 + kk) : 0.0f;
      const int kb = e / BN, j = e % BN;  // B: consecutive threads walk output pixels
      bs[kb * LD4 * 4 + j] = (n0 + j < n && k0 + kb < k) ? op.b(g, k0 + kb, n0 + j) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < BK; ++kk) {
      const float4 a4 = as4[kk][ty];
      const float4 b4 = bs4[kk][tx];
      const float ra[TM] = {a4.x, a4.y, a4.z, a4.w}, rb[TN] = {b4.x, b4.y, b4.z, b4.w};
      for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j) {
      const int gi = m0 + ty * TM + i, gj = n0 + tx * TN + j;
      if (gi < m && gj < n) op.store(g, gi, gj, acc[i][j]);
    }
}

template <typename Op>
void launch(const Op& op, int m, int n, int k, int groups, void* stream) {
  simt::for_each_grid_chunk(uint64_t((n + BN - 1) / BN), uint64_t((m + BM - 1) / BM), uint64_t(groups),
                            [&](dim3 grid, unsigned y0, unsigned z0) {
                              CONVLAB_LAUNCH(implicit_gemm_kernel<Op>, grid, dim3(kThreads), 0, stream, op, m, n, k,
                                             y0, z0);
                            });
}

}  // namespace

void implicit_gemm_conv_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, void* stream) {
  launch(FwdOp{sh, src, wei, dst}, sh.k / sh.groups, sh.n * sh.p * sh.q, sh.c / sh.groups * sh.r * sh.s, sh.groups,
         stream);
}

void implicit_gemm_conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src,
                                 void* stream) {
  launch(BwdDataOp{sh, diff_dst, wei, diff_src}, sh.c / sh.groups, sh.n * sh.h * sh.w,
         sh.k / sh.groups * sh.r * sh.s, sh.groups, stream);
}

void implicit_gemm_conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                                   void* stream) {
  launch(BwdFilterOp{sh, src, diff_dst, diff_wei}, sh.k / sh.groups, sh.c / sh.groups * sh.r * sh.s,
         sh.n * sh.p * sh.q, sh.groups, stream);
}

}  // namespace convlab::cuda
