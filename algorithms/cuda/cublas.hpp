// cuBLAS for convlab's cuBLAS callers (cuda.im2col_cublas, the training
// engine's fully connected layers): the library's entry points, opened on
// first use (core/cuda_libraries.hpp), the one handle per host thread they
// share, and the error check that turns a cuBLAS status into one
// convlab::Error line.
#pragma once
#include <cublas_v2.h>

#include <string>

#include "core/lazy_library.hpp"

namespace convlab::cuda::cublas {

// The entry points convlab calls, under their cuBLAS names (cublasCreate is
// cublasCreate_v2, ...): api().cublasSgemm(...).
#define CONVLAB_CUBLAS_FUNCTIONS(X)                                                                   \
  X(cublasCreate) X(cublasDestroy) X(cublasSetMathMode) X(cublasSetStream) X(cublasSgemm) \
  X(cublasSgemmStridedBatched)
struct Api {
  CONVLAB_CUBLAS_FUNCTIONS(CONVLAB_LAZY_FUNCTION)
};
// Opens libcublas on the first call. Throws Error "cuBLAS not loaded: <why>"
// (then and on every later call) where it cannot be opened or lacks an entry.
const Api& api();
// "" when api() works, else its one-line error (opens the library to know).
std::string unavailable_reason();

// Throws Error "cuBLAS <what>: <status name>" unless s is CUBLAS_STATUS_SUCCESS
// (DeviceFault when the CUDA context holds a sticky error, core/cuda_stream.hpp).
void check(cublasStatus_t s, const char* what);

// The calling thread's handle (cuBLAS handles are not thread-safe), created on
// first use with CUBLAS_DEFAULT_MATH (FP32 SGEMM, no TF32: that takes
// CUBLAS_TF32_TENSOR_OP_MATH) and bound to `stream` (a cudaStream_t) on every
// call. Without a device cublasCreate fails and this throws.
cublasHandle_t handle(void* stream);

}  // namespace convlab::cuda::cublas
