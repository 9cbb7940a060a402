// Scratch owned by the calling thread (kernels/cpu/thread_scratch.hpp).
#include "kernels/cpu/thread_scratch.hpp"

#include <cstdlib>

namespace convlab::cpu {

namespace {

struct Held {
  void* p = nullptr;
  size_t bytes = 0;
  ~Held() { std::free(p); }
};

thread_local Held held;

}  // namespace

void* thread_scratch(size_t bytes) {
  if (bytes <= held.bytes) return held.p;
  const size_t want = (bytes + 4095) / 4096 * 4096;
  void* p = std::aligned_alloc(64, want);
  if (!p) return nullptr;
  std::free(held.p);
  held.p = p;
  held.bytes = want;
  return p;
}

size_t thread_scratch_held() { return held.bytes; }

}  // namespace convlab::cpu
