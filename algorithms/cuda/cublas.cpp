#include "algorithms/cuda/cublas.hpp"

#include <cuda_runtime.h>

#include <string>

#include "core/cuda_libraries.hpp"
#include "core/cuda_stream.hpp"
#include "core/error.hpp"

namespace convlab::cuda::cublas {

const Api& api() {
  return lazy_table<Api>(cuda_library(CudaLibrary::cublas),
                         [](const LazyLibrary& lib, Api& table) { CONVLAB_CUBLAS_FUNCTIONS(CONVLAB_LAZY_BIND) });
}

std::string unavailable_reason() { return lazy_reason(api); }

namespace {
const char* status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED (no usable CUDA device?)";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "cuBLAS error";
  }
}
}  // namespace

void check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const std::string msg = std::string("cuBLAS ") + what + ": " + status_name(s);
  throw_if_device_fault(msg);  // a sticky device fault: DeviceFault
  fail(msg);
}

cublasHandle_t handle(void* stream) {
  struct Handle {
    cublasHandle_t h = nullptr;
    ~Handle() {
      if (h) api().cublasDestroy(h);
    }
  };
  thread_local Handle t;
  if (!t.h) {
    cublasHandle_t h = nullptr;
    check(api().cublasCreate(&h), "cublasCreate");
    t.h = h;
    check(api().cublasSetMathMode(t.h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }
  check(api().cublasSetStream(t.h, static_cast<cudaStream_t>(stream)), "cublasSetStream");
  return t.h;
}

}  // namespace convlab::cuda::cublas
