// Stream-level CUDA helpers that sit beside core/device.hpp: timing with CUDA
// events, evicting the GPU's L2 between timed repetitions, pinned host staging
// for uploads, and telling a sticky device fault from an ordinary error.
// Every function has a no-device answer: the CPU fallback, a no-op, or an
// Error with the runtime's reason; none of them crashes without a GPU.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "core/timing.hpp"

namespace convlab {

// Whether a cudaError_t value is one of the errors that leave the CUDA context
// unusable for the rest of the process (every later call returns it again):
// illegal / misaligned address, illegal instruction, invalid PC or address
// space, hardware stack error, device-side assert, launch failure or timeout,
// uncorrectable ECC error. Pure: answers without a device.
bool is_sticky_cuda_error(int cuda_error);

// After a library call failed (cuBLAS, cuDNN, cuFFT): waits for the device and
// throws DeviceFault("<what>: <runtime's message> (...)") when the context
// holds a sticky error, so that the caller's candidate loop stops instead of
// blaming every later candidate. Returns when the error was ordinary (and then
// clears the runtime's last non-sticky error) or when there is no device.
void throw_if_device_fault(const std::string& what);

// CUDA timing of `enqueue` (which puts work on `stream`, a cudaStream_t, and
// need not synchronise): warm-up runs, then per timed repetition
//   cudaMemsetAsync over a buffer of 2 x the L2 size (evicts L2: every rep
//   starts from DRAM, llm.c-style), cudaEventRecord(start), enqueue(),
//   cudaEventRecord(stop), cudaEventSynchronize(stop), cudaEventElapsedTime,
// with time_it's stopping rule (min_reps, stable median, max_seconds,
// max_reps). Host work inside enqueue (plan lookup, launches) counts only as
// far as it keeps the GPU waiting between the two events. Throws Error without
// a device; DeviceFault when the context faults.
TimingStats time_cuda(const std::function<void()>& enqueue, void* stream, const TimingOptions& opt = {});

// Bytes of the L2-eviction buffer time_cuda writes: 2 x cudaDeviceProp::l2CacheSize
// (at least 1 MiB); 0 without a device.
size_t l2_flush_bytes();

// Page-locked host memory for host-to-device staging (cudaHostAlloc) where a
// CUDA device exists; plain aligned host memory otherwise (pinned() says which).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t bytes);
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept { swap(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    PinnedBuffer t(std::move(o));
    swap(t);
    return *this;
  }
  ~PinnedBuffer();
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  bool pinned() const { return pinned_; }

 private:
  void swap(PinnedBuffer& o) noexcept;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  bool pinned_ = false;
};

// Host-to-device staging through a PinnedBuffer: upload() copies `bytes` of
// `src` (any host memory) into the pinned buffer, then enqueues an
// asynchronous cudaMemcpyAsync to `dst` on `stream`. Before it overwrites the
// pinned buffer it waits for the previous upload's copy (an event), so
// back-to-back calls never race the DMA. Throws Error without a device.
class StagedUpload {
 public:
  explicit StagedUpload(size_t bytes);
  StagedUpload(const StagedUpload&) = delete;
  StagedUpload& operator=(const StagedUpload&) = delete;
  ~StagedUpload();
  void upload(void* dst, const void* src, size_t bytes, void* stream);
  bool pinned() const { return buf_.pinned(); }

 private:
  PinnedBuffer buf_;
  void* done_ = nullptr;  // cudaEvent_t recorded after the last copy
};

}  // namespace convlab
