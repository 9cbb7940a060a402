// FFT convolution: pad / crop kernels and the pointwise complex
// multiply-accumulate across channels (contract in fft_conv.hpp).
//
// pad / crop: one thread per element of the larger side, grid-stride, 256 per block.
// cmac: one thread per (output plane, frequency), consecutive threads on
//   consecutive frequencies (coalesced), each summing over the reduction index
//   (input channels of the group for fwd, output channels for bwd-data, images
//   for bwd-filter) in a fixed order (deterministic).
#include "kernels/cuda/fft/fft_conv.hpp"

#include <algorithm>

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

int fft_good_size(int n) {
  for (int m = std::max(n, 1);; ++m) {
    int r = m;
    for (int p : {2, 3, 5, 7})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

FftSize fft_size(const ConvShape& sh) {
  return FftSize{fft_good_size(sh.h + 2 * sh.pad_h), fft_good_size(sh.w + 2 * sh.pad_w)};
}

void fft_plane_counts(const ConvShape& sh, Direction direction, int counts[3]) {
  const int nc = sh.n * sh.c, nk = sh.n * sh.k, kc = sh.k * (sh.c / sh.groups);
  if (direction == Direction::fwd) { counts[0] = nc; counts[1] = kc; counts[2] = nk; }
  if (direction == Direction::bwd_data) { counts[0] = nk; counts[1] = kc; counts[2] = nc; }
  if (direction == Direction::bwd_filter) { counts[0] = nc; counts[1] = nk; counts[2] = kc; }
}

namespace {
// Workspace carving, in floats from the (16-byte aligned) start: the padded real
// planes, then the a / b / out spectra. Every region starts at a multiple of 4
// floats, so each complex (float2, 8-byte) array is 16-byte aligned whatever the
// plane counts and sizes (15 x 15 planes times an odd count would otherwise put
// the spectra at an odd float: a misaligned 8-byte access on a GPU).
struct FftLayout {
  int64_t sa, sb, so, total;
};
int64_t round4(int64_t floats) { return (floats + 3) / 4 * 4; }
FftLayout fft_layout(const ConvShape& sh, Direction direction) {
  const FftSize fs = fft_size(sh);
  int cnt[3] = {0, 0, 0};
  fft_plane_counts(sh, direction, cnt);
  FftLayout l;
  l.sa = round4(int64_t(std::max({cnt[0], cnt[1], cnt[2]})) * fs.fh * fs.fw);
  l.sb = l.sa + round4(2 * fs.spectrum() * cnt[0]);
  l.so = l.sb + round4(2 * fs.spectrum() * cnt[1]);
  l.total = l.so + round4(2 * fs.spectrum() * cnt[2]);
  return l;
}
}  // namespace

int64_t fft_workspace_floats(const ConvShape& sh, Direction direction) { return fft_layout(sh, direction).total; }

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

void fft_conv(const ConvShape& sh, Direction direction, const float* src, const float* wei, const float* dst_in,
              float* out, float* ws, void* stream, const FftFns& fft) {
  const FftSize fs = fft_size(sh);
  int cnt[3] = {0, 0, 0};
  fft_plane_counts(sh, direction, cnt);
  const FftLayout lay = fft_layout(sh, direction);
  float* real = ws;
  float2* sa = reinterpret_cast<float2*>(ws + lay.sa);
  float2* sb = reinterpret_cast<float2*>(ws + lay.sb);
  float2* so = reinterpret_cast<float2*>(ws + lay.so);
  const int cg = sh.c / sh.groups;
  // operand a / b: which tensor, its plane size and where it sits in the fh x fw plane
  if (direction == Direction::fwd) {
    fft_pad(src, cnt[0], sh.h, sh.w, sh.pad_h, sh.pad_w, fs, real, stream);
    fft.r2c(real, sa, cnt[0]);
    fft_pad(wei, cnt[1], sh.r, sh.s, 0, 0, fs, real, stream);
    fft.r2c(real, sb, cnt[1]);
  } else if (direction == Direction::bwd_data) {
    fft_pad(dst_in, cnt[0], sh.p, sh.q, 0, 0, fs, real, stream);
    fft.r2c(real, sa, cnt[0]);
    fft_pad(wei, cnt[1], sh.r, sh.s, 0, 0, fs, real, stream);
    fft.r2c(real, sb, cnt[1]);
  } else {
    fft_pad(src, cnt[0], sh.h, sh.w, sh.pad_h, sh.pad_w, fs, real, stream);
    fft.r2c(real, sa, cnt[0]);
    fft_pad(dst_in, cnt[1], sh.p, sh.q, 0, 0, fs, real, stream);
    fft.r2c(real, sb, cnt[1]);
  }
  fft_cmac(sh, direction, fs.spectrum(), sa, sb, so, cnt[2], stream);
  fft.c2r(so, real, cnt[2]);
  const float scale = 1.0f / float(int64_t(fs.fh) * fs.fw);
  if (direction == Direction::fwd) fft_crop(real, cnt[2], sh.p, sh.q, 0, 0, fs, scale, out, stream);
  if (direction == Direction::bwd_data) fft_crop(real, cnt[2], sh.h, sh.w, sh.pad_h, sh.pad_w, fs, scale, out, stream);
  if (direction == Direction::bwd_filter) fft_crop(real, sh.k * cg, sh.r, sh.s, 0, 0, fs, scale, out, stream);
}

}  // namespace convlab::cuda
