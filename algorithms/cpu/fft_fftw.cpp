// The FFTW transform engine for cpu.fft_fftw: the same 16-lane layouts as the
// hand-written FFT (kernels/cpu/fft/fft.hpp), done by FFTW's guru split-complex
// interface (16 transforms per plan execution, howmany = 16 with lane stride 1).
//
// Plans: FFTW_MEASURE, one r2c + one c2r per (lh, lw), cached for the process.
// Plan creation is not thread-safe in FFTW: prepare() holds a mutex and is
// called outside the parallel regions; fftwf_execute_split_dft_* on an existing
// plan with new arrays is thread-safe. The spectrum goes through a contiguous
// per-thread scratch (so plans do not depend on the problem's frequency
// stride), then is copied to / from the frequency-major workspace. FFTW has no
// row pruning: all rows are transformed.
#include <fftw3.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "algorithms/cpu/fft.hpp"
#include "core/error.hpp"
#include "kernels/cpu/fft/fft.hpp"

namespace convlab {

namespace {

constexpr int V = cpu::fft::kLanes;

struct FftwPlans {
  int lh, lw, wc;
  fftwf_plan fwd = nullptr, inv = nullptr;
};

class FftwEngine final : public FftEngine {
 public:
  size_t scratch_floats(int lh, int lw) const override { return size_t(lh) * (lw / 2 + 1) * 2 * V; }
  bool prunes_rows() const override { return false; }

  const void* prepare(int lh, int lw) const override {
    std::lock_guard lock(mu_);
    auto& slot = plans_[{lh, lw}];
    if (slot) return slot.get();
    auto pl = std::make_unique<FftwPlans>();
    pl->lh = lh;
    pl->lw = lw;
    pl->wc = lw / 2 + 1;
    const int wc = pl->wc;
    float* real = fftwf_alloc_real(size_t(lh) * lw * V);
    float* spec = fftwf_alloc_real(size_t(lh) * wc * 2 * V);
    if (!real || !spec) fail("FFTW: out of memory planning " + std::to_string(lh) + "x" + std::to_string(lw));
    // Real frame (lh, lw, 16); spectrum (lh, wc, re|im, 16).
    const fftwf_iodim fdims[2] = {{lh, lw * V, wc * 2 * V}, {lw, V, 2 * V}};
    const fftwf_iodim idims[2] = {{lh, wc * 2 * V, lw * V}, {lw, 2 * V, V}};
    const fftwf_iodim lanes = {V, 1, 1};
    pl->fwd = fftwf_plan_guru_split_dft_r2c(2, fdims, 1, &lanes, real, spec, spec + V, FFTW_MEASURE);
    pl->inv = fftwf_plan_guru_split_dft_c2r(2, idims, 1, &lanes, spec, spec + V, real, FFTW_MEASURE);
    fftwf_free(real);
    fftwf_free(spec);
    if (!pl->fwd || !pl->inv) fail("FFTW could not plan a " + std::to_string(lh) + "x" + std::to_string(lw) + " transform");
    slot = std::move(pl);
    return slot.get();
  }

  void forward(const void* plan, const float* frame, int rb, int re, float* out, std::ptrdiff_t fstride,
               float* scratch) const override {
    (void)rb;
    (void)re;
    const auto* pl = static_cast<const FftwPlans*>(plan);
    fftwf_execute_split_dft_r2c(pl->fwd, const_cast<float*>(frame), scratch, scratch + V);
    const int64_t freqs = int64_t(pl->lh) * pl->wc;
    for (int64_t f = 0; f < freqs; ++f) std::memcpy(out + f * fstride, scratch + f * 2 * V, sizeof(float) * 2 * V);
  }

  void inverse(const void* plan, const float* in, std::ptrdiff_t fstride, int rb, int re, float* frame,
               float* scratch) const override {
    (void)rb;
    (void)re;
    const auto* pl = static_cast<const FftwPlans*>(plan);
    const int64_t freqs = int64_t(pl->lh) * pl->wc;
    for (int64_t f = 0; f < freqs; ++f) std::memcpy(scratch + f * 2 * V, in + f * fstride, sizeof(float) * 2 * V);
    fftwf_execute_split_dft_c2r(pl->inv, scratch, scratch + V, frame);
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<std::pair<int, int>, std::unique_ptr<FftwPlans>> plans_;
};

}  // namespace

const FftEngine& fftw_engine() {
  static const FftwEngine e;
  return e;
}

}  // namespace convlab
