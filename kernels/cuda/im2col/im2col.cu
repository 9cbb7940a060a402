// im2col / col2im kernels and the im2col + GEMM convolution drivers.
//
// im2col: one thread per column-matrix element (C*R*S*P*Q of them, grid-stride
// loop, 256 threads per block), consecutive threads walk consecutive output
// pixels q, so writes are coalesced and reads are strided by the stride.
// col2im: one thread per input element (c, h, w), gathering the <= R*S column
// entries that copied it: p = (h + pad - r*dil) / stride when that divides.
// Drivers: chunks of images (im2col_chunk_images); per chunk one im2col / col2im
// launch and one strided-batched GEMM per group over the chunk's images (fwd,
// bwd-data), or one GEMM per image batched over groups (bwd-filter, and when
// groups outnumber the chunk's images).
#include "kernels/cuda/im2col/im2col.hpp"

#include <algorithm>
#include <cassert>

#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t total) { return unsigned(std::min<int64_t>((total + kThreads - 1) / kThreads, 8192)); }

__global__ void im2col_kernel(ConvShape sh, int images, const float* __restrict__ src, float* __restrict__ col) {
  const int64_t pq = int64_t(sh.p) * sh.q;
  const int64_t per_img = int64_t(sh.c) * sh.r * sh.s * pq;
  const int64_t total = per_img * images;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t img = idx / per_img;
    const int64_t e = idx - img * per_img;
    const int64_t row = e / pq;  // (C, R, S)
    const int col_i = int(e % pq);
    const int s = int(row % sh.s), r = int(row / sh.s % sh.r), c = int(row / (int64_t(sh.r) * sh.s));
    const int p = col_i / sh.q, q = col_i % sh.q;
    const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h;
    const int iw = q * sh.stride_w - sh.pad_w + s * sh.dil_w;
    const bool inside = ih >= 0 && ih < sh.h && iw >= 0 && iw < sh.w;
    col[idx] = inside ? src[((img * sh.c + c) * sh.h + ih) * sh.w + iw] : 0.0f;  // (images, C, H, W)
  }
}

__global__ void col2im_kernel(ConvShape sh, int images, const float* __restrict__ col, float* __restrict__ diff_src) {
  const int64_t pq = int64_t(sh.p) * sh.q;
  const int64_t chw = int64_t(sh.c) * sh.h * sh.w;
  const int64_t col_img = int64_t(sh.c) * sh.r * sh.s * pq;
  const int64_t total = chw * images;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t img = idx / chw;
    const int64_t e = idx - img * chw;
    const int w = int(e % sh.w), h = int(e / sh.w % sh.h), c = int(e / (int64_t(sh.w) * sh.h));
    const float* icol = col + img * col_img;  // (images, C*R*S, P*Q)
    float acc = 0.0f;
    for (int r = 0; r < sh.r; ++r) {
      const int ph = h + sh.pad_h - r * sh.dil_h;
      if (ph < 0 || ph % sh.stride_h != 0 || ph / sh.stride_h >= sh.p) continue;
      const int p = ph / sh.stride_h;
      for (int s = 0; s < sh.s; ++s) {
        const int qw = w + sh.pad_w - s * sh.dil_w;
        if (qw < 0 || qw % sh.stride_w != 0 || qw / sh.stride_w >= sh.q) continue;
        const int q = qw / sh.stride_w;
        acc += icol[((int64_t(c) * sh.r + r) * sh.s + s) * pq + int64_t(p) * sh.q + q];  // (C*R*S, P*Q)
      }
    }
    diff_src[idx] = acc;
  }
}

}  // namespace

void im2col(const ConvShape& sh, const float* src, float* col, void* stream, int images) {
  assert(images >= 1);
  const int64_t total = int64_t(images) * sh.c * sh.r * sh.s * sh.p * sh.q;
  CONVLAB_LAUNCH(im2col_kernel, dim3(blocks_for(total)), dim3(kThreads), 0, stream, sh, images, src, col);
}

void col2im(const ConvShape& sh, const float* col, float* diff_src, void* stream, int images) {
  assert(images >= 1);
  const int64_t total = int64_t(images) * sh.c * sh.h * sh.w;
  CONVLAB_LAUNCH(col2im_kernel, dim3(blocks_for(total)), dim3(kThreads), 0, stream, sh, images, col, diff_src);
}

GemmFn default_gemm() {
  return [](const SgemmArgs& g, void* stream) { sgemm(g, stream); };
}

bool im2col_is_identity(const ConvShape& sh) {
  return sh.r == 1 && sh.s == 1 && sh.stride_h == 1 && sh.stride_w == 1 && sh.pad_h == 0 && sh.pad_w == 0;
}

int im2col_chunk_images(const ConvShape& sh) {
  constexpr int kMaxBatch = 65535;  // the GEMM batch is the grid's z dimension
  if (im2col_is_identity(sh)) return std::max(1, std::min(sh.n, kMaxBatch));
  const int64_t per_img = std::max<int64_t>(int64_t(sh.c) * sh.r * sh.s * sh.p * sh.q, 1);
  return int(std::max<int64_t>(1, std::min<int64_t>({kIm2colChunkFloats / per_img, sh.n, kMaxBatch})));
}

int64_t im2col_workspace_floats(const ConvShape& sh, int chunk) {
  if (im2col_is_identity(sh)) return 0;
  if (chunk <= 0) chunk = im2col_chunk_images(sh);
  return int64_t(std::min(chunk, sh.n)) * sh.c * sh.r * sh.s * sh.p * sh.q;
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

namespace {
// The chunk's column matrices: in ws (chunk, CRS, PQ), or the images themselves
// (identity case: CRS = C, PQ = HW, image stride C*H*W).
struct Cols {
  const float* base;
  int64_t img_stride;
};
// Images n0 .. n0+nb-1 of src as column matrices: unfolded into ws, or the
// images themselves in the identity case.
Cols chunk_columns(const ConvShape& sh, const Dims& d, bool identity, const float* src, int n0, int nb, float* ws,
                   void* stream) {
  if (identity) return {src + n0 * d.src_img, d.src_img};
  im2col(sh, src + n0 * d.src_img, ws, stream, nb);
  return {ws, int64_t(d.g) * d.crs * d.pq};
}
// A GEMM operand inside the chunk: where image i, group g starts is
// base + i * img + g * group.
template <typename T>
struct Operand {
  T* base;
  int64_t img, group;
};
// C = op(A) * op(B) for every (image, group) of the chunk: one strided-batched
// GEMM per group over the images, or one per image over the groups, whichever
// launches fewer. `a` holds the shapes, leading dimensions and transposes.
void gemm_over_images_and_groups(SgemmArgs a, int images, int groups, Operand<const float> A, Operand<const float> B,
                                 Operand<float> C,
                                 const GemmFn& gemm, void* stream) {
  const bool by_group = images >= groups;
  a.batch = by_group ? images : groups;
  a.stride_a = by_group ? A.img : A.group;
  a.stride_b = by_group ? B.img : B.group;
  a.stride_c = by_group ? C.img : C.group;
  for (int j = 0; j < (by_group ? groups : images); ++j) {
    a.a = A.base + j * (by_group ? A.group : A.img);
    a.b = B.base + j * (by_group ? B.group : B.img);
    a.c = C.base + j * (by_group ? C.group : C.img);
    gemm(a, stream);
  }
}
int resolve_chunk(const ConvShape& sh, int chunk) {
  return std::max(1, std::min(chunk > 0 ? chunk : im2col_chunk_images(sh), sh.n));
}
}  // namespace

void im2col_conv_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, float* ws, void* stream,
                     const GemmFn& gemm, int chunk) {
  const Dims d = dims(sh);
  const bool identity = im2col_is_identity(sh);
  chunk = resolve_chunk(sh, chunk);
  for (int n0 = 0; n0 < sh.n; n0 += chunk) {
    const int nb = std::min(chunk, sh.n - n0);
    const Cols col = chunk_columns(sh, d, identity, src, n0, nb, ws, stream);
    float* out = dst + n0 * d.dst_img;
    // dst_n[g] (Kg, PQ) = wei[g] (Kg, CgRS) * col_n[g] (CgRS, PQ), batched over the chunk's images
    // (one launch per group) or, with more groups than images, over the groups (one launch per image).
    SgemmArgs a;
    a.m = d.kg; a.n = d.pq; a.k = d.crs;
    a.lda = d.crs; a.ldb = d.pq; a.ldc = d.pq;
    gemm_over_images_and_groups(a, nb, d.g, {wei, 0, int64_t(d.kg) * d.crs},
                                {col.base, col.img_stride, int64_t(d.crs) * d.pq},
                                {out, d.dst_img, int64_t(d.kg) * d.pq}, gemm, stream);
  }
}

void im2col_conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src, float* ws,
                          void* stream, const GemmFn& gemm, int chunk) {
  const Dims d = dims(sh);
  const bool identity = im2col_is_identity(sh);
  chunk = resolve_chunk(sh, chunk);
  for (int n0 = 0; n0 < sh.n; n0 += chunk) {
    const int nb = std::min(chunk, sh.n - n0);
    // col_n[g] (CgRS, PQ) = wei[g]^T * diff_dst_n[g] (Kg, PQ); identity: col_n is diff_src_n itself.
    float* col = identity ? diff_src + n0 * d.src_img : ws;
    const int64_t col_img = identity ? d.src_img : int64_t(d.g) * d.crs * d.pq;
    const float* dy = diff_dst + n0 * d.dst_img;
    SgemmArgs a;
    a.m = d.crs; a.n = d.pq; a.k = d.kg; a.trans_a = true;
    a.lda = d.crs; a.ldb = d.pq; a.ldc = d.pq;
    gemm_over_images_and_groups(a, nb, d.g, {wei, 0, int64_t(d.kg) * d.crs},
                                {dy, d.dst_img, int64_t(d.kg) * d.pq},
                                {col, col_img, int64_t(d.crs) * d.pq}, gemm, stream);
    if (!identity) col2im(sh, ws, diff_src + n0 * d.src_img, stream, nb);
  }
}

void im2col_conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei, float* ws,
                            void* stream, const GemmFn& gemm, int chunk) {
  const Dims d = dims(sh);
  const bool identity = im2col_is_identity(sh);
  chunk = resolve_chunk(sh, chunk);
  for (int n0 = 0; n0 < sh.n; n0 += chunk) {
    const int nb = std::min(chunk, sh.n - n0);
    const Cols col = chunk_columns(sh, d, identity, src, n0, nb, ws, stream);
    for (int i = 0; i < nb; ++i) {
      const int n = n0 + i;
      SgemmArgs a;
      a.m = d.kg; a.n = d.crs; a.k = d.pq; a.batch = d.g; a.accumulate = n > 0;
      a.a = diff_dst + n * d.dst_img; a.lda = d.pq; a.stride_a = int64_t(d.kg) * d.pq;
      a.b = col.base + i * col.img_stride; a.ldb = d.pq; a.stride_b = int64_t(d.crs) * d.pq; a.trans_b = true;
      a.c = diff_wei; a.ldc = d.crs; a.stride_c = int64_t(d.kg) * d.crs;
      gemm(a, stream);
    }
  }
}

}  // namespace convlab::cuda
