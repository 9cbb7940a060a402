// kernels/cpu/layers' bodies (*_impl.inc) for baseline x86-64 (SSE2) or any
// CPU, and the run-time choice among the three ISA tables.
#include "core/device.hpp"
#include "kernels/cpu/layers/eltwise_impl.inc"
#include "kernels/cpu/layers/lrn_impl.inc"
#include "kernels/cpu/layers/pool_softmax_impl.inc"

namespace convlab::cpu {

const LayerKernels& layer_kernels_portable() {
  static const LayerKernels k{"portable",       &relu_fwd_span, &relu_bwd_span, &bias_relu_row,
                              &bias_relu_bwd_row<>, &lrn_fwd_block, &lrn_bwd_block, &pool_fwd_plane,
                              &dropout_span_t<Mask16>, &sgd_span, &softmax_row};
  return k;
}

const LayerKernels* layer_kernels(std::string_view isa) {
  if (isa == "avx512") return &layer_kernels_avx512();
  if (isa == "avx2") return &layer_kernels_avx2();
  if (isa == "portable") return &layer_kernels_portable();
  return nullptr;
}

namespace {
const LayerKernels* g_override = nullptr;
}  // namespace

void override_layer_kernels(const LayerKernels* k) { g_override = k; }

const LayerKernels& select_layer_kernels() {
  if (g_override) return *g_override;
  const CpuInfo& ci = cpu_info();
  if (ci.isa() == "avx512") return layer_kernels_avx512();
  if (ci.avx2 && ci.fma) return layer_kernels_avx2();
  return layer_kernels_portable();
}

}  // namespace convlab::cpu
