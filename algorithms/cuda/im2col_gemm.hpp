// cuda.im2col_gemm and cuda.im2col_cublas: the Caffe lowering on the GPU. One
// composition (CudaIm2colGemm), two GEMMs plugged in as the strategy: the
// hand-written tiled SGEMM (kernels/cuda/gemm) or cuBLAS's
// cublasSgemmStridedBatched (im2col_cublas.cu), as cpu.im2col_gemm /
// cpu.im2col_openblas do on the CPU.
//
// Images in chunks whose column matrices fit 64 MiB of workspace; per chunk one
// im2col / col2im launch (kernels/cuda/im2col) and
//   fwd        dst_n[g] (Kg, PQ)   = wei[g] (Kg, CgRS) * col_n[g] (CgRS, PQ)
//   bwd-data   col_n[g] (CgRS, PQ) = wei[g]^T * diff_dst_n[g] (Kg, PQ); diff_src_n = col2im(col_n)
//              (one strided-batched GEMM per group over the chunk's images, or per
//              image over the groups when groups outnumber the images)
//   bwd-filter part_n[g] (Kg, CgRS) = diff_dst_n[g] (Kg, PQ) * col_n[g]^T for a run of
//              the chunk's images at once (batched as bwd-data is), then
//              diff_wei += part_0 + part_1 + ... in image order (sum_partials); where
//              that grid is small (few output tiles, few images: a first layer's 64 x 147
//              weights over 112 x 112 pixels), each image's PQ columns are cut into
//              slices, each slice's product its own partial, all (image, slice) pairs
//              in one launch; where one image's partial is too big for two to fit the
//              partial budget, one GEMM per image accumulating into diff_wei, batched
//              over groups
// 1x1, stride 1, pad 0: the images are their own column matrices (no workspace).
// Any filter, stride, padding, dilation, groups; all three directions. Results
// do not depend on the chunk or the partial run: every output element is the
// same GEMM dot product in the same order, and bwd-filter adds the images' dot
// products in image order either way; the slices (chosen from the shape alone)
// add each image's slices in column order.
#pragma once
#include <cstdint>

#include "algorithms/algorithm.hpp"
#include "kernels/cuda/gemm/sgemm.hpp"

namespace convlab {

// Column floats a chunk may hold (64 MiB). One image's GEMM on a small layer
// fills a fraction of a big GPU (AlexNet conv3-5 at 13x13: 18 64x64 blocks for
// 132 SMs); a chunk's images go into one strided-batched GEMM per group instead.
inline constexpr int64_t kCudaIm2colChunkFloats = int64_t(16) << 20;
// bwd-filter's per-image partial results held at once (16 MiB): AlexNet conv1's
// 64 x 363 weights give a GEMM of 6 64x64 blocks per image, a run of 15 images
// 90; layers whose one-image GEMM already fills the GPU get runs of a few images.
inline constexpr int64_t kCudaIm2colPartialFloats = int64_t(4) << 20;
// bwd-filter's slices: enough that a run's GEMM has about this many 64 x 64
// blocks (four per SM of a 132-SM card), none shorter than kCudaIm2colMinSlice columns.
inline constexpr int64_t kCudaIm2colSplitBlocks = 528;
inline constexpr int kCudaIm2colMinSlice = 128;

struct CudaIm2colPlan {
  bool identity = false;  // 1x1, stride 1, no padding: no column matrix
  int chunk = 1;          // images per chunk: as many as fit the budget, >= 1, <= N, <= 65535 (the GEMM batch)
  int64_t col_floats = 0; // workspace: `chunk` images' column matrices (0 when identity)
  // bwd-filter only (1 and 0 otherwise): images per GEMM of partial results,
  // >= 1, <= chunk; 1 = one accumulating GEMM per image, no partials.
  int partial = 1;
  // bwd-filter with partial > 1: each image's PQ columns in `splits` slices of
  // `slice` columns (the last one PQ - (splits - 1) * slice), one partial each;
  // 1 and PQ otherwise.
  int splits = 1, slice = 0;
  int64_t partial_floats = 0;  // workspace after the columns: partial x splits K x CgRS results (0 when partial 1)
  int64_t workspace_floats() const { return col_floats + partial_floats; }
};
// chunk 0: the budget's; otherwise that many images per chunk (tests). partial
// 0: the partial budget's; otherwise that many images per run (tests), <= chunk.
// splits 0: from the shape (kCudaIm2colSplitBlocks); otherwise that many (tests),
// <= PQ, used where partial > 1.
CudaIm2colPlan plan_cuda_im2col(const ConvShape& sh, Direction dir, int chunk = 0, int partial = 0, int splits = 0);

class CudaIm2colGemm : public NamedAlgorithm {
 public:
  CudaIm2colGemm();
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction) const override { return nominal_gemm(p); }
  // run() with plan_cuda_im2col(sh, dir, chunk, partial): the workspace must hold
  // its workspace_floats().
  void run_chunked(const ConvProblem& p, Direction dir, const ConvBuffers& buf, float* ws, void* stream, int chunk,
                   int partial = 0, int splits = 0) const;

 protected:
  CudaIm2colGemm(std::string name, std::string description);
  // The strategy: one (strided-batched) row-major SGEMM on `stream`.
  virtual void gemm(const cuda::SgemmArgs& g, void* stream) const;
  // Whether bwd-filter cuts images' columns into slices (the plan's splits): a
  // two-level batch is one launch of the hand-written SGEMM.
  virtual bool slices_columns() const { return true; }
};

class CudaIm2colCublas final : public CudaIm2colGemm {
 public:
  CudaIm2colCublas();
  bool comparison_baseline() const override { return true; }  // Caffe's GPU path
  // No device: the usual reason; else cuBLAS's, where it cannot be opened.
  std::string unavailable_reason() const override;
  // Takes the thread's cuBLAS handle before the first launch, so that without a
  // usable device the error is cuBLAS's own.
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;

 protected:
  void gemm(const cuda::SgemmArgs& g, void* stream) const override;
  // No: cuBLAS takes a two-level batch as one call per entry of the smaller level,
  // and on its own splits a long K (measured on an H200: slices made 1x1 layers'
  // backward-filter up to 1.85x slower through cuBLAS).
  bool slices_columns() const override { return false; }
};

}  // namespace convlab
