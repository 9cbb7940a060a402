// im2col / col2im kernels and their launchers.
//
// im2col: one thread per column-matrix element (C*R*S*P*Q of them, grid-stride
// loop, 256 threads per block), consecutive threads walk consecutive output
// pixels q, so writes are coalesced and reads are strided by the stride.
// col2im: one thread per input element (c, h, w), gathering the column entries
// that copied it, and only those: the taps of its stride phase whose output lies
// inside P x Q (kernels/strided_taps.hpp: the first tap and the step, found once
// per element; at stride 4 with an 11 x 11 filter <= 3 x 3 of the 121 taps), in
// the same (r, s) order as a test of every tap would visit them.
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

__global__ void im2col_kernel(ConvShape sh, int images, const float* __restrict__ src, float* __restrict__ col) {
  const int64_t pq = int64_t(sh.p) * sh.q;
  const int64_t per_img = int64_t(sh.c) * sh.r * sh.s * pq;
  const int64_t total = per_img * images;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t img = idx / per_img;
    const int64_t e = idx - img * per_img;
    const int64_t row = e / pq;  // (C, R, S)
    const int col_i = int(e % pq);
    const int s = int(row % sh.s), r = int(row / sh.s % sh.r), c = int(row / (int64_t(sh.r) * sh.s));
    const int p = col_i / sh.q, q = col_i % sh.q;
    const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h;
    const int iw = q * sh.stride_w - sh.pad_w + s * sh.dil_w;
    const bool inside = ih >= 0 && ih < sh.h && iw >= 0 && iw < sh.w;
    col[idx] = inside ? src[((img * sh.c + c) * sh.h + ih) * sh.w + iw] : 0.0f;  // (images, C, H, W)
  }
}

__global__ void col2im_kernel(ConvShape sh, int images, const float* __restrict__ col, float* __restrict__ diff_src) {
  const int64_t pq = int64_t(sh.p) * sh.q;
  const int64_t chw = int64_t(sh.c) * sh.h * sh.w;
  const int64_t col_img = int64_t(sh.c) * sh.r * sh.s * pq;
  const int64_t total = chw * images;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t img = idx / chw;
    const int64_t e = idx - img * chw;
    const int w = int(e % sh.w), h = int(e / sh.w % sh.h), c = int(e / (int64_t(sh.w) * sh.h));
    const float* icol = col + img * col_img;  // (images, C*R*S, P*Q)
    // The taps that reach (h, w) and land on an output: rows rt.first + jr*rt.step
    // reach output row rt.out - jr*rt.out_step, columns likewise.
    const StridedTaps rt = clamp_taps(strided_taps(h, sh.pad_h, sh.stride_h, sh.dil_h, sh.r), sh.p);
    const StridedTaps st = clamp_taps(strided_taps(w, sh.pad_w, sh.stride_w, sh.dil_w, sh.s), sh.q);
    // Column entry of tap (r, s) at output (p, q): ((c*R + r)*S + s)*PQ + p*Q + q. Per row tap
    // it moves by step*S*PQ - out_step*Q, per column tap by step*PQ - out_step.
    const int64_t d_r = int64_t(rt.step) * sh.s * pq - int64_t(rt.out_step) * sh.q;
    const int64_t d_s = int64_t(st.step) * pq - st.out_step;
    int64_t e_r = ((int64_t(c) * sh.r + rt.first) * sh.s + st.first) * pq + int64_t(rt.out) * sh.q + st.out;
    float acc = 0.0f;
    for (int jr = 0; jr < rt.count; ++jr, e_r += d_r) {
      int64_t e = e_r;
      for (int js = 0; js < st.count; ++js, e += d_s) acc += icol[e];  // (C*R*S, P*Q)
    }
    diff_src[idx] = acc;
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

void im2col(const ConvShape& sh, const float* src, float* col, void* stream, int images) {
  assert(images >= 1);
  const int64_t total = int64_t(images) * sh.c * sh.r * sh.s * sh.p * sh.q;
  CONVLAB_LAUNCH(im2col_kernel, dim3(blocks_for(total)), dim3(kThreads), 0, stream, sh, images, src, col);
}

void col2im(const ConvShape& sh, const float* col, float* diff_src, void* stream, int images) {
  assert(images >= 1);
  const int64_t total = int64_t(images) * sh.c * sh.h * sh.w;
  CONVLAB_LAUNCH(col2im_kernel, dim3(blocks_for(total)), dim3(kThreads), 0, stream, sh, images, col, diff_src);
}

void sum_partials(const float* partials, int count, int64_t len, float* out, bool accumulate, void* stream) {
  assert(count >= 1 && len >= 1);
  CONVLAB_LAUNCH(sum_partials_kernel, dim3(blocks_for(len)), dim3(kThreads), 0, stream, count, len, partials, out,
                 accumulate);
}

}  // namespace convlab::cuda
