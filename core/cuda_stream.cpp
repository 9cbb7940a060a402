#include "core/cuda_stream.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/device.hpp"
#include "core/error.hpp"

#if CONVLAB_HAS_CUDA
#include <cuda_runtime.h>

#include "core/cuda_error.hpp"
#endif

namespace convlab {

// The one list of sticky errors is core/cuda_error.hpp's.
bool is_sticky_cuda_error(int e) {
#if CONVLAB_HAS_CUDA
  return cuda_error_is_sticky(cudaError_t(e));
#else
  (void)e;
  return false;
#endif
}

#if CONVLAB_HAS_CUDA

namespace {

[[noreturn]] void raise(cudaError_t e, const std::string& what) {
  if (!cuda_error_is_sticky(e)) (void)cudaGetLastError();  // handled here: not the next launch's error
  throw_cuda_error(e, cudaGetErrorString(e), what);
}
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) raise(e, what);
}
void require_device() {
  if (!cuda_info().available) fail("no CUDA device: " + cuda_info().reason);
}

// The L2-eviction buffer, allocated once per process (never freed: freeing at
// exit could run after the CUDA context is gone).
struct FlushBuffer {
  std::mutex mu;
  void* ptr = nullptr;
  size_t bytes = 0;
  bool queried = false;
};
FlushBuffer& flush_buffer() {
  static FlushBuffer* b = new FlushBuffer;  // deliberately leaked, see above
  return *b;
}

void flush_l2(cudaStream_t stream) {
  FlushBuffer& b = flush_buffer();
  std::lock_guard lock(b.mu);
  if (!b.queried) {
    const size_t want = l2_flush_bytes();
    check(cudaMalloc(&b.ptr, want), "cudaMalloc (L2 flush buffer)");
    b.bytes = want;
    b.queried = true;
  }
  if (b.ptr) check(cudaMemsetAsync(b.ptr, 0x5A, b.bytes, stream), "cudaMemsetAsync (L2 flush)");
}

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    check(cudaEventCreate(&start), "cudaEventCreate");
    if (cudaError_t e = cudaEventCreate(&stop); e != cudaSuccess) {
      cudaEventDestroy(start);
      raise(e, "cudaEventCreate");
    }
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

}  // namespace

void throw_if_device_fault(const std::string& what) {
  if (!cuda_info().available) return;
  const cudaError_t e = cudaDeviceSynchronize();
  if (is_sticky_cuda_error(int(e))) raise(e, what);
  (void)cudaGetLastError();  // an ordinary error: the caller reports its own
}

size_t l2_flush_bytes() {
  if (!cuda_info().available) return 0;
  int dev = 0, l2 = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess)
    l2 = 0;
  return std::max<size_t>(size_t(2) * size_t(std::max(l2, 0)), size_t(1) << 20);
}

TimingStats time_cuda(const std::function<void()>& enqueue, void* stream_ptr, const TimingOptions& opt) {
  require_device();
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  for (int i = 0; i < opt.warmup; ++i) enqueue();
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after warm-up)");
  Events ev;
  return repeat_until_stable(
      [&] {
        flush_l2(stream);
        check(cudaEventRecord(ev.start, stream), "cudaEventRecord");
        enqueue();
        check(cudaEventRecord(ev.stop, stream), "cudaEventRecord");
        check(cudaEventSynchronize(ev.stop), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, ev.start, ev.stop), "cudaEventElapsedTime");
        return double(ms) * 1e-3;
      },
      opt);
}

PinnedBuffer::PinnedBuffer(size_t bytes) : bytes_(bytes) {
  if (!bytes) return;
  if (cuda_info().available) {
    const cudaError_t e = cudaHostAlloc(&ptr_, bytes, cudaHostAllocDefault);
    if (e == cudaSuccess) {
      pinned_ = true;
      return;
    }
    ptr_ = nullptr;
    if (is_sticky_cuda_error(int(e))) raise(e, "cudaHostAlloc");
    (void)cudaGetLastError();  // out of pinned memory: fall back to pageable memory below
  }
  ptr_ = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!ptr_) fail("out of host memory allocating " + std::to_string(bytes) + " bytes");
}

PinnedBuffer::~PinnedBuffer() {
  if (!ptr_) return;
  if (pinned_) cudaFreeHost(ptr_);
  else std::free(ptr_);
}

StagedUpload::StagedUpload(size_t bytes) {
  require_device();
  buf_ = PinnedBuffer(bytes);
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
  done_ = e;
}

StagedUpload::~StagedUpload() {
  if (done_) {
    cudaEventSynchronize(static_cast<cudaEvent_t>(done_));  // the DMA may still read the pinned buffer
    cudaEventDestroy(static_cast<cudaEvent_t>(done_));
  }
}

void StagedUpload::upload(void* dst, const void* src, size_t bytes, void* stream) {
  if (bytes > buf_.bytes()) fail("StagedUpload: " + std::to_string(bytes) + " bytes into a " +
                                 std::to_string(buf_.bytes()) + "-byte staging buffer");
  if (!bytes) return;
  const auto ev = static_cast<cudaEvent_t>(done_);
  const auto s = static_cast<cudaStream_t>(stream);
  check(cudaEventSynchronize(ev), "cudaEventSynchronize (previous upload)");
  // Host copy into the pinned buffer in 4 MiB pieces across threads (one
  // thread's memcpy is far below the host's memory bandwidth).
  constexpr size_t kPiece = size_t(4) << 20;
  const int64_t pieces = int64_t((bytes + kPiece - 1) / kPiece);
  char* to = static_cast<char*>(buf_.get());
  const char* from = static_cast<const char*>(src);
#pragma omp parallel for schedule(static) if (pieces > 1)
  for (int64_t i = 0; i < pieces; ++i) {
    const size_t at = size_t(i) * kPiece;
    std::memcpy(to + at, from + at, std::min(kPiece, bytes - at));
  }
  check(cudaMemcpyAsync(dst, to, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync host to device (staged)");
  check(cudaEventRecord(ev, s), "cudaEventRecord");
}

#else  // built without CUDA

void throw_if_device_fault(const std::string&) {}
size_t l2_flush_bytes() { return 0; }
TimingStats time_cuda(const std::function<void()>&, void*, const TimingOptions&) {
  fail("no CUDA device: built without CUDA");
}
PinnedBuffer::PinnedBuffer(size_t bytes) : bytes_(bytes) {
  if (!bytes) return;
  ptr_ = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!ptr_) fail("out of host memory allocating " + std::to_string(bytes) + " bytes");
}
PinnedBuffer::~PinnedBuffer() { std::free(ptr_); }
StagedUpload::StagedUpload(size_t) { fail("no CUDA device: built without CUDA"); }
StagedUpload::~StagedUpload() {}
void StagedUpload::upload(void*, const void*, size_t, void*) { fail("no CUDA device: built without CUDA"); }

#endif

void PinnedBuffer::swap(PinnedBuffer& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(bytes_, o.bytes_);
  std::swap(pinned_, o.pinned_);
}

}  // namespace convlab
