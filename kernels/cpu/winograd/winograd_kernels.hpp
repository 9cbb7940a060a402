// CPU Winograd F(m x m, 3 x 3) kernels (non-fused form): the tile transforms,
// per ISA. Plain data in; the algorithm (algorithms/cpu/winograd.cpp) owns
// chunking, threading, workspace and the batched GEMM, which runs on the sgemm
// micro-kernel of the same ISA from kernels/cpu/gemm's table (Kernels::gemm_isa
// names it; there is no Winograd-private GEMM kernel).
//
// Every transform works on 16 tiles at once (one SIMD lane per tile: one zmm on
// AVX-512, two ymm on AVX2, four xmm portable) for one channel, and writes its
// alpha^2 transformed elements through a PackLayout: the packed A / B panels of
// the micro-kernel they feed, whose MR x NR tile (GemmTile, blocking.hpp)
// is a run-time value. Out-of-image taps, tiles past the last one and channels
// past the last one read as zeros ("padding inside the transform"), so edges
// are exact.
#pragma once
#include <cstdint>

#include "kernels/cpu/gemm/gemm_isa.hpp"
#include "kernels/cpu/winograd/blocking.hpp"

namespace convlab::cpu::winograd {

inline constexpr int kLanes = 16;  // tiles per transform call

// Element (e, c, t) of a packed buffer lives at
//   e * e_stride + (c / cb) * cb_stride + (c % cb) * c_stride + (t / tb) * tb_stride + (t % tb) * t_stride
// (c: channel, t: tile index within the chunk).
struct PackLayout {
  int64_t e_stride;
  int cb;
  int64_t cb_stride, c_stride;
  int tb;
  int64_t tb_stride, t_stride;
  int64_t offset(int c, int t) const {
    return (c / cb) * cb_stride + (c % cb) * c_stride + (t / tb) * tb_stride + (t % tb) * t_stride;
  }
};

// An NCHW image side of one group, tiled by m x m (output-side) tiles.
struct TiledImage {
  const float* data;      // channel 0 of this group, image 0
  float* out;             // same, for writable images (output transform)
  int64_t n_stride;       // floats between images (C_total * H * W)
  int channels;           // valid channels of this group
  int h, w;               // image size
  int pad_h, pad_w;       // patch origin of tile (ty, tx) = (ty*m - pad_h, tx*m - pad_w); may be < 0
  int tiles_h, tiles_w;   // tiles per image
  int64_t tiles_total;    // N * tiles_h * tiles_w
};

struct Kernels {
  const char* isa;
  // V(e, c, t) = (BT d B)(e) of the (m+2)^2 patch of `img` for tiles
  // [t_first + t, ...) of channel c (c < img.channels else zeros), for t in
  // [t0, t0 + 16) within the chunk and c in [c0, c1).
  void (*input_transform)(int m, const TiledImage& img, int64_t t_first, int t0, int c0, int c1, float* v,
                          const PackLayout& lay);
  // Y = AT M A for 16 tiles [t0, t0+16) of the chunk and channels [k0, k1):
  // written into img.out where inside h x w (tiles past tiles_total skipped).
  void (*output_transform)(int m, const float* mbuf, const PackLayout& lay, const TiledImage& img,
                           int64_t t_first, int t0, int k0, int k1);
  // W(e, k, t) = (A dy AT)(e) of the m x m diff_dst tile (zeros outside h x w).
  void (*dst_transform)(int m, const TiledImage& img, int64_t t_first, int t0, int k0, int k1, float* w,
                        const PackLayout& lay);
  // filter_transform (below) for the k-blocks [kb0, kb1) of MR = mr channels and the input channels
  // [c0, c1) of the transform (Kg on bwd-data, else Cg), single-threaded; c0 a multiple of 8.
  // stream: write U with streaming stores (bypassing the caches) where whole lines allow.
  void (*filter_transform_block)(int m, const float* wei_group, int kg, int cg, bool bwd_data, int mr, float* u,
                                 int64_t e_stride, int kb0, int kb1, int c0, int c1, bool stream);
  // diff_wei = GT M G (fp64) for output channel k, input channels [c0, c0 + 16) of one
  // group; M is (alpha^2, kp, cp), cp a multiple of 16.
  void (*filter_grad_block)(int m, const float* mbuf, int cg, int kp, int cp, int k, int c0, float* diff_wei_group);
  // The ISA of the sgemm micro-kernel (cpu::sgemm_ukernel) that runs the batched GEMM.
  cpu::GemmIsa gemm_isa;
};

const Kernels& kernels_portable();
const Kernels& kernels_avx2();    // call only on a CPU with AVX2 + FMA
const Kernels& kernels_avx512();  // call only where cpu_info().isa() == "avx512" (F/VL/BW/DQ)
// The widest one this CPU runs (cpu_info().isa(), capped by CONVLAB_ISA).
const Kernels& best_kernels();
// The micro-kernel tile the transforms of `kn` pack for: cpu::sgemm_ukernel(kn.gemm_isa)'s MR x NR.
GemmTile gemm_tile(const Kernels& kn);

// U = G g GT (fp64, rounded once) for one group: wei is (K_total, Cg, 3, 3) at
// group offset; the GEMM-A layout (alpha^2, ceil(k_out/MR), c_in, MR) of tile.mr,
// padded rows zero. Forward: k_out = Kg, c_in = Cg, g = wei[k][c].
// Backward data: k_out = Cg, c_in = Kg, g = rot180(wei[c_in][k_out]) (transposed, rotated).
// Threads: OpenMP static over (k-block, 8-channel chunk) pairs. Kernels: best_kernels().
// tile.mr is one of filter_transform_supports_mr (the micro-kernels' MRs).
// u_pitch: floats from one element's (KB, c_in, MR) slice to the next, at least
// ceil(k_out/MR) MR c_in; 0 packs them back to back.
// stream: U is written with streaming stores, past the caches (for a U larger than the
// last-level cache, which the GEMM then reads from memory either way).
void filter_transform(int m, const float* wei_group, int kg, int cg, bool bwd_data, GemmTile tile, float* u,
                      int threads, int64_t u_pitch = 0, bool stream = false);
constexpr bool filter_transform_supports_mr(int mr) { return mr == 4 || mr == 6 || mr == 12; }

// diff_wei(k, c) = GT M(k, c) G for one group (fp64 accumulation), M is
// (alpha^2, round_up(kg, MR), round_up(cg, NR)); diff_wei_group is (Kg, Cg, 3, 3).
void filter_grad_transform(int m, const float* mbuf, int kg, int cg, GemmTile tile, float* diff_wei_group,
                           int threads);

}  // namespace convlab::cpu::winograd
