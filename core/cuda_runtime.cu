// The CUDA runtime half of core/device.hpp, compiled by nvcc. On a machine
// without a GPU every entry point reports why ("no CUDA device", "no NVIDIA
// driver: libcuda.so.1 is not installed", a driver older than the runtime)
// instead of crashing.
// The runtime is linked statically and opens the driver on its first call;
// cuDNN (for its version) is opened only where a device exists
// (core/cuda_libraries.hpp).
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>

#include <string>

#include "core/cuda_error.hpp"
#include "core/cuda_libraries.hpp"
#include "core/device.hpp"
#include "core/error.hpp"

namespace convlab::cuda::rt {

namespace {
// A failed call: clears the (non-sticky) error it left so the next launch check
// does not report it; DeviceFault for a sticky one (core/cuda_error.hpp).
void check(cudaError_t e, const char* what) { check_cuda(e, what); }
void require_device() {
  const CudaInfo& info = cuda_info();
  if (!info.available) fail("no CUDA device: " + info.reason);
}
// cudnnGetVersion() where cuDNN can be opened; 0 where it cannot.
int cudnn_version() {
  const LazyLibrary& lib = cuda_library(CudaLibrary::cudnn);
  if (!lib.available()) return 0;
  try {
    decltype(&cudnnGetVersion) version = nullptr;
    lazy_bind(lib, version, "cudnnGetVersion");
    return int(version());
  } catch (const Error&) {
    return 0;
  }
}
// What a failed device count means, in the user's words: the runtime says "CUDA driver version is
// insufficient for CUDA runtime version" both when the driver is too old and when there is none at all.
std::string driver_problem(cudaError_t e) {
  if (e == cudaErrorInsufficientDriver) {
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!driver) return "no NVIDIA driver: libcuda.so.1 is not installed";
    dlclose(driver);
    int have = 0, need = 0;
    cudaDriverGetVersion(&have);
    cudaRuntimeGetVersion(&need);
    return "the NVIDIA driver supports CUDA " + std::to_string(have / 1000) + "." + std::to_string(have % 1000 / 10) +
           ", older than the CUDA " + std::to_string(need / 1000) + "." + std::to_string(need % 1000 / 10) +
           " this build needs: update the driver";
  }
  if (e == cudaErrorNoDevice) return "no CUDA device";
  return cudaGetErrorString(e);
}
}  // namespace

CudaInfo query() {
  CudaInfo info;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky error
    info.reason = driver_problem(e);
    return info;
  }
  if (count == 0) {
    info.reason = "no CUDA device";
    return info;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    info.reason = "cudaGetDeviceProperties failed";
    return info;
  }
  info.available = true;
  info.name = prop.name;
  info.sm_count = prop.multiProcessorCount;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  info.cudnn_version = cudnn_version();
  return info;
}

void* alloc(size_t bytes) {
  require_device();
  void* p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
  return p;
}

void free(void* p) noexcept {
  if (p) cudaFree(p);
}

void copy_h2d(void* dst, const void* src, size_t bytes) {
  require_device();
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy host to device");
}

void copy_d2h(void* dst, const void* src, size_t bytes) {
  require_device();
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy device to host");
}

void fill_bytes(void* dst, unsigned char value, size_t bytes) {
  require_device();
  check(cudaMemset(dst, value, bytes), "cudaMemset");
}

void copy_d2d(void* dst, const void* src, size_t bytes, void* stream) {
  require_device();
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)),
        "cudaMemcpyAsync device to device");
}

void synchronize(void* stream) {
  require_device();
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

size_t free_bytes() {
  if (!cuda_info().available) return 0;
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return free;
}

}  // namespace convlab::cuda::rt
