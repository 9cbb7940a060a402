// Aligned owning fp32/fp64 buffers and a small shaped tensor. Host memory only;
// device buffers go through core/device.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/problem.hpp"

namespace convlab {

inline constexpr size_t kAlignment = 64;  // one cache line, one AVX-512 register

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

// Uninitialised, 64-byte aligned storage of `count` elements of T.
template <typename T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t count) : size_(count) {
    if (count == 0) return;
    const size_t bytes = (count * sizeof(T) + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, bytes);
    if (!p) fail_allocation(DeviceKind::cpu, bytes);
    data_.reset(static_cast<T*>(p));
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }
  T& operator[](size_t i) { return data_.get()[i]; }
  const T& operator[](size_t i) const { return data_.get()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

 private:
  std::unique_ptr<T, AlignedFree> data_;
  size_t size_ = 0;
};

// A dense, C-ordered fp32 tensor with up to 4 dimensions (NCHW, KCRS, ...).
struct Tensor {
  std::vector<int64_t> shape;
  AlignedBuffer<float> buf;

  Tensor() = default;
  explicit Tensor(std::vector<int64_t> dims) : shape(std::move(dims)), buf(count(shape)) {}
  static int64_t count(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (auto d : dims) n *= d;
    return n;
  }
  int64_t size() const { return int64_t(buf.size()); }
  float* data() { return buf.data(); }
  const float* data() const { return buf.data(); }
  std::string shape_string() const;
};

// The shapes of the three tensors of a problem (weights per group: K, C/g, R, S).
std::vector<int64_t> src_shape(const ConvProblem& p);
std::vector<int64_t> wei_shape(const ConvProblem& p);
std::vector<int64_t> dst_shape(const ConvProblem& p);

// Deterministic fill with uniform values in [lo, hi) from a seed (splitmix64).
void fill_uniform(float* data, size_t count, uint64_t seed, float lo = -1.f, float hi = 1.f);
// Small integers in [-range, range]: exact in fp32 for GEMM-like sums.
void fill_small_integers(float* data, size_t count, uint64_t seed, int range = 2);

}  // namespace convlab
