// Direct convolution, three directions.
//
// fwd: one block per (8 x 16 output tile, 8 output channels of one group,
//   image) (grid (tiles, groups * channel blocks, N), launched in chunks where
//   y or z exceeds 65535); 128 threads, one output pixel each, 8 accumulators (one per output
//   channel). Loop over the group's input channels: the block stages the input
//   window the tile reads ((8-1)*stride + (R-1)*dil + 1 rows, likewise columns,
//   zero outside the image = padding) and the 8 x R x S filter slice in dynamic
//   shared memory, then every thread walks the R x S taps.
// bwd-data: the gather form of the transposed convolution, split into stride
//   phases: input pixels with the same (h mod stride_h, w mod stride_w) are
//   reached by the same taps (kernels/strided_taps.hpp), every stride/gcd(stride,
//   dil)-th one from the first, so each phase is a dense stride-1 correlation.
//   One block per (8 x 16 pixels of one phase, i.e. every stride-th row and
//   column, 8 input channels of one group (4 when the group has <= 4), image);
//   every lane of a warp walks the same taps, and only those (at stride 4 with
//   an 11 x 11 filter: <= 3 x 3 of the 121). Loop over the group's output
//   channels, up to 4 per stage: staging their diff_dst windows the tile reads
//   and the phase's taps of their filter slices; thread (h, w) adds
//   dy(p, q) * w(r, s) over them, in output-channel order.
// bwd-filter: per group, the GEMM diff_wei (Kg, Cg*R*S) = diff_dst (Kg, N*P*Q)
//   x src gathered (N*P*Q, Cg*R*S), its reduction over (n, p, q) split into
//   chunks of consecutive positions (a chunk may end inside an image). One block
//   per (64 output channels, 64 weights (c, r, s), chunk): 256 threads, 4 x 4
//   weights each in registers. Per step of 16 positions the block stages the
//   16 x 64 diff_dst values (consecutive positions are consecutive addresses)
//   and the 16 x 64 src values the taps read (zero outside the image =
//   padding), the next step's loads in flight while this one is summed. Each
//   weight adds its products in position order; each chunk writes its own
//   slice of partial sums (chunk, K, Cg, R, S), reduced in chunk order by the
//   caller (no atomics: the bits depend only on the chunking).
#include "kernels/cuda/direct/direct.hpp"

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/simt/simt.hpp"
#include "kernels/strided_taps.hpp"

namespace convlab::cuda {

namespace {

constexpr int TP = 8, TQ = 16, KB = 8;  // fwd: output tile, output channels per block
// bwd-filter block tile: output channels x weights (c, r, s), positions per step.
constexpr int FK = 64, FW = 64, kFilterThreads = 256;

__host__ __device__ inline int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
__host__ __device__ inline int ceil_div(int a, int b) { return -floor_div(-a, b); }

int fwd_tile_h(const ConvShape& sh) { return (TP - 1) * sh.stride_h + (sh.r - 1) * sh.dil_h + 1; }
int fwd_tile_w(const ConvShape& sh) { return (TQ - 1) * sh.stride_w + (sh.s - 1) * sh.dil_w + 1; }
// bwd-data: the most taps any phase has along each axis, and the diff_dst
// window they need around a TP x TQ tile of one phase.
int bwd_taps_h(const ConvShape& sh) { return ceil_div(sh.r, sh.stride_h / gcd_int(sh.stride_h, sh.dil_h)); }
int bwd_taps_w(const ConvShape& sh) { return ceil_div(sh.s, sh.stride_w / gcd_int(sh.stride_w, sh.dil_w)); }
int bwd_tile_h(const ConvShape& sh) { return TP + (bwd_taps_h(sh) - 1) * (sh.dil_h / gcd_int(sh.stride_h, sh.dil_h)); }
int bwd_tile_w(const ConvShape& sh) { return TQ + (bwd_taps_w(sh) - 1) * (sh.dil_w / gcd_int(sh.stride_w, sh.dil_w)); }

__global__ void __launch_bounds__(TP * TQ)
    direct_fwd_kernel(ConvShape sh, const float* __restrict__ src, const float* __restrict__ wei,
                      float* __restrict__ dst, int tile_h, int tile_w, unsigned y0, unsigned z0) {
  float* in_t = simt::dynamic_shared<float>();  // (tile_h, tile_w)
  float* w_t = in_t + tile_h * tile_w;          // (KB, R, S)
  const int cg = sh.c / sh.groups, kg = sh.k / sh.groups;
  const int tiles_q = ceil_div(sh.q, TQ);
  const int p0 = int(blockIdx.x) / tiles_q * TP, q0 = int(blockIdx.x) % tiles_q * TQ;
  const int kblocks = ceil_div(kg, KB);
  const int by = int(blockIdx.y + y0);  // grid chunks: (groups * kblocks, N) = (y0 + blockIdx.y, z0 + blockIdx.z)
  const int g = by / kblocks, k0 = g * kg + by % kblocks * KB;
  const int kend = std::min(k0 + KB, (g + 1) * kg);
  const int n = int(blockIdx.z + z0);
  const int tq = int(threadIdx.x), tp = int(threadIdx.y), tid = tp * TQ + tq;
  const int rs = sh.r * sh.s;
  const int ih0 = p0 * sh.stride_h - sh.pad_h, iw0 = q0 * sh.stride_w - sh.pad_w;

  float acc[KB];
  for (int j = 0; j < KB; ++j) acc[j] = 0.0f;

  for (int cl = 0; cl < cg; ++cl) {
    const int c = g * cg + cl;
    const float* plane = src + (int64_t(n) * sh.c + c) * sh.h * sh.w;  // (H, W)
    __syncthreads();  // the previous channel's tiles are consumed
    for (int i = tid; i < tile_h * tile_w; i += TP * TQ) {
      const int ih = ih0 + i / tile_w, iw = iw0 + i % tile_w;
      in_t[i] = (ih >= 0 && ih < sh.h && iw >= 0 && iw < sh.w) ? plane[int64_t(ih) * sh.w + iw] : 0.0f;
    }
    for (int i = tid; i < KB * rs; i += TP * TQ) {
      const int k = k0 + i / rs;
      w_t[i] = k < kend ? wei[(int64_t(k) * cg + cl) * rs + i % rs] : 0.0f;  // (K, Cg, R, S)
    }
    __syncthreads();
    for (int r = 0; r < sh.r; ++r)
      for (int s = 0; s < sh.s; ++s) {
        const float x = in_t[(tp * sh.stride_h + r * sh.dil_h) * tile_w + tq * sh.stride_w + s * sh.dil_w];
        for (int j = 0; j < KB; ++j) acc[j] = fmaf(x, w_t[j * rs + r * sh.s + s], acc[j]);
      }
  }
  const int p = p0 + tp, q = q0 + tq;
  // acc indexed by compile-time constants only, so it stays in registers.
  if (p < sh.p && q < sh.q)
    for (int j = 0; j < KB; ++j)
      if (k0 + j < kend) dst[((int64_t(n) * sh.k + k0 + j) * sh.p + p) * sh.q + q] = acc[j];  // (N,K,P,Q)
}

template <int CB>
__global__ void __launch_bounds__(TP * TQ)
    direct_bwd_data_kernel(ConvShape sh, const float* __restrict__ diff_dst, const float* __restrict__ wei,
                           float* __restrict__ diff_src, int tile_h, int tile_w, int ks, unsigned y0, unsigned z0) {
  const int cg = sh.c / sh.groups, kg = sh.k / sh.groups;
  // blockIdx.x = ((tile row, tile column), phase row, phase column), phases innermost.
  const int phases = sh.stride_h * sh.stride_w;
  const int a = int(blockIdx.x) % phases / sh.stride_w, b = int(blockIdx.x) % sh.stride_w;
  const int tiles_j = ceil_div(ceil_div(sh.w, sh.stride_w), TQ);
  const int tile = int(blockIdx.x) / phases;
  const int i0 = tile / tiles_j * TP, j0 = tile % tiles_j * TQ;
  const int cblocks = ceil_div(cg, CB);
  const int by = int(blockIdx.y + y0);  // grid chunks, as in fwd
  const int g = by / cblocks, c0 = g * cg + by % cblocks * CB;
  const int cend = std::min(c0 + CB, (g + 1) * cg);
  const int n = int(blockIdx.z + z0);
  const int tw = int(threadIdx.x), th = int(threadIdx.y), tid = th * TQ + tw;
  // The block's pixels: h = a + (i0 + th)*stride_h, w = b + (j0 + tw)*stride_w. All
  // share the taps rt x st; tap (jr, js) reads diff_dst (i0 + th + rt.out - jr*rt.out_step, ...).
  const StridedTaps rt = strided_taps(a, sh.pad_h, sh.stride_h, sh.dil_h, sh.r);
  const StridedTaps st = strided_taps(b, sh.pad_w, sh.stride_w, sh.dil_w, sh.s);
  const int taps = rt.count * st.count;
  const int win_h = TP + (rt.count - 1) * rt.out_step, win_w = TQ + (st.count - 1) * st.out_step;  // <= tile_h, tile_w
  const int win = win_h * win_w, plane_t = tile_h * tile_w;
  const int p_base = i0 + rt.out - (rt.count - 1) * rt.out_step;
  const int q_base = j0 + st.out - (st.count - 1) * st.out_step;
  float* dy_t = simt::dynamic_shared<float>();  // (ks, tile_h * tile_w): (win_h, win_w) windows of ks diff_dst planes
  float* w_t = dy_t + ks * plane_t;             // (ks, CB channels, rt.count, st.count): the phase's taps
  const int h = a + (i0 + th) * sh.stride_h, w = b + (j0 + tw) * sh.stride_w;
  // Uniform over the block: a phase no tap reaches, or a tile past the image, only writes zeros.
  const bool work = taps > 0 && a + i0 * sh.stride_h < sh.h && b + j0 * sh.stride_w < sh.w;

  float acc[CB];
  for (int j = 0; j < CB; ++j) acc[j] = 0.0f;

  // ks output channels per stage (one pair of barriers), in channel order.
  for (int kl0 = 0; work && kl0 < kg; kl0 += ks) {
    const int kn = std::min(ks, kg - kl0);
    const float* planes = diff_dst + (int64_t(n) * sh.k + g * kg + kl0) * sh.p * sh.q;  // (kn, P, Q)
    __syncthreads();
    for (int i = tid; i < kn * win; i += TP * TQ) {
      const int kk = i / win, e = i - kk * win;
      const int p = p_base + e / win_w, q = q_base + e % win_w;
      dy_t[kk * plane_t + e] =
          (p >= 0 && p < sh.p && q >= 0 && q < sh.q) ? planes[(int64_t(kk) * sh.p + p) * sh.q + q] : 0.0f;
    }
    for (int i = tid; i < kn * CB * taps; i += TP * TQ) {
      const int kc = i / taps, t = i - kc * taps, kk = kc / CB, c = c0 + kc % CB;
      const int r = rt.first + t / st.count * rt.step, s = st.first + t % st.count * st.step;
      const int64_t k = g * kg + kl0 + kk;
      w_t[i] = c < cend ? wei[((k * cg + (c - g * cg)) * sh.r + r) * sh.s + s] : 0.0f;  // (K, Cg, R, S)
    }
    __syncthreads();
    for (int kk = 0; kk < kn; ++kk) {
      const float* w_k = w_t + kk * CB * taps;
      for (int jr = 0; jr < rt.count; ++jr) {
        const float* dy_row = dy_t + kk * plane_t + (th + (rt.count - 1 - jr) * rt.out_step) * win_w + tw;
        for (int js = 0; js < st.count; ++js) {
          const float dy = dy_row[(st.count - 1 - js) * st.out_step];
          for (int j = 0; j < CB; ++j) acc[j] = fmaf(dy, w_k[(j * rt.count + jr) * st.count + js], acc[j]);
        }
      }
    }
  }
  // acc indexed by compile-time constants only, so it stays in registers.
  if (h < sh.h && w < sh.w)
    for (int j = 0; j < CB; ++j)
      if (c0 + j < cend) diff_src[((int64_t(n) * sh.c + c0 + j) * sh.h + h) * sh.w + w] = acc[j];
}

__global__ void __launch_bounds__(kFilterThreads)
    direct_bwd_filter_kernel(ConvShape sh, const float* __restrict__ src, const float* __restrict__ diff_dst,
                             float* __restrict__ out, int64_t chunk_len, unsigned y0) {
  constexpr int FJ = kDirectFilterStep;
  CONVLAB_SHARED(float4, dy4, [FJ][(FK + 4) / 4]);  // (position, output channel); + 4: conflict-free stores
  CONVLAB_SHARED(float4, x4, [FJ][(FW + 4) / 4]);    // (position, weight)
  float* dy_row = reinterpret_cast<float*>(&dy4[0][0]);
  float* x_row = reinterpret_cast<float*>(&x4[0][0]);
  const int cg = sh.c / sh.groups, kg = sh.k / sh.groups, rs = sh.r * sh.s, crs = cg * rs;
  const int wtiles = ceil_div(crs, FW), ktiles = ceil_div(kg, FK);
  const int w0 = int(blockIdx.x) % wtiles * FW, k0 = int(blockIdx.x) / wtiles % ktiles * FK;
  const int g = int(blockIdx.x) / wtiles / ktiles;
  const int64_t chunk = int64_t(blockIdx.y) + y0;
  const int64_t pq = int64_t(sh.p) * sh.q, hw = int64_t(sh.h) * sh.w;
  const int64_t j_begin = chunk * chunk_len, j_end = std::min(int64_t(sh.n) * pq, j_begin + chunk_len);
  const int tid = int(threadIdx.x), lane = tid % 32, warp = tid / 32;
  // Staging: a warp covers 8 positions x 4 rows (32-byte runs of diff_dst and,
  // at stride 1, of src; conflict-free shared stores); this thread stages
  // position sj of every step, rows srow + 16 i.
  const int sj = lane % 8 + 8 * (warp % 2), srow = lane / 8 + 4 * (warp / 2);
  int64_t x_plane[4], dy_plane[4];  // the rows' channel planes within an image
  int x_dh[4], x_dw[4];             // r * dil - pad, s * dil - pad
  bool x_ok[4], dy_ok[4];
  for (int i = 0; i < 4; ++i) {
    const int w = w0 + srow + 16 * i, k = k0 + srow + 16 * i;
    x_ok[i] = w < crs;
    const int wl = x_ok[i] ? w : 0, cl = wl / rs, r = wl % rs / sh.s, s = wl % sh.s;
    x_plane[i] = int64_t(g * cg + cl) * hw;
    x_dh[i] = r * sh.dil_h - sh.pad_h;
    x_dw[i] = s * sh.dil_w - sh.pad_w;
    dy_ok[i] = k < kg;
    dy_plane[i] = int64_t(g * kg + (dy_ok[i] ? k : 0)) * pq;
  }
  // This thread's position j = (n, p, q), walked forward a step at a time (a
  // division only where it crosses an output row).
  int64_t j = j_begin + sj;
  int n = int(j / pq), p = int(j % pq / sh.q), q = int(j % sh.q);
  float xv[4], dv[4];
  const auto load = [&] {  // position j's values of the staged rows (zeros past the chunk)
    const bool jv = j < j_end;
    const float* x_n = src + int64_t(n) * sh.c * hw;
    const float* dy_n = diff_dst + int64_t(n) * sh.k * pq + int64_t(p) * sh.q + q;
    for (int i = 0; i < 4; ++i) {
      const int ih = p * sh.stride_h + x_dh[i], iw = q * sh.stride_w + x_dw[i];
      xv[i] = jv && x_ok[i] && ih >= 0 && ih < sh.h && iw >= 0 && iw < sh.w
                  ? x_n[x_plane[i] + int64_t(ih) * sh.w + iw]
                  : 0.0f;
      dv[i] = jv && dy_ok[i] ? dy_n[dy_plane[i]] : 0.0f;
    }
  };
  const auto advance = [&] {
    j += FJ;
    q += FJ;
    if (q >= sh.q) {
      p += q / sh.q;
      q %= sh.q;
      if (p >= sh.p) {
        n += p / sh.p;
        p %= sh.p;
      }
    }
  };
  const int tx = tid % 16, ty = tid / 16;  // this thread sums channels k0 + 4 ty + (0..3), weights w0 + 4 tx + (0..3)
  float acc[4][4];
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) acc[a][b] = 0.0f;
  load();
  for (int64_t j0 = j_begin; j0 < j_end; j0 += FJ) {
    __syncthreads();  // the previous step is consumed
    for (int i = 0; i < 4; ++i) {
      x_row[sj * (FW + 4) + srow + 16 * i] = xv[i];
      dy_row[sj * (FK + 4) + srow + 16 * i] = dv[i];
    }
    __syncthreads();
    if (j0 + FJ < j_end) {  // the next step's loads, in flight during the sums
      advance();
      load();
    }
    for (int jj = 0; jj < FJ; ++jj) {
      const float4 dyv = dy4[jj][ty], xw = x4[jj][tx];
      const float d[4] = {dyv.x, dyv.y, dyv.z, dyv.w}, x[4] = {xw.x, xw.y, xw.z, xw.w};
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) acc[a][b] = fmaf(d[a], x[b], acc[a][b]);
    }
  }
  // acc indexed by compile-time constants only, so it stays in registers.
  float* out_c = out + chunk * sh.k * crs;  // (chunk, K, Cg, R, S)
  for (int a = 0; a < 4; ++a) {
    const int k = k0 + 4 * ty + a;
    if (k >= kg) continue;
    for (int b = 0; b < 4; ++b) {
      const int w = w0 + 4 * tx + b;
      if (w < crs) out_c[int64_t(g * kg + k) * crs + w] = acc[a][b];
    }
  }
}

}  // namespace

size_t direct_fwd_smem_bytes(const ConvShape& sh) {
  return sizeof(float) * (size_t(fwd_tile_h(sh)) * fwd_tile_w(sh) + size_t(KB) * sh.r * sh.s);
}
// bwd-data: input channels per block (4 when a group has at most 4: AlexNet
// conv1's 3 would leave 5 of 8 accumulators idle) and output channels staged
// per barrier (up to 4, as many as keep the stage within 48 KiB).
struct BwdDataPlan {
  int cb, ks;
  size_t stage_floats;  // one output channel's window + filter taps
};
BwdDataPlan bwd_data_plan(const ConvShape& sh) {
  BwdDataPlan pl;
  pl.cb = sh.c / sh.groups <= 4 ? 4 : KB;
  pl.stage_floats = size_t(bwd_tile_h(sh)) * bwd_tile_w(sh) + size_t(pl.cb) * bwd_taps_h(sh) * bwd_taps_w(sh);
  const size_t fit = kDirectSmemLimit / (sizeof(float) * pl.stage_floats);
  pl.ks = int(std::max<size_t>(1, std::min<size_t>({fit, 4, size_t(sh.k / sh.groups)})));
  return pl;
}

size_t direct_bwd_data_smem_bytes(const ConvShape& sh) {
  const BwdDataPlan pl = bwd_data_plan(sh);
  return sizeof(float) * pl.ks * pl.stage_floats;
}

// Above 48 KiB the kernel must opt in (cudaFuncAttributeMaxDynamicSharedMemorySize).
template <typename Kernel>
void allow_smem(Kernel kernel, size_t bytes) {
  if (bytes > kDirectSmemMax)
    fail("cuda direct: " + std::to_string(bytes) + " B of shared memory > the 227 KiB per-block limit");
  if (bytes > simt::kDefaultMaxDynamicSmem) simt::set_max_dynamic_smem(kernel, bytes);
}

void direct_conv_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, void* stream) {
  const size_t smem = direct_fwd_smem_bytes(sh);
  allow_smem(direct_fwd_kernel, smem);
  const int kg = sh.k / sh.groups;
  simt::for_each_grid_chunk(
      uint64_t(ceil_div(sh.p, TP) * ceil_div(sh.q, TQ)), uint64_t(sh.groups) * ceil_div(kg, KB), uint64_t(sh.n),
      [&](dim3 grid, unsigned y0, unsigned z0) {
        CONVLAB_LAUNCH(direct_fwd_kernel, grid, dim3(TQ, TP), smem, stream, sh, src, wei, dst, fwd_tile_h(sh),
                       fwd_tile_w(sh), y0, z0);
      });
}

void direct_conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src,
                          void* stream) {
  const BwdDataPlan pl = bwd_data_plan(sh);
  const size_t smem = direct_bwd_data_smem_bytes(sh);
  const auto launch = [&](auto kernel, int cb) {
    allow_smem(kernel, smem);
    simt::for_each_grid_chunk(
        uint64_t(ceil_div(ceil_div(sh.h, sh.stride_h), TP)) * ceil_div(ceil_div(sh.w, sh.stride_w), TQ) *
            sh.stride_h * sh.stride_w,
        uint64_t(sh.groups) * ceil_div(sh.c / sh.groups, cb), uint64_t(sh.n), [&](dim3 grid, unsigned y0, unsigned z0) {
          CONVLAB_LAUNCH(kernel, grid, dim3(TQ, TP), smem, stream, sh, diff_dst, wei, diff_src, bwd_tile_h(sh),
                         bwd_tile_w(sh), pl.ks, y0, z0);
        });
  };
  if (pl.cb == 4) launch(direct_bwd_data_kernel<4>, 4);
  else launch(direct_bwd_data_kernel<KB>, KB);
}

int64_t direct_bwd_filter_blocks(const ConvShape& sh) {
  const int cg = sh.c / sh.groups, kg = sh.k / sh.groups;
  return int64_t(sh.groups) * ceil_div(kg, FK) * ceil_div(cg * sh.r * sh.s, FW);
}

void direct_conv_bwd_filter_chunks(const ConvShape& sh, const float* src, const float* diff_dst, float* out,
                                   int chunks, int64_t chunk_len, void* stream) {
  if (chunks < 1 || chunk_len < 1 || int64_t(chunks) * chunk_len < int64_t(sh.n) * sh.p * sh.q)
    fail("cuda direct: bwd-filter chunks do not cover the reduction");
  simt::for_each_grid_chunk(uint64_t(direct_bwd_filter_blocks(sh)), uint64_t(chunks), 1,
                            [&](dim3 grid, unsigned y0, unsigned) {
                              CONVLAB_LAUNCH(direct_bwd_filter_kernel, grid, dim3(kFilterThreads), 0, stream, sh,
                                             src, diff_dst, out, chunk_len, y0);
                            });
}

void direct_conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                            void* stream) {
  direct_conv_bwd_filter_chunks(sh, src, diff_dst, diff_wei, 1, std::max<int64_t>(1, int64_t(sh.n) * sh.p * sh.q),
                                stream);
}

}  // namespace convlab::cuda
