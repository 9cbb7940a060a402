// Driver of LRN (kernels/cpu/layers/layers.hpp): the (sample, block of
// kLrnBlock pixels) tasks, each walking all channels of its block (lrn_impl.inc),
// split statically over threads: a thread's tasks are consecutive, so it
// streams each channel's rows forward. Every output is computed by exactly one
// task, the same way for any thread count.
#include <cassert>

#include "kernels/cpu/layers/layer_kernels.hpp"

namespace convlab::cpu {
namespace {

template <bool Backward>
void lrn_run(int n, int c, int64_t hw, const LrnParams& lp, const float* x, const float* dy, float* out, int threads) {
  assert(n >= 0 && c >= 0 && hw >= 0 && lp.size >= 1 && lp.size % 2 == 1 && lp.size < kLrnRing);
  const LayerKernels& k = select_layer_kernels();
  const int64_t blocks = (hw + kLrnBlock - 1) / kLrnBlock, tasks = int64_t(n) * blocks;
  const int nt = pass_threads(threads, int64_t(n) * c * hw * (Backward ? 12 : 8));
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t i = t / blocks, p0 = t % blocks * kLrnBlock;
    const int64_t off = i * c * hw + p0;  // (n, c, hw)
    LrnBlock b;
    b.x = x + off;
    b.dy = Backward ? dy + off : nullptr;
    b.y = out + off;
    b.hw = hw;
    b.c = c;
    b.len = int(std::min<int64_t>(kLrnBlock, hw - p0));
    b.half = lp.size / 2;
    b.alpha = lp.alpha;
    b.beta = lp.beta;
    b.k = lp.k;
    if constexpr (Backward) k.lrn_bwd_block(b);
    else k.lrn_fwd_block(b);
  }
}

}  // namespace

void lrn_fwd(int n, int c, int64_t hw, const LrnParams& lp, const float* x, float* y, int threads) {
  lrn_run<false>(n, c, hw, lp, x, nullptr, y, threads);
}

void lrn_bwd(int n, int c, int64_t hw, const LrnParams& lp, const float* x, const float* dy, float* dx, int threads) {
  lrn_run<true>(n, c, hw, lp, x, dy, dx, threads);
}

}  // namespace convlab::cpu
