// The one cuBLAS handle per host thread that convlab's cuBLAS callers share
// (cuda.im2col_cublas, the training engine's fully connected layers), and the
// error check that turns a cuBLAS status into one convlab::Error line.
#pragma once
#include <cublas_v2.h>

namespace convlab::cublas {

// Throws Error "cuBLAS <what>: <status name>" unless s is CUBLAS_STATUS_SUCCESS
// (DeviceFault when the CUDA context holds a sticky error, core/cuda_stream.hpp).
void check(cublasStatus_t s, const char* what);

// The calling thread's handle (cuBLAS handles are not thread-safe), created on
// first use with CUBLAS_DEFAULT_MATH (FP32 SGEMM, no TF32: that takes
// CUBLAS_TF32_TENSOR_OP_MATH) and bound to `stream` (a cudaStream_t) on every
// call. Without a device cublasCreate fails and this throws.
cublasHandle_t handle(void* stream);

}  // namespace convlab::cublas
