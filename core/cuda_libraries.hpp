// The CUDA vendor libraries convlab calls (cuDNN, cuBLAS, cuFFT, NCCL), opened
// on first use (core/lazy_library.hpp) rather than linked: a convlab built with
// CUDA starts, and runs everything on the CPU, where they are absent or cannot
// be mapped (an address-space limit), and a process maps each only once it
// calls it. The CUDA runtime itself is linked statically (CUDA::cudart_static)
// and opens the driver (libcuda.so.1) on its first call, so nothing of CUDA is
// loaded at start.
//
// Each library is looked up by the SONAME of the file the build found, first
// through the dynamic loader's search (LD_LIBRARY_PATH, the ld.so cache), then
// in the folder the build found it in. The entry points are bound into typed
// tables beside their callers: cuDNN in algorithms/cudnn/cudnn_conv.cpp (and
// cudnnGetVersion in core/cuda_runtime.cu), cuBLAS in algorithms/cuda/cublas.cpp,
// cuFFT in algorithms/cuda/fft_cufft.cu, NCCL in dist/comm_nccl.cpp.
// CUDA builds only (CONVLAB_HAS_CUDA).
#pragma once
#include "core/lazy_library.hpp"

namespace convlab {

enum class CudaLibrary { cudnn, cublas, cufft, nccl };
// The process's one LazyLibrary for `which`. NCCL's has no file name where the
// build found no NCCL (its unavailable_reason says so).
const LazyLibrary& cuda_library(CudaLibrary which);

}  // namespace convlab
