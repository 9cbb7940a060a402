// AVX-512 Winograd kernels: the 16-lane transforms of transforms_impl.inc
// compiled for AVX-512 (one zmm per 16 tiles; patch rows by 8 x 8 transposes).
// They pack for sgemm_ukernel_12x32_avx512 (kernels/cpu/gemm), which runs the
// batched GEMM: B panels of NR = 32 tiles, A panels of MR = 12 channels.
// Single-threaded per call; the algorithm splits the work.
#include "kernels/cpu/winograd/transforms_impl.inc"

namespace convlab::cpu::winograd {

const Kernels& kernels_avx512() {
  static const Kernels k = {"avx512", input_transform, output_transform, dst_transform, filter_transform_block,
                            filter_grad_block, cpu::GemmIsa::avx512};
  return k;
}

}  // namespace convlab::cpu::winograd
