// im2col / col2im kernels and their launchers.
//
// im2col: a group of threads per column-matrix row (image, (c, r, s)) on grid
// (x, y = rows / rows per block, z = image), walking that row's output pixels
// p*Q + q, so writes are coalesced and reads strided by the stride; the row's
// channel, taps and source plane are found once per thread, the pixel's (p, q)
// with one 32-bit division (a column matrix of one image holds < 2^31 elements:
// supports()). A group is the row's length rounded up to a power of two, 32 to
// 256 threads, so a 7 x 7 output packs four rows into a block (one per block
// left 207 of 256 threads idle).
// col2im: a group of threads per input plane (image, c) on grid (x, y = C / planes
// per block, z = image), a thread per input element (h, w), gathering the column entries that copied it,
// and only those: the taps of its stride phase whose output lies inside P x Q
// (kernels/strided_taps.hpp: the first tap and the step, found once per element;
// at stride 4 with an 11 x 11 filter <= 3 x 3 of the 121 taps), in the same (r, s)
// order as a test of every tap would visit them. Grids past the device's y / z
// limits run in chunks.
// sum_partials: one thread per output element (grid-stride loop), adding the
// partial results in index order: the sum a chain of accumulating GEMMs makes.
#include "kernels/cuda/im2col/im2col.hpp"

#include <algorithm>
#include <cassert>

#include "kernels/cuda/simt/simt.hpp"
#include "kernels/strided_taps.hpp"

namespace convlab::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t total) { return unsigned(std::min<int64_t>((total + kThreads - 1) / kThreads, 8192)); }

__global__ void im2col_kernel(ConvShape sh, int group_log2, unsigned row0, unsigned img0,
                              const float* __restrict__ src, float* __restrict__ col) {
  const int pq = sh.p * sh.q, rows = sh.c * sh.r * sh.s, group = 1 << group_log2;
  const int row = (int(row0 + blockIdx.y) << (8 - group_log2)) + (int(threadIdx.x) >> group_log2);  // (c, r, s)
  const int img = int(img0 + blockIdx.z), lane = int(threadIdx.x) & (group - 1);
  if (row >= rows) return;
  const int s = row % sh.s, r = row / sh.s % sh.r, c = row / (sh.r * sh.s);
  const float* plane = src + (int64_t(img) * sh.c + c) * sh.h * sh.w;  // (images, C, H, W)
  float* out = col + (int64_t(img) * rows + row) * pq;                 // (images, C*R*S, P*Q)
  const int dh = r * sh.dil_h - sh.pad_h, dw = s * sh.dil_w - sh.pad_w;
  for (int i = int(blockIdx.x) * group + lane; i < pq; i += int(gridDim.x) * group) {
    const int p = i / sh.q, q = i - p * sh.q;
    const int ih = p * sh.stride_h + dh, iw = q * sh.stride_w + dw;
    const bool inside = ih >= 0 && ih < sh.h && iw >= 0 && iw < sh.w;
    out[i] = inside ? plane[ih * sh.w + iw] : 0.0f;
  }
}

__global__ void col2im_kernel(ConvShape sh, int group_log2, unsigned c0, unsigned img0,
                              const float* __restrict__ col, float* __restrict__ diff_src) {
  const int pq = sh.p * sh.q, hw = sh.h * sh.w, group = 1 << group_log2;
  const int c = (int(c0 + blockIdx.y) << (8 - group_log2)) + (int(threadIdx.x) >> group_log2);
  const int img = int(img0 + blockIdx.z), lane = int(threadIdx.x) & (group - 1);
  if (c >= sh.c) return;
  const float* icol = col + int64_t(img) * sh.c * sh.r * sh.s * pq;  // (images, C*R*S, P*Q): < 2^31 an image
  float* out = diff_src + (int64_t(img) * sh.c + c) * hw;
  for (int e = int(blockIdx.x) * group + lane; e < hw; e += int(gridDim.x) * group) {
    const int h = e / sh.w, w = e - h * sh.w;
    // The taps that reach (h, w) and land on an output: rows rt.first + jr*rt.step
    // reach output row rt.out - jr*rt.out_step, columns likewise.
    const StridedTaps rt = clamp_taps(strided_taps(h, sh.pad_h, sh.stride_h, sh.dil_h, sh.r), sh.p);
    const StridedTaps st = clamp_taps(strided_taps(w, sh.pad_w, sh.stride_w, sh.dil_w, sh.s), sh.q);
    // Column entry of tap (r, s) at output (p, q): ((c*R + r)*S + s)*PQ + p*Q + q. Per row tap
    // it moves by step*S*PQ - out_step*Q, per column tap by step*PQ - out_step.
    const int d_r = rt.step * sh.s * pq - rt.out_step * sh.q;
    const int d_s = st.step * pq - st.out_step;
    int e_r = ((c * sh.r + rt.first) * sh.s + st.first) * pq + rt.out * sh.q + st.out;
    float acc = 0.0f;
    for (int jr = 0; jr < rt.count; ++jr, e_r += d_r) {
      int ec = e_r;
      for (int js = 0; js < st.count; ++js, ec += d_s) acc += icol[ec];  // (C*R*S, P*Q)
    }
    out[e] = acc;
  }
}

__global__ void sum_partials_kernel(int count, int64_t len, const float* __restrict__ partials,
                                    float* __restrict__ out, bool accumulate) {
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < len; e += int64_t(gridDim.x) * blockDim.x) {
    float acc = accumulate ? out[e] + partials[e] : partials[e];
    for (int i = 1; i < count; ++i) acc += partials[int64_t(i) * len + e];  // (count, len)
    out[e] = acc;
  }
}

}  // namespace

// A row of n elements: its thread group, log2 (32 to 256 threads, n rounded up to
// a power of two), and its blocks along x (enough for 4096 threads a row: a row's
// blocks times the rows and images fill the device many times over).
int group_log2(int64_t n) {
  int g = 5;
  while (g < 8 && (int64_t(1) << g) < n) ++g;
  return g;
}
unsigned row_blocks(int64_t n) { return unsigned(std::min<int64_t>((n + kThreads - 1) / kThreads, 16)); }

void im2col(const ConvShape& sh, const float* src, float* col, void* stream, int images) {
  assert(images >= 1);
  assert(int64_t(sh.c) * sh.r * sh.s * sh.p * sh.q <= INT32_MAX);
  const int64_t pq = int64_t(sh.p) * sh.q, rows = int64_t(sh.c) * sh.r * sh.s;
  const int g = group_log2(pq), per_block = kThreads >> g;
  simt::for_each_grid_chunk(row_blocks(pq), uint64_t((rows + per_block - 1) / per_block), uint64_t(images),
                            [&](dim3 grid, unsigned y0, unsigned z0) {
                              CONVLAB_LAUNCH(im2col_kernel, grid, dim3(kThreads), 0, stream, sh, g, y0, z0, src, col);
                            });
}

void col2im(const ConvShape& sh, const float* col, float* diff_src, void* stream, int images) {
  assert(images >= 1);
  assert(int64_t(sh.c) * sh.r * sh.s * sh.p * sh.q <= INT32_MAX);
  const int64_t hw = int64_t(sh.h) * sh.w;
  const int g = group_log2(hw), per_block = kThreads >> g;
  simt::for_each_grid_chunk(row_blocks(hw), uint64_t((sh.c + per_block - 1) / per_block), uint64_t(images),
                            [&](dim3 grid, unsigned y0, unsigned z0) {
                              CONVLAB_LAUNCH(col2im_kernel, grid, dim3(kThreads), 0, stream, sh, g, y0, z0, col,
                                             diff_src);
                            });
}

void sum_partials(const float* partials, int count, int64_t len, float* out, bool accumulate, void* stream) {
  assert(count >= 1 && len >= 1);
  CONVLAB_LAUNCH(sum_partials_kernel, dim3(blocks_for(len)), dim3(kThreads), 0, stream, count, len, partials, out,
                 accumulate);
}

}  // namespace convlab::cuda
