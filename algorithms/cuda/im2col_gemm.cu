// cuda.im2col_gemm's composition (contract in im2col_gemm.hpp): chunks of
// images, per chunk the im2col / col2im launch and the GEMMs over the chunk's
// (image, group) pairs.
#include "algorithms/cuda/im2col_gemm.hpp"

#include <algorithm>
#include <climits>

#include "kernels/cuda/im2col/im2col.hpp"

namespace convlab {

namespace {

bool is_identity(const ConvShape& sh) {
  return sh.r == 1 && sh.s == 1 && sh.stride_h == 1 && sh.stride_w == 1 && sh.pad_h == 0 && sh.pad_w == 0 &&
         sh.symmetric_padding();
}

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
  cuda::im2col(sh, src + n0 * d.src_img, ws, stream, nb);
  return {ws, int64_t(d.g) * d.crs * d.pq};
}
// A GEMM operand inside the chunk: where image i, group g starts is
// base + i * img + g * group.
template <typename T>
struct Operand {
  T* base;
  int64_t img, group;
};

}  // namespace

CudaIm2colPlan plan_cuda_im2col(const ConvShape& sh, Direction dir, int chunk, int partial) {
  constexpr int kMaxBatch = 65535;  // the GEMM batch is the grid's z dimension
  CudaIm2colPlan pl;
  pl.identity = is_identity(sh);
  const int64_t per_img = int64_t(sh.c) * sh.r * sh.s * sh.p * sh.q;
  if (chunk > 0) pl.chunk = std::min(chunk, sh.n);
  else if (pl.identity) pl.chunk = std::max(1, std::min(sh.n, kMaxBatch));
  else pl.chunk = int(std::max<int64_t>(1, std::min<int64_t>({kCudaIm2colChunkFloats / std::max<int64_t>(per_img, 1),
                                                              sh.n, kMaxBatch})));
  pl.col_floats = pl.identity ? 0 : pl.chunk * per_img;
  if (dir == Direction::bwd_filter) {
    const int64_t per_part = int64_t(sh.k) * (sh.c / sh.groups) * sh.r * sh.s;  // (K, Cg, R, S)
    if (partial > 0) pl.partial = std::min(partial, pl.chunk);
    else pl.partial = int(std::max<int64_t>(1, std::min<int64_t>(kCudaIm2colPartialFloats / per_part, pl.chunk)));
    pl.partial_floats = pl.partial > 1 ? pl.partial * per_part : 0;
  }
  return pl;
}

CudaIm2colGemm::CudaIm2colGemm()
    : CudaIm2colGemm("cuda.im2col_gemm",
                     "im2col/col2im kernels + hand-written tiled SGEMM (128x128 or 64x64 block tiles, register "
                     "blocking, double-buffered K slabs, float4 loads for any leading dimension); images in chunks of <= 64 MiB of columns, one batched GEMM per group "
                     "and chunk") {}

CudaIm2colGemm::CudaIm2colGemm(std::string name, std::string description)
    : NamedAlgorithm(std::move(name), DeviceKind::cuda, "gemm", std::move(description)) {}

void CudaIm2colGemm::gemm(const cuda::SgemmArgs& g, void* stream) const { cuda::sgemm(g, stream); }

Support CudaIm2colGemm::supports(const ConvProblem& p, Direction) const {
  const int64_t cols = int64_t(p.c) * p.r * p.s * p.p() * p.q();
  if (cols > INT_MAX) return Support::no("column matrix of one image exceeds 2^31 elements");
  return Support::yes();
}

size_t CudaIm2colGemm::workspace_bytes(const ConvProblem& p, Direction dir) const {
  return size_t(plan_cuda_im2col(to_shape(p), dir).workspace_floats()) * sizeof(float);
}

void CudaIm2colGemm::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                         const ExecContext& ctx) const {
  run_chunked(p, dir, buf, static_cast<float*>(workspace), ctx.stream, 0);
}

void CudaIm2colGemm::run_chunked(const ConvProblem& p, Direction dir, const ConvBuffers& buf, float* ws,
                                 void* stream, int chunk_arg, int partial_arg) const {
  const ConvShape sh = to_shape(p);
  const Dims d = dims(sh);
  const CudaIm2colPlan pl = plan_cuda_im2col(sh, dir, chunk_arg, partial_arg);
  // C = op(A) * op(B) for every (image, group) of a chunk: one strided-batched
  // GEMM per group over the images, or one per image over the groups, whichever
  // launches fewer. `a` holds the shapes, leading dimensions and transposes.
  const auto over_images_and_groups = [&](cuda::SgemmArgs a, int images, Operand<const float> A,
                                          Operand<const float> B, Operand<float> C) {
    const bool by_group = images >= d.g;
    a.batch = by_group ? images : d.g;
    a.stride_a = by_group ? A.img : A.group;
    a.stride_b = by_group ? B.img : B.group;
    a.stride_c = by_group ? C.img : C.group;
    for (int j = 0; j < (by_group ? d.g : images); ++j) {
      a.a = A.base + j * (by_group ? A.group : A.img);
      a.b = B.base + j * (by_group ? B.group : B.img);
      a.c = C.base + j * (by_group ? C.group : C.img);
      gemm(a, stream);
    }
  };
  for (int n0 = 0; n0 < sh.n; n0 += pl.chunk) {
    const int nb = std::min(pl.chunk, sh.n - n0);
    cuda::SgemmArgs a;
    if (dir == Direction::fwd) {
      const Cols col = chunk_columns(sh, d, pl.identity, buf.src, n0, nb, ws, stream);
      // dst_n[g] (Kg, PQ) = wei[g] (Kg, CgRS) * col_n[g] (CgRS, PQ)
      a.m = d.kg; a.n = d.pq; a.k = d.crs;
      a.lda = d.crs; a.ldb = d.pq; a.ldc = d.pq;
      over_images_and_groups(a, nb, {buf.wei, 0, int64_t(d.kg) * d.crs},
                             {col.base, col.img_stride, int64_t(d.crs) * d.pq},
                             {buf.dst + n0 * d.dst_img, d.dst_img, int64_t(d.kg) * d.pq});
    } else if (dir == Direction::bwd_data) {
      // col_n[g] (CgRS, PQ) = wei[g]^T * diff_dst_n[g] (Kg, PQ); identity: col_n is diff_src_n itself.
      float* col = pl.identity ? buf.src + n0 * d.src_img : ws;
      const int64_t col_img = pl.identity ? d.src_img : int64_t(d.g) * d.crs * d.pq;
      a.m = d.crs; a.n = d.pq; a.k = d.kg; a.trans_a = true;
      a.lda = d.crs; a.ldb = d.pq; a.ldc = d.pq;
      over_images_and_groups(a, nb, {buf.wei, 0, int64_t(d.kg) * d.crs},
                             {buf.dst + n0 * d.dst_img, d.dst_img, int64_t(d.kg) * d.pq},
                             {col, col_img, int64_t(d.crs) * d.pq});
      if (!pl.identity) cuda::col2im(sh, ws, buf.src + n0 * d.src_img, stream, nb);
    } else {
      const Cols col = chunk_columns(sh, d, pl.identity, buf.src, n0, nb, ws, stream);
      a.m = d.kg; a.n = d.crs; a.k = d.pq; a.trans_b = true;
      a.lda = d.pq; a.ldb = d.pq; a.ldc = d.crs;
      const int64_t wei_floats = int64_t(sh.k) * d.crs, wei_group = int64_t(d.kg) * d.crs;
      if (pl.partial == 1) {
        // diff_wei[g] (Kg, CgRS) (+)= diff_dst_n[g] (Kg, PQ) * col_n[g]^T (PQ, CgRS), per image over the groups
        for (int i = 0; i < nb; ++i) {
          a.accumulate = n0 + i > 0;
          over_images_and_groups(a, 1, {buf.dst + (n0 + i) * d.dst_img, d.dst_img, int64_t(d.kg) * d.pq},
                                 {col.base + i * col.img_stride, col.img_stride, int64_t(d.crs) * d.pq},
                                 {buf.wei, 0, wei_group});
        }
        continue;
      }
      // A run of images at once: part_i[g] (Kg, CgRS) = diff_dst_n[g] (Kg, PQ) * col_n[g]^T, then
      // diff_wei (+)= part_0 + part_1 + ... in image order.
      float* part = ws + pl.col_floats;  // (partial, K, CgRS)
      for (int i0 = 0; i0 < nb; i0 += pl.partial) {
        const int runs = std::min(pl.partial, nb - i0);
        a.accumulate = false;
        over_images_and_groups(a, runs, {buf.dst + (n0 + i0) * d.dst_img, d.dst_img, int64_t(d.kg) * d.pq},
                               {col.base + i0 * col.img_stride, col.img_stride, int64_t(d.crs) * d.pq},
                               {part, wei_floats, wei_group});
        cuda::sum_partials(part, runs, wei_floats, buf.wei, n0 + i0 > 0, stream);
      }
    }
  }
}

}  // namespace convlab
