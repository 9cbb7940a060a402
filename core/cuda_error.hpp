// cuda_error.hpp: the one place a cudaError_t becomes a convlab exception
// (used by kernels/cuda/simt/simt.hpp's launch check, kernels/cuda/simt/memory.hpp
// and core/cuda_runtime.cu).
//
// Two kinds of CUDA error:
//   * sticky: the context is corrupted (illegal / misaligned address, launch
//     failure, trap, ...). Every later CUDA call in the process returns it again,
//     so it becomes convlab::DeviceFault and whoever runs several candidates stops.
//   * not sticky (out of memory, invalid configuration, invalid value, ...): the
//     call failed, the device is fine. It becomes convlab::Error (OutOfMemory for
//     out of memory), and the runtime's last-error slot is cleared right there
//     (cudaGetLastError) so the next kernel's launch check does not find it and
//     blame itself.
//
// cuda_error_is_sticky needs only the enum (driver_types.h), so host-only tests
// can check the table; in a translation unit that also includes simt.hpp for the
// emulator, include simt.hpp first (it defines the CUDA keywords before
// host_defines.h does). check_cuda, which calls the runtime, exists under nvcc.
#pragma once

#include <driver_types.h>  // cudaError_t

#include <string>

#include "core/error.hpp"

namespace convlab {

// True for the errors after which the CUDA context is unusable.
constexpr bool cuda_error_is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorMisalignedAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

// The message and type for error `e` (its runtime string `text`) raised by
// `where` (a kernel name or a runtime call).
[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* text, const std::string& where) {
  if (cuda_error_is_sticky(e))
    throw DeviceFault("CUDA device fault in " + where + ": " + text +
                      "; the CUDA context is unusable for the rest of this process");
  if (e == cudaErrorMemoryAllocation) throw OutOfMemory(where + ": " + text);
  throw Error(where + ": " + text);
}

#if defined(__CUDACC__)
// Throws for anything but cudaSuccess; clears a non-sticky error first.
inline void check_cuda(cudaError_t e, const std::string& where) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // handled here: the next launch check must not see it
  throw_cuda_error(e, cudaGetErrorString(e), where);
}
#endif

}  // namespace convlab
