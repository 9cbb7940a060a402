// THE list. Add an algorithm by including its header and adding one line below;
// every test sweep, benchmark, CLI listing and autotune run picks it up.
#include "algorithms/registry.hpp"

#include "algorithms/cpu/reference.hpp"
#include "core/error.hpp"
#if CONVLAB_HAS_CUDA
#include "algorithms/cuda/direct.hpp"
#include "algorithms/cuda/fft.hpp"
#include "algorithms/cuda/im2col_gemm.hpp"
#include "algorithms/cuda/implicit_gemm.hpp"
#include "algorithms/cuda/winograd.hpp"
#endif

namespace convlab {

const std::vector<const Algorithm*>& registry() {
  static const CpuReference cpu_reference;
#if CONVLAB_HAS_CUDA
  static const CudaIm2colGemm cuda_im2col_gemm;
  static const CudaIm2colCublas cuda_im2col_cublas;
  static const CudaImplicitGemm cuda_implicit_gemm;
  static const CudaDirect cuda_direct;
  static const CudaWinogradF2x3 cuda_winograd_f2x3;
  static const CudaWinogradF4x3 cuda_winograd_f4x3;
  static const CudaFft cuda_fft;
  static const CudaFftTiled cuda_fft_tiled;
#endif
  static const std::vector<const Algorithm*> list = {
      // ---- CPU -------------------------------------------------------------
#if CONVLAB_HAS_CUDA
      // ---- CUDA ------------------------------------------------------------
      &cuda_im2col_gemm,
      &cuda_im2col_cublas,
      &cuda_implicit_gemm,
      &cuda_direct,
      &cuda_winograd_f2x3,
      &cuda_winograd_f4x3,
      &cuda_fft,
      &cuda_fft_tiled,
#endif
      &cpu_reference,
  };
  return list;
}

const Algorithm* find_algorithm(std::string_view name) {
  for (const Algorithm* a : registry())
    if (a->name() == name) return a;
  return nullptr;
}

const Algorithm& get_algorithm(std::string_view name) {
  if (const Algorithm* a = find_algorithm(name)) return *a;
  std::string known;
  for (const Algorithm* a : registry()) known += std::string(known.empty() ? "" : ", ") + std::string(a->name());
  fail("unknown algorithm '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace convlab
