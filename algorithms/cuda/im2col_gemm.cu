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

CudaIm2colPlan plan_cuda_im2col(const ConvShape& sh, Direction dir, int chunk, int partial, int splits) {
  constexpr int kMaxBatch = 65535;  // the GEMM batch is the grid's z dimension
  CudaIm2colPlan pl;
  pl.identity = is_identity(sh);
  const int64_t per_img = int64_t(sh.c) * sh.r * sh.s * sh.p * sh.q;
  if (chunk > 0) pl.chunk = std::min(chunk, sh.n);
  else if (pl.identity) pl.chunk = std::max(1, std::min(sh.n, kMaxBatch));
  else pl.chunk = int(std::max<int64_t>(1, std::min<int64_t>({kCudaIm2colChunkFloats / std::max<int64_t>(per_img, 1),
                                                              sh.n, kMaxBatch})));
  pl.col_floats = pl.identity ? 0 : pl.chunk * per_img;
  const Dims d = dims(sh);
  pl.slice = d.pq;
  if (dir == Direction::bwd_filter) {
    const int64_t per_part = int64_t(sh.k) * d.crs;  // (K, Cg, R, S)
    const auto budget_runs = [&](int64_t parts_per_image) {
      return int(std::max<int64_t>(1, std::min<int64_t>(kCudaIm2colPartialFloats / (parts_per_image * per_part),
                                                        pl.chunk)));
    };
    pl.partial = partial > 0 ? std::min(partial, pl.chunk) : budget_runs(1);
    if (pl.partial > 1) {
      int want = splits;
      if (want == 0) {  // from the shape: a run's GEMM grid of about kCudaIm2colSplitBlocks 64 x 64 blocks
        const int64_t tiles = int64_t((d.kg + 63) / 64) * ((d.crs + 63) / 64);
        const int64_t batched = std::max(pl.partial, d.g), blocks = batched * tiles;
        want = blocks >= kCudaIm2colSplitBlocks
                   ? 1
                   : int(std::min<int64_t>({(kCudaIm2colSplitBlocks + blocks - 1) / blocks, d.pq / kCudaIm2colMinSlice,
                                            kCudaIm2colPartialFloats / (2 * per_part), kMaxBatch / batched}));
      }
      pl.slice = (d.pq + std::max(want, 1) - 1) / std::max(want, 1);
      pl.splits = (d.pq + pl.slice - 1) / pl.slice;
      if (partial == 0) pl.partial = budget_runs(pl.splits);
      if (pl.partial == 1) pl.splits = 1, pl.slice = d.pq;
    }
    pl.partial_floats = pl.partial > 1 ? int64_t(pl.partial) * pl.splits * per_part : 0;
  }
  return pl;
}

CudaIm2colGemm::CudaIm2colGemm()
    : CudaIm2colGemm("cuda.im2col_gemm",
                     "im2col/col2im kernels + hand-written tiled SGEMM (128x128 or 64x64 block tiles, register "
                     "blocking, double-buffered K slabs, float4 loads for any leading dimension); images in chunks "
                     "of <= 64 MiB of columns, one batched GEMM per group and chunk; backward-filter's small grids "
                     "cut each image's columns into slices, every (image, slice) in one launch") {}

CudaIm2colGemm::CudaIm2colGemm(std::string name, std::string description)
    : NamedAlgorithm(std::move(name), DeviceKind::cuda, "gemm", std::move(description)) {}

void CudaIm2colGemm::gemm(const cuda::SgemmArgs& g, void* stream) const { cuda::sgemm(g, stream); }

Support CudaIm2colGemm::supports(const ConvProblem& p, Direction) const {
  const int64_t cols = int64_t(p.c) * p.r * p.s * p.p() * p.q();
  if (cols > INT_MAX) return Support::no("column matrix of one image exceeds 2^31 elements");
  return Support::yes();
}

size_t CudaIm2colGemm::workspace_bytes(const ConvProblem& p, Direction dir) const {
  return size_t(plan_cuda_im2col(to_shape(p), dir, 0, 0, slices_columns() ? 0 : 1).workspace_floats()) * sizeof(float);
}

void CudaIm2colGemm::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                         const ExecContext& ctx) const {
  run_chunked(p, dir, buf, static_cast<float*>(workspace), ctx.stream, 0, 0, slices_columns() ? 0 : 1);
}

void CudaIm2colGemm::run_chunked(const ConvProblem& p, Direction dir, const ConvBuffers& buf, float* ws,
                                 void* stream, int chunk_arg, int partial_arg, int splits_arg) const {
  const ConvShape sh = to_shape(p);
  const Dims d = dims(sh);
  const CudaIm2colPlan pl = plan_cuda_im2col(sh, dir, chunk_arg, partial_arg, splits_arg);
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
      // A run of images at once, each image's columns in slices:
      // part_(i,s)[g] (Kg, CgRS) = diff_dst_n[g][:, slice s] * col_n[g][:, slice s]^T, the full
      // slices of every image in one launch (a two-level batch), the short last one in another;
      // then diff_wei (+)= part_(0,0) + part_(0,1) + ... + part_(1,0) + ... in that order.
      float* part = ws + pl.col_floats;  // (partial, splits, K, CgRS)
      const int nfull = d.pq / pl.slice, rem = d.pq - nfull * pl.slice;
      const int64_t img_parts = int64_t(pl.splits) * wei_floats, a_group = int64_t(d.kg) * d.pq,
                    b_group = int64_t(d.crs) * d.pq;
      for (int i0 = 0; i0 < nb; i0 += pl.partial) {
        const int runs = std::min(pl.partial, nb - i0);
        const float* dy = buf.dst + (n0 + i0) * d.dst_img;
        const float* cb = col.base + i0 * col.img_stride;
        a.accumulate = false;
        a.k = pl.slice;
        a.batch2 = nfull;
        a.stride2_a = a.stride2_b = pl.slice;
        a.stride2_c = wei_floats;
        over_images_and_groups(a, runs, {dy, d.dst_img, a_group}, {cb, col.img_stride, b_group},
                               {part, img_parts, wei_group});
        if (rem > 0) {
          a.k = rem;
          a.batch2 = 1;
          const int64_t at = int64_t(nfull) * pl.slice;
          over_images_and_groups(a, runs, {dy + at, d.dst_img, a_group}, {cb + at, col.img_stride, b_group},
                                 {part + nfull * wei_floats, img_parts, wei_group});
        }
        cuda::sum_partials(part, runs * pl.splits, wei_floats, buf.wei, n0 + i0 > 0, stream);
      }
    }
  }
}

}  // namespace convlab
