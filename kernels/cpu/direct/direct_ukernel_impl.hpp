// The micro-kernel bodies, written once over a small vector-ops type `O`
// (O::vec, O::V, load/store/zero/bcast/fma) and compiled once per ISA by
// direct_ukernel_avx512.cpp, direct_ukernel_avx2.cpp and direct_ukernel.cpp.
// See direct_ukernel.hpp for what they compute.
#pragma once
#include <array>
#include <cassert>
#include <utility>

#include "kernels/cpu/direct/direct_ukernel.hpp"

namespace convlab::direct::detail {

#define CONVLAB_INLINE __attribute__((always_inline))

// Compile-time unrolled loop: f(integral_constant<int, 0>) ... f(<N-1>). Constant
// indices let the compiler keep a whole accumulator array in registers (a
// loop-indexed array, even one `#pragma unroll`ed, may stay in memory).
template <int N, class F>
[[gnu::always_inline]] inline void unroll(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) CONVLAB_INLINE {
    (f(std::integral_constant<int, I>{}), ...);
  }(std::make_integer_sequence<int, N>{});
}

// Dense: pixel j reads at j*V (in_pix_stride == V, no pix_off), a constant
// displacement, so no register holds a pixel offset (14 of them spill on AVX-512).
template <class O, int NKB, int NJ, bool Dense>
void conv_nj(const ConvUkernelArgs& a) {
  using vec = typename O::vec;
  constexpr int V = O::V;
  vec acc[NKB][NJ];
  if (a.accumulate) {
    unroll<NKB>([&](auto kb) CONVLAB_INLINE {
      unroll<NJ>([&](auto j) CONVLAB_INLINE {
        acc[kb][j] = O::load(a.out + kb * a.out_kb_stride + j * a.out_pix_stride);
      });
    });
  } else {
    unroll<NKB>([&](auto kb) CONVLAB_INLINE {
      unroll<NJ>([&](auto j) CONVLAB_INLINE { acc[kb][j] = O::zero(); });
    });
  }
  // Pixel j's input offset: pix_off[j], or j * in_pix_stride (held in registers).
  int64_t po[NJ];
  unroll<NJ>([&](auto j) CONVLAB_INLINE {
    if constexpr (Dense) {
      po[j] = j * V;
    } else {
      po[j] = a.pix_off ? a.pix_off[j] : j * a.in_pix_stride;
    }
  });
  const int64_t wks = a.wei_kb_stride;
  for (int ib = 0; ib < a.nib; ++ib) {
    const float* in_b = a.in + ib * a.in_ib_stride;
    const float* w_b = a.wei + ib * a.wei_ib_stride;
    for (int t = 0; t < a.ntaps; ++t) {
      const float* x = in_b + a.in_off[t];
      const float* w = w_b + a.wei_off[t];
#pragma GCC unroll 4
      for (int i = 0; i < a.bi; ++i, ++x, w += V) {
        if constexpr (NKB <= NJ) {  // NKB weights in registers, one broadcast at a time
          vec wv[NKB];
          unroll<NKB>([&](auto kb) CONVLAB_INLINE { wv[kb] = O::load(w + kb * wks); });
          unroll<NJ>([&](auto j) CONVLAB_INLINE {
            const vec b = O::bcast(x + po[j]);
            unroll<NKB>([&](auto kb) CONVLAB_INLINE { acc[kb][j] = O::fma(b, wv[kb], acc[kb][j]); });
          });
        } else {  // NJ broadcasts in registers, one weight vector at a time
          vec bv[NJ];
          unroll<NJ>([&](auto j) CONVLAB_INLINE { bv[j] = O::bcast(x + po[j]); });
          unroll<NKB>([&](auto kb) CONVLAB_INLINE {
            const vec wv = O::load(w + kb * wks);
            unroll<NJ>([&](auto j) CONVLAB_INLINE { acc[kb][j] = O::fma(bv[j], wv, acc[kb][j]); });
          });
        }
      }
    }
  }
  unroll<NKB>([&](auto kb) CONVLAB_INLINE {
    unroll<NJ>([&](auto j) CONVLAB_INLINE {
      O::store(a.out + kb * a.out_kb_stride + j * a.out_pix_stride, acc[kb][j]);
    });
  });
}

template <class O, int NKB, int NT>
void wgrad_nt(const WgradUkernelArgs& a) {
  using vec = typename O::vec;
  constexpr int V = O::V;
  vec acc[NKB][NT];
  if (a.accumulate) {
    unroll<NKB>([&](auto kb) CONVLAB_INLINE {
      unroll<NT>([&](auto t) CONVLAB_INLINE { acc[kb][t] = O::load(a.out + kb * a.out_kb_stride + t * V); });
    });
  } else {
    unroll<NKB>([&](auto kb) CONVLAB_INLINE {
      unroll<NT>([&](auto t) CONVLAB_INLINE { acc[kb][t] = O::zero(); });
    });
  }
  const int64_t dks = a.dd_kb_stride, ips = a.in_pix_stride;
  auto step = [&](const float* x, const float* d) CONVLAB_INLINE {
    vec dv[NKB];
    unroll<NKB>([&](auto kb) CONVLAB_INLINE { dv[kb] = O::load(d + kb * dks); });
    unroll<NT>([&](auto t) CONVLAB_INLINE {
      const vec b = O::bcast(x + t);
      unroll<NKB>([&](auto kb) CONVLAB_INLINE { acc[kb][t] = O::fma(b, dv[kb], acc[kb][t]); });
    });
  };
  if (a.pix_off) {  // one loop over the np*nq pixels: no loop exit per (short) row
    const int m_end = a.np * a.nq;
    for (int n = 0; n < a.nn; ++n) {
      const float* x = a.in + n * a.in_n_stride;
      const float* d = a.dd + n * a.dd_n_stride;
#pragma GCC unroll 4
      for (int m = 0; m < m_end; ++m, d += V) step(x + a.pix_off[m], d);
    }
  } else {
    for (int n = 0; n < a.nn; ++n)
      for (int p = 0; p < a.np; ++p) {
        const float* x = a.in + n * a.in_n_stride + p * a.in_row_stride;
        const float* d = a.dd + n * a.dd_n_stride + p * a.dd_row_stride;
        for (int q = 0; q < a.nq; ++q, x += ips, d += V) step(x, d);
      }
  }
  unroll<NKB>([&](auto kb) CONVLAB_INLINE {
    unroll<NT>([&](auto t) CONVLAB_INLINE { O::store(a.out + kb * a.out_kb_stride + t * V, acc[kb][t]); });
  });
}

template <class O, int NC, int NJ>
void pix_cj(const PixUkernelArgs& a) {
  using vec = typename O::vec;
  constexpr int V = O::V;
  vec acc[NC][NJ];
  unroll<NC>([&](auto c) CONVLAB_INLINE { unroll<NJ>([&](auto j) CONVLAB_INLINE { acc[c][j] = O::zero(); }); });
  // k outer, taps inner: the taps of one k touch a few nearby rows (cache-hot).
  for (int k = 0; k < a.nk; ++k) {
    const float* xk = a.in + k * a.in_k_stride;
    const float* wk = a.wei + k * NC;
    for (int t = 0; t < a.ntaps; ++t) {
      const float* x = xk + a.in_off[t];
      const float* w = wk + a.wei_off[t];
      vec xv[NJ];
      unroll<NJ>([&](auto j) CONVLAB_INLINE { xv[j] = O::load(x + j * V); });
      unroll<NC>([&](auto c) CONVLAB_INLINE {
        const vec b = O::bcast(w + c);
        unroll<NJ>([&](auto j) CONVLAB_INLINE { acc[c][j] = O::fma(b, xv[j], acc[c][j]); });
      });
    }
  }
  unroll<NC>([&](auto c) CONVLAB_INLINE {
    unroll<NJ>([&](auto j) CONVLAB_INLINE { O::store(a.out + c * a.out_c_stride + j * V, acc[c][j]); });
  });
}

#undef CONVLAB_INLINE

template <class O, int NC, int... J>
constexpr auto pix_row(std::integer_sequence<int, J...>) {
  using Fn = void (*)(const PixUkernelArgs&);
  return std::array<Fn, sizeof...(J)>{&pix_cj<O, NC, J + 1>...};
}

template <class O>
void pix_dispatch(const PixUkernelArgs& a) {
  using Fn = void (*)(const PixUkernelArgs&);
  using Seq = std::make_integer_sequence<int, kPixMaxJ>;
  static constexpr std::array<std::array<Fn, kPixMaxJ>, kPixMaxC> table = {
      pix_row<O, 1>(Seq{}), pix_row<O, 2>(Seq{}), pix_row<O, 3>(Seq{}), pix_row<O, 4>(Seq{})};
  assert(a.nc >= 1 && a.nc <= kPixMaxC && a.njv >= 1 && a.njv <= kPixMaxJ);
  table[a.nc - 1][a.njv - 1](a);
}

template <class O, int NKB, int... I>
void conv_dispatch(const ConvUkernelArgs& a, std::integer_sequence<int, I...>) {
  using Fn = void (*)(const ConvUkernelArgs&);
  static constexpr Fn table[2][sizeof...(I)] = {{&conv_nj<O, NKB, I + 1, false>...},
                                                 {&conv_nj<O, NKB, I + 1, true>...}};
  assert(a.nj >= 1 && a.nj <= int(sizeof...(I)));
  const bool dense = !a.pix_off && a.in_pix_stride == O::V;
  table[dense][a.nj - 1](a);
}

template <class O, int NKB, int... I>
void wgrad_dispatch(const WgradUkernelArgs& a, std::integer_sequence<int, I...>) {
  using Fn = void (*)(const WgradUkernelArgs&);
  static constexpr Fn table[] = {&wgrad_nt<O, NKB, I + 1>...};
  assert(a.nt >= 1 && a.nt <= int(sizeof...(I)));
  table[a.nt - 1](a);
}

// conv: MaxNJ / nkb pixels with nkb = 1, 2, 3 or 4 output blocks;
// wgrad: MaxNT taps with one k-block, MaxNT/2 with two.
template <class O, int MaxNJ, int MaxNT>
struct Table {
  static void conv(const ConvUkernelArgs& a) {
    switch (a.nkb) {
      case 1: conv_dispatch<O, 1>(a, std::make_integer_sequence<int, MaxNJ>{}); break;
      case 2: conv_dispatch<O, 2>(a, std::make_integer_sequence<int, MaxNJ / 2>{}); break;
      case 3: conv_dispatch<O, 3>(a, std::make_integer_sequence<int, MaxNJ / 3>{}); break;
      case 4: conv_dispatch<O, 4>(a, std::make_integer_sequence<int, MaxNJ / 4>{}); break;
      default: assert(false && "nkb must be 1, 2, 3 or 4");
    }
  }
  static void wgrad(const WgradUkernelArgs& a) {
    if (a.nkb == 2) {
      wgrad_dispatch<O, 2>(a, std::make_integer_sequence<int, MaxNT / 2>{});
    } else {
      assert(a.nkb == 1);
      wgrad_dispatch<O, 1>(a, std::make_integer_sequence<int, MaxNT>{});
    }
  }
  static void pix(const PixUkernelArgs& a) { pix_dispatch<O>(a); }
};

}  // namespace convlab::direct::detail
