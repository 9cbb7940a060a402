// core/device.hpp's CUDA entry points for the SIMT-emulated builds
// (tests/support/emulated_cuda.cmake): "device" memory is the emulator's
// (kernels/cuda/simt/memory.hpp: host memory it knows about), so DeviceBuffer,
// ConvRunner and the shared tester run a cuda.* algorithm here exactly as on a
// GPU: guard zones, poison, NaN-filled outputs and all. Stands in for
// core/cuda_none.cpp in those builds only.
#include <cstring>

#include "core/device.hpp"
#include "core/error.hpp"
#include "kernels/cuda/simt/memory.hpp"

namespace convlab::cuda::rt {

CudaInfo query() {
  CudaInfo info;
  info.available = true;
  info.name = "SIMT emulator";
  info.sm_count = 1;
  return info;
}
void* alloc(size_t bytes) { return simt::device_malloc(bytes); }
void free(void* p) noexcept { simt::device_free(p); }
void copy_h2d(void* dst, const void* src, size_t bytes) { simt::copy_h2d(dst, src, bytes); }
void copy_d2h(void* dst, const void* src, size_t bytes) { simt::copy_d2h(dst, src, bytes); }
void fill_bytes(void* dst, unsigned char value, size_t bytes) { simt::memset_device(dst, value, bytes); }
void copy_d2d(void* dst, const void* src, size_t bytes, void* stream) { simt::copy_d2d(dst, src, bytes, stream); }
void synchronize(void* stream) { simt::synchronize(stream); }
// The host's memory is the emulated device's.
size_t free_bytes() { return available_memory_bytes(DeviceKind::cpu); }

}  // namespace convlab::cuda::rt
