// Portable (baseline x86-64 / any CPU) Winograd kernels: the transforms of
// transforms_impl.inc, packing for sgemm_ukernel_4x16_portable (kernels/cpu/gemm),
// plus run-time selection of the widest kernel table this CPU runs.
#include "core/device.hpp"
#include "kernels/cpu/winograd/transforms_impl.inc"

namespace convlab::cpu::winograd {

const Kernels& kernels_portable() {
  static const Kernels k = {"portable", input_transform, output_transform, dst_transform, filter_transform_block,
                            filter_grad_block, cpu::GemmIsa::portable};
  return k;
}

const Kernels& best_kernels() {
  const CpuInfo& ci = cpu_info();
  if (ci.isa() == "avx512") return kernels_avx512();  // compiled with F/VL/BW/DQ: F alone is not enough
  if (ci.avx2 && ci.fma) return kernels_avx2();
  return kernels_portable();
}

}  // namespace convlab::cpu::winograd
