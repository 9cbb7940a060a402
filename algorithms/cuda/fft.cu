#include "algorithms/cuda/fft.hpp"

#include <cufft.h>

#include <climits>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/fft/fft_conv.hpp"
#include "kernels/cuda/fft/fft_tiled.hpp"

namespace convlab {

namespace {

int dir_index(Direction d) { return d == Direction::fwd ? 0 : d == Direction::bwd_data ? 1 : 2; }

void check(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS)
    fail(std::string("cuFFT: ") + what + " failed (cufftResult " + std::to_string(int(r)) +
         (r == CUFFT_SETUP_FAILED || r == CUFFT_INVALID_DEVICE ? ", no usable CUDA device?" : "") + ")");
}

// A batched 2-D plan (fh x fw real <-> fh x (fw/2+1) complex), destroyed after
// the stream drained.
struct Plan {
  cufftHandle h = 0;
  bool made = false;
  cudaStream_t stream = nullptr;
  Plan(int fh, int fw, int batch, cufftType type, cudaStream_t s) : stream(s) {
    int n[2] = {fh, fw};
    check(cufftPlanMany(&h, 2, n, nullptr, 1, 0, nullptr, 1, 0, type, batch), "cufftPlanMany");
    made = true;
    check(cufftSetStream(h, s), "cufftSetStream");
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (made) {
      cudaStreamSynchronize(stream);
      cufftDestroy(h);
    }
  }
};

}  // namespace

Support CudaFft::supports(const ConvProblem& p, Direction dir) const {
  if (p.stride_h != 1 || p.stride_w != 1) return Support::no("needs stride 1");
  if (p.dil_h != 1 || p.dil_w != 1) return Support::no("needs dilation 1");
  if (cuda::fft_workspace_floats(to_shape(p), dir_index(dir)) > INT_MAX)
    return Support::no("padded planes and spectra exceed 2^31 floats");
  return Support::yes();
}

size_t CudaFft::workspace_bytes(const ConvProblem& p, Direction dir) const {
  return size_t(cuda::fft_workspace_floats(to_shape(p), dir_index(dir))) * sizeof(float);
}

void CudaFft::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                  const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  const int d = dir_index(dir);
  const cuda::FftSize fs = cuda::fft_size(sh);
  int cnt[3] = {0, 0, 0};
  cuda::fft_plane_counts(sh, d, cnt);
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream);
  Plan a(fs.fh, fs.fw, cnt[0], CUFFT_R2C, stream), b(fs.fh, fs.fw, cnt[1], CUFFT_R2C, stream),
      o(fs.fh, fs.fw, cnt[2], CUFFT_C2R, stream);
  cuda::FftFns fns;
  fns.r2c = [&](const float* in, float2* out, int planes) {
    cufftHandle h = planes == cnt[0] ? a.h : b.h;
    check(cufftExecR2C(h, const_cast<cufftReal*>(in), reinterpret_cast<cufftComplex*>(out)), "cufftExecR2C");
  };
  fns.c2r = [&](const float2* in, float* out, int) {
    check(cufftExecC2R(o.h, const_cast<cufftComplex*>(reinterpret_cast<const cufftComplex*>(in)), out),
          "cufftExecC2R");
  };
  float* out = dir == Direction::fwd ? buf.dst : dir == Direction::bwd_data ? buf.src : buf.wei;
  cuda::fft_conv(sh, d, buf.src, buf.wei, buf.dst, out, static_cast<float*>(workspace), ctx.stream, fns);
}

Tolerance CudaFft::tolerance(const ConvProblem& p, Direction dir) const {
  Tolerance t = summation_tolerance(p, dir);
  t.global = cuda::kFftGlobalEps * double(FLT_EPSILON);
  t.basis += " + 64 eps x max sum|terms| (FFT rounding spreads over the plane; NOT yet measured with cuFFT on a "
             "GPU: scripts/gpu-check.sh)";
  return t;
}

Support CudaFftTiled::supports(const ConvProblem& p, Direction dir) const {
  const char* why = cuda::fft_tiled_unsupported(to_shape(p));
  if (*why) return Support::no(why);
  if (cuda::fft_tiled_workspace_floats(to_shape(p), dir_index(dir)) > INT_MAX)
    return Support::no("tile spectra exceed 2^31 floats");
  return Support::yes();
}

size_t CudaFftTiled::workspace_bytes(const ConvProblem& p, Direction dir) const {
  return size_t(cuda::fft_tiled_workspace_floats(to_shape(p), dir_index(dir))) * sizeof(float);
}

void CudaFftTiled::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                       const ExecContext& ctx) const {
  float* out = dir == Direction::fwd ? buf.dst : dir == Direction::bwd_data ? buf.src : buf.wei;
  cuda::fft_tiled_conv(to_shape(p), dir_index(dir), buf.src, buf.wei, buf.dst, out, static_cast<float*>(workspace),
                       ctx.stream);
}

Tolerance CudaFftTiled::tolerance(const ConvProblem& p, Direction dir) const {
  Tolerance t = summation_tolerance(p, dir);
  t.global = cuda::kFftGlobalEps * double(FLT_EPSILON);
  t.basis += " + 64 eps x max sum|terms| (tile DFT rounding; see tests/kernels/cuda/fft_test.cpp)";
  return t;
}

}  // namespace convlab
