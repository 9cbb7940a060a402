// copy_strided's dispatch and the scalar rows (row_copy.hpp).
#include "kernels/cpu/im2col/row_copy.hpp"

#include <cstring>

#include "core/device.hpp"

namespace convlab::cpu {

namespace {

using Stride2 = void (*)(const float*, int, float*);

void copy_stride2_scalar(const float* in, int n, float* out) {
  for (int i = 0; i < n; ++i) out[i] = in[2 * int64_t(i)];
}

Stride2 pick_stride2() {
  const std::string isa = cpu_info().isa();
  if (isa == "avx512") return copy_stride2_avx512;
  if (isa == "avx2") return copy_stride2_avx2;
  return copy_stride2_scalar;
}

}  // namespace

void copy_strided(const float* in, int stride, int n, float* out) {
  if (n <= 0) return;
  if (stride == 1) {
    std::memcpy(out, in, sizeof(float) * size_t(n));
  } else if (stride == 2) {
    static const Stride2 fn = pick_stride2();
    fn(in, n, out);
  } else {
    for (int i = 0; i < n; ++i) out[i] = in[int64_t(i) * stride];
  }
}

}  // namespace convlab::cpu
