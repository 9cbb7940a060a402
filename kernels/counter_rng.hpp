// Counter-based random numbers shared by the CPU and the CUDA training layers,
// so that dropout masks and weight initialisation are the same bits on both
// devices: value i of a stream is a pure function of (key, i) (SplitMix64's
// finaliser), with no state and no order dependence across threads.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define CONVLAB_HD __host__ __device__ __forceinline__
#else
#define CONVLAB_HD inline
#endif

namespace convlab::rng {

CONVLAB_HD uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) with 53 random bits.
CONVLAB_HD double uniform01(uint64_t key) { return double(mix(key) >> 11) * 0x1.0p-53; }

// Dropout: element i of the mask keyed by `key` is 0 with probability p, else keep = 1 / (1 - p).
constexpr uint64_t kDropoutStride = 0xD1B54A32D192ED03ull;
CONVLAB_HD float dropout_mask(uint64_t key, int64_t i, float p, float keep) {
  return uniform01(key + uint64_t(i) * kDropoutStride) < double(p) ? 0.f : keep;
}
// The key whose element i is element `first` + i of `key`'s mask: a slice of a
// longer mask (a data-parallel rank's samples of the global batch).
CONVLAB_HD uint64_t dropout_key_at(uint64_t key, int64_t first) { return key + uint64_t(first) * kDropoutStride; }

}  // namespace convlab::rng
