// The FFT transforms, against FFTW: fft/{r2c,c2r}/<Lh>x<Lw>/{hand,fftw}, the hand-written batched 2-D
// transform (kernels/cpu/fft) vs FFTW (FFTW_MEASURE, guru split, 16 transforms per execute, the same
// layouts) on the transform sizes cpu.fft / cpu.fft_tiled pick for AlexNet's stride-1 layers, and FFTW in
// its own favourite layout (.../fftw_contig: plan_many over 16 contiguous images, interleaved complex).
// 1024 transforms per iteration, one thread; counter GFLOP (a rate: printed GFLOP=x/s) = 2.5 N log2 N per real transform
// (N = Lh*Lw); label: the ISA of the hand transform.
// Whole convolutions (cpu.fft, cpu.fft_tiled, cpu.fft_fftw beside oneDNN) are bench_conv's:
//   bench_conv --family=fft --benchmark_filter='alexnet.conv2/'
#include <benchmark/benchmark.h>
#include <fftw3.h>

#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "algorithms/cpu/fft.hpp"
#include "core/layers.hpp"
#include "core/tensor.hpp"
#include "kernels/cpu/fft/fft.hpp"

namespace convlab {
namespace {

constexpr int V = cpu::fft::kLanes;
constexpr int kBlocks = 64;  // x 16 lanes = 1024 transforms per iteration

// FFTW in its own favourite layout: 16 contiguous lh x lw images per
// execute (plan_many, interleaved complex output), no lane interleaving.
void BM_transform_fftw_contig(benchmark::State& state, int lh, int lw, bool inverse) {
  const int wc = lw / 2 + 1;
  const size_t frame_f = size_t(lh) * lw * V, spec_f = size_t(lh) * wc * 2 * V;
  AlignedBuffer<float> frames(frame_f * kBlocks), specs(spec_f * kBlocks);
  for (size_t i = 0; i < frames.size(); ++i) frames[i] = float(int(i % 17) - 8) * 0.125f;
  for (size_t i = 0; i < specs.size(); ++i) specs[i] = float(int(i % 13) - 6) * 0.125f;
  const int n[2] = {lh, lw};
  AlignedBuffer<float> tr(frame_f), ts(spec_f);
  auto* tc = reinterpret_cast<fftwf_complex*>(ts.data());
  fftwf_plan fp = inverse ? fftwf_plan_many_dft_c2r(2, n, V, tc, nullptr, 1, lh * wc, tr.data(), nullptr, 1, lh * lw,
                                                    FFTW_MEASURE)
                          : fftwf_plan_many_dft_r2c(2, n, V, tr.data(), nullptr, 1, lh * lw, tc, nullptr, 1, lh * wc,
                                                    FFTW_MEASURE);
  if (!fp) {
    state.SkipWithError("FFTW could not plan");
    return;
  }
  for (auto _ : state) {
    for (int b = 0; b < kBlocks; ++b) {
      float* fr = frames.data() + b * frame_f;
      auto* sp = reinterpret_cast<fftwf_complex*>(specs.data() + b * spec_f);
      if (inverse) fftwf_execute_dft_c2r(fp, sp, fr);
      else fftwf_execute_dft_r2c(fp, fr, sp);
    }
    benchmark::ClobberMemory();
  }
  fftwf_destroy_plan(fp);
  const double nn = double(lh) * lw;
  state.counters["GFLOP"] = benchmark::Counter(2.5 * nn * std::log2(nn) * kBlocks * V * 1e-9 *
                                                     double(state.iterations()),
                                                 benchmark::Counter::kIsRate);
}

void BM_transform(benchmark::State& state, int lh, int lw, bool inverse, bool use_fftw) {
  cpu::fft::Plan2D plan(lh, lw);
  const size_t frame_f = size_t(lh) * lw * V, spec_f = size_t(plan.frequencies()) * 2 * V;
  AlignedBuffer<float> frames(frame_f * kBlocks), specs(spec_f * kBlocks), scratch(plan.scratch_floats());
  for (size_t i = 0; i < frames.size(); ++i) frames[i] = float(int(i % 17) - 8) * 0.125f;
  for (size_t i = 0; i < specs.size(); ++i) specs[i] = float(int(i % 13) - 6) * 0.125f;
  fftwf_plan fp = nullptr;
  if (use_fftw) {
    const int wc = plan.wc;
    const fftwf_iodim fdims[2] = {{lh, lw * V, wc * 2 * V}, {lw, V, 2 * V}};
    const fftwf_iodim idims[2] = {{lh, wc * 2 * V, lw * V}, {lw, 2 * V, V}};
    const fftwf_iodim lanes = {V, 1, 1};
    AlignedBuffer<float> tr(frame_f), ts(spec_f);
    fp = inverse ? fftwf_plan_guru_split_dft_c2r(2, idims, 1, &lanes, ts.data(), ts.data() + V, tr.data(), FFTW_MEASURE)
                 : fftwf_plan_guru_split_dft_r2c(2, fdims, 1, &lanes, tr.data(), ts.data(), ts.data() + V, FFTW_MEASURE);
    if (!fp) {
      state.SkipWithError("FFTW could not plan");
      return;
    }
  }
  for (auto _ : state) {
    for (int b = 0; b < kBlocks; ++b) {
      float* fr = frames.data() + b * frame_f;
      float* sp = specs.data() + b * spec_f;
      if (use_fftw) {
        if (inverse) fftwf_execute_split_dft_c2r(fp, sp, sp + V, fr);
        else fftwf_execute_split_dft_r2c(fp, fr, sp, sp + V);
      } else {
        if (inverse) cpu::fft::c2r_2d(plan, sp, 2 * V, 0, lh, fr, scratch.data());
        else cpu::fft::r2c_2d(plan, fr, 0, lh, sp, 2 * V, scratch.data());
      }
    }
    benchmark::ClobberMemory();
  }
  if (fp) fftwf_destroy_plan(fp);
  const double n = double(lh) * lw;
  state.counters["GFLOP"] = benchmark::Counter(2.5 * n * std::log2(n) * kBlocks * V * 1e-9 *
                                                     double(state.iterations()),
                                                 benchmark::Counter::kIsRate);
  state.SetLabel(cpu::fft::isa_used());
}

void register_all() {
  // The transform sizes the FFT algorithms pick for AlexNet's stride-1 layers.
  std::set<std::pair<int, int>> sizes;
  for (auto& l : network_layers("alexnet", 32)) {
    if (l.problem.stride_h != 1) continue;
    for (Direction d : kAllDirections) {
      const FftGeometry w = whole_image_geometry(l.problem, d), t = tiled_geometry(l.problem, d);
      sizes.insert({w.h.t, w.w.t});
      sizes.insert({t.h.t, t.w.t});
    }
  }
  for (auto [lh, lw] : sizes)
    for (bool inv : {false, true})
      for (bool fw : {false, true}) {
        const std::string name = std::string("fft/") + (inv ? "c2r/" : "r2c/") + std::to_string(lh) + "x" +
                                 std::to_string(lw) + (fw ? "/fftw" : "/hand");
        benchmark::RegisterBenchmark(name.c_str(), BM_transform, lh, lw, inv, fw)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
        if (fw)
          benchmark::RegisterBenchmark((name + "_contig").c_str(), BM_transform_fftw_contig, lh, lw, inv)
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
      }
}

}  // namespace
}  // namespace convlab

int main(int argc, char** argv) {
  convlab::register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
