// Layout conversions between convlab's plain tensors (NCHW activations, KCRS
// weights, see kernels/conv_shape.hpp) and the blocked layouts the direct
// micro-kernels read (direct_ukernel.hpp). Channel blocks that run past the
// real channel count are zero-filled, so any C and K work; spatial padding can
// be materialised as zero rows / columns.
//
//   activations  (N, G, CB, HP, WP, B)    B channels innermost ("NCHW16c")
//   weights fwd  (G, KB, CB, R, S, BI, V) lane = output channel ("OIhw16i16o")
//   weights bwd  (G, CB, KB, R, S, BK, V) lane = input channel  ("IOhw16o16i")
//   weights pix  (G, CC, R, S, KG, NC)    NC input channels innermost
//
// Threads: each function does the static share `ithr` of `nthr` (called from
// inside the algorithm's parallel region; no synchronisation inside).
#pragma once
#include <cstdint>

namespace convlab::cpu::direct {

// Blocked activation geometry of one (N, G*CG, H, W) tensor.
struct ActBlocking {
  int n, groups, cg, h, w;  // the plain tensor; cg = channels per group
  int b;                    // channels per block
  int top, left;            // zero rows / columns before the data
  int hp, wp;               // blocked plane size (data beyond it is dropped)
  int cb() const { return (cg + b - 1) / b; }
  int64_t plane() const { return int64_t(hp) * wp * b; }
  int64_t elems() const { return int64_t(n) * groups * cb() * plane(); }
};

// dst (N, G, CB, HP, WP, B) <- src (N, G*CG, H, W).
void block_act(const ActBlocking& a, const float* src, float* dst, int ithr, int nthr);

// dst (HP, C, WP) <- src (C, H, W): rows of all channels interleaved, zero
// margins top / left (and beyond the data), for one image and one thread.
void pad_rows_interleaved(const float* src, int c, int h, int w, int top, int left, int hp, int wp, float* dst);

// One blocked output tile (HW, V) -> nchan planes of NCHW (plane stride hw).
void unblock_tile(const float* tile, int64_t hw, int v, int nchan, float* dst);
// The same for `hw` pixels of planes `plane` apart (a band of rows of each plane).
void unblock_rows(const float* tile, int64_t hw, int64_t plane, int v, int nchan, float* dst);

// Weight geometry: (G*KG, CG, R, S) plain.
struct WeiBlocking {
  int groups, kg, cg, r, s;
  int bi;  // input-side block (channels of the reduction)
  int v;   // output-side block (vector lanes)
};

// fwd (G, KB, CB, R, S, BI, V) <- wei; KB = ceil(KG/V), CB = ceil(CG/BI).
void block_wei_fwd(const WeiBlocking& b, const float* wei, float* dst, int ithr, int nthr);
// wei <- fwd layout (the inverse, dropping padded lanes; backward-filter).
void unblock_wei_fwd(const WeiBlocking& b, const float* blk, float* wei, int ithr, int nthr);
// bwd-data (G, CB, KB, R, S, BK, V) <- wei; here bi = BK (the K block) and
// lanes are input channels: CB = ceil(CG/V), KB = ceil(KG/BK). flip_s stores
// the filter columns reversed (s' = S-1-s).
void block_wei_bwd_data(const WeiBlocking& b, const float* wei, float* dst, bool flip_s, int ithr, int nthr);

// pix (G, CC, R, S, KG, NC) <- wei: for the pixel-vectorised backward-data,
// NC = b.bi input channels per chunk, CC = ceil(CG/NC), padded with zeros.
void block_wei_pix(const WeiBlocking& b, const float* wei, float* dst, int ithr, int nthr);

// Asks for [p, p + bytes) in L2 with write intent, ahead of a layout store
// into it: the output planes are cold, and the unblocking's scattered stores
// otherwise wait on each line's read-for-ownership.
inline void prefetch_for_write(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(c + o, 1, 2);
}

// [begin, end) of `ithr`'s static share of `total` items.
inline void share(int64_t total, int ithr, int nthr, int64_t& begin, int64_t& end) {
  begin = total * ithr / nthr;
  end = total * (ithr + 1) / nthr;
}

}  // namespace convlab::cpu::direct
