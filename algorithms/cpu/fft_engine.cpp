// The hand-written FFT engine of cpu.fft and cpu.fft_tiled (kernels/cpu/fft): one
// Plan2D per transform size, made on first use and kept.
#include <map>
#include <memory>
#include <mutex>

#include "algorithms/cpu/fft.hpp"
#include "kernels/cpu/fft/fft.hpp"

namespace convlab {

namespace {

class HandEngine final : public FftEngine {
 public:
  size_t scratch_floats(int lh, int lw) const override { return cpu::fft::Plan2D(lh, lw).scratch_floats(); }
  bool prunes_rows() const override { return true; }
  const void* prepare(int lh, int lw) const override {
    std::lock_guard lock(mu_);
    auto& slot = plans_[{lh, lw}];
    if (!slot) slot = std::make_unique<cpu::fft::Plan2D>(lh, lw);
    return slot.get();
  }
  void forward(const void* plan, const float* frame, int rb, int re, float* out, ptrdiff_t fstride,
               float* scratch) const override {
    cpu::fft::r2c_2d(*static_cast<const cpu::fft::Plan2D*>(plan), frame, rb, re, out, fstride, scratch);
  }
  void inverse(const void* plan, const float* in, ptrdiff_t fstride, int rb, int re, float* frame,
               float* scratch) const override {
    cpu::fft::c2r_2d(*static_cast<const cpu::fft::Plan2D*>(plan), in, fstride, rb, re, frame, scratch);
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<std::pair<int, int>, std::unique_ptr<cpu::fft::Plan2D>> plans_;
};

}  // namespace

const FftEngine& hand_fft_engine() {
  static const HandEngine e;
  return e;
}

}  // namespace convlab
