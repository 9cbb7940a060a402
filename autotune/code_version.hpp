// Each algorithm's own code version: what the autotune cache keys a
// measurement on (with the versions of the libraries the code calls, the
// device fingerprint and its ISA), so that a rebuild re-times only the
// algorithms whose code changed -- not every algorithm, as a key on the whole
// build's commit would.
//
// The versions are computed at build time by cmake/code_versions.cmake into a
// generated table (code_units()). The rule:
//
//   unit   every header algorithms/<device>/<name>.hpp that includes
//          "algorithms/algorithm.hpp" is the code unit <device>/<name>: the
//          algorithm classes it declares (cpu/fft: cpu.fft, cpu.fft_tiled,
//          cpu.fft_fftw; cpu/winograd: the three F(m x m, 3x3) tile sizes). Its
//          members are the header and every .cpp / .cu beside it that includes
//          it (the drivers, and vendor-library parts: fft_fftw.cpp,
//          im2col_openblas.cpp, fft_cufft.cu).
//   files  the members, then every file they include by a quoted path under
//          algorithms/ or kernels/, transitively, and with each included
//          header the sources it compiles from: a header in
//          kernels/<device>/<family>/ brings that whole folder (the family's
//          kernels and every ISA variant: kernels/cpu/gemm for the algorithms
//          that call the SGEMM), any other header the .cpp / .cu / .inc of its
//          name (algorithms/cuda/cublas.hpp -> cublas.cpp). core/ is not
//          followed: the problem descriptor, tensors and errors are shared by
//          everything and are not an algorithm's timing.
//   hash   SHA-256 over the files' paths and contents; 12 hex digits.
//   libs   the libraries whose headers those files include (<cblas.h> ->
//          openblas, <fftw3.h> -> fftw, <oneapi/dnnl/...> -> onednn, <cublas*>,
//          <cufft*>, <cudnn*>, <cuda_runtime*> and every .cu -> cuda_runtime);
//          their versions are asked of the libraries at run time
//          (autotune/build_identity.hpp), so a library upgrade without a
//          rebuild counts too.
// One more unit, "probe", is the machine probe (autotune/probe.*, the FMA
// peak loop core/peak*, the timing harness algorithms/execute.*).
//
// Which unit an algorithm belongs to: the file its class's constructor is in
// (Algorithm::source_file(), recorded by NamedAlgorithm), which is one of the
// unit's members. An algorithm without one (a test's planted algorithm) has
// no unit: its version is the whole build's (build_id()).
#pragma once
#include <span>
#include <string_view>

namespace convlab {

struct CodeUnit {
  const char* name;       // "cpu/fft", "probe"
  const char* hash;       // 12 hex digits
  const char* libraries;  // comma list: "fftw", "cublas,cuda_runtime", ""
  const char* members;    // space-separated paths from the tree's root
  const char* files;      // every file of the hash, space-separated
};

// The generated table (cmake/code_versions.cmake).
std::span<const CodeUnit> code_units();
// The unit named `name`; nullptr if none.
const CodeUnit* find_code_unit(std::string_view name);
// The unit that has `source_file` among its members: the path may carry any
// prefix before the tree-relative one ("/src/convlab/algorithms/cpu/fft.hpp",
// "../../algorithms/cpu/fft.hpp"). nullptr if none.
const CodeUnit* code_unit_of(std::string_view source_file);

}  // namespace convlab
