// AVX2 + FMA Winograd kernels: the 16-lane transforms of transforms_impl.inc
// compiled for AVX2 (two ymm per 16 tiles). They pack for
// sgemm_ukernel_6x16_avx2 (kernels/cpu/gemm), which runs the batched GEMM:
// B panels of NR = 16 tiles, A panels of MR = 6 channels, 12 ymm accumulators.
// Single-threaded per call; the algorithm splits the work.
#include "kernels/cpu/winograd/transforms_impl.inc"

namespace convlab::cpu::winograd {

const Kernels& kernels_avx2() {
  static const Kernels k = {"avx2", input_transform, output_transform, dst_transform, filter_transform_block,
                            filter_grad_block, cpu::GemmIsa::avx2};
  return k;
}

}  // namespace convlab::cpu::winograd
