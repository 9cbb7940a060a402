// FFT convolution's hand-written kernels: pad / crop and the pointwise complex
// multiply-accumulate across channels (contract in fft_conv.hpp).
//
// pad / crop: one thread per element of the larger side, grid-stride, 256 per block.
// cmac: one thread per (output plane, frequency), consecutive threads on
//   consecutive frequencies (coalesced), each summing over the reduction index
//   (input channels of the group for fwd, output channels for bwd-data, images
//   for bwd-filter) in a fixed order (deterministic).
#include "kernels/cuda/fft/fft_conv.hpp"

#include <algorithm>

#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return unsigned(std::min<int64_t>((n + kThreads - 1) / kThreads, 16384)); }

__global__ void fft_pad_kernel(const float* __restrict__ in, int planes, int rows, int cols, int off_h, int off_w,
                               int fh, int fw, float* __restrict__ out) {
  const int64_t total = int64_t(planes) * fh * fw;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int x = int(i % fw), y = int(i / fw % fh);
    const int64_t pl = i / (int64_t(fw) * fh);
    const int r = y - off_h, c = x - off_w;
    out[i] = (r >= 0 && r < rows && c >= 0 && c < cols) ? in[(pl * rows + r) * cols + c] : 0.0f;  // (planes, rows, cols)
  }
}

__global__ void fft_crop_kernel(const float* __restrict__ in, int planes, int rows, int cols, int off_h, int off_w,
                                int fh, int fw, float scale, float* __restrict__ out) {
  const int64_t total = int64_t(planes) * rows * cols;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int c = int(i % cols), r = int(i / cols % rows);
    const int64_t pl = i / (int64_t(cols) * rows);
    out[i] = scale * in[(pl * fh + r + off_h) * fw + c + off_w];  // (planes, fh, fw)
  }
}

// mode: the direction whose products this sums (see fft_conv.hpp).
__global__ void fft_cmac_kernel(ConvShape sh, Direction mode, int64_t spec, const float2* __restrict__ a,
                                const float2* __restrict__ b, float2* __restrict__ out, int64_t out_planes) {
  const int cg = sh.c / sh.groups, kg = sh.k / sh.groups;
  const int64_t total = out_planes * spec;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t f = i % spec, o = i / spec;
    float re = 0.0f, im = 0.0f;
    if (mode == Direction::fwd) {  // o = n*K + k: sum_cl X(n, g*cg+cl) conj(W(k, cl))
      const int n = int(o / sh.k), k = int(o % sh.k), g = k / kg;
      for (int cl = 0; cl < cg; ++cl) {
        const float2 x = a[(int64_t(n) * sh.c + g * cg + cl) * spec + f], w = b[(int64_t(k) * cg + cl) * spec + f];
        re += x.x * w.x + x.y * w.y;
        im += x.y * w.x - x.x * w.y;
      }
    } else if (mode == Direction::bwd_data) {  // o = n*C + c: sum_kl DY(n, g*kg+kl) W(g*kg+kl, cl)
      const int n = int(o / sh.c), c = int(o % sh.c), g = c / cg, cl = c % cg;
      for (int kl = 0; kl < kg; ++kl) {
        const int k = g * kg + kl;
        const float2 y = a[(int64_t(n) * sh.k + k) * spec + f], w = b[(int64_t(k) * cg + cl) * spec + f];
        re += y.x * w.x - y.y * w.y;
        im += y.x * w.y + y.y * w.x;
      }
    } else {  // o = k*cg + cl: sum_n X(n, g*cg+cl) conj(DY(n, k))
      const int k = int(o / cg), cl = int(o % cg), c = k / kg * cg + cl;
      for (int n = 0; n < sh.n; ++n) {
        const float2 x = a[(int64_t(n) * sh.c + c) * spec + f], y = b[(int64_t(n) * sh.k + k) * spec + f];
        re += x.x * y.x + x.y * y.y;
        im += x.y * y.x - x.x * y.y;
      }
    }
    out[i] = float2{re, im};
  }
}

}  // namespace

void fft_pad(const float* in, int planes, int rows, int cols, int off_h, int off_w, FftSize fs, float* out,
             void* stream) {
  CONVLAB_LAUNCH(fft_pad_kernel, dim3(blocks_for(int64_t(planes) * fs.fh * fs.fw)), dim3(kThreads), 0, stream, in,
                 planes, rows, cols, off_h, off_w, fs.fh, fs.fw, out);
}

void fft_crop(const float* in, int planes, int rows, int cols, int off_h, int off_w, FftSize fs, float scale,
              float* out, void* stream) {
  CONVLAB_LAUNCH(fft_crop_kernel, dim3(blocks_for(int64_t(planes) * rows * cols)), dim3(kThreads), 0, stream, in,
                 planes, rows, cols, off_h, off_w, fs.fh, fs.fw, scale, out);
}

void fft_cmac(const ConvShape& sh, Direction mode, int64_t spec, const float2* a, const float2* b, float2* out,
              int64_t out_planes, void* stream) {
  CONVLAB_LAUNCH(fft_cmac_kernel, dim3(blocks_for(out_planes * spec)), dim3(kThreads), 0, stream, sh, mode, spec, a, b,
                 out, out_planes);
}

}  // namespace convlab::cuda
