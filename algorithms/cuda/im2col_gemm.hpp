// cuda.im2col_gemm: im2col / col2im kernels + the hand-written tiled SGEMM
// (kernels/cuda/im2col, kernels/cuda/gemm), images in chunks whose column
// matrices fit 64 MiB of workspace (im2col_chunk_images), a chunk's images the
// GEMM batch. cuda.im2col_cublas: the same composition with cuBLAS's
// cublasSgemmStridedBatched as the GEMM. Any filter, stride, padding,
// dilation, groups; all three directions.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CudaIm2colGemm : public Algorithm {
 public:
  std::string_view name() const override { return "cuda.im2col_gemm"; }
  DeviceKind device() const override { return DeviceKind::cuda; }
  std::string_view family() const override { return "gemm"; }
  std::string_view description() const override {
    return "im2col/col2im kernels + hand-written tiled SGEMM (128x128 or 64x64 block tiles, register blocking, "
           "float4 loads); images in chunks of <= 64 MiB of columns, one batched GEMM per group and chunk";
  }
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
};

class CudaIm2colCublas final : public CudaIm2colGemm {
 public:
  std::string_view name() const override { return "cuda.im2col_cublas"; }
  std::string_view description() const override {
    return "im2col/col2im kernels + cuBLAS cublasSgemmStridedBatched; images in chunks of <= 64 MiB of columns, "
           "one batched GEMM per group and chunk";
  }
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
};

}  // namespace convlab
