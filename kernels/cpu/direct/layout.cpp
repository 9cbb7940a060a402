// Blocked-layout conversions for the direct convolution (see layout.hpp).
// Memory-bound copies; the work is split over rows / weight tiles statically.
#include "kernels/cpu/direct/layout.hpp"

#include "core/device.hpp"
#include "kernels/cpu/direct/transpose.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace convlab::cpu::direct {

namespace {
bool have_avx512() {
  static const bool yes = cpu_info().isa() == "avx512";  // compiled with F/VL/BW/DQ
  return yes;
}
bool have_avx2() {
  static const bool yes = have_avx512() || cpu_info().isa() == "avx2";
  return yes;
}
}  // namespace

namespace {
// The data pixels [0, npix) of consecutive rows, w each, read flat from `base` (channel planes hw
// apart) into rows row_len apart from `o`, pixel x of a row at column left + x: whole register
// transposes across the rows' ends, where a row at a time would leave most of each
// transpose's lanes empty on narrow images.
void block_flat(const float* base, int64_t hw, int64_t npix, int w, int left, int b, int64_t row_len, float* o) {
  int64_t off[16];
  int x = 0;
  int64_t row0 = 0;
  for (int64_t k0 = 0; k0 < npix; k0 += b) {
    const int ni = int(std::min<int64_t>(b, npix - k0));
    for (int i = 0; i < ni; ++i) {
      off[i] = row0 + int64_t(left + x) * b;
      if (++x == w) x = 0, row0 += row_len;
    }
    if (b == 16) {
      transpose16x16_to_avx512(base + k0, hw, o, off, ni);
    } else {
      transpose8x8_to_avx2(base + k0, hw, o, off, ni);
    }
  }
}
}  // namespace

void block_act(const ActBlocking& a, const float* src, float* dst, int ithr, int nthr) {
  assert(a.b >= 1 && a.hp >= 1 && a.wp >= 1);
  const int cb_count = a.cb();
  const int64_t rows = int64_t(a.n) * a.groups * cb_count * a.hp;
  const int64_t row_len = int64_t(a.wp) * a.b;
  const int64_t hw = int64_t(a.h) * a.w;
  const int x0 = std::max(0, -a.left), x1 = std::min(a.w, a.wp - a.left);
  // Whole rows of full channel blocks go through block_flat.
  const bool flat_isa = (a.b == 16 && have_avx512()) || (a.b == 8 && have_avx2());
  const bool whole_rows = x0 == 0 && x1 == a.w;
  int64_t begin, end;
  share(rows, ithr, nthr, begin, end);
  const float* planes[64];
  for (int64_t row = begin; row < end;) {
    float* o = dst + row * row_len;  // (WP, B)
    const int y = int(row % a.hp) - a.top;
    const int64_t ncb = row / a.hp;  // (n, g, cb)
    const int cb = int(ncb % cb_count);
    const int64_t ng = ncb / cb_count;  // n * G + g
    const int lanes = std::min(a.b, a.cg - cb * a.b);
    if (y < 0 || y >= a.h || x0 >= x1) {
      std::memset(o, 0, size_t(row_len) * sizeof(float));
      ++row;
      continue;
    }
    // Zero only what the copy below does not write: margins and padded lanes.
    const int64_t data0 = int64_t(a.left + x0) * a.b, data1 = int64_t(a.left + x1) * a.b;
    const auto zero_margins = [&](float* r) {
      std::memset(r, 0, size_t(data0) * sizeof(float));
      std::memset(r + data1, 0, size_t(row_len - data1) * sizeof(float));
    };
    const float* base = src + (ng * a.cg + int64_t(cb) * a.b) * hw + int64_t(y) * a.w;  // (lanes, H, W) planes
    if (flat_isa && whole_rows && lanes == a.b) {
      // This block's data rows from here on, in this thread's share.
      int64_t run = 1;
      while (row + run < end && (row + run) / a.hp == ncb && y + run < a.h) ++run;
      for (int64_t i = 0; i < run; ++i) zero_margins(o + i * row_len);
      block_flat(base, hw, run * a.w, a.w, a.left, a.b, row_len, o);
      row += run;
      continue;
    }
    if (lanes < a.b) {
      std::memset(o, 0, size_t(row_len) * sizeof(float));
    } else {
      zero_margins(o);
    }
    if (lanes <= 64) {
      // Pixel-major: contiguous writes, `lanes` sequential read streams.
      for (int i = 0; i < lanes; ++i) planes[i] = base + i * hw;
      int x = x0;
      // Full channel blocks: register transposes, the row's last pixels masked.
      if (a.b == 16 && lanes == 16 && have_avx512()) {
        for (; x + 16 <= x1; x += 16) transpose16x16_avx512(base + x, hw, o + int64_t(a.left + x) * 16, 16);
        if (x < x1) transpose16x16_part_avx512(base + x, hw, o + int64_t(a.left + x) * 16, 16, x1 - x, 16);
        x = x1;
      }
      if (a.b == 8 && lanes == 8 && have_avx2()) {
        for (; x + 8 <= x1; x += 8) transpose8x8_avx2(base + x, hw, o + int64_t(a.left + x) * 8, 8);
        if (x < x1) transpose8x8_part_avx2(base + x, hw, o + int64_t(a.left + x) * 8, 8, x1 - x, 8);
        x = x1;
      }
      // Three channels (an RGB input): 8 pixels at a time in registers; the row's last ones below.
      if (a.b == 3 && lanes == 3 && have_avx2())
        for (; x + 8 <= x1; x += 8)
          interleave3x8_avx2(planes[0] + x, planes[1] + x, planes[2] + x, o + int64_t(a.left + x) * 3);
      for (; x < x1; ++x) {
        float* ox = o + int64_t(a.left + x) * a.b;
        for (int i = 0; i < lanes; ++i) ox[i] = planes[i][x];
      }
    } else {
      for (int i = 0; i < lanes; ++i)
        for (int x = x0; x < x1; ++x) o[int64_t(a.left + x) * a.b + i] = base[i * hw + x];
    }
    ++row;
  }
}

void pad_rows_interleaved(const float* src, int c, int h, int w, int top, int left, int hp, int wp, float* dst) {
  assert(left >= 0 && top >= 0);
  const int x1 = std::min(w, wp - left);
  for (int y = 0; y < hp; ++y) {
    float* o = dst + int64_t(y) * c * wp;  // (C, WP)
    std::memset(o, 0, size_t(c) * wp * sizeof(float));
    const int ys = y - top;
    if (ys < 0 || ys >= h || x1 <= 0) continue;
    for (int ch = 0; ch < c; ++ch)
      std::memcpy(o + int64_t(ch) * wp + left, src + (int64_t(ch) * h + ys) * w, size_t(x1) * sizeof(float));
  }
}

void unblock_rows(const float* tile, int64_t hw, int64_t plane, int v, int nchan, float* dst) {
  assert(nchan <= v && v <= 64);
  float* planes[64];
  for (int c = 0; c < nchan; ++c) planes[c] = dst + c * plane;
  int64_t x0 = 0;
  // Register transposes; partial channel blocks and the last pixels masked.
  if (v == 16 && have_avx512()) {
    for (; x0 + 16 <= hw; x0 += 16) {
      if (nchan == 16) {
        transpose16x16_avx512(tile + x0 * 16, 16, dst + x0, plane);
      } else {
        transpose16x16_part_avx512(tile + x0 * 16, 16, dst + x0, plane, nchan, 16);
      }
    }
    if (x0 < hw) transpose16x16_part_avx512(tile + x0 * 16, 16, dst + x0, plane, nchan, int(hw - x0));
    return;
  }
  if (v == 8 && have_avx2()) {
    for (; x0 + 8 <= hw; x0 += 8) {
      if (nchan == 8) {
        transpose8x8_avx2(tile + x0 * 8, 8, dst + x0, plane);
      } else {
        transpose8x8_part_avx2(tile + x0 * 8, 8, dst + x0, plane, nchan, 8);
      }
    }
    if (x0 < hw) transpose8x8_part_avx2(tile + x0 * 8, 8, dst + x0, plane, nchan, int(hw - x0));
    return;
  }
  // Pixel-major: contiguous reads, `nchan` sequential write streams.
  for (int64_t x = x0; x < hw; ++x) {
    const float* t = tile + x * v;
    for (int c = 0; c < nchan; ++c) planes[c][x] = t[c];
  }
}

void unblock_tile(const float* tile, int64_t hw, int v, int nchan, float* dst) {
  unblock_rows(tile, hw, hw, v, nchan, dst);
}

namespace {

// Both directions' blocked filter, tiles (G, LB, RB, R, S, BI, V): the V lanes
// run over the direction's output channels (K for fwd, C for bwd-data), the BI
// rows over its reduction channels; padded lanes and rows are zeros. flip_s
// stores the filter columns reversed (s' = S-1-s).
void block_wei(const WeiBlocking& b, const float* wei, float* dst, bool lanes_are_k, bool flip_s, int ithr,
               int nthr) {
  const int lanes = lanes_are_k ? b.kg : b.cg, rows = lanes_are_k ? b.cg : b.kg;
  const int lb_count = (lanes + b.v - 1) / b.v, rb_count = (rows + b.bi - 1) / b.bi;
  const int rs = b.r * b.s;
  const int64_t tile = int64_t(rs) * b.bi * b.v;  // (R, S, BI, V)
  int64_t begin, end;
  share(int64_t(b.groups) * lb_count * rb_count, ithr, nthr, begin, end);
  // Tiles in the order that reads the source forward: one k-block's rows
  // across all c-blocks, then the next (lanes = k: the stored order; lanes = c:
  // c-blocks fastest, else each tile's short runs stride across the tensor).
  const int fast = lanes_are_k ? rb_count : lb_count, slow = lanes_are_k ? lb_count : rb_count;
  for (int64_t it = begin; it < end; ++it) {
    const int f = int(it % fast), sl = int(it / fast % slow), g = int(it / fast / slow);
    const int rb = lanes_are_k ? f : sl, lb = lanes_are_k ? sl : f;
    float* o = dst + ((int64_t(g) * lb_count + lb) * rb_count + rb) * tile;  // (RS, BI, V)
    const int nl = std::min(b.v, lanes - lb * b.v), ni = std::min(b.bi, rows - rb * b.bi);
    if (nl < b.v || ni < b.bi) std::fill(o, o + tile, 0.f);
    // Source order: the (c, r, s) of one k are contiguous, so each (k, c) is a
    // run of RS reads; the writes stay inside this tile (L1).
    for (int x = 0; x < (lanes_are_k ? nl : ni); ++x)    // k
      for (int y = 0; y < (lanes_are_k ? ni : nl); ++y) {  // c
        const int l = lanes_are_k ? x : y, i = lanes_are_k ? y : x;
        const int k = lanes_are_k ? lb * b.v + l : rb * b.bi + i, c = lanes_are_k ? rb * b.bi + i : lb * b.v + l;
        const float* w = wei + ((int64_t(g) * b.kg + k) * b.cg + c) * rs;  // (R, S)
        float* ol = o + int64_t(i) * b.v + l;
        const int64_t tstep = int64_t(b.bi) * b.v;
        for (int r = 0; r < b.r; ++r)
          for (int t = 0; t < b.s; ++t)  // tap (r, t) from source column S-1-t when flipped
            ol[(r * b.s + t) * tstep] = w[r * b.s + (flip_s ? b.s - 1 - t : t)];
      }
  }
}

}  // namespace

void block_wei_fwd(const WeiBlocking& b, const float* wei, float* dst, int ithr, int nthr) {
  block_wei(b, wei, dst, true, false, ithr, nthr);
}

void unblock_wei_fwd(const WeiBlocking& b, const float* blk, float* wei, int ithr, int nthr) {
  const int kb_count = (b.kg + b.v - 1) / b.v, cb_count = (b.cg + b.bi - 1) / b.bi;
  const int rs = b.r * b.s;
  const int64_t tile = int64_t(rs) * b.bi * b.v;
  int64_t begin, end;
  share(int64_t(b.groups) * b.kg, ithr, nthr, begin, end);  // rows (g, k) of wei
  for (int64_t gk = begin; gk < end; ++gk) {
    const int g = int(gk / b.kg), k = int(gk % b.kg);
    const int kb = k / b.v, l = k % b.v;
    for (int c = 0; c < b.cg; ++c) {
      const int cb = c / b.bi, i = c % b.bi;
      const float* t = blk + ((int64_t(g) * kb_count + kb) * cb_count + cb) * tile;  // (R, S, BI, V)
      float* w = wei + (gk * b.cg + c) * rs;
      for (int x = 0; x < rs; ++x) w[x] = t[(int64_t(x) * b.bi + i) * b.v + l];
    }
  }
}

void block_wei_bwd_data(const WeiBlocking& b, const float* wei, float* dst, bool flip_s, int ithr, int nthr) {
  block_wei(b, wei, dst, false, flip_s, ithr, nthr);
}

void block_wei_pix(const WeiBlocking& b, const float* wei, float* dst, int ithr, int nthr) {
  const int nc = b.bi, cc_count = (b.cg + nc - 1) / nc, rs = b.r * b.s;
  const int64_t tile = int64_t(rs) * b.kg * nc;  // (R, S, KG, NC)
  int64_t begin, end;
  share(int64_t(b.groups) * cc_count, ithr, nthr, begin, end);
  for (int64_t idx = begin; idx < end; ++idx) {
    const int cc = int(idx % cc_count), g = int(idx / cc_count);
    float* o = dst + idx * tile;
    for (int t = 0; t < rs; ++t)
      for (int k = 0; k < b.kg; ++k)
        for (int i = 0; i < nc; ++i) {
          const int c = cc * nc + i;
          o[(int64_t(t) * b.kg + k) * nc + i] = c < b.cg ? wei[((int64_t(g) * b.kg + k) * b.cg + c) * rs + t] : 0.f;
        }
  }
}

}  // namespace convlab::cpu::direct
