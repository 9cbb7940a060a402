#include "autotune/build_identity.hpp"

#include <cblas.h>
#include <fftw3.h>

#include <cstdio>
#include <map>
#include <mutex>

#ifdef CONVLAB_HAS_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif
#if CONVLAB_HAS_CUDA
#include <cublas_v2.h>
#include <cufft.h>
#endif

#include "algorithms/registry.hpp"
#include "autotune/code_version.hpp"
#include "core/build_id.hpp"
#include "core/cuda_libraries.hpp"
#include "core/error.hpp"
#include "core/lazy_library.hpp"

namespace convlab {

namespace {

std::string compute_library(std::string_view lib) {
  if (lib == "openblas") {
    std::string c = openblas_get_config() ? openblas_get_config() : "";
    while (!c.empty() && (c.back() == ' ' || c.back() == '\n')) c.pop_back();
    return c.empty() ? "OpenBLAS (no version)" : c;
  }
  if (lib == "fftw") return std::string("FFTW ") + fftwf_version;
  if (lib == "onednn") {
#ifdef CONVLAB_HAS_ONEDNN
    if (const dnnl_version_t* v = dnnl_version())
      return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
             (v->hash && *v->hash && std::string_view(v->hash) != "N/A" ? std::string(" (") + v->hash + ")" : std::string());
    return "oneDNN (no version)";
#else
    return "onednn not built in";
#endif
  }
  if (lib == "cuda_runtime") return "CUDA runtime " + std::to_string(cuda_info().runtime_version);
  if (lib == "cudnn") return "cuDNN " + std::to_string(cuda_info().cudnn_version);
#if CONVLAB_HAS_CUDA
  // Opened only where a device exists (core/cuda_libraries.hpp): a CPU-only run never maps them.
  if (lib == "cublas" || lib == "cufft") {
    if (!cuda_info().available) return std::string(lib) + " (no CUDA device)";
    const LazyLibrary& l = cuda_library(lib == "cublas" ? CudaLibrary::cublas : CudaLibrary::cufft);
    if (!l.available()) return l.unavailable_reason();
    try {
      if (lib == "cublas") {
        decltype(&cublasGetProperty) property = nullptr;
        lazy_bind(l, property, "cublasGetProperty");
        int major = 0, minor = 0, patch = 0;
        property(MAJOR_VERSION, &major);
        property(MINOR_VERSION, &minor);
        property(PATCH_LEVEL, &patch);
        return "cuBLAS " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
      }
      decltype(&cufftGetVersion) version = nullptr;
      lazy_bind(l, version, "cufftGetVersion");
      int v = 0;
      version(&v);
      return "cuFFT " + std::to_string(v);
    } catch (const Error& e) {
      return e.what();
    }
  }
#else
  if (lib == "cublas" || lib == "cufft") return std::string(lib) + " not built in";
#endif
  return std::string(lib) + "?";
}

std::string compute(DeviceKind d) {
  std::string s = std::string("convlab ") + CONVLAB_VERSION + " " + std::string(build_id());
  if (d == DeviceKind::cuda) return s + " | " + library_version("cuda_runtime") + " | " + library_version("cudnn");
#ifdef CONVLAB_HAS_ONEDNN
  s += " | " + library_version("onednn");
#endif
  return s + " | " + library_version("openblas") + " | " + library_version("fftw");
}

// 64-bit FNV-1a, as 16 hex digits: a short, stable digest of a line.
std::string fnv_hex(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char b[20];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

}  // namespace

const std::string& build_identity(DeviceKind d) {
  static const std::string cpu = compute(DeviceKind::cpu);
  if (d == DeviceKind::cpu) return cpu;
  static const std::string cuda = compute(DeviceKind::cuda);
  return cuda;
}

const std::string& library_version(std::string_view lib) {
  static std::mutex m;
  static std::map<std::string, std::string, std::less<>> known;
  std::lock_guard lock(m);
  auto it = known.find(lib);
  if (it == known.end()) it = known.emplace(std::string(lib), compute_library(lib)).first;
  return it->second;
}

AlgorithmVersion algorithm_version(const Algorithm& a) {
  AlgorithmVersion v;
  const CodeUnit* u = code_unit_of(a.source_file());
  if (!u) {
    v.code = "build " + std::string(build_id());
    return v;
  }
  v.code = std::string(u->name) + " " + u->hash;
  std::string_view libs = u->libraries;
  while (!libs.empty()) {
    const size_t comma = libs.find(',');
    v.libs += (v.libs.empty() ? "" : " | ") + library_version(libs.substr(0, comma));
    libs = comma == std::string_view::npos ? std::string_view() : libs.substr(comma + 1);
  }
  return v;
}

const std::string& probe_identity() {
  static const std::string id = [] {
    const CodeUnit* u = find_code_unit("probe");
    std::string algos;
    for (const Algorithm* a : registry())
      if (a->device() == DeviceKind::cpu) {
        const AlgorithmVersion v = algorithm_version(*a);
        algos += std::string(a->name()) + " " + v.code + " " + v.libs + "\n";
      }
    const std::string own = u ? std::string(u->hash) : "build " + std::string(build_id());
    return "probe " + own + " algorithms " + fnv_hex(algos);
  }();
  return id;
}

}  // namespace convlab
