// Scratch owned by the calling thread: allocated by it, first written by it,
// and kept for its next call.
//
// A kernel whose threads each rewrite a small buffer for every work item (a
// blocked input band, an output tile) can carve those buffers from the
// caller's workspace, one region per thread. Measured on a 2-core AMD guest
// whose two CPUs the hypervisor moves between one cache domain and two, that
// choice cost cpu.direct_depthwise about half its speed whenever the CPUs sat
// in two domains, and 10-15 % when they shared one, against the same kernel
// with each thread's buffers from here; placing the regions on pages of their
// own, or the workspace on fresh pages, did not help. Why memory each thread
// allocated itself behaves differently was not established (docs/results has
// the measurements).
//
//   void* own = thread_scratch(bytes);  // inside the parallel region
//   float* band = own ? static_cast<float*>(own) : workspace_region;
//
// Returns at least `bytes` bytes, 64-byte aligned, or nullptr where the memory
// cannot be had (the caller then uses its workspace region, so a kernel's
// results never depend on it). The buffer grows when a call asks for more and
// is freed when the thread ends; contents are undefined on every call.
#pragma once
#include <cstddef>

namespace convlab::cpu {

void* thread_scratch(size_t bytes);

// The bytes the calling thread holds (0 before its first call).
size_t thread_scratch_held();

}  // namespace convlab::cpu
