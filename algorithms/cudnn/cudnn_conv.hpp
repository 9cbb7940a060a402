// cuDNN's convolution algorithms (cuDNN 9 legacy API, libcudnn_cnn) as convlab
// algorithms, one registry entry per cuDNN algorithm:
//
//   cudnn.implicit_gemm  cudnn.implicit_precomp_gemm  cudnn.gemm  cudnn.direct    (forward)
//   cudnn.fft  cudnn.fft_tiling  cudnn.winograd  cudnn.winograd_nonfused          (every direction cuDNN has)
//   cudnn.bwd_data_algo_0  cudnn.bwd_data_algo_1                                 (backward-data)
//   cudnn.bwd_filter_algo_0  cudnn.bwd_filter_algo_1  cudnn.bwd_filter_algo_3    (backward-filter)
//
// supports() asks cuDNN (the workspace-size query's status), it does not guess;
// workspace_bytes() is cuDNN's own answer. Groups go through the group count,
// math is pinned to CUDNN_FMA_MATH (fp32 FMA, no TF32). Descriptors are cached
// per (problem, direction). Without a GPU every entry reports "no CUDA device"
// and nothing touches the driver beyond the device count.
#pragma once
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"

namespace convlab {

class CudnnConv final : public Algorithm {
 public:
  // cuDNN enum values per direction; -1 where cuDNN has no such algorithm.
  struct Ids {
    int fwd = -1, bwd_data = -1, bwd_filter = -1;
  };
  CudnnConv(const char* name, const char* family, const char* description, Ids ids, bool deterministic)
      : name_(name), family_(family), description_(description), ids_(ids), deterministic_(deterministic) {}

  std::string_view name() const override { return name_; }
  DeviceKind device() const override { return DeviceKind::cuda; }
  std::string_view family() const override { return family_; }
  std::string_view description() const override { return description_; }
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;
  bool deterministic() const override { return deterministic_; }

  int id(Direction dir) const;

 private:
  const char* name_;
  const char* family_;
  const char* description_;
  Ids ids_;
  bool deterministic_;
};

// The thirteen entries above, in registry order.
const std::vector<const Algorithm*>& cudnn_algorithms();

// cuDNN's own selection, for comparison with convlab's find and get.
struct CudnnPerf {
  std::string algo;    // convlab name of the cuDNN algorithm
  std::string status;  // cuDNN's status string for this entry
  double time_ms = -1; // cudnnFind: measured by cuDNN; cudnnGet: -1 (not run)
  size_t workspace = 0;
  bool deterministic = true;
};
// cudnnFindConvolution*Algorithm (times every algorithm itself; allocates its own buffers).
std::vector<CudnnPerf> cudnn_find(const ConvProblem& p, Direction dir);
// cudnnGetConvolution*Algorithm_v7 (heuristic ranking; nothing runs).
std::vector<CudnnPerf> cudnn_get(const ConvProblem& p, Direction dir);

}  // namespace convlab
