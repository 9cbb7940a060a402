// cuda.fft_cufft's composition over its transforms (the cuFFT plumbing is in
// fft_cufft.cu) and cuda.fft_tiled (contract in fft.hpp).
#include "algorithms/cuda/fft.hpp"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <string>

#include "kernels/cuda/fft/fft_tiled.hpp"
#include "kernels/cuda/simt/simt.hpp"  // float2

namespace convlab {

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
FftLayout fft_layout(const ConvShape& sh, Direction dir) {
  const cuda::FftSize fs = cuda_fft_size(sh);
  int cnt[3] = {0, 0, 0};
  cuda_fft_plane_counts(sh, dir, cnt);
  FftLayout l;
  l.sa = round4(int64_t(std::max({cnt[0], cnt[1], cnt[2]})) * fs.fh * fs.fw);
  l.sb = l.sa + round4(2 * fs.spectrum() * cnt[0]);
  l.so = l.sb + round4(2 * fs.spectrum() * cnt[1]);
  l.total = l.so + round4(2 * fs.spectrum() * cnt[2]);
  return l;
}

float* output_of(Direction dir, const ConvBuffers& buf) {
  return dir == Direction::fwd ? buf.dst : dir == Direction::bwd_data ? buf.src : buf.wei;
}

}  // namespace

Tolerance cuda_fft_tolerance(const ConvProblem& p, Direction dir, const char* measured) {
  Tolerance t = summation_tolerance(p, dir);
  t.global = kCudaFftGlobalEps * double(FLT_EPSILON);
  t.basis += std::string(" + 64 eps x max sum|terms| (") + measured + ")";
  return t;
}

int fft_good_size(int n) {
  for (int m = std::max(n, 1);; ++m) {
    int r = m;
    for (int p : {2, 3, 5, 7})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

// The plane holds the image after pad zeros (fwd reads it there, bwd-data
// crops it from there) and is long enough that an output's window past the
// plane's end wraps into those zeros: pad + in + max(pad, pad_end) (the
// symmetric in + 2 pad when the sides are equal).
cuda::FftSize cuda_fft_size(const ConvShape& sh) {
  return cuda::FftSize{fft_good_size(sh.h + sh.pad_h + std::max(sh.pad_h, sh.pad_h_end)),
                       fft_good_size(sh.w + sh.pad_w + std::max(sh.pad_w, sh.pad_w_end))};
}

void cuda_fft_plane_counts(const ConvShape& sh, Direction dir, int counts[3]) {
  const int nc = sh.n * sh.c, nk = sh.n * sh.k, kc = sh.k * (sh.c / sh.groups);
  if (dir == Direction::fwd) { counts[0] = nc; counts[1] = kc; counts[2] = nk; }
  if (dir == Direction::bwd_data) { counts[0] = nk; counts[1] = kc; counts[2] = nc; }
  if (dir == Direction::bwd_filter) { counts[0] = nc; counts[1] = nk; counts[2] = kc; }
}

int64_t cuda_fft_workspace_floats(const ConvShape& sh, Direction dir) { return fft_layout(sh, dir).total; }

void cuda_fft_conv(const ConvShape& sh, Direction dir, const ConvBuffers& buf, float* ws, void* stream,
                   const CudaFftTransforms& fft) {
  const cuda::FftSize fs = cuda_fft_size(sh);
  int cnt[3] = {0, 0, 0};
  cuda_fft_plane_counts(sh, dir, cnt);
  const FftLayout lay = fft_layout(sh, dir);
  float* real = ws;
  float2* sa = reinterpret_cast<float2*>(ws + lay.sa);
  float2* sb = reinterpret_cast<float2*>(ws + lay.sb);
  float2* so = reinterpret_cast<float2*>(ws + lay.so);
  // operand a / b: which tensor, its plane size and where it sits in the fh x fw plane
  if (dir == Direction::fwd) {
    cuda::fft_pad(buf.src, cnt[0], sh.h, sh.w, sh.pad_h, sh.pad_w, fs, real, stream);
    fft.r2c(real, sa, cnt[0]);
    cuda::fft_pad(buf.wei, cnt[1], sh.r, sh.s, 0, 0, fs, real, stream);
    fft.r2c(real, sb, cnt[1]);
  } else if (dir == Direction::bwd_data) {
    cuda::fft_pad(buf.dst, cnt[0], sh.p, sh.q, 0, 0, fs, real, stream);
    fft.r2c(real, sa, cnt[0]);
    cuda::fft_pad(buf.wei, cnt[1], sh.r, sh.s, 0, 0, fs, real, stream);
    fft.r2c(real, sb, cnt[1]);
  } else {
    cuda::fft_pad(buf.src, cnt[0], sh.h, sh.w, sh.pad_h, sh.pad_w, fs, real, stream);
    fft.r2c(real, sa, cnt[0]);
    cuda::fft_pad(buf.dst, cnt[1], sh.p, sh.q, 0, 0, fs, real, stream);
    fft.r2c(real, sb, cnt[1]);
  }
  cuda::fft_cmac(sh, dir, fs.spectrum(), sa, sb, so, stream);
  fft.c2r(so, real, cnt[2]);
  const float scale = 1.0f / float(int64_t(fs.fh) * fs.fw);
  float* out = output_of(dir, buf);
  if (dir == Direction::fwd) cuda::fft_crop(real, cnt[2], sh.p, sh.q, 0, 0, fs, scale, out, stream);
  if (dir == Direction::bwd_data) cuda::fft_crop(real, cnt[2], sh.h, sh.w, sh.pad_h, sh.pad_w, fs, scale, out, stream);
  if (dir == Direction::bwd_filter) cuda::fft_crop(real, cnt[2], sh.r, sh.s, 0, 0, fs, scale, out, stream);
}

// ---- cuda.fft_tiled -------------------------------------------------------

namespace {

constexpr int T = cuda::kFftTile;
constexpr int64_t SPEC = cuda::kFftTileSpectrum;

// The forward-like pipeline's geometry (fwd, or bwd-data on diff_dst).
struct TiledPlan {
  ConvShape cm;  // the shape fft_cmac sees (n = images * tiles)
  int cin, cout, in_rows, in_cols, out_rows, out_cols, pad_h, pad_w, mh, mw, tiles_h, tiles_w;
};

TiledPlan tiled_plan(const ConvShape& sh, bool bwd_data) {
  TiledPlan pl;
  pl.cin = bwd_data ? sh.k : sh.c;
  pl.cout = bwd_data ? sh.c : sh.k;
  pl.in_rows = bwd_data ? sh.p : sh.h;
  pl.in_cols = bwd_data ? sh.q : sh.w;
  pl.out_rows = bwd_data ? sh.h : sh.p;
  pl.out_cols = bwd_data ? sh.w : sh.q;
  pl.pad_h = bwd_data ? sh.r - 1 - sh.pad_h : sh.pad_h;
  pl.pad_w = bwd_data ? sh.s - 1 - sh.pad_w : sh.pad_w;
  pl.mh = T - sh.r + 1;
  pl.mw = T - sh.s + 1;
  pl.tiles_h = (pl.out_rows + pl.mh - 1) / pl.mh;
  pl.tiles_w = (pl.out_cols + pl.mw - 1) / pl.mw;
  pl.cm = sh;
  pl.cm.n = sh.n * pl.tiles_h * pl.tiles_w;
  pl.cm.c = pl.cin;
  pl.cm.k = pl.cout;
  return pl;
}

int64_t tiled_workspace_floats(const ConvShape& sh, Direction dir) {
  const TiledPlan pl = tiled_plan(sh, dir == Direction::bwd_data);
  const int64_t tiles = int64_t(sh.n) * pl.tiles_h * pl.tiles_w;
  const int64_t filt = int64_t(sh.k) * (sh.c / sh.groups);
  return int64_t(2) * SPEC * (tiles * pl.cin + filt + tiles * pl.cout);
}

}  // namespace

CudaFftTiled::CudaFftTiled()
    : NamedAlgorithm("cuda.fft_tiled", DeviceKind::cuda, "fft",
                     "overlap-save over 16x16 tiles: hand-written row/column radix-4 tile FFTs and inverses, 16 "
                     "tiles a block + batched complex GEMM per frequency across channels") {}

Support CudaFftTiled::supports(const ConvProblem& p, Direction dir) const {
  if (p.stride_h != 1 || p.stride_w != 1) return Support::no("needs stride 1");
  if (p.dil_h != 1 || p.dil_w != 1) return Support::no("needs dilation 1");
  if (p.r > T || p.s > T) return Support::no("needs R, S <= 16 (the tile)");
  if (tiled_workspace_floats(to_shape(p), dir) > INT_MAX) return Support::no("tile spectra exceed 2^31 floats");
  return Support::yes();
}

size_t CudaFftTiled::workspace_bytes(const ConvProblem& p, Direction dir) const {
  return size_t(tiled_workspace_floats(to_shape(p), dir)) * sizeof(float);
}

// Spectra in the workspace: a (slots x cin), b (filters), out (slots x cout).
void CudaFftTiled::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                       const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  void* stream = ctx.stream;
  const TiledPlan pl = tiled_plan(sh, dir == Direction::bwd_data);
  const int tiles = pl.tiles_h * pl.tiles_w;
  const int64_t slots = int64_t(sh.n) * tiles;
  const int64_t nfilt = int64_t(sh.k) * (sh.c / sh.groups);
  float2* sa = static_cast<float2*>(workspace);
  float2* sb = sa + slots * pl.cin * SPEC;
  float2* so = sb + nfilt * SPEC;
  float* out = output_of(dir, buf);
  using cuda::FftPlaneOrder;
  if (dir != Direction::bwd_filter) {
    // input tiles: T x T patches at (t * m - pad)
    const cuda::FftTileGeom in_g{pl.in_rows, pl.in_cols, T, T, pl.mh, pl.mw, -pl.pad_h, -pl.pad_w, pl.tiles_h,
                                 pl.tiles_w};
    cuda::fft_tile_dft(dir == Direction::fwd ? buf.src : buf.dst, int64_t(sh.n) * pl.cin, in_g,
                       {FftPlaneOrder::image_tiles, pl.cin, 0, 0}, sa, stream);
    const cuda::FftTileGeom w_g{sh.r, sh.s, sh.r, sh.s, 0, 0, 0, 0, 1, 1};
    const cuda::FftPlaneMap wm = dir == Direction::fwd
                                     ? cuda::FftPlaneMap{FftPlaneOrder::filter, 0, 0, 0}
                                     : cuda::FftPlaneMap{FftPlaneOrder::filter_rotated, 0, sh.c / sh.groups,
                                                         sh.k / sh.groups};
    cuda::fft_tile_dft(buf.wei, nfilt, w_g, wm, sb, stream);
    cuda::fft_cmac(pl.cm, Direction::fwd, SPEC, sa, sb, so, stream);
    const cuda::FftTileOut og{pl.cout, pl.out_rows, pl.out_cols, pl.mh, pl.mw, pl.mh, pl.mw, pl.tiles_h, pl.tiles_w};
    cuda::fft_tile_idft(so, slots * pl.cout, og, out, stream);
  } else {
    // x patches (T x T at t * m - pad) and diff_dst tiles (m x m at t * m), then
    // DW[k][cl] = sum over (image, tile) X conj(DY), cropped to R x S.
    const cuda::FftTileGeom x_g{sh.h, sh.w, T, T, pl.mh, pl.mw, -sh.pad_h, -sh.pad_w, pl.tiles_h, pl.tiles_w};
    cuda::fft_tile_dft(buf.src, int64_t(sh.n) * sh.c, x_g, {FftPlaneOrder::image_tiles, sh.c, 0, 0}, sa, stream);
    float2* sdy = sb;  // reuse: (slots, K) spectra need slots * K * SPEC <= the filter + output space
    float2* sdw = sb + slots * sh.k * SPEC;
    const cuda::FftTileGeom dy_g{sh.p, sh.q, pl.mh, pl.mw, pl.mh, pl.mw, 0, 0, pl.tiles_h, pl.tiles_w};
    cuda::fft_tile_dft(buf.dst, int64_t(sh.n) * sh.k, dy_g, {FftPlaneOrder::image_tiles, sh.k, 0, 0}, sdy, stream);
    cuda::fft_cmac(pl.cm, Direction::bwd_filter, SPEC, sa, sdy, sdw, stream);
    const cuda::FftTileOut og{int(nfilt), sh.r, sh.s, sh.r, sh.s, 0, 0, 1, 1};
    cuda::fft_tile_idft(sdw, nfilt, og, out, stream);
  }
}

Tolerance CudaFftTiled::tolerance(const ConvProblem& p, Direction dir) const {
  return cuda_fft_tolerance(p, dir, "tile DFT rounding; see tests/algorithms/cuda/fft_test.cpp");
}

}  // namespace convlab
