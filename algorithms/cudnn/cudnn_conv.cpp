#include "algorithms/cudnn/cudnn_conv.hpp"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/cuda_libraries.hpp"
#include "core/cuda_stream.hpp"
#include "core/device.hpp"
#include "core/error.hpp"

namespace convlab {

namespace {

// The cuDNN entry points convlab calls; libcudnn is opened on first use
// (core/cuda_libraries.hpp).
#define CONVLAB_CUDNN_FUNCTIONS(X)                                                                      \
  X(cudnnGetErrorString) X(cudnnCreate) X(cudnnSetStream) X(cudnnCreateTensorDescriptor)               \
  X(cudnnCreateFilterDescriptor) X(cudnnCreateConvolutionDescriptor) X(cudnnDestroyTensorDescriptor)     \
  X(cudnnDestroyFilterDescriptor) X(cudnnDestroyConvolutionDescriptor) X(cudnnSetTensor4dDescriptor)     \
  X(cudnnSetFilter4dDescriptor) X(cudnnSetConvolution2dDescriptor) X(cudnnSetConvolutionGroupCount)     \
  X(cudnnSetConvolutionMathType) X(cudnnGetConvolution2dForwardOutputDim)                                \
  X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnGetConvolutionBackwardDataWorkspaceSize)             \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) X(cudnnConvolutionForward)                           \
  X(cudnnConvolutionBackwardData) X(cudnnConvolutionBackwardFilter)                                      \
  X(cudnnGetConvolutionForwardAlgorithmMaxCount) X(cudnnGetConvolutionBackwardDataAlgorithmMaxCount)     \
  X(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount) X(cudnnFindConvolutionForwardAlgorithm)          \
  X(cudnnFindConvolutionBackwardDataAlgorithm) X(cudnnFindConvolutionBackwardFilterAlgorithm)            \
  X(cudnnGetConvolutionForwardAlgorithm_v7) X(cudnnGetConvolutionBackwardDataAlgorithm_v7)               \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)
struct CudnnApi {
  CONVLAB_CUDNN_FUNCTIONS(CONVLAB_LAZY_FUNCTION)
};
// Throws Error "cuDNN not loaded: <why>" where libcudnn cannot be opened.
const CudnnApi& dnn() {
  return lazy_table<CudnnApi>(cuda_library(CudaLibrary::cudnn), [](const LazyLibrary& lib, CudnnApi& table) {
    CONVLAB_CUDNN_FUNCTIONS(CONVLAB_LAZY_BIND)
  });
}
// "" where dnn() works, else its one line.
std::string cudnn_unavailable_reason() { return lazy_reason(dnn); }

std::string no_device_reason() { return "no CUDA device (" + cuda_info().reason + "): cuDNN cannot be asked"; }

void check(cudnnStatus_t s, const std::string& what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  throw_if_device_fault("cuDNN " + what + ": " + dnn().cudnnGetErrorString(s));  // a sticky fault: DeviceFault
  fail("cuDNN " + what + ": " + dnn().cudnnGetErrorString(s));
}

// One handle for the process (cuDNN handles are per device and may be shared
// across host threads when access is serialised, which the mutex below does).
std::mutex g_mu;
cudnnHandle_t handle_locked() {
  static cudnnHandle_t h = nullptr;
  if (!h) check(dnn().cudnnCreate(&h), "cudnnCreate");
  return h;
}

// Descriptors of one problem and math type (the same for every direction).
struct Descs {
  cudnnTensorDescriptor_t src = nullptr, dst = nullptr;
  cudnnFilterDescriptor_t wei = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  ~Descs() {
    if (src) dnn().cudnnDestroyTensorDescriptor(src);
    if (dst) dnn().cudnnDestroyTensorDescriptor(dst);
    if (wei) dnn().cudnnDestroyFilterDescriptor(wei);
    if (conv) dnn().cudnnDestroyConvolutionDescriptor(conv);
  }
};

// tf32: CUDNN_TENSOR_OP_MATH (Tensor Cores permitted, TF32 for fp32 data on
// Ampere and later); otherwise CUDNN_FMA_MATH (fp32 FMA kernels only).
const Descs& descs_locked(const ConvProblem& p, bool tf32) {
  static std::map<std::string, std::unique_ptr<Descs>> cache;
  auto& slot = cache[p.key() + (tf32 ? "|tensor_op_math" : "|fma_math")];
  if (slot) return *slot;
  auto d = std::make_unique<Descs>();
  check(dnn().cudnnCreateTensorDescriptor(&d->src), "cudnnCreateTensorDescriptor");
  check(dnn().cudnnCreateTensorDescriptor(&d->dst), "cudnnCreateTensorDescriptor");
  check(dnn().cudnnCreateFilterDescriptor(&d->wei), "cudnnCreateFilterDescriptor");
  check(dnn().cudnnCreateConvolutionDescriptor(&d->conv), "cudnnCreateConvolutionDescriptor");
  check(dnn().cudnnSetTensor4dDescriptor(d->src, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, p.n, p.c, p.h, p.w),
        "src descriptor");
  check(dnn().cudnnSetFilter4dDescriptor(d->wei, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, p.k, p.c_per_group(), p.r, p.s),
        "filter descriptor");
  check(dnn().cudnnSetConvolution2dDescriptor(d->conv, p.pad_h, p.pad_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "convolution descriptor");
  check(dnn().cudnnSetConvolutionGroupCount(d->conv, p.groups), "group count");
  check(dnn().cudnnSetConvolutionMathType(d->conv, tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH), "math type");
  int n, k, h, w;
  check(dnn().cudnnGetConvolution2dForwardOutputDim(d->conv, d->src, d->wei, &n, &k, &h, &w), "output dims");
  if (n != p.n || k != p.k || h != p.p() || w != p.q())
    fail("cuDNN computes a different output shape for " + p.key());
  check(dnn().cudnnSetTensor4dDescriptor(d->dst, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, k, h, w), "dst descriptor");
  slot = std::move(d);
  return *slot;
}

cudnnStatus_t query_workspace(const Descs& d, Direction dir, int id, size_t* bytes) {
  cudnnHandle_t h = handle_locked();
  switch (dir) {
    case Direction::fwd:
      return dnn().cudnnGetConvolutionForwardWorkspaceSize(h, d.src, d.wei, d.conv, d.dst,
                                                           cudnnConvolutionFwdAlgo_t(id), bytes);
    case Direction::bwd_data:
      return dnn().cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.wei, d.dst, d.conv, d.src,
                                                                cudnnConvolutionBwdDataAlgo_t(id), bytes);
    case Direction::bwd_filter:
      return dnn().cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.src, d.dst, d.conv, d.wei,
                                                                  cudnnConvolutionBwdFilterAlgo_t(id), bytes);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

const char* dir_word(Direction d) {
  return d == Direction::fwd ? "forward" : d == Direction::bwd_data ? "backward-data" : "backward-filter";
}

}  // namespace

int CudnnConv::id(Direction dir) const {
  return dir == Direction::fwd ? ids_.fwd : dir == Direction::bwd_data ? ids_.bwd_data : ids_.bwd_filter;
}

std::string CudnnConv::unavailable_reason() const {
  if (std::string why = Algorithm::unavailable_reason(); !why.empty()) return why;
  if (std::string why = cudnn_unavailable_reason(); !why.empty()) return why;
  std::call_once(probed_, [&] {
    std::lock_guard lock(g_mu);
    for (const char* text : kCudnnProbes) {
      const ConvProblem p = parse_problem(text);
      for (Direction dir : kAllDirections) {
        if (id(dir) < 0) continue;
        size_t bytes = 0;
        if (query_workspace(descs_locked(p, tf32_), dir, id(dir), &bytes) == CUDNN_STATUS_SUCCESS) return;
      }
    }
    probe_reason_ = "cuDNN " + std::to_string(cuda_info().cudnn_version) + " on this GPU accepts " + name_ +
                    " for none of its probe problems (CUDNN_STATUS_NOT_SUPPORTED for 3x3, 1x1, 5x5, grouped; "
                    "kCudnnProbes in algorithms/cudnn/cudnn_conv.hpp)";
  });
  return probe_reason_;
}

Support CudnnConv::supports(const ConvProblem& p, Direction dir) const {
  if (id(dir) < 0) return Support::no(std::string("cuDNN has no ") + name_ + " algorithm for " + dir_word(dir));
  // cudnnSetConvolution2dDescriptor takes one padding per axis, both sides.
  if (!p.symmetric_padding())
    return Support::no("needs symmetric padding: cuDNN's convolution descriptor pads both sides alike (this problem: top " +
                       std::to_string(p.pad_h) + " bottom " + std::to_string(p.pad_h_end) + ", left " +
                       std::to_string(p.pad_w) + " right " + std::to_string(p.pad_w_end) + ")");
  if (!cuda_info().available) return Support::no(no_device_reason());
  if (std::string why = cudnn_unavailable_reason(); !why.empty()) return Support::no(why);
  std::lock_guard lock(g_mu);
  size_t bytes = 0;
  const cudnnStatus_t s = query_workspace(descs_locked(p, tf32_), dir, id(dir), &bytes);
  if (s != CUDNN_STATUS_SUCCESS) return Support::no(std::string("cuDNN: ") + dnn().cudnnGetErrorString(s));
  return Support::yes();
}

size_t CudnnConv::workspace_bytes(const ConvProblem& p, Direction dir) const {
  if (id(dir) < 0 || !cuda_info().available || !cudnn_unavailable_reason().empty()) return 0;
  std::lock_guard lock(g_mu);
  size_t bytes = 0;
  check(query_workspace(descs_locked(p, tf32_), dir, id(dir), &bytes), std::string("workspace query for ") + name_);
  return bytes;
}

void CudnnConv::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                    const ExecContext& ctx) const {
  if (!cuda_info().available) fail(no_device_reason());
  std::lock_guard lock(g_mu);
  cudnnHandle_t h = handle_locked();
  const Descs& d = descs_locked(p, tf32_);
  size_t ws = 0;
  check(query_workspace(d, dir, id(dir), &ws), std::string("workspace query for ") + name_);
  check(dnn().cudnnSetStream(h, static_cast<cudaStream_t>(ctx.stream)), "cudnnSetStream");
  const float alpha = 1.f, beta = 0.f;
  switch (dir) {
    case Direction::fwd:
      check(dnn().cudnnConvolutionForward(h, &alpha, d.src, buf.src, d.wei, buf.wei, d.conv,
                                          cudnnConvolutionFwdAlgo_t(ids_.fwd), workspace, ws, &beta, d.dst, buf.dst),
            std::string(name_) + " forward");
      break;
    case Direction::bwd_data:
      check(dnn().cudnnConvolutionBackwardData(h, &alpha, d.wei, buf.wei, d.dst, buf.dst, d.conv,
                                               cudnnConvolutionBwdDataAlgo_t(ids_.bwd_data), workspace, ws, &beta,
                                               d.src, buf.src),
            std::string(name_) + " backward-data");
      break;
    case Direction::bwd_filter:
      check(dnn().cudnnConvolutionBackwardFilter(h, &alpha, d.src, buf.src, d.dst, buf.dst, d.conv,
                                                 cudnnConvolutionBwdFilterAlgo_t(ids_.bwd_filter), workspace, ws, &beta,
                                                 d.wei, buf.wei),
            std::string(name_) + " backward-filter");
      break;
  }
}

NominalCost CudnnConv::nominal_cost(const ConvProblem& p, Direction dir) const {
  return nominal_of_family(p, dir, family_);  // Winograd as F(4x4)
}

// GEMM-like cuDNN algorithms sum in fp32 in some order: the K*eps bound holds.
// FFT and Winograd mix terms across elements. Their bounds here are a priori
// (not yet measured on a GPU: no GPU has been available to this project) and
// mirror the transform's error growth: FFT ~ eps * log2(transform size) * the
// largest magnitude; Winograd ~ the transform-matrix norms times the
// summation bound. scripts/gpu-check.sh prints the measured worst ratios so
// that the first GPU session can replace these with measured numbers.
//
// TF32 variants (derived, not measured): Tensor Cores read each fp32 input
// with a 10-bit mantissa. Round-to-nearest gives a relative error <= 2^-11 per
// input (the TF32 unit roundoff); hardware that simply drops the low 13 bits
// gives < 2^-10, and cuDNN does not document which its kernels do, so the bound
// uses u = 2^-10, which covers both. The product of two TF32 values is exact in
// fp32 (11 x 11 significant bits <= 24), so each term a*b is computed as
// a(1+d1) b(1+d2) with |d1|, |d2| <= u: off by at most (2u + u^2)|a b|.
// Summing the K perturbed terms in fp32 adds the usual K*eps bound on their
// magnitudes, each at most (1 + 2u + u^2)|a b|. Per output element, with
// mag = sum |a b| over its terms:
//     |y - ref| <= [ (2u + u^2) + K*eps*(1 + 2u + u^2) ] * mag
// For winograd_nonfused_tf32 the rounding hits the transformed tiles, so the
// same x64 a-priori transform growth as the fp32 Winograd entries multiplies
// the whole bracket (unmeasured on a GPU, like theirs).
Tolerance CudnnConv::tolerance(const ConvProblem& p, Direction dir) const {
  Tolerance t = summation_tolerance(p, dir);
  const std::string fam = family_;
  if (tf32_) {
    const double u = std::ldexp(1.0, -10), rounding = 2 * u + u * u;
    t.elem = rounding + t.elem * (1 + rounding);
    t.basis = "TF32 inputs (u=2^-10): (2u+u^2) + K*eps*(1+2u+u^2), K=" +
              std::to_string(std::max<int64_t>(p.reduction_length(dir), 1));
    if (fam == "winograd") {
      t.elem *= 64;
      t.basis += " x64 a-priori Winograd transform growth (unmeasured on GPU)";
    }
    return t;
  }
  if (fam == "fft") {
    const double l = std::log2(double(std::max(p.h + 2 * p.pad_h, p.w + 2 * p.pad_w)) + 1.0);
    t.global = 16.0 * l * double(FLT_EPSILON);
    t.basis += "; a-priori FFT bound 16*log2(L)*eps*max|terms| (unmeasured on GPU)";
  } else if (fam == "winograd") {
    // Transforms mix neighbouring outputs' terms: the transform algorithms'
    // form, eps x max sum|terms| (see algorithms/cuda/winograd.cu). 2x the worst
    // measured on an H100 (cuDNN 9.19) over the shared tester's sweep, rounded
    // up. 5x5 filters (cuDNN's WINOGRAD_NONFUSED tiles them with large
    // transforms) measured 9184 / 7708 / 3454 eps for fwd / bwd-data /
    // bwd-filter: about 1e-3 of the largest sum|terms|, a few percent of some
    // AlexNet conv2 outputs. 3x3 filters measured 24.1 / 14.6 / 16.8 eps.
    static constexpr double kBoundEps3x3[3] = {49, 30, 34};
    static constexpr double kBoundEps5x5[3] = {18400, 15500, 7000};
    const int col = direction_index(dir);
    const bool small = p.r <= 3 && p.s <= 3;
    const double eps = small ? kBoundEps3x3[col] : kBoundEps5x5[col];
    t = Tolerance{};
    t.global = eps * double(FLT_EPSILON);
    t.basis = "measured cuDNN Winograd bound " + std::to_string(int(eps)) +
              " eps x max sum|terms| (" + (small ? "3x3" : "5x5 and larger") +
              " filters: 2x the worst measured on an H100, algorithms/cudnn/cudnn_conv.cpp)";
  }
  return t;
}

const std::vector<const Algorithm*>& cudnn_algorithms() {
  using I = CudnnConv::Ids;
  static const CudnnConv list[] = {
      {"cudnn.implicit_gemm", "implicit_gemm", "cuDNN IMPLICIT_GEMM (forward)", I{0, -1, -1}, true},
      {"cudnn.implicit_precomp_gemm", "implicit_gemm", "cuDNN IMPLICIT_PRECOMP_GEMM (forward)", I{1, -1, -1}, true},
      {"cudnn.gemm", "gemm", "cuDNN GEMM with explicit im2col (forward)", I{2, -1, -1}, true},
      {"cudnn.fft", "fft", "cuDNN FFT (fwd, bwd-data, bwd-filter)", I{4, 2, 2}, true},
      {"cudnn.fft_tiling", "fft", "cuDNN FFT_TILING (fwd, bwd-data, bwd-filter)", I{5, 3, 6}, true},
      {"cudnn.winograd", "winograd", "cuDNN WINOGRAD, fused (fwd, bwd-data; cuDNN has none for bwd-filter)",
       I{6, 4, -1}, true},
      {"cudnn.winograd_nonfused", "winograd", "cuDNN WINOGRAD_NONFUSED (fwd, bwd-data, bwd-filter)", I{7, 5, 5}, true},
      {"cudnn.bwd_data_algo_0", "gemm", "cuDNN BWD_DATA_ALGO_0 (non-deterministic)", I{-1, 0, -1}, false},
      {"cudnn.bwd_data_algo_1", "gemm", "cuDNN BWD_DATA_ALGO_1", I{-1, 1, -1}, true},
      {"cudnn.bwd_filter_algo_0", "gemm", "cuDNN BWD_FILTER_ALGO_0 (non-deterministic)", I{-1, -1, 0}, false},
      {"cudnn.bwd_filter_algo_1", "gemm", "cuDNN BWD_FILTER_ALGO_1", I{-1, -1, 1}, true},
      {"cudnn.bwd_filter_algo_3", "gemm", "cuDNN BWD_FILTER_ALGO_3 (non-deterministic)", I{-1, -1, 3}, false},
  };
  static const std::vector<const Algorithm*> ptrs = [] {
    std::vector<const Algorithm*> v;
    for (const auto& a : list) v.push_back(&a);
    return v;
  }();
  return ptrs;
}

const std::vector<const Algorithm*>& cudnn_tf32_algorithms() {
  using I = CudnnConv::Ids;
  static const CudnnConv list[] = {
      {"cudnn.implicit_precomp_gemm_tf32", "implicit_gemm",
       "cuDNN IMPLICIT_PRECOMP_GEMM with CUDNN_TENSOR_OP_MATH: TF32 Tensor Cores permitted (forward)", I{1, -1, -1},
       true, true},
      {"cudnn.winograd_nonfused_tf32", "winograd",
       "cuDNN WINOGRAD_NONFUSED with CUDNN_TENSOR_OP_MATH: TF32 Tensor Cores permitted (fwd, bwd-data, bwd-filter)",
       I{7, 5, 5}, true, true},
      {"cudnn.bwd_data_algo_1_tf32", "gemm",
       "cuDNN BWD_DATA_ALGO_1 with CUDNN_TENSOR_OP_MATH: TF32 Tensor Cores permitted", I{-1, 1, -1}, true, true},
      {"cudnn.bwd_filter_algo_1_tf32", "gemm",
       "cuDNN BWD_FILTER_ALGO_1 with CUDNN_TENSOR_OP_MATH: TF32 Tensor Cores permitted", I{-1, -1, 1}, true, true},
  };
  static const std::vector<const Algorithm*> ptrs = [] {
    std::vector<const Algorithm*> v;
    for (const auto& a : list) v.push_back(&a);
    return v;
  }();
  return ptrs;
}

const char* cudnn_unregistered_reason(Direction dir, int id) {
  if (dir == Direction::fwd && id == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT)
    return "CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: cuDNN implements no problem with it";
  if (dir == Direction::bwd_filter && id == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD)
    return "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD: 'not implemented' (cudnn_ops.h)";
  return "";
}

std::string cudnn_algo_name(Direction dir, int id, bool tensor_op) {
  if (tensor_op)
    for (const Algorithm* a : cudnn_tf32_algorithms())
      if (static_cast<const CudnnConv*>(a)->id(dir) == id) return std::string(a->name());
  for (const Algorithm* a : cudnn_algorithms()) {
    const auto* c = static_cast<const CudnnConv*>(a);
    if (c->id(dir) == id) return std::string(c->name());
  }
  return std::string(kCudnnUnknownPrefix) + std::to_string(id);
}

bool is_unknown_cudnn_algo(std::string_view name) { return name.rfind(kCudnnUnknownPrefix, 0) == 0; }

namespace {

const char* math_word(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH: return "default";
    case CUDNN_TENSOR_OP_MATH: return "tensor_op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "tensor_op_allow_conversion";
    case CUDNN_FMA_MATH: return "fma";
  }
  return "unknown";
}

template <typename Perf>
CudnnPerf to_perf(const Perf& r, Direction dir, bool measured) {
  CudnnPerf o;
  const bool tensor_op = r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  o.algo = cudnn_algo_name(dir, int(r.algo), tensor_op);
  o.known = !is_unknown_cudnn_algo(o.algo);
  o.math = math_word(r.mathType);
  o.status = dnn().cudnnGetErrorString(r.status);
  o.time_ms = measured && r.status == CUDNN_STATUS_SUCCESS ? double(r.time) : -1;
  o.workspace = r.memory;
  o.deterministic = r.determinism == CUDNN_DETERMINISTIC;
  return o;
}

// Arrays sized by cuDNN's own *AlgorithmMaxCount (it may list an algorithm once
// per math type it tries), never by the enum's ALGO_COUNT.
std::vector<CudnnPerf> select(const ConvProblem& p, Direction dir, bool find, bool tf32) {
  if (!cuda_info().available) fail(no_device_reason());
  if (auto e = p.validate(); !e.empty()) fail(e);
  std::lock_guard lock(g_mu);
  cudnnHandle_t h = handle_locked();
  const Descs& d = descs_locked(p, tf32);
  std::vector<CudnnPerf> out;
  int max = 0, n = 0;
  switch (dir) {
    case Direction::fwd: {
      check(dnn().cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max),
            "cudnnGetConvolutionForwardAlgorithmMaxCount");
      std::vector<cudnnConvolutionFwdAlgoPerf_t> r(size_t(std::max(max, int(CUDNN_CONVOLUTION_FWD_ALGO_COUNT))));
      if (find)
        check(dnn().cudnnFindConvolutionForwardAlgorithm(h, d.src, d.wei, d.conv, d.dst, int(r.size()), &n, r.data()),
              "cudnnFindConvolutionForwardAlgorithm");
      else
        check(dnn().cudnnGetConvolutionForwardAlgorithm_v7(h, d.src, d.wei, d.conv, d.dst, int(r.size()), &n,
                                                           r.data()),
              "cudnnGetConvolutionForwardAlgorithm_v7");
      for (int i = 0; i < n && i < int(r.size()); ++i) out.push_back(to_perf(r[size_t(i)], dir, find));
      break;
    }
    case Direction::bwd_data: {
      check(dnn().cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max),
            "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> r(size_t(std::max(max, int(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT))));
      if (find)
        check(dnn().cudnnFindConvolutionBackwardDataAlgorithm(h, d.wei, d.dst, d.conv, d.src, int(r.size()), &n,
                                                              r.data()),
              "cudnnFindConvolutionBackwardDataAlgorithm");
      else
        check(dnn().cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.wei, d.dst, d.conv, d.src, int(r.size()), &n,
                                                                r.data()),
              "cudnnGetConvolutionBackwardDataAlgorithm_v7");
      for (int i = 0; i < n && i < int(r.size()); ++i) out.push_back(to_perf(r[size_t(i)], dir, find));
      break;
    }
    case Direction::bwd_filter: {
      check(dnn().cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max),
            "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount");
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> r(
          size_t(std::max(max, int(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT))));
      if (find)
        check(dnn().cudnnFindConvolutionBackwardFilterAlgorithm(h, d.src, d.dst, d.conv, d.wei, int(r.size()), &n,
                                                                r.data()),
              "cudnnFindConvolutionBackwardFilterAlgorithm");
      else
        check(dnn().cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.src, d.dst, d.conv, d.wei, int(r.size()), &n,
                                                                  r.data()),
              "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
      for (int i = 0; i < n && i < int(r.size()); ++i) out.push_back(to_perf(r[size_t(i)], dir, find));
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<CudnnPerf> cudnn_find(const ConvProblem& p, Direction dir, bool tf32) { return select(p, dir, true, tf32); }
std::vector<CudnnPerf> cudnn_get(const ConvProblem& p, Direction dir, bool tf32) { return select(p, dir, false, tf32); }

}  // namespace convlab
