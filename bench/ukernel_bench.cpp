// bench_ukernel: each family's innermost arithmetic kernel alone, on cache-resident data, as a fraction of
// the machine's measured FMA peak for one thread (core/peak.hpp) -- the ceiling the family's whole
// convolution can approach (bench_conv --stages shows how close each stage of it gets).
//   ukernel/sgemm/<name>         the SGEMM micro-kernel of each ISA this CPU allows (the GEMM of
//                                cpu.im2col_gemm and cpu.winograd_*): kc = 256, packed A and B panels in L1/L2,
//                                C (MR x NR) accumulated, 2 MR NR kc flops per call
//   ukernel/fft_cgemm/<isa>      the FFT's per-frequency complex GEMM (kernels/cpu/fft cgemm), 48 x 48
//                                complex reduction over 2 x 16 lanes, 8 flops per complex multiply-add
//   ukernel/fft_r2c/32x32/<isa>  one 16-lane 32 x 32 real 2-D transform, 2.5 N log2 N flops per signal
//   ukernel/winograd_input/F4/<isa>/pitch_4k|pitch_odd
//                                the F(4x4, 3x3) input transform over a 64-channel 32 x 32 image (in L2), 16
//                                tiles x 16 channels a call, into the forward GEMM's B panels; the transformed
//                                elements' slices 8 KiB apart (pitch_4k) or an odd number of lines apart (the
//                                algorithm's layout). Counter: ns per tile and channel (no flop rate: the
//                                transform's arithmetic is a small share of its instructions).
// One thread. Rates over the thread's CPU time, the peak's too (not the wall clock: a shared core's lost
// time is not the kernel's). Counters: GFLOP/s and %peak (of the one-thread peak of the ISA in use; the sgemm entries of a
// narrower ISA are measured against the same, wider, peak: the gap is what the narrower ISA costs here).
// The FFT entries run the ISA cpu_info() picks (CONVLAB_ISA caps it).
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/device.hpp"
#include "core/peak.hpp"
#include "core/tensor.hpp"
#include "core/timing.hpp"
#include "kernels/cpu/fft/fft.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"
#include "kernels/cpu/winograd/winograd_kernels.hpp"

namespace convlab {
namespace {

double g_peak = 0;  // one thread, the ISA in use

double thread_seconds() { return thread_cpu_seconds(); }

// Rates over the thread's CPU time of the whole timed loop (t0 taken just before it).
void set_rate(benchmark::State& state, double flops_per_iter, double t0) {
  const double t = thread_seconds() - t0, it = double(state.iterations());
  if (t <= 0) return;
  const double gflops = flops_per_iter * it / t * 1e-9;
  state.counters["GFLOP/s"] = gflops;
  if (g_peak > 0) state.counters["%peak"] = 100 * gflops / g_peak;
}

void BM_sgemm_ukernel(benchmark::State& state, cpu::GemmIsa isa) {
  const cpu::SgemmUkernel& uk = cpu::sgemm_ukernel(isa);
  constexpr int kc = 256, panels = 8;  // 8 B panels: A (kc x MR) in L1, B panels from L2, as the GEMM loops run
  AlignedBuffer<float> a(size_t(kc) * uk.mr), b(size_t(kc) * uk.nr * panels), c(size_t(uk.mr) * uk.nr * panels);
  fill_uniform(a.data(), a.size(), 1);
  fill_uniform(b.data(), b.size(), 2);
  fill_uniform(c.data(), c.size(), 3);
  const double t0 = thread_seconds();
  for (auto _ : state) {
    for (int j = 0; j < panels; ++j)
      uk.fn(kc, a.data(), b.data() + size_t(j) * kc * uk.nr, c.data() + size_t(j) * uk.mr * uk.nr, uk.nr, 1.0f, 1.0f,
            uk.mr, uk.nr, nullptr);
    benchmark::ClobberMemory();
  }
  set_rate(state, 2.0 * uk.mr * uk.nr * kc * panels, t0);
  state.SetLabel(uk.name);
}

void BM_fft_cgemm(benchmark::State& state) {
  constexpr int m = 48, nb = 2, l = 48;  // rows, 16-lane column blocks, reduction
  AlignedBuffer<float> a(size_t(m) * l * 2 * cpu::fft::kLanes), packed(cpu::fft::packed_a_floats(m, l)),
      b(size_t(l) * nb * 2 * cpu::fft::kLanes), c(size_t(m) * nb * 2 * cpu::fft::kLanes);
  fill_uniform(a.data(), a.size(), 4);
  fill_uniform(b.data(), b.size(), 5);
  const ptrdiff_t e = 2 * cpu::fft::kLanes;  // A as (m/16, l/16, ...) blocks is not needed: element (i, j) at (i*l + j)*e
  cpu::fft::pack_a(m, l, a.data(), 16 * l * e, l * e, 16 * e, e, false, packed.data());
  const double t0 = thread_seconds();
  for (auto _ : state) {
    cpu::fft::cgemm(m, nb, l, packed.data(), b.data(), nb * e, c.data(), nb * e, false);
    benchmark::ClobberMemory();
  }
  set_rate(state, 8.0 * m * nb * cpu::fft::kLanes * l, t0);
  state.SetLabel(cpu::fft::isa_used());
}

void BM_fft_r2c(benchmark::State& state) {
  const cpu::fft::Plan2D plan(32, 32);
  AlignedBuffer<float> frame(size_t(32) * 32 * cpu::fft::kLanes), out(size_t(plan.frequencies()) * 2 * cpu::fft::kLanes),
      scratch(plan.scratch_floats());
  fill_uniform(frame.data(), frame.size(), 6);
  const double t0 = thread_seconds();
  for (auto _ : state) {
    cpu::fft::r2c_2d(plan, frame.data(), 0, 32, out.data(), 2 * cpu::fft::kLanes, scratch.data());
    benchmark::ClobberMemory();
  }
  const double n = 32.0 * 32;
  set_rate(state, 2.5 * n * std::log2(n) * cpu::fft::kLanes, t0);
  state.SetLabel(cpu::fft::isa_used());
}

void BM_winograd_input(benchmark::State& state, bool odd_pitch) {
  namespace wg = cpu::winograd;
  constexpr int m = 4, C = 64, H = 32, W = 32, nr = 32;
  const wg::Kernels& kn = wg::best_kernels();
  AlignedBuffer<float> x(size_t(C) * H * W);
  fill_uniform(x.data(), x.size(), 7);
  const wg::TiledImage img{x.data(), nullptr, int64_t(C) * H * W, C, H, W, 1, 1,
                           wg::tiles_1d(H, m), wg::tiles_1d(W, m), int64_t(wg::tiles_1d(H, m)) * wg::tiles_1d(W, m)};
  const int tiles = int(img.tiles_total);
  const int64_t slice = int64_t(tiles) * C, pitch = odd_pitch ? slice + 16 : slice;  // slice: 64 x 64 floats
  AlignedBuffer<float> v(size_t(36) * pitch);
  const wg::PackLayout lay{pitch, 1, nr, 0, nr, int64_t(C) * nr, 1};
  const double t0 = thread_seconds();
  for (auto _ : state) {
    for (int t = 0; t < tiles; t += 16)
      for (int c = 0; c < C; c += 16) kn.input_transform(m, img, 0, t, c, c + 16, v.data(), lay);
    benchmark::ClobberMemory();
  }
  const double t = thread_seconds() - t0;
  if (t > 0) state.counters["ns/tile/channel"] = t * 1e9 / (double(state.iterations()) * tiles * C);
  state.SetLabel(kn.isa);
}

}  // namespace
}  // namespace convlab

int main(int argc, char** argv) {
  using namespace convlab;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  const PeakResult pk = measure_fma_peak(1, 0.2, /*thread_cpu_time=*/true);
  g_peak = pk.gflops;
  benchmark::AddCustomContext("convlab_cpu", cpu_info().model + " (" + cpu_info().isa() + ")");
  benchmark::AddCustomContext("convlab_peak_1thread_gflops", std::to_string(pk.gflops));
  const std::string isa = cpu_info().isa();
  std::vector<std::pair<std::string, cpu::GemmIsa>> isas;
  if (isa == "avx512") isas.push_back({"avx512", cpu::GemmIsa::avx512});
  if (isa == "avx512" || isa == "avx2") isas.push_back({"avx2", cpu::GemmIsa::avx2});
  isas.push_back({"portable", cpu::GemmIsa::portable});
  for (const auto& [name, gi] : isas)
    benchmark::RegisterBenchmark(("ukernel/sgemm/" + name).c_str(), BM_sgemm_ukernel, gi);
  benchmark::RegisterBenchmark(("ukernel/fft_cgemm/" + isa).c_str(), BM_fft_cgemm);
  benchmark::RegisterBenchmark(("ukernel/fft_r2c/32x32/" + isa).c_str(), BM_fft_r2c);
  for (bool odd : {false, true})
    benchmark::RegisterBenchmark(("ukernel/winograd_input/F4/" + isa + (odd ? "/pitch_odd" : "/pitch_4k")).c_str(),
                                 BM_winograd_input, odd);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
