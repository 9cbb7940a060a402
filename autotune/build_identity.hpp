// What cached timings depend on besides the device fingerprint (which carries
// the CPU model, the ISA in use and the thread count, or the GPU, its driver
// and cuDNN): per measurement, the measured algorithm's own code version and
// the versions of the libraries it calls (algorithm_version). The autotune
// cache keeps them with each result (AlgoPerf::code / libs), so a change to
// one algorithm's sources re-times that algorithm only, and a library upgrade
// re-times the algorithms that call it -- even without a rebuild: library
// versions are asked of the libraries at run time (dnnl_version(),
// openblas_get_config(), fftwf_version, cuda_info(), cublasGetProperty(),
// cufftGetVersion()).
//
//   algorithm_version(cpu.fft_fftw) = {"cpu/fft a1776cc1a402", "FFTW fftw-3.3.10-sse2-avx"}
//   algorithm_version(cpu.direct)   = {"cpu/direct b05aa74afbde", ""}
//
// build_identity() is the whole build's line that `convlab --version` prints
// (convlab's git commit, "-dirty-<diff hash>" or "unknown", and the library
// versions), e.g.
//
//   cpu:  "convlab 0.1.0 65c8b8b74b9b | oneDNN 2.6.3 (4e6f9a3) | OpenBLAS 0.3.21 DYNAMIC_ARCH ... | FFTW fftw-3.3.10-sse2-avx"
//   cuda: "convlab 0.1.0 65c8b8b74b9b | CUDA runtime 12040 | cuDNN 90100"
//
// Cache lines written before per-algorithm versions were kept carried it as
// their key ("build"); they are kept in the file and never used.
#pragma once
#include <string>
#include <string_view>

#include "algorithms/algorithm.hpp"
#include "core/device.hpp"

namespace convlab {

// Computed once per device kind; never throws.
const std::string& build_identity(DeviceKind d);

// One library's name and version, as the library reports it at run time:
// "openblas", "fftw", "onednn", "cuda_runtime", "cublas", "cufft", "cudnn"
// (the names autotune/code_version.hpp lists). "<name> not built in" when this
// build lacks it, "<name>?" for a name it does not know. Computed once per name.
const std::string& library_version(std::string_view lib);

struct AlgorithmVersion {
  std::string code;  // "<unit> <hash>" (autotune/code_version.hpp); "build <build_id()>" without a unit
  std::string libs;  // library_version() of each library of the unit, " | "-joined; "" for none
};
AlgorithmVersion algorithm_version(const Algorithm& a);

// The machine probe's key: its own code unit and the versions of every
// registered CPU algorithm it times, as one line ("probe <hash> algorithms <hash>").
const std::string& probe_identity();

}  // namespace convlab
