#include "kernels/ref/conv_ref.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace convlab::ref {

namespace {

// The fp64 oracle's one loop over a filter tap's footprint: f(o, i) for every
// output position o = p * Q + q whose tap (r, s) reads the input position
// i = ih * W + iw inside the image (the zero padding is skipped), p then q
// ascending (the summation order every direction keeps).
template <class F>
void for_each_tap_position(const ConvShape& sh, int r, int s, F&& f) {
  for (int p = 0; p < sh.p; ++p) {
    const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h;
    if (ih < 0 || ih >= sh.h) continue;
    for (int q = 0; q < sh.q; ++q) {
      const int iw = q * sh.stride_w - sh.pad_w + s * sh.dil_w;
      if (iw < 0 || iw >= sh.w) continue;
      f(int64_t(p) * sh.q + q, int64_t(ih) * sh.w + iw);
    }
  }
}

// Zeroes an output plane and, when present, its magnitude plane.
void zero_planes(double* out, double* mag, int64_t plane) {
  for (int64_t i = 0; i < plane; ++i) out[i] = 0;
  if (mag)
    for (int64_t i = 0; i < plane; ++i) mag[i] = 0;
}

}  // namespace

// Forward: for each (n, k) output plane, walk the filter taps of its group's
// channels and add the shifted input row into the plane. Out-of-range input
// positions are the zero padding and are skipped.
void conv_fwd(const ConvShape& sh, const float* src, const float* wei, double* dst, double* mag) {
  const int64_t plane = int64_t(sh.p) * sh.q;
#pragma omp parallel for collapse(2) schedule(static)
  for (int n = 0; n < sh.n; ++n) {
    for (int k = 0; k < sh.k; ++k) {
      const int g = k / sh.kg();
      double* out = dst + (int64_t(n) * sh.k + k) * plane;  // (P, Q)
      double* om = mag ? mag + (int64_t(n) * sh.k + k) * plane : nullptr;
      zero_planes(out, om, plane);
      for (int cl = 0; cl < sh.cg(); ++cl) {
        const int c = g * sh.cg() + cl;
        const float* in = src + (int64_t(n) * sh.c + c) * sh.h * sh.w;  // (H, W)
        for (int r = 0; r < sh.r; ++r)
          for (int s = 0; s < sh.s; ++s) {
            const double wv = wei[((int64_t(k) * sh.cg() + cl) * sh.r + r) * sh.s + s];
            for_each_tap_position(sh, r, s, [&](int64_t o, int64_t i) {
              const double prod = wv * double(in[i]);
              out[o] += prod;
              if (om) om[o] += std::fabs(prod);
            });
          }
      }
    }
  }
}

// Backward data: the transpose of the forward map. Each (n, c) input-gradient
// plane gathers the scatter of every output of its group's filters.
void conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, double* diff_src, double* mag) {
  const int64_t plane = int64_t(sh.h) * sh.w;
#pragma omp parallel for collapse(2) schedule(static)
  for (int n = 0; n < sh.n; ++n) {
    for (int c = 0; c < sh.c; ++c) {
      const int g = c / sh.cg();
      const int cl = c % sh.cg();
      double* out = diff_src + (int64_t(n) * sh.c + c) * plane;  // (H, W)
      double* om = mag ? mag + (int64_t(n) * sh.c + c) * plane : nullptr;
      zero_planes(out, om, plane);
      for (int kl = 0; kl < sh.kg(); ++kl) {
        const int k = g * sh.kg() + kl;
        const float* dy = diff_dst + (int64_t(n) * sh.k + k) * sh.p * sh.q;  // (P, Q)
        for (int r = 0; r < sh.r; ++r)
          for (int s = 0; s < sh.s; ++s) {
            const double wv = wei[((int64_t(k) * sh.cg() + cl) * sh.r + r) * sh.s + s];
            for_each_tap_position(sh, r, s, [&](int64_t o, int64_t i) {
              const double prod = wv * double(dy[o]);
              out[i] += prod;
              if (om) om[i] += std::fabs(prod);
            });
          }
      }
    }
  }
}

// Backward filter: each weight (k, c, r, s) is the sum over the batch and all
// output positions of diff_dst * the input it multiplied in the forward pass.
void conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, double* diff_wei, double* mag) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < sh.k; ++k) {
    for (int cl = 0; cl < sh.cg(); ++cl) {
      const int c = (k / sh.kg()) * sh.cg() + cl;
      for (int r = 0; r < sh.r; ++r) {
        for (int s = 0; s < sh.s; ++s) {
          double acc = 0, acc_mag = 0;
          for (int n = 0; n < sh.n; ++n) {
            const float* in = src + (int64_t(n) * sh.c + c) * sh.h * sh.w;     // (H, W)
            const float* dy = diff_dst + (int64_t(n) * sh.k + k) * sh.p * sh.q;  // (P, Q)
            for_each_tap_position(sh, r, s, [&](int64_t o, int64_t i) {
              const double prod = double(dy[o]) * double(in[i]);
              acc += prod;
              acc_mag += std::fabs(prod);
            });
          }
          const int64_t i = ((int64_t(k) * sh.cg() + cl) * sh.r + r) * sh.s + s;
          diff_wei[i] = acc;
          if (mag) mag[i] = acc_mag;
        }
      }
    }
  }
}

}  // namespace convlab::ref
