// The filter taps that reach one input coordinate in the transposed (gather)
// form of a strided convolution, for the backward-data kernels of both devices.
//
// Along one axis (stride, leading pad, dilation, `taps` filter taps), input
// coordinate x is read by output o through tap t when o*stride - pad + t*dil = x,
// i.e. when (x + pad - t*dil) is divisible by stride. Those taps are
//   t = first, first + step, first + 2*step, ...   step = stride / gcd(stride, dil)
// and the j-th reaches output out - j*out_step       out_step = dil / gcd(stride, dil)
// so a kernel walks them with no divisibility test per tap. Every x with the
// same x mod stride (its phase) has the same taps; its outputs shift by one per
// stride of x. constexpr: device code calls it (--expt-relaxed-constexpr).
#pragma once

namespace convlab {

struct StridedTaps {
  int first;     // first tap (any value when count == 0)
  int count;     // how many
  int step;      // tap step
  int out;       // output coordinate the first one reaches
  int out_step;  // output step per tap (downwards)
};

constexpr int gcd_int(int a, int b) {
  while (b != 0) {
    const int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Every tap that reaches x, whatever output it lands on (out may be < 0 or past
// the last output). The search for `first` runs over at most `step` candidates.
constexpr StridedTaps strided_taps(int x, int pad, int stride, int dil, int taps) {
  const int g = gcd_int(stride, dil);
  StridedTaps t{0, 0, stride / g, 0, dil / g};
  for (int r = 0; r < t.step && r < taps; ++r)
    if ((x + pad - r * dil) % stride == 0) {  // exact division below, either sign
      t.first = r;
      t.count = (taps - 1 - r) / t.step + 1;
      t.out = (x + pad - r * dil) / stride;
      return t;
    }
  return t;
}

// The taps of t whose output lies in [0, outs).
constexpr StridedTaps clamp_taps(StridedTaps t, int outs) {
  if (t.count == 0) return t;
  // j-th output: t.out - j*out_step; need 0 <= it < outs.
  const int over = t.out - (outs - 1);  // outputs past the last to skip, in output units
  const int j_lo = over > 0 ? (over + t.out_step - 1) / t.out_step : 0;
  const int j_hi = t.out < 0 ? -1 : t.out / t.out_step;  // last j with output >= 0
  const int hi = j_hi < t.count - 1 ? j_hi : t.count - 1;
  t.first += j_lo * t.step;
  t.out -= j_lo * t.out_step;
  t.count = hi >= j_lo ? hi - j_lo + 1 : 0;
  return t;
}

}  // namespace convlab
