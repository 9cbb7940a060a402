// cuda.fft_cufft's cuFFT half (built by nvcc only): the plan cache, supports(),
// workspace_bytes() and run(), which hands cuda_fft_conv (fft.cu) cuFFT's
// R2C / C2R as its transforms. libcufft is opened on first use
// (core/cuda_libraries.hpp).
#include "algorithms/cuda/fft.hpp"

#include <cufft.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <string>

#include "core/cuda_libraries.hpp"
#include "core/cuda_stream.hpp"
#include "core/device.hpp"
#include "core/error.hpp"

namespace convlab {

namespace {

#define CONVLAB_CUFFT_FUNCTIONS(X)                                                                       \
  X(cufftCreate) X(cufftDestroy) X(cufftSetAutoAllocation) X(cufftMakePlanMany) X(cufftGetSize) \
  X(cufftSetStream) X(cufftSetWorkArea) X(cufftExecR2C) X(cufftExecC2R)
struct CufftApi {
  CONVLAB_CUFFT_FUNCTIONS(CONVLAB_LAZY_FUNCTION)
};
// Throws Error "cuFFT not loaded: <why>" where libcufft cannot be opened.
const CufftApi& fft() {
  return lazy_table<CufftApi>(cuda_library(CudaLibrary::cufft), [](const LazyLibrary& lib, CufftApi& table) {
    CONVLAB_CUFFT_FUNCTIONS(CONVLAB_LAZY_BIND)
  });
}

void check(cufftResult r, const char* what) {
  if (r == CUFFT_SUCCESS) return;
  const std::string msg = std::string("cuFFT: ") + what + " failed (cufftResult " + std::to_string(int(r)) +
                          (r == CUFFT_SETUP_FAILED || r == CUFFT_INVALID_DEVICE ? ", no usable CUDA device?" : "") + ")";
  throw_if_device_fault(msg);  // a sticky device fault: DeviceFault
  fail(msg);
}

// cuFFT plans, cached by transform geometry (device, fh, fw, batch, type) for
// the life of the process: planning costs far more than a small transform, and
// cuda.fft_cufft runs inside timed repetitions and every training step. Plans are
// made with auto-allocation off; their work area is carved from convlab's
// workspace at each run (cufftSetWorkArea), so CudaFft::workspace_bytes counts
// it. One mutex covers planning and whole runs: a plan's stream and work area
// are per-plan state, and cuFFT plans must not be used from two host threads
// at once. The cache is never destroyed (a static pointer): cufftDestroy at
// process exit could run after the CUDA context is gone; the driver reclaims
// everything at exit. Past kMaxPlans geometries it waits for the device and
// destroys them all (a sweep over many shapes must not grow it without bound).
struct PlanKey {
  int device, fh, fw, batch, type;
  auto operator<=>(const PlanKey&) const = default;
};
struct CachedPlan {
  cufftHandle h = 0;
  size_t work = 0;  // bytes of work area it needs
};
struct PlanCache {
  std::mutex mu;
  std::map<PlanKey, CachedPlan> plans;
};
constexpr size_t kMaxPlans = 256;
PlanCache& plan_cache() {
  static PlanCache* c = new PlanCache;  // deliberately leaked, see above
  return *c;
}

// The cached plan for (fh, fw, batch, type) on the current device; the caller holds plan_cache().mu.
const CachedPlan& plan_locked(int fh, int fw, int batch, cufftType type) {
  PlanCache& c = plan_cache();
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    dev = 0;
  }
  const PlanKey key{dev, fh, fw, batch, int(type)};
  if (auto it = c.plans.find(key); it != c.plans.end()) return it->second;
  CachedPlan pl;
  check(fft().cufftCreate(&pl.h), "cufftCreate");
  int n[2] = {fh, fw};
  cufftResult r = fft().cufftSetAutoAllocation(pl.h, 0);
  if (r == CUFFT_SUCCESS) r = fft().cufftMakePlanMany(pl.h, 2, n, nullptr, 1, 0, nullptr, 1, 0, type, batch, &pl.work);
  if (r == CUFFT_SUCCESS) r = fft().cufftGetSize(pl.h, &pl.work);
  if (r != CUFFT_SUCCESS) {
    fft().cufftDestroy(pl.h);
    check(r, "cufftMakePlanMany");
  }
  return c.plans.emplace(key, pl).first->second;
}

// The three plans of one (problem, direction): a and b (R2C), o (C2R).
struct Plans {
  const CachedPlan *a, *b, *o;
  size_t work() const { return std::max({a->work, b->work, o->work}); }
};
Plans plans_locked(const ConvShape& sh, Direction d) {
  PlanCache& c = plan_cache();
  if (c.plans.size() + 3 > kMaxPlans) {  // before taking any pointer into the map
    cudaDeviceSynchronize();              // no plan may be destroyed while a transform of it is in flight
    for (auto& [k, pl] : c.plans) fft().cufftDestroy(pl.h);
    c.plans.clear();
  }
  const cuda::FftSize fs = cuda_fft_size(sh);
  int cnt[3] = {0, 0, 0};
  cuda_fft_plane_counts(sh, d, cnt);
  return {&plan_locked(fs.fh, fs.fw, cnt[0], CUFFT_R2C), &plan_locked(fs.fh, fs.fw, cnt[1], CUFFT_R2C),
          &plan_locked(fs.fh, fs.fw, cnt[2], CUFFT_C2R)};
}

// Where cuFFT's work area starts in the workspace: after the planes and spectra, 256-byte aligned.
size_t work_offset(const ConvShape& sh, Direction d) {
  return (size_t(cuda_fft_workspace_floats(sh, d)) * sizeof(float) + 255) / 256 * 256;
}

}  // namespace

CudaFft::CudaFft()
    : NamedAlgorithm("cuda.fft_cufft", DeviceKind::cuda, "fft",
                     "cuFFT R2C/C2R over padded planes (2^a3^b5^c7^d sizes) + hand-written batched complex GEMM "
                     "per frequency across channels; cuFFT plans cached per geometry, their work area carved "
                     "from the workspace") {}

Tolerance CudaFft::tolerance(const ConvProblem& p, Direction dir) const {
  return cuda_fft_tolerance(p, dir, "FFT rounding spreads over the plane; NOT yet measured with cuFFT on a GPU: "
                               "scripts/gpu-check.sh");
}

std::string CudaFft::unavailable_reason() const {
  if (std::string why = Algorithm::unavailable_reason(); !why.empty()) return why;
  return lazy_reason(fft);
}

Support CudaFft::supports(const ConvProblem& p, Direction dir) const {
  if (p.stride_h != 1 || p.stride_w != 1) return Support::no("needs stride 1");
  if (p.dil_h != 1 || p.dil_w != 1) return Support::no("needs dilation 1");
  if (cuda_fft_workspace_floats(to_shape(p), dir) > INT_MAX)
    return Support::no("padded planes and spectra exceed 2^31 floats");
  if (cuda_info().available) {
    // Plan now (cached): a geometry cuFFT cannot plan is unsupported, with cuFFT's reason.
    try {
      std::lock_guard lock(plan_cache().mu);
      (void)plans_locked(to_shape(p), dir);
    } catch (const DeviceFault&) {
      throw;
    } catch (const Error& e) {
      return Support::no(e.what());
    }
  }
  return Support::yes();
}

// Planes and spectra, then cuFFT's work area (the largest of the three plans':
// they run one after another on one stream). Without a device cuFFT cannot
// plan (cufftEstimateMany fails too, CUFFT_INTERNAL_ERROR), so the work area is
// counted only where the algorithm can run at all.
size_t CudaFft::workspace_bytes(const ConvProblem& p, Direction dir) const {
  const ConvShape sh = to_shape(p);
  const Direction d = dir;
  if (!cuda_info().available) return size_t(cuda_fft_workspace_floats(sh, d)) * sizeof(float);
  std::lock_guard lock(plan_cache().mu);
  const size_t work = plans_locked(sh, d).work();
  return work ? work_offset(sh, d) + work : size_t(cuda_fft_workspace_floats(sh, d)) * sizeof(float);
}

void CudaFft::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                  const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  const Direction d = dir;
  int cnt[3] = {0, 0, 0};
  cuda_fft_plane_counts(sh, d, cnt);
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream);
  std::lock_guard lock(plan_cache().mu);  // held while the plans' stream / work area are ours (see above)
  const Plans pl = plans_locked(sh, d);
  void* work = pl.work() ? static_cast<char*>(workspace) + work_offset(sh, d) : nullptr;
  for (const CachedPlan* c : {pl.a, pl.b, pl.o}) {
    check(fft().cufftSetStream(c->h, stream), "cufftSetStream");
    check(fft().cufftSetWorkArea(c->h, work), "cufftSetWorkArea");
  }
  CudaFftTransforms fns;
  fns.r2c = [&](const float* in, float2* out, int planes) {
    cufftHandle h = planes == cnt[0] ? pl.a->h : pl.b->h;
    check(fft().cufftExecR2C(h, const_cast<cufftReal*>(in), reinterpret_cast<cufftComplex*>(out)), "cufftExecR2C");
  };
  fns.c2r = [&](const float2* in, float* out, int) {
    check(fft().cufftExecC2R(pl.o->h, const_cast<cufftComplex*>(reinterpret_cast<const cufftComplex*>(in)), out),
          "cufftExecC2R");
  };
  cuda_fft_conv(sh, d, buf, static_cast<float*>(workspace), ctx.stream, fns);
}

}  // namespace convlab
