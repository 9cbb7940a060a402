// The machine probe (autotune/probe.hpp): kernel rates, then whole-algorithm
// rates on the two probe problems, each a best of a few repetitions.
#include "autotune/probe.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>

#include "algorithms/cpu/fft.hpp"
#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "autotune/cache.hpp"
#include "core/error.hpp"
#include "core/peak.hpp"
#include "core/tensor.hpp"
#include "core/timing.hpp"
#include "kernels/cpu/fft/fft.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"
#include "kernels/cpu/im2col/im2col.hpp"
#include "kernels/cpu/winograd/winograd_kernels.hpp"

namespace convlab {

double MachineProbe::rate(std::string_view name) const {
  auto it = rates.find(std::string(name));
  return it == rates.end() ? 0 : it->second;
}

const std::vector<std::string>& probe_required_rates() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {"fma_gflops", "copy_gbs", "dram_gbs", "copy1_gbs", "dram1_gbs", "ukernel_gflops",
                                  "im2col_gbs", "col2im_gbs",
                                  "cgemm_gflops"};
    for (int m : {2, 4, 6})
      for (const char* t : {"in", "out", "dst"}) v.push_back("wino" + std::to_string(m) + "_" + t + "_gtps");
    for (const char* d : {"fwd", "inv"})
      for (int l : {16, 32}) v.push_back(std::string("fft_") + d + "_" + std::to_string(l) + "_us");
    return v;
  }();
  return names;
}

namespace {

// A kernel's rate with all threads running it at once, each on its own data
// and timing itself: body(t, reps) runs `reps` repetitions of thread t's work
// of `units` units. The sum over threads of units * reps / (the thread's best
// of `samples` timed calls). Self-timed, so a thread that the OS starts late
// (another process on the core) does not stretch the others' time, as it
// would a parallel region's.
double per_thread_rate(int threads, const std::function<void(int, int)>& body, double units, double target,
                       int samples = 4) {
  int reps = 1;
  for (;;) {  // repetitions for about `target` seconds per call, on one thread
    const double t0 = now_seconds();
    body(0, reps);
    const double dt = now_seconds() - t0;
    if (dt >= target / 4 || reps >= (1 << 20)) {
      reps = std::max(1, int(reps * target / std::max(dt, 1e-7)));
      break;
    }
    reps *= 4;
  }
  std::vector<double> best(size_t(threads), 0.0);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    double b = 1e300;
    for (int s = 0; s < samples; ++s) {
#pragma omp barrier
      const double t0 = now_seconds();
      body(t, reps);
      b = std::min(b, now_seconds() - t0);
    }
    best[size_t(t)] = units * reps / b;
  }
  double sum = 0;
  for (double r : best) sum += r;
  return sum;
}

void fill(float* x, size_t n, float seed) {
  for (size_t i = 0; i < n; ++i) x[i] = float((i * 2654435761u + size_t(seed * 1000)) % 1000) * 1e-3f - 0.5f;
}

// Each thread copies its own `mib / threads` MiB: read + written bytes / s.
double copy_gbs(int threads, size_t mib, double target, int samples) {
  const size_t n = (mib << 18) / size_t(threads);
  AlignedBuffer<float> a(n * size_t(threads)), b(n * size_t(threads));
  fill(a.data(), a.size(), 1);
  std::memset(b.data(), 0, b.size() * sizeof(float));
  return per_thread_rate(
             threads,
             [&](int t, int reps) {
               for (int r = 0; r < reps; ++r)
                 std::memcpy(b.data() + size_t(t) * n, a.data() + size_t(t) * n, n * sizeof(float));
             },
             2.0 * double(n) * sizeof(float), target, samples) *
         1e-9;
}

// The sgemm micro-kernel the way the Winograd GEMM drives it: one L1-resident
// KC x NR B panel against a run of MR-row A panels (L2), C tiles += A * B.
double ukernel_gflops(int threads) {
  const cpu::SgemmUkernel& uk = cpu::sgemm_ukernel(cpu::sgemm_resolve_isa(cpu::GemmIsa::auto_));
  const int kc = std::max(16, 4096 / uk.nr), blocks = std::max(1, 256 / uk.mr);
  const size_t a_floats = size_t(blocks) * kc * uk.mr, b_floats = size_t(kc) * uk.nr, c_floats = size_t(blocks) * uk.mr * uk.nr;
  const size_t per_thread = (a_floats + b_floats + c_floats + 48) / 16 * 16;
  AlignedBuffer<float> buf(per_thread * size_t(threads));
  fill(buf.data(), buf.size(), 2);
  auto body = [&](int t, int reps) {
    float* a = buf.data() + size_t(t) * per_thread;
    float* b = a + (a_floats + 15) / 16 * 16;
    float* c = b + (b_floats + 15) / 16 * 16;
    for (int r = 0; r < reps; ++r)
      for (int kb = 0; kb < blocks; ++kb)
        uk.fn(kc, a + size_t(kb) * kc * uk.mr, b, c + size_t(kb) * uk.mr * uk.nr, uk.nr, 1.0f, r ? 1.0f : 0.0f, uk.mr,
              uk.nr, nullptr);
  };
  return per_thread_rate(threads, body, 2.0 * uk.mr * uk.nr * double(kc) * blocks, 0.004) * 1e-9;
}

// im2col and col2im of one image of the 3x3 probe problem per thread: column bytes / s.
void im2col_rates(int threads, MachineProbe& out) {
  const ConvProblem p = probe_problem_3x3().with_batch(1);
  const ConvShape sh = to_shape(p);
  const int64_t L = int64_t(p.p()) * p.q(), crs = int64_t(p.c) * p.r * p.s;
  const size_t src_n = size_t(p.c) * p.h * p.w, col_n = size_t(crs * L);
  AlignedBuffer<float> src(src_n * size_t(threads)), col(col_n * size_t(threads));
  fill(src.data(), src.size(), 3);
  fill(col.data(), col.size(), 3);
  const double bytes = double(col_n) * sizeof(float);
  out.rates["im2col_gbs"] = per_thread_rate(
                                threads,
                                [&](int t, int reps) {
                                  for (int r = 0; r < reps; ++r)
                                    cpu::im2col(sh, 1, 0, src.data() + size_t(t) * src_n, col.data() + size_t(t) * col_n, L, 1);
                                },
                                bytes, 0.003) *
                            1e-9;
  out.rates["col2im_gbs"] = per_thread_rate(
                                threads,
                                [&](int t, int reps) {
                                  for (int r = 0; r < reps; ++r)
                                    cpu::col2im(sh, 1, 0, col.data() + size_t(t) * col_n, L, src.data() + size_t(t) * src_n, 1);
                                },
                                bytes, 0.003) *
                            1e-9;
}

// The Winograd tile transforms of F(m x m, 3 x 3) on the 3x3 probe problem's
// shapes, in the packed layouts algorithms/cpu/winograd.cpp writes and reads;
// each thread transforms every tile into its own buffers.
void winograd_rates(int threads, MachineProbe& out) {
  namespace wg = cpu::winograd;
  const wg::Kernels& kn = wg::best_kernels();
  const wg::GemmTile tile = wg::gemm_tile(kn);
  const ConvProblem& p = probe_problem_3x3();
  const int MR = tile.mr, NR = tile.nr, C = p.c, K = p.k;
  const size_t x_n = size_t(p.n) * C * p.h * p.w, y_n = size_t(p.n) * K * p.p() * p.q();
  AlignedBuffer<float> x(x_n), y(y_n * size_t(threads));
  fill(x.data(), x.size(), 4);
  fill(y.data(), y.size(), 5);
  for (int m : {2, 4, 6}) {
    const int a2 = (m + 2) * (m + 2);
    const int th = wg::tiles_1d(p.p(), m), tw = wg::tiles_1d(p.q(), m);
    const int64_t total = int64_t(p.n) * th * tw;
    const int tc = int(wg::round_up(total, NR)), np = tc / NR, kp = int(wg::round_up(K, MR));
    const int groups = int(wg::ceil_div(int(total), wg::kLanes));
    const wg::TiledImage xi{x.data(), x.data(), int64_t(C) * p.h * p.w, C, p.h, p.w, p.pad_h, p.pad_w, th, tw, total};
    auto yi = [&](int t) {
      float* yt = y.data() + size_t(t) * y_n;
      return wg::TiledImage{yt, yt, int64_t(K) * p.p() * p.q(), K, p.p(), p.q(), 0, 0, th, tw, total};
    };
    const size_t v_n = (size_t(a2) * tc * std::max(C, kp) + 63) / 16 * 16;
    AlignedBuffer<float> v(v_n * size_t(threads)), mb(size_t(a2) * tc * kp + 64);
    fill(mb.data(), mb.size(), 6);
    const wg::PackLayout vlay{int64_t(np) * C * NR, 1, NR, 0, NR, int64_t(C) * NR, 1};
    const wg::PackLayout mlay{int64_t(np) * kp * NR, 1, NR, 0, NR, int64_t(kp) * NR, 1};
    const wg::PackLayout wlay{int64_t(kp / MR) * tc * MR, MR, int64_t(tc) * MR, 1, 1, MR, 0};
    const int cblocks = wg::ceil_div(C, 16), kblocks = wg::ceil_div(K, 16), kpblocks = wg::ceil_div(kp, 16);
    const int gin = np * (NR / wg::kLanes);
    auto in = [&](int t, int reps) {
      for (int r = 0; r < reps; ++r)
        for (int tg = 0; tg < gin; ++tg)
          for (int cb = 0; cb < cblocks; ++cb)
            kn.input_transform(m, xi, 0, tg * wg::kLanes, cb * 16, std::min(C, (cb + 1) * 16), v.data() + size_t(t) * v_n,
                               vlay);
    };
    auto outp = [&](int t, int reps) {
      const wg::TiledImage img = yi(t);
      for (int r = 0; r < reps; ++r)
        for (int tg = 0; tg < groups; ++tg)
          for (int kb = 0; kb < kblocks; ++kb)
            kn.output_transform(m, mb.data(), mlay, img, 0, tg * wg::kLanes, kb * 16, std::min(K, (kb + 1) * 16));
    };
    auto dst = [&](int t, int reps) {
      const wg::TiledImage img = yi(t);
      for (int r = 0; r < reps; ++r)
        for (int tg = 0; tg < groups; ++tg)
          for (int kb = 0; kb < kpblocks; ++kb)
            kn.dst_transform(m, img, 0, tg * wg::kLanes, kb * 16, std::min(kp, (kb + 1) * 16), v.data() + size_t(t) * v_n,
                             wlay);
    };
    const std::string pre = "wino" + std::to_string(m) + "_";
    out.rates[pre + "in_gtps"] = per_thread_rate(threads, in, double(gin) * wg::kLanes * C, 0.002, 3) * 1e-9;
    out.rates[pre + "out_gtps"] = per_thread_rate(threads, outp, double(groups) * wg::kLanes * K, 0.002, 3) * 1e-9;
    out.rates[pre + "dst_gtps"] = per_thread_rate(threads, dst, double(groups) * wg::kLanes * kp, 0.002, 3) * 1e-9;
  }
}

// One 16-lane 2-D transform of an FFT engine, all threads busy: microseconds per transform per thread.
void fft_engine_rates(const FftEngine& e, const std::string& prefix, const std::vector<int>& sizes, int threads,
                      MachineProbe& out) {
  for (int n : sizes) {
    const void* plan = e.prepare(n, n);
    const size_t frame = size_t(n) * n * 16, spec = size_t(n) * (n / 2 + 1) * 32;
    const size_t scratch = (e.scratch_floats(n, n) + 15) / 16 * 16, per = frame + spec + scratch + 64;
    AlignedBuffer<float> buf(per * size_t(threads));
    fill(buf.data(), buf.size(), 7);
    auto fwd = [&](int t, int reps) {
      float* f = buf.data() + size_t(t) * per;
      for (int r = 0; r < reps; ++r) e.forward(plan, f, 0, n, f + frame, 32, f + frame + spec);
    };
    auto inv = [&](int t, int reps) {
      float* f = buf.data() + size_t(t) * per;
      for (int r = 0; r < reps; ++r) e.inverse(plan, f + frame, 32, 0, n, f, f + frame + spec);
    };
    // per_thread_rate's sum of transforms / s over the threads -> seconds per transform per thread.
    out.rates[prefix + "fwd_" + std::to_string(n) + "_us"] = threads / per_thread_rate(threads, fwd, 1, 0.002, 3) * 1e6;
    out.rates[prefix + "inv_" + std::to_string(n) + "_us"] = threads / per_thread_rate(threads, inv, 1, 0.002, 3) * 1e6;
  }
}

// The per-frequency complex GEMM: pack A (64 x 64 complex) and multiply by 4 16-lane column blocks.
double cgemm_gflops(int threads) {
  const int m = 64, l = 64, nb = 4;
  const size_t a_floats = size_t(m) * l * 2, b_floats = size_t(l) * nb * 32, c_floats = size_t(m) * nb * 32;
  const size_t pk = (cpu::fft::packed_a_floats(m, l) + 15) / 16 * 16;
  const size_t per = a_floats + b_floats + c_floats + pk + 64;
  AlignedBuffer<float> buf(per * size_t(threads));
  fill(buf.data(), buf.size(), 8);
  const ptrdiff_t ib = (l / 16) * 32;  // A (m, l/16 blocks, re|im, 16)
  auto body = [&](int t, int reps) {
    float* a = buf.data() + size_t(t) * per;
    float* b = a + a_floats;
    float* c = b + b_floats;
    float* packed = c + c_floats;
    for (int r = 0; r < reps; ++r) {
      cpu::fft::pack_a(m, l, a, 16 * ib, ib, 32, 1, false, packed);
      cpu::fft::cgemm(m, nb, l, packed, b, nb * 32, c, nb * 32, r & 1);
    }
  };
  return per_thread_rate(threads, body, 8.0 * m * l * nb * 16, 0.003) * 1e-9;
}

// Every CPU algorithm (but the reference and onednn.auto, whose model
// follows the implementation oneDNN picks) on the 3x3 probe problem, and those
// whose plan changes for 1x1 filters (all but the FFT and Winograd families)
// on the 1x1 one and on the depthwise one (last: on a busy machine the time
// limit drops these first; the FFT's and Winograd's transforms run per group as
// on any layer, and take 10-100x the others' time there), every direction it
// supports: direct-convolution GFLOP/s.
//
// Each runs on ONE thread; its rate is stored counted `threads` times and the
// model relates it to one thread's kernel rates (copy1_gbs and dram1_gbs
// included: memory-bound phases do not scale with threads). The depthwise
// and 1x1 problems' items run on every thread instead (probe_all_threads;
// their rate as measured, related to all threads' kernel rates): oneDNN's
// depthwise backward-filter took 0.16 ms on one thread and 0.29 on two (14 x
// 14, 384 channels, batch 8; Zen 5, 2 cores), convlab's 0.18 and 0.10; on a
// 1x1 backward-filter of 16 images of 14 x 14 (512 -> 128 channels; Zen 4, 2
// cores) cpu.im2col_openblas took 1.07x cpu.im2col_gemm's time on one thread
// and 1.3-1.5x on two -- its per-image GEMMs are threaded inside OpenBLAS. On a core another
// process shares -- here most of the time, in bursts -- a parallel run of a
// small problem waits at every barrier for the descheduled thread: 20-40x
// slower with one other busy process, the algorithms with many parallel
// regions (Winograd's chunks, the FFT's phases) the most; one thread is slowed
// by the sharing alone, the same for all. (On an idle machine two threads run
// the probe problems 1.7-2.0x faster than one.)
// Measured in rounds -- per round every item back to back for at least 2 ms, then
// timed for about 1 ms more (warm caches, as find times it); a first untimed call;
// then at least three timed rounds, more until `soft` -- and the best time per item
// kept: a burst spoils a round of some items, not every sample of one item (with one
// round, the machine's noise decided the ranking of algorithms within 5-10 % of each
// other on a probe problem, and with it get's pick on every layer of that class: on
// DenseNet-121 on Zen 4, get was within 10 % of find on 71-97 % of the pairs from one
// probe to the next). Nothing starts after `hard`: items not timed by then have no rate.
void algorithm_rates(const ExecContext& ctx, double soft, double hard, MachineProbe& out) {
  constexpr int kMinRounds = 3, kMaxRounds = 5;
  const double threads = ctx.resolved_threads();
  ExecContext one = ctx;
  one.threads = 1;
  struct Item {
    std::string key;
    const Algorithm* algo;
    const ConvProblem* p;
    Direction dir;
    ConvData* data;  // its problem's and direction's tensors (only the output is written)
    AlignedBuffer<unsigned char> ws;
    double best = 1e300;
    bool all = false;  // on every thread (probe_all_threads)
    void run(const ExecContext& c) {
      algo->run(*p, dir, {data->src.data(), data->wei.data(), data->dst.data()}, ws.data(), c);
    }
  };
  std::vector<std::unique_ptr<ConvData>> tensors;
  std::vector<Item> items;
  for (std::string_view cls : {"3x3", "1x1", "dw", "dw_small"}) {
    for (Direction dir : kAllDirections) {
      const ConvProblem* p = &probe_problem(cls, dir);
      tensors.push_back(std::make_unique<ConvData>(ConvData::random(*p, 17)));
      for (const Algorithm* a : registry()) {
        if (a->device() != DeviceKind::cpu || a->is_oracle() || a->picks_own_implementation() ||
            !a->unavailable_reason().empty())
          continue;
        if (probe_class(*p) != "3x3" && !a->probe_1x1()) continue;
        if (!a->supports(*p, dir) || now_seconds() > hard) continue;
        try {
          Item it{probe_algo_key(a->name(), dir, probe_class(*p)), a, p, dir, tensors.back().get(),
                  AlignedBuffer<unsigned char>(std::max<size_t>(a->workspace_bytes(*p, dir), 64))};
          it.all = probe_all_threads(probe_class(*p));
          it.run(it.all ? ctx : one);  // the untimed first call: plans, primitives, page faults
          items.push_back(std::move(it));
        } catch (const std::exception&) {
          // An algorithm that cannot run here has no rate; the model then has no probe scale for it.
        }
      }
    }
  }
  for (int round = 0; round < kMaxRounds && (round < kMinRounds || now_seconds() < soft); ++round)
    for (Item& it : items) {
      if (now_seconds() > hard) break;
      try {
        // Untimed runs for at least 2 ms first, then timed ones for about 1 ms more (at least one), the
        // best kept: after the items before it in the round (the FFTs' large workspaces among them) an
        // item's next few runs are slower than its own steady state (measured: cpu.im2col_gemm's 1x1
        // backward-filter 0.41 ms alone, 0.48-0.52 as the second run after one warm-up in the rounds),
        // and find times the steady state.
        const ExecContext& c = it.all ? ctx : one;
        const double w0 = now_seconds();
        do it.run(c);
        while (now_seconds() - w0 < 0.002);
        const double t1 = now_seconds();
        do {
          const double t0 = now_seconds();
          it.run(c);
          it.best = std::min(it.best, now_seconds() - t0);
        } while (now_seconds() - t1 < 0.001);
      } catch (const std::exception&) {
      }
    }
  for (const Item& it : items)
    if (it.best < 1e300) out.rates[it.key] = (it.all ? 1 : threads) * it.p->flops() / it.best * 1e-9;
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::shared_ptr<const MachineProbe>>& probe_registry() {
  static std::map<std::string, std::shared_ptr<const MachineProbe>> r;
  return r;
}

}  // namespace

MachineProbe measure_probe(const ExecContext& ctx) {
  if (ctx.device != DeviceKind::cpu) fail("machine probe: only the CPU is probed");
  const double t0 = now_seconds();
  const int threads = ctx.resolved_threads();
  MachineProbe out;
  out.device = device_fingerprint(DeviceKind::cpu, threads);
  out.rates["fma_gflops"] = measure_fma_peak(threads, 0.01).gflops;
  out.rates["copy_gbs"] = copy_gbs(threads, 16, 0.003, 4);
  out.rates["dram_gbs"] = copy_gbs(threads, 96, 0.0, 2);
  out.rates["copy1_gbs"] = threads > 1 ? copy_gbs(1, 8, 0.003, 4) : out.rates["copy_gbs"];
  out.rates["dram1_gbs"] = threads > 1 ? copy_gbs(1, 48, 0.0, 2) : out.rates["dram_gbs"];
  out.rates["ukernel_gflops"] = ukernel_gflops(threads);
  im2col_rates(threads, out);
  winograd_rates(threads, out);
  fft_engine_rates(hand_fft_engine(), "fft_", {16, 32}, threads, out);
  out.rates["cgemm_gflops"] = cgemm_gflops(threads);
  fft_engine_rates(fftw_engine(), "fftw_", {32}, threads, out);
  algorithm_rates(ctx, t0 + 3.0, t0 + 6.0, out);
  out.seconds = now_seconds() - t0;
  out.probed_at = double(std::time(nullptr));
  return out;
}

void register_probe(const MachineProbe& p) {
  std::lock_guard lock(registry_mutex());
  probe_registry()[p.device] = std::make_shared<const MachineProbe>(p);
}

std::shared_ptr<const MachineProbe> current_probe(const std::string& device) {
  std::lock_guard lock(registry_mutex());
  auto it = probe_registry().find(device);
  return it == probe_registry().end() ? nullptr : it->second;
}

void clear_probes() {
  std::lock_guard lock(registry_mutex());
  probe_registry().clear();
}

std::string ProbeOutcome::source_name() const {
  switch (source) {
    case Source::measured: return "measured";
    case Source::cache: return "cache";
    case Source::process: return "process";
    case Source::none: break;
  }
  return "none";
}

std::string ProbeOutcome::text() const {
  char b[64];
  std::snprintf(b, sizeof b, "%.2f s", seconds);
  switch (source) {
    case Source::measured: return std::string("machine probe: measured in ") + b + (stored.empty() ? "" : "; " + stored);
    case Source::cache: return std::string("machine probe: loaded from the cache (measured in ") + b + ")";
    case Source::process: return std::string("machine probe: measured earlier in this run (") + b + ")";
    case Source::none: break;
  }
  return "machine probe: none (" + stored + ")";
}

ProbeOutcome ensure_probe(const ExecContext& ctx, TuneCache* cache, bool reprobe) {
  ProbeOutcome o;
  if (ctx.device != DeviceKind::cpu) {
    o.stored = "only the CPU is probed";
    return o;
  }
  const std::string device = device_fingerprint(DeviceKind::cpu, ctx.resolved_threads());
  o.device = device;
  if (!reprobe) {
    if (const auto p = current_probe(device)) {
      o.source = ProbeOutcome::Source::process;
      o.seconds = p->seconds;
      return o;
    }
    if (const MachineProbe* p = cache ? cache->lookup_probe(device) : nullptr) {
      register_probe(*p);
      o.source = ProbeOutcome::Source::cache;
      o.seconds = p->seconds;
      return o;
    }
  }
  const MachineProbe p = measure_probe(ctx);
  register_probe(p);
  o.source = ProbeOutcome::Source::measured;
  o.seconds = p.seconds;
  if (cache) {
    try {
      cache->put_probe(p);
      cache->save();
      o.stored = "stored in " + printable(cache->path());
    } catch (const Error& e) {
      o.stored = std::string("not stored: ") + e.what();
    }
  } else {
    o.stored = "not stored (no cache file)";
  }
  return o;
}

ProbeOutcome ensure_probe(const ExecContext& ctx, const std::string& cache_path, bool reprobe) {
  if (ctx.device != DeviceKind::cpu) return ensure_probe(ctx, static_cast<TuneCache*>(nullptr), reprobe);
  if (!reprobe)
    if (const auto p = current_probe(device_fingerprint(DeviceKind::cpu, ctx.resolved_threads())))
      return ensure_probe(ctx, static_cast<TuneCache*>(nullptr), false);  // registered: nothing to read
  std::unique_ptr<TuneCache> cache;
  std::string why;
  try {
    cache = std::make_unique<TuneCache>(cache_path.empty() ? TuneCache::default_path() : cache_path, false);
    cache->load();
  } catch (const Error& e) {
    cache.reset();
    why = std::string("not stored: ") + e.what();
  }
  ProbeOutcome o = ensure_probe(ctx, cache.get(), reprobe);
  if (!cache && o.source == ProbeOutcome::Source::measured) o.stored = why;
  return o;
}

}  // namespace convlab
