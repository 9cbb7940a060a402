// core/device.hpp's CUDA entry points for a build configured with CONVLAB_CUDA=OFF.
#include "core/device.hpp"
#include "core/error.hpp"

namespace convlab::cuda::rt {

CudaInfo query() {
  CudaInfo info;
  info.reason = "built without CUDA (CONVLAB_CUDA=OFF)";
  return info;
}
void* alloc(size_t) { fail("no CUDA device: built without CUDA"); }
void free(void*) noexcept {}
void copy_h2d(void*, const void*, size_t) { fail("no CUDA device: built without CUDA"); }
void copy_d2h(void*, const void*, size_t) { fail("no CUDA device: built without CUDA"); }
void fill_bytes(void*, unsigned char, size_t) { fail("no CUDA device: built without CUDA"); }
void copy_d2d(void*, const void*, size_t, void*) { fail("no CUDA device: built without CUDA"); }
void synchronize(void*) { fail("no CUDA device: built without CUDA"); }
size_t free_bytes() { return 0; }

}  // namespace convlab::cuda::rt
