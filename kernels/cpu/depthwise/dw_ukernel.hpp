// Depthwise-convolution micro-kernels over a channel-blocked layout (V channels
// of one image innermost, "nChw8c" / "nChw16c"), one table per ISA: the
// algorithm (algorithms/cpu/direct_depthwise.cpp) walks the loops and never
// names an ISA. Every lane is a channel with its own filter, so no value is
// broadcast: each FMA takes one input vector and one weight vector.
//
// row   : out[j*out_stride + (0..V)] = sum_{t < ntaps}
//             in[in_off[t] + j*in_stride + (0..V)] * wei[wei_off[t] + (0..V)]
//         for j < nj output pixels (one output row, or one stride phase of a
//         backward-data row). With ntaps == 9 (3x3) the taps' weights stay in
//         registers for the whole row; the pixels run in register tiles of
//         row_nj (a row's last pixels in one tile overlapping the one before,
//         so out must not alias in). Serves forward (in = blocked padded src, taps = (r, s)) and
//         backward-data (in = blocked diff_dst with zero margins, taps = the
//         (r, s) that reach this row and column phase).
// wgrad : acc[t*V + (0..V)] (+)= sum_{p < np} sum_{q < nq}
//             in[p*in_row_stride + q*in_pix_stride + in_off[t] + (0..V)]
//           * dd[p*dd_row_stride + q*V + (0..V)]
//         for t < nt <= max_nt taps, all accumulators in registers.
// plane / plane_wgrad: the plain layout itself, pixels in the lanes, for a "same"
// stride-1 convolution (output plane = input plane, H x W = npix pixels). Chunk k
// is pixels [kV, kV + V) of a plane read flat; tap t reads the input at pixel
// i + off[t] where mask bit l of (t, k) is set (i = kV + l inside the image and
// its tap's pixel too), zero elsewhere; the last chunk's lanes past npix are
// `tail`'s clear bits.
// plane       : out_j[i] = sum_t wei_c[t] * in_j[i + off[t]] for planes j < planes,
//               channel c = (c0 + j) mod cycle (planes NCHW-consecutive: a
//               plane's channel follows the one before, wrapping per image).
// plane_wgrad : acc_c[t] = sum_n sum_i in_{c,n}[i + off[t]] * dd_{c,n}[i] for
//               channels c < channels, images n < images, t < nt <= max_nt:
//               out[c*out_stride + t] (+)= the lanes of acc_c[t] summed. The
//               planes of in and dd may lie apart differently (in_* / dd_*
//               strides; an in_chan_stride of 0 reads one input for every c).
//               dense: no masks but the tail's, one input for every c (read once for
//               each pair of channels).
// Both read only the lanes their masks allow, write nothing past npix.
// Summation order is fixed by the arguments (deterministic). Threads: none
// inside; the caller gives each thread disjoint outputs.
// Assumes pointers valid for every index above; in_stride, in_pix_stride and
// out_stride in floats.
#pragma once
#include <cstdint>

namespace convlab::cpu::depthwise {

struct DwRowArgs {
  const float* in;
  const float* wei;
  float* out;
  const int64_t* in_off;   // (ntaps)
  const int64_t* wei_off;  // (ntaps)
  int ntaps;
  int nj;
  int64_t in_stride, out_stride;
};

struct DwWgradArgs {
  const float* in;
  const float* dd;
  float* acc;              // (nt, V)
  const int64_t* in_off;   // (nt)
  int nt;
  int np, nq;
  int64_t in_row_stride, in_pix_stride, dd_row_stride;
  bool accumulate;
};

struct DwPlaneArgs {
  const float* in;
  float* out;
  const float* wei;       // (cycle, wei_stride): tap t of channel c at c*wei_stride + t
  int64_t in_plane, out_plane;
  int planes, c0, cycle, wei_stride;
  const int64_t* off;     // (ntaps)
  const uint32_t* mask;   // (ntaps, nchunks)
  uint32_t tail;
  int ntaps, nchunks;
};

struct DwPlaneWgradArgs {
  const float* in;
  const float* dd;
  float* out;
  int64_t in_chan_stride, dd_chan_stride;    // between channels' planes
  int64_t in_image_stride, dd_image_stride;  // between images'
  int channels, images, out_stride;
  bool accumulate;  // out += the sums (else out = them)
  bool dense;       // every lane of every chunk but the last one's tail (no mask table); in_chan_stride 0
  const int64_t* off;     // (nt)
  const uint32_t* mask;   // (nt, nchunks)
  uint32_t tail;
  int nt, nchunks;
};

// Most (tap, chunk) masks one plane call takes.
constexpr int kPlaneMaxMasks = 1024;

struct DwUkernels {
  const char* isa;
  int v;       // vector width in floats: the channel block
  int max_nt;  // wgrad: most taps per call
  void (*row)(const DwRowArgs&);
  void (*wgrad)(const DwWgradArgs&);
  void (*plane)(const DwPlaneArgs&);
  void (*plane_wgrad)(const DwPlaneWgradArgs&);  // nt <= max_nt
};

const DwUkernels& dw_ukernels_avx512();
const DwUkernels& dw_ukernels_avx2();
const DwUkernels& dw_ukernels_portable();
// The widest table this CPU runs (cpu_info(), under the CONVLAB_ISA cap), or the override below.
const DwUkernels& select_dw_ukernels();
// Tests only: make select_dw_ukernels() return `uk` (nullptr: back to the CPU's
// choice), to run the whole algorithm on the narrower ISAs. Not thread-safe.
void override_dw_ukernels(const DwUkernels* uk);

}  // namespace convlab::cpu::depthwise
