// im2col / col2im kernels: see im2col.hpp for the layout contract.
// Each (c, r, s) row: per output row p, the valid q range [q0, q1) is computed
// once (the columns whose iw lands inside the image), the rest is zero padding;
// the valid part is one copy_strided (row_copy.hpp): a memcpy at stride 1,
// a vector deinterleave at stride 2. Small images (output rows of at most 32)
// take the plane path instead where the CPU has AVX2 (im2col_plane.hpp).
#include "kernels/cpu/im2col/im2col.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>

#include "core/device.hpp"
#include "kernels/cpu/im2col/im2col_plane.hpp"
#include "kernels/cpu/im2col/row_copy.hpp"

namespace convlab::cpu {

namespace {

// Valid q range for filter column s: 0 <= q*stride - pad + s*dil < W.
void q_range(const ConvShape& sh, int s, int& q0, int& q1) {
  const int off = s * sh.dil_w - sh.pad_w;  // iw = q*stride + off
  q0 = off >= 0 ? 0 : (-off + sh.stride_w - 1) / sh.stride_w;
  const int last = sh.w - 1 - off;  // q*stride <= last
  q1 = last < 0 ? 0 : last / sh.stride_w + 1;
  if (q1 > sh.q) q1 = sh.q;
  if (q0 > q1) q0 = q1;
}

}  // namespace

bool im2col_plane_applies(const ConvShape& sh) {
  return (sh.stride_w == 1 || sh.stride_w == 2) && sh.q <= 32 && sh.pad_w >= 0 && sh.pad_h >= 0 &&
         plane_width(sh) > 0 && plane_rows(sh) <= kPlaneRows;
}

Im2colPlaneRows im2col_plane_rows() {
  const std::string isa = cpu_info().isa();
  return isa == "avx512" ? im2col_plane_rows_avx512 : isa == "avx2" ? im2col_plane_rows_avx2 : nullptr;
}

void im2col(const ConvShape& sh, int nb, int g, const float* src, float* col, int64_t ldcol, int threads) {
  assert(nb >= 1 && g >= 0 && g < sh.groups);
  assert(ldcol >= int64_t(nb) * sh.p * sh.q);
  const int cg = sh.cg();
  const int64_t pq = int64_t(sh.p) * sh.q;
  const int64_t hw = int64_t(sh.h) * sh.w;
  static const Im2colPlaneRows plane_rows_fn = im2col_plane_rows();
  if (plane_rows_fn && im2col_plane_applies(sh)) {
    const int ph = plane_rows(sh), h_in = std::min(sh.h, ph - sh.pad_h), bw = plane_width(sh);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      alignas(64) float buf[kPlaneRows * kPlaneWidth];
      std::memset(buf, 0, sizeof(float) * size_t(ph) * bw);
      // Channel-major: a thread writes each of its channels' R*S rows left to right, image after image
      // (image-major, every row took a 49-float piece per image, each cache line written in parts by
      // images far apart in time and fetched from memory again for each: on ResNet-50's res5 stride-2
      // layer at batch 16, Zen 4, 3.2 ms image-major, 1.6 channel-major).
#pragma omp for collapse(2) schedule(static)
      for (int c = 0; c < cg; ++c)
        for (int i = 0; i < nb; ++i) {
          const float* plane = src + (int64_t(i) * sh.c + int64_t(g) * cg + c) * hw;
          for (int ih = 0; ih < h_in; ++ih)
            std::memcpy(buf + int64_t(ih + sh.pad_h) * bw + sh.pad_w, plane + int64_t(ih) * sh.w,
                        sizeof(float) * size_t(sh.w));
          plane_rows_fn(sh, buf, col + int64_t(c) * sh.r * sh.s * ldcol + i * pq, ldcol);
        }
    }
    return;
  }
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads) if (threads > 1)
  for (int c = 0; c < cg; ++c) {  // channel-major, as the plane path
    for (int i = 0; i < nb; ++i) {
      const float* plane = src + (int64_t(i) * sh.c + int64_t(g) * cg + c) * hw;  // (H, W)
      for (int r = 0; r < sh.r; ++r) {
        for (int s = 0; s < sh.s; ++s) {
          float* row = col + ((int64_t(c) * sh.r + r) * sh.s + s) * ldcol + i * pq;  // (P, Q)
          int q0, q1;
          q_range(sh, s, q0, q1);
          const int off_w = s * sh.dil_w - sh.pad_w;
          for (int p = 0; p < sh.p; ++p) {
            float* out = row + int64_t(p) * sh.q;
            const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h;
            if (ih < 0 || ih >= sh.h) {
              std::memset(out, 0, sizeof(float) * size_t(sh.q));
              continue;
            }
            const float* in = plane + int64_t(ih) * sh.w;
            for (int q = 0; q < q0; ++q) out[q] = 0.0f;
            cpu::copy_strided(in + int64_t(q0) * sh.stride_w + off_w, sh.stride_w, q1 - q0, out + q0);
            for (int q = q1; q < sh.q; ++q) out[q] = 0.0f;
          }
        }
      }
    }
  }
}

void col2im(const ConvShape& sh, int nb, int g, const float* col, int64_t ldcol, float* diff_src, int threads) {
  assert(nb >= 1 && g >= 0 && g < sh.groups);
  assert(ldcol >= int64_t(nb) * sh.p * sh.q);
  const int cg = sh.cg();
  const int64_t pq = int64_t(sh.p) * sh.q;
  const int64_t hw = int64_t(sh.h) * sh.w;
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads) if (threads > 1)
  for (int i = 0; i < nb; ++i) {
    for (int c = 0; c < cg; ++c) {
      float* plane = diff_src + (int64_t(i) * sh.c + int64_t(g) * cg + c) * hw;  // (H, W)
      std::memset(plane, 0, sizeof(float) * size_t(hw));
      for (int r = 0; r < sh.r; ++r) {
        for (int s = 0; s < sh.s; ++s) {
          const float* row = col + ((int64_t(c) * sh.r + r) * sh.s + s) * ldcol + i * pq;  // (P, Q)
          int q0, q1;
          q_range(sh, s, q0, q1);
          const int off_w = s * sh.dil_w - sh.pad_w;
          for (int p = 0; p < sh.p; ++p) {
            const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h;
            if (ih < 0 || ih >= sh.h) continue;
            const float* in = row + int64_t(p) * sh.q;
            float* out = plane + int64_t(ih) * sh.w;
            if (sh.stride_w == 1) {
              for (int q = q0; q < q1; ++q) out[q + off_w] += in[q];
            } else {
              for (int q = q0; q < q1; ++q) out[q * sh.stride_w + off_w] += in[q];
            }
          }
        }
      }
    }
  }
}

}  // namespace convlab::cpu
