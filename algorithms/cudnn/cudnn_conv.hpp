// cuDNN's convolution algorithms (cuDNN 9 legacy API, libcudnn_cnn) as convlab
// algorithms, one registry entry per cuDNN algorithm:
//
//   cudnn.implicit_gemm  cudnn.implicit_precomp_gemm  cudnn.gemm                  (forward)
//   cudnn.fft  cudnn.fft_tiling  cudnn.winograd  cudnn.winograd_nonfused          (every direction cuDNN has)
//   cudnn.bwd_data_algo_0  cudnn.bwd_data_algo_1                                 (backward-data)
//   cudnn.bwd_filter_algo_0  cudnn.bwd_filter_algo_1  cudnn.bwd_filter_algo_3    (backward-filter)
//
// Not registered, on purpose: forward DIRECT (id 3; cuDNN implements no
// problem with it, so an entry could run nothing) and backward-filter WINOGRAD
// (id 4; "not implemented" in cudnn_ops.h). cuDNN's Find/Get lists still name
// them (status NOT_SUPPORTED); they, and any id a later cuDNN adds, are
// reported as cudnn.unknown_<id> (cudnn_algo_name below).
//
// supports() asks cuDNN (the workspace-size query's status), it does not guess;
// workspace_bytes() is cuDNN's own answer. Groups go through the group count,
// math is pinned to CUDNN_FMA_MATH (fp32 FMA, no TF32). Descriptors are cached
// per (problem, math type). Without a GPU every entry reports "no CUDA device"
// and nothing touches the driver beyond the device count, and libcudnn is not
// even opened (core/cuda_libraries.hpp); on a GPU without it every entry reports
// "cuDNN not loaded: <why>".
//
// TF32 variants, "<name>_tf32", one per algorithm for which cuDNN documents
// Tensor Core kernels (cuDNN 9 developer guide, Legacy API, "Convolution
// Functions / Supported Algorithms": forward IMPLICIT_PRECOMP_GEMM and
// WINOGRAD_NONFUSED, backward-data ALGO_1 and WINOGRAD_NONFUSED,
// backward-filter ALGO_1 and WINOGRAD_NONFUSED):
//
//   cudnn.implicit_precomp_gemm_tf32  cudnn.winograd_nonfused_tf32
//   cudnn.bwd_data_algo_1_tf32        cudnn.bwd_filter_algo_1_tf32
//
// Their convolution descriptor carries CUDNN_TENSOR_OP_MATH: the same guide
// says Tensor Core operations are triggered only when the math type is
// CUDNN_TENSOR_OP_MATH or CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, and the
// cudnnMathType_t reference says that on Ampere and later every Tensor Core
// math type permits TF32 for fp32 data while CUDNN_FMA_MATH does not
// (NVIDIA_TF32_OVERRIDE=0 in the environment disables it again). Permission is
// not obligation: for a shape with no tensor-core kernel cuDNN may still run
// an FMA kernel (cudnn_find() reports the math type it used). math() is
// "tf32", so they are only chosen when asked (see Algorithm::math).
#pragma once
#include <mutex>
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
  CudnnConv(const char* name, const char* family, const char* description, Ids ids, bool deterministic,
            bool tf32 = false)
      : name_(name), family_(family), description_(description), ids_(ids), deterministic_(deterministic),
        tf32_(tf32) {}

  std::string_view name() const override { return name_; }
  DeviceKind device() const override { return DeviceKind::cuda; }
  std::string_view family() const override { return family_; }
  std::string_view description() const override { return description_; }
  // No device: the usual reason; no cuDNN: "cuDNN not loaded: ...". On a GPU: cuDNN's support is per GPU and
  // version (H100 + cuDNN 9.14 rejects fused WINOGRAD for every problem), so an
  // entry cuDNN accepts for none of kCudnnProbes (asked once per process,
  // through the workspace-size query) is unavailable with that reason, not a
  // registered algorithm that can run nothing.
  std::string unavailable_reason() const override;
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;
  // By its family; Winograd as F(4x4) (cuDNN does not say which tile it runs).
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override;
  bool deterministic() const override { return deterministic_; }
  bool vendor_peer() const override { return true; }
  std::string_view math() const override { return tf32_ ? "tf32" : "fp32"; }
  std::string_view source_file() const override { return __FILE__; }

  int id(Direction dir) const;
  bool tf32() const { return tf32_; }

 private:
  const char* name_;
  const char* family_;
  const char* description_;
  Ids ids_;
  bool deterministic_;
  bool tf32_;
  mutable std::once_flag probed_;
  mutable std::string probe_reason_;
};

// The problems CudnnConv::unavailable_reason asks cuDNN about: 3x3 (pad 1,
// stride 1 and 2), 1x1, 5x5, a grouped 3x3, small and AlexNet-sized.
inline constexpr const char* kCudnnProbes[] = {"mb2ic16ih16oc16kh3ph1", "mb2ic64ih27oc64kh3ph1",
                                               "mb2ic16ih16oc16kh3ph1sh2", "mb2ic32ih14oc32kh1",
                                               "mb2ic8ih12oc8kh5ph2", "g2mb2ic16ih13oc32kh3ph1",
                                               "mb32ic256ih13oc384kh3ph1"};

// The twelve fp32 entries above, in registry order.
const std::vector<const Algorithm*>& cudnn_algorithms();
// The four TF32 variants, in registry order (after the fp32 entries).
const std::vector<const Algorithm*>& cudnn_tf32_algorithms();

// cuDNN's own selection, for comparison with convlab's find and get.
struct CudnnPerf {
  std::string algo;    // convlab name of the cuDNN algorithm (the _tf32 variant when it used tensor-op math)
  std::string status;  // cuDNN's status string for this entry
  double time_ms = -1; // cudnnFind: measured by cuDNN; cudnnGet: -1 (not run)
  size_t workspace = 0;
  bool deterministic = true;
  std::string math;    // the math type cuDNN reports for this entry: "fma", "default", "tensor_op", ...
  bool known = true;   // false: an id convlab registers no entry for (algo is cudnn.unknown_<id>)
};

// The convlab name of cuDNN algorithm `id` (its cudnnConvolution*Algo_t value)
// in direction `dir`: the registered entry with that id (its _tf32 variant
// when tensor_op and convlab has one), else "cudnn.unknown_<id>". Needs no device.
inline constexpr const char* kCudnnUnknownPrefix = "cudnn.unknown_";
std::string cudnn_algo_name(Direction dir, int id, bool tensor_op = false);
// Whether `name` is such an unknown id ("cudnn.unknown_..."). Unknown ids are
// never convlab candidates, so find never measures and no policy picks them.
bool is_unknown_cudnn_algo(std::string_view name);
// Why convlab deliberately registers no entry for cuDNN 9's id `id` in `dir`
// (forward DIRECT, backward-filter WINOGRAD); "" for every other id.
const char* cudnn_unregistered_reason(Direction dir, int id);
// cudnnFindConvolution*Algorithm (times every algorithm itself; allocates its
// own buffers). tf32: ask with the CUDNN_TENSOR_OP_MATH descriptor (the _tf32
// variants' one) instead of the CUDNN_FMA_MATH one. Throws Error without a device.
std::vector<CudnnPerf> cudnn_find(const ConvProblem& p, Direction dir, bool tf32 = false);
// cudnnGetConvolution*Algorithm_v7 (heuristic ranking; nothing runs).
std::vector<CudnnPerf> cudnn_get(const ConvProblem& p, Direction dir, bool tf32 = false);

}  // namespace convlab
