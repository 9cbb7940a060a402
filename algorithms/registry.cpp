// THE list. Add an algorithm by including its header and adding one line below;
// every test sweep, benchmark, CLI listing and autotune run picks it up.
// Order: hand-written CPU algorithms (the first supporting one is the `default`
// policy's choice), the CPU vendor peers, the hand-written CUDA algorithms,
// cuDNN (fp32, then its TF32 variants), and the fp64 reference last.
#include "algorithms/registry.hpp"

#include <algorithm>

#include "algorithms/cpu/direct.hpp"
#include "algorithms/cpu/direct_depthwise.hpp"
#include "algorithms/cpu/fft.hpp"
#include "algorithms/cpu/im2col_gemm.hpp"
#include "algorithms/cpu/reference.hpp"
#include "algorithms/cpu/winograd.hpp"
#ifdef CONVLAB_HAS_ONEDNN
#include "algorithms/cpu/onednn.hpp"
#endif
#if CONVLAB_HAS_CUDA
#include "algorithms/cuda/direct.hpp"
#include "algorithms/cuda/fft.hpp"
#include "algorithms/cuda/im2col_gemm.hpp"
#include "algorithms/cuda/implicit_gemm.hpp"
#include "algorithms/cuda/winograd.hpp"
#include "algorithms/cudnn/cudnn_conv.hpp"
#endif
#include "core/error.hpp"

namespace convlab {

namespace {

std::vector<const Algorithm*>& mutable_registry() {
  static const CpuIm2colGemm cpu_im2col_gemm;
  static const CpuIm2colOpenblas cpu_im2col_openblas;
  static const CpuDirect cpu_direct;
  static const CpuDirectDepthwise cpu_direct_depthwise;
  static const CpuFft cpu_fft;
  static const CpuFftTiled cpu_fft_tiled;
  static const CpuFftFftw cpu_fft_fftw;
  static const CpuWinograd cpu_winograd_f2x3(2), cpu_winograd_f4x3(4), cpu_winograd_f6x3(6);
  static const CpuReference cpu_reference;
#if CONVLAB_HAS_CUDA
  static const CudaIm2colGemm cuda_im2col_gemm;
  static const CudaIm2colCublas cuda_im2col_cublas;
  static const CudaImplicitGemm cuda_implicit_gemm;
  static const CudaImplicitGemm cuda_implicit_gemm_tf32(true);
  static const CudaDirect cuda_direct;
  static const CudaWinogradF2x3 cuda_winograd_f2x3;
  static const CudaWinograd cuda_winograd_f4x3(4), cuda_winograd_f6x3(6);
  static const CudaFft cuda_fft;
  static const CudaFftTiled cuda_fft_tiled;
#endif
#ifdef CONVLAB_HAS_ONEDNN
  static const CpuOnednn cpu_onednn_direct(OnednnKind::direct);
  static const CpuOnednn cpu_onednn_winograd(OnednnKind::winograd);
  static const CpuOnednn cpu_onednn_auto(OnednnKind::automatic);
#endif
  static std::vector<const Algorithm*> list = [] {
    std::vector<const Algorithm*> v = {
        // ---- CPU, hand-written ---------------------------------------------
        &cpu_im2col_gemm,  // first: the `default` policy's choice
        &cpu_im2col_openblas,
        &cpu_direct,
        &cpu_direct_depthwise,
        &cpu_winograd_f2x3,
        &cpu_winograd_f4x3,
        &cpu_winograd_f6x3,
        &cpu_fft,
        &cpu_fft_tiled,
        &cpu_fft_fftw,
        // ---- CPU, vendor peers ---------------------------------------------
#ifdef CONVLAB_HAS_ONEDNN
        &cpu_onednn_direct,
        &cpu_onednn_winograd,
        &cpu_onednn_auto,
#endif
    };
#if CONVLAB_HAS_CUDA
    // ---- CUDA, hand-written ------------------------------------------------
    v.insert(v.end(), {&cuda_im2col_gemm, &cuda_im2col_cublas, &cuda_implicit_gemm, &cuda_direct,
                       &cuda_winograd_f2x3, &cuda_winograd_f4x3, &cuda_winograd_f6x3, &cuda_fft, &cuda_fft_tiled});
    // ---- CUDA, hand-written on the tensor cores (math() "tf32": never chosen unless asked) ----
    v.push_back(&cuda_implicit_gemm_tf32);
    // ---- cuDNN -------------------------------------------------------------
    for (const Algorithm* a : cudnn_algorithms()) v.push_back(a);
    // ---- cuDNN, TF32 variants (math() "tf32": never chosen unless asked) ----
    for (const Algorithm* a : cudnn_tf32_algorithms()) v.push_back(a);
#endif
    v.push_back(&cpu_reference);  // the oracle, last among the built-ins
    return v;
  }();
  return list;
}

size_t builtin_count() {
  static const size_t n = mutable_registry().size();
  return n;
}

}  // namespace

const std::vector<const Algorithm*>& registry() { return mutable_registry(); }

void register_algorithm(const Algorithm& a) {
  const std::string name(a.name());
  const std::string what = "cannot register algorithm '" + printable(name) + "': ";
  for (const char* reserved : {"cpu.", "cuda.", "cudnn.", "onednn."})
    if (name.rfind(reserved, 0) == 0)
      fail(what + "the prefix '" + reserved + "' is reserved for the built-in algorithms; name it user.<name>");
  if (name.rfind("user.", 0) != 0 || name.size() == 5)
    fail(what + "a registered algorithm's name is user.<name>");
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
      fail(what + "a name holds lowercase letters, digits, '_' and '.' only");
  if (find_algorithm(name)) fail(what + "an algorithm of that name is already registered");
  (void)builtin_count();  // the built-ins counted before the first addition
  mutable_registry().push_back(&a);
}

bool registered_at_run_time(const Algorithm& a) {
  const auto& v = registry();
  return std::find(v.begin() + std::ptrdiff_t(builtin_count()), v.end(), &a) != v.end();
}

std::string_view canonical_algorithm_name(std::string_view name) {
  // Names follow <provider>.<family>[_variant][_library] (docs/algorithms.md); these were given before.
  static const std::pair<std::string_view, std::string_view> kRenamed[] = {
      {"cpu.onednn_direct", "onednn.direct"},
      {"cpu.onednn_winograd", "onednn.winograd"},
      {"cpu.onednn_auto", "onednn.auto"},
      {"cuda.fft", "cuda.fft_cufft"},
  };
  for (const auto& [old_name, now] : kRenamed)
    if (name == old_name) return now;
  return name;
}

const Algorithm* find_algorithm(std::string_view name) {
  name = canonical_algorithm_name(name);
  for (const Algorithm* a : registry())
    if (a->name() == name) return a;
  return nullptr;
}

const Algorithm& get_algorithm(std::string_view name) {
  if (const Algorithm* a = find_algorithm(name)) return *a;
  std::string known;
  for (const Algorithm* a : registry()) known += std::string(known.empty() ? "" : ", ") + std::string(a->name());
  fail("unknown algorithm '" + printable(name) + "' (known: " + known + ")");
}

}  // namespace convlab
