// memory.hpp: the thin device-memory API host code around kernels uses, so a
// test (or a launcher) reads the same on the GPU and under emulation:
// cudaMalloc / cudaMemcpy / cudaMemset / cudaStreamSynchronize under nvcc,
// plain (64-byte aligned) host memory under EMULATE. Errors throw convlab::Error;
// a sticky CUDA error (or, emulated, any call after a modelled device fault)
// throws convlab::DeviceFault (core/cuda_error.hpp).
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::simt {

#if CONVLAB_SIMT_EMULATED
inline void* device_malloc(size_t bytes) {
  emu::check_device("device_malloc");
  void* p = ::operator new(bytes ? bytes : 1, std::align_val_t(64));
  try {
    emu::note_allocation(p, bytes);
  } catch (...) {
    ::operator delete(p, std::align_val_t(64));
    throw;
  }
  return p;
}
inline void device_free(void* p) noexcept {
  if (!p) return;
  emu::note_free(p);
  ::operator delete(p, std::align_val_t(64));
}
inline void copy_h2d(void* dst, const void* src, size_t bytes) {
  emu::check_device("copy_h2d");
  std::memcpy(dst, src, bytes);
}
inline void copy_d2h(void* dst, const void* src, size_t bytes) {
  emu::check_device("copy_d2h");
  std::memcpy(dst, src, bytes);
}
inline void copy_d2d(void* dst, const void* src, size_t bytes, void* = nullptr) {
  emu::check_device("copy_d2d");
  std::memcpy(dst, src, bytes);
}
inline void memset_device(void* dst, int value, size_t bytes, void* = nullptr) {
  emu::check_device("memset_device");
  std::memset(dst, value, bytes);
}
inline void synchronize(void* = nullptr) { emu::check_device("synchronize"); }
#else
inline void check(cudaError_t e, const char* what) { check_cuda(e, what); }
inline void* device_malloc(size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
  return p;
}
inline void device_free(void* p) noexcept {
  if (p) cudaFree(p);
}
inline void copy_h2d(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy host to device");
}
inline void copy_d2h(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy device to host");
}
inline void copy_d2d(void* dst, const void* src, size_t bytes, void* stream = nullptr) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)),
        "cudaMemcpyAsync device to device");
}
inline void memset_device(void* dst, int value, size_t bytes, void* stream = nullptr) {
  check(cudaMemsetAsync(dst, value, bytes, static_cast<cudaStream_t>(stream)), "cudaMemsetAsync");
}
inline void synchronize(void* stream = nullptr) {
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}
#endif

// An owning device array of T (RAII over device_malloc).
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(size_t n) : n_(n), p_(static_cast<T*>(device_malloc(n * sizeof(T)))) {}
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : n_(std::exchange(o.n_, 0)), p_(std::exchange(o.p_, nullptr)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(n_, o.n_);
    std::swap(p_, o.p_);
    return *this;
  }
  ~DeviceArray() { device_free(p_); }

  void upload(const std::vector<T>& host) {
    if (host.size() != n_) fail("DeviceArray::upload: size mismatch");
    copy_h2d(p_, host.data(), n_ * sizeof(T));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    copy_d2h(host.data(), p_, n_ * sizeof(T));
    return host;
  }
  void fill_bytes(unsigned char v) { memset_device(p_, v, n_ * sizeof(T)); }
  T* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  size_t n_ = 0;
  T* p_ = nullptr;
};

}  // namespace convlab::simt
