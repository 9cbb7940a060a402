// im2col / col2im kernels and the im2col + GEMM convolution drivers.
//
// im2col: one thread per column-matrix element (C*R*S*P*Q of them, grid-stride
// loop, 256 threads per block), consecutive threads walk consecutive output
// pixels q, so writes are coalesced and reads are strided by the stride.
// col2im: one thread per input element (c, h, w), gathering the <= R*S column
// entries that copied it: p = (h + pad - r*dil) / stride when that divides.
// Drivers: a loop over images on the host, the groups are the GEMM batch.
#include "kernels/cuda/im2col/im2col.hpp"

#include <algorithm>
#include <cassert>

#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t total) { return unsigned(std::min<int64_t>((total + kThreads - 1) / kThreads, 8192)); }

__global__ void im2col_kernel(ConvShape sh, const float* __restrict__ src, float* __restrict__ col) {
  const int64_t pq = int64_t(sh.p) * sh.q;
  const int64_t total = int64_t(sh.c) * sh.r * sh.s * pq;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = idx / pq;  // (C, R, S)
    const int col_i = int(idx % pq);
    const int s = int(row % sh.s), r = int(row / sh.s % sh.r), c = int(row / (int64_t(sh.r) * sh.s));
    const int p = col_i / sh.q, q = col_i % sh.q;
    const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h;
    const int iw = q * sh.stride_w - sh.pad_w + s * sh.dil_w;
    const bool inside = ih >= 0 && ih < sh.h && iw >= 0 && iw < sh.w;
    col[idx] = inside ? src[(int64_t(c) * sh.h + ih) * sh.w + iw] : 0.0f;  // (C, H, W)
  }
}

__global__ void col2im_kernel(ConvShape sh, const float* __restrict__ col, float* __restrict__ diff_src) {
  const int64_t pq = int64_t(sh.p) * sh.q;
  const int64_t total = int64_t(sh.c) * sh.h * sh.w;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int w = int(idx % sh.w), h = int(idx / sh.w % sh.h), c = int(idx / (int64_t(sh.w) * sh.h));
    float acc = 0.0f;
    for (int r = 0; r < sh.r; ++r) {
      const int ph = h + sh.pad_h - r * sh.dil_h;
      if (ph < 0 || ph % sh.stride_h != 0 || ph / sh.stride_h >= sh.p) continue;
      const int p = ph / sh.stride_h;
      for (int s = 0; s < sh.s; ++s) {
        const int qw = w + sh.pad_w - s * sh.dil_w;
        if (qw < 0 || qw % sh.stride_w != 0 || qw / sh.stride_w >= sh.q) continue;
        const int q = qw / sh.stride_w;
        acc += col[((int64_t(c) * sh.r + r) * sh.s + s) * pq + int64_t(p) * sh.q + q];  // (C*R*S, P*Q)
      }
    }
    diff_src[idx] = acc;
  }
}

}  // namespace

void im2col(const ConvShape& sh, const float* src, float* col, void* stream) {
  const int64_t total = int64_t(sh.c) * sh.r * sh.s * sh.p * sh.q;
  CONVLAB_LAUNCH(im2col_kernel, dim3(blocks_for(total)), dim3(kThreads), 0, stream, sh, src, col);
}

void col2im(const ConvShape& sh, const float* col, float* diff_src, void* stream) {
  const int64_t total = int64_t(sh.c) * sh.h * sh.w;
  CONVLAB_LAUNCH(col2im_kernel, dim3(blocks_for(total)), dim3(kThreads), 0, stream, sh, col, diff_src);
}

GemmFn default_gemm() {
  return [](const SgemmArgs& g, void* stream) { sgemm(g, stream); };
}

bool im2col_is_identity(const ConvShape& sh) {
  return sh.r == 1 && sh.s == 1 && sh.stride_h == 1 && sh.stride_w == 1 && sh.pad_h == 0 && sh.pad_w == 0;
}

int64_t im2col_workspace_floats(const ConvShape& sh) {
  return im2col_is_identity(sh) ? 0 : int64_t(sh.c) * sh.r * sh.s * sh.p * sh.q;
}

namespace {
struct Dims {
  int g, kg, cg, crs, pq;
  int64_t src_img, dst_img;
};
Dims dims(const ConvShape& sh) {
  Dims d;
  d.g = sh.groups;
  d.kg = sh.k / sh.groups;
  d.cg = sh.c / sh.groups;
  d.crs = d.cg * sh.r * sh.s;
  d.pq = sh.p * sh.q;
  d.src_img = int64_t(sh.c) * sh.h * sh.w;
  d.dst_img = int64_t(sh.k) * d.pq;
  return d;
}
}  // namespace

void im2col_conv_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, float* ws, void* stream,
                     const GemmFn& gemm) {
  const Dims d = dims(sh);
  for (int n = 0; n < sh.n; ++n) {
    const float* col = src + n * d.src_img;
    if (!im2col_is_identity(sh)) {
      im2col(sh, src + n * d.src_img, ws, stream);
      col = ws;
    }
    SgemmArgs a;
    a.m = d.kg; a.n = d.pq; a.k = d.crs; a.batch = d.g;
    a.a = wei; a.lda = d.crs; a.stride_a = int64_t(d.kg) * d.crs;
    a.b = col; a.ldb = d.pq; a.stride_b = int64_t(d.crs) * d.pq;
    a.c = dst + n * d.dst_img; a.ldc = d.pq; a.stride_c = int64_t(d.kg) * d.pq;
    gemm(a, stream);
  }
}

void im2col_conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src, float* ws,
                          void* stream, const GemmFn& gemm) {
  const Dims d = dims(sh);
  const bool identity = im2col_is_identity(sh);
  for (int n = 0; n < sh.n; ++n) {
    float* col = identity ? diff_src + n * d.src_img : ws;
    SgemmArgs a;
    a.m = d.crs; a.n = d.pq; a.k = d.kg; a.batch = d.g;
    a.a = wei; a.lda = d.crs; a.stride_a = int64_t(d.kg) * d.crs; a.trans_a = true;
    a.b = diff_dst + n * d.dst_img; a.ldb = d.pq; a.stride_b = int64_t(d.kg) * d.pq;
    a.c = col; a.ldc = d.pq; a.stride_c = int64_t(d.crs) * d.pq;
    gemm(a, stream);
    if (!identity) col2im(sh, ws, diff_src + n * d.src_img, stream);
  }
}

void im2col_conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei, float* ws,
                            void* stream, const GemmFn& gemm) {
  const Dims d = dims(sh);
  for (int n = 0; n < sh.n; ++n) {
    const float* col = src + n * d.src_img;
    if (!im2col_is_identity(sh)) {
      im2col(sh, src + n * d.src_img, ws, stream);
      col = ws;
    }
    SgemmArgs a;
    a.m = d.kg; a.n = d.crs; a.k = d.pq; a.batch = d.g; a.accumulate = n > 0;
    a.a = diff_dst + n * d.dst_img; a.lda = d.pq; a.stride_a = int64_t(d.kg) * d.pq;
    a.b = col; a.ldb = d.pq; a.stride_b = int64_t(d.crs) * d.pq; a.trans_b = true;
    a.c = diff_wei; a.ldc = d.crs; a.stride_c = int64_t(d.kg) * d.crs;
    gemm(a, stream);
  }
}

}  // namespace convlab::cuda
