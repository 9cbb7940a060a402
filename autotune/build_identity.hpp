// What cached timings depend on besides the device: convlab's own build and
// the versions of the libraries its algorithms call, as one line. The autotune
// cache keys on it (CacheKey::build), so a kernel change or a library upgrade
// re-tunes instead of silently reusing stale winners. For example
//
//   cpu:  "convlab 0.1.0 65c8b8b74b9b | oneDNN 2.6.3 (4e6f9a3) | OpenBLAS 0.3.21 DYNAMIC_ARCH ... | FFTW fftw-3.3.10-sse2-avx"
//   cuda: "convlab 0.1.0 65c8b8b74b9b | CUDA runtime 12040 | cuDNN 90100"
//
// convlab's part is build_id() (git commit, "-dirty-<diff hash>", or
// "unknown"); the library versions are asked of the libraries at run time
// (dnnl_version(), openblas_get_config(), fftwf_version, cuda_info()), so a
// shared-library upgrade without a rebuild counts too. A library not built in
// is left out. (The GPU's device fingerprint also carries the driver and cuDNN.)
#pragma once
#include <string>

#include "core/device.hpp"

namespace convlab {

// Computed once per device kind; never throws.
const std::string& build_identity(DeviceKind d);

}  // namespace convlab
