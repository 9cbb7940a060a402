// cpu.direct on every AlexNet layer x direction at batch 32, side by side with a
// oneDNN direct-convolution baseline measured in the same run:
//   conv/alexnet.conv1/bwd-data/cpu.direct
//   conv/alexnet.conv1/bwd-data/onednn_direct_baseline
// The baseline is oneDNN's C++ API (algorithm::convolution_direct) on plain
// NCHW / OIHW user memory with reorders to and from format_tag::any inside the
// timed region, as cpu.direct's layout conversions are inside its run().
// Counters: FLOP/s (2*N*K*P*Q*C/g*R*S per call, every direction), as rates.
// CONVLAB_BENCH_THREADS=n runs both sides on n threads (default: all cores);
// with n = 1 the CPU column is the whole work, robust on a shared machine.
#include <benchmark/benchmark.h>

#include <omp.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_map>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/layers.hpp"

#if defined(CONVLAB_HAS_ONEDNN)
#include <dnnl.hpp>
#endif

namespace convlab {
namespace {

constexpr int kBatch = 32;

int bench_threads() {
  const char* env = std::getenv("CONVLAB_BENCH_THREADS");
  return env ? std::atoi(env) : 0;
}

void set_counters(benchmark::State& state, const ConvProblem& p) {
  state.counters["FLOP/s"] = benchmark::Counter(p.flops() * double(state.iterations()), benchmark::Counter::kIsRate);
}

void bench_algorithm(benchmark::State& state, const ConvProblem& p, Direction dir, std::string algo) {
  ExecContext ctx;
  ctx.threads = bench_threads();
  ConvRunner runner(get_algorithm(algo), p, dir, ctx);
  runner.upload(ConvData::random(p, 1));
  runner.run();
  for (auto _ : state) runner.run();
  set_counters(state, p);
}

#if defined(CONVLAB_HAS_ONEDNN)
// One oneDNN direct convolution in `dir` with user-layout reorders counted.
struct OnednnDirect {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  std::vector<std::function<void()>> steps;
  std::vector<dnnl::memory> keep;

  OnednnDirect(const ConvProblem& p, Direction dir, const ConvData& data) {
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    const int g = p.groups;
    const memory::dims src_d = {p.n, p.c, p.h, p.w}, dst_d = {p.n, p.k, p.p(), p.q()};
    const memory::dims wei_d = g > 1 ? memory::dims{g, p.k / g, p.c / g, p.r, p.s} : memory::dims{p.k, p.c, p.r, p.s};
    const tag wtag = g > 1 ? tag::goihw : tag::oihw;
    const memory::dims strides = {p.stride_h, p.stride_w}, dil = {p.dil_h - 1, p.dil_w - 1};
    const memory::dims pad = {p.pad_h, p.pad_w};
    auto any = [](const memory::dims& d) { return memory::desc(d, dt::f32, tag::any); };
    memory usrc({src_d, dt::f32, tag::nchw}, eng, const_cast<float*>(data.src.data()));
    memory uwei({wei_d, dt::f32, wtag}, eng, const_cast<float*>(data.wei.data()));
    memory udst({dst_d, dt::f32, tag::nchw}, eng, const_cast<float*>(data.dst.data()));
    keep = {usrc, uwei, udst};
    convolution_forward::desc fd(prop_kind::forward_training, algorithm::convolution_direct, any(src_d), any(wei_d),
                                 any(dst_d), strides, dil, pad, pad);
    convolution_forward::primitive_desc fpd(fd, eng);
    // in: reorder user -> primitive layout before; out: primitive -> user after.
    auto input = [&](memory user, const memory::desc& want) {
      if (user.get_desc() == want) return user;
      memory m(want, eng);
      keep.push_back(m);
      reorder r(user, m);
      steps.push_back([this, r, user, m]() mutable { r.execute(strm, user, m); });
      return m;
    };
    std::vector<std::function<void()>> after;
    auto output = [&](memory user, const memory::desc& want) {
      if (user.get_desc() == want) return user;
      memory m(want, eng);
      keep.push_back(m);
      reorder r(m, user);
      after.push_back([this, r, user, m]() mutable { r.execute(strm, m, user); });
      return m;
    };
    switch (dir) {
      case Direction::fwd: {
        memory s = input(usrc, fpd.src_desc()), w = input(uwei, fpd.weights_desc());
        memory d = output(udst, fpd.dst_desc());
        convolution_forward prim(fpd);
        steps.push_back([this, prim, s, w, d]() mutable {
          prim.execute(strm, {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, d}});
        });
        break;
      }
      case Direction::bwd_data: {
        convolution_backward_data::desc bd(algorithm::convolution_direct, any(src_d), any(wei_d), any(dst_d), strides,
                                           dil, pad, pad);
        convolution_backward_data::primitive_desc bpd(bd, eng, fpd);
        memory dd = input(udst, bpd.diff_dst_desc()), w = input(uwei, bpd.weights_desc());
        memory ds = output(usrc, bpd.diff_src_desc());
        convolution_backward_data prim(bpd);
        steps.push_back([this, prim, dd, w, ds]() mutable {
          prim.execute(strm, {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, ds}});
        });
        break;
      }
      case Direction::bwd_filter: {
        convolution_backward_weights::desc bd(algorithm::convolution_direct, any(src_d), any(wei_d), any(dst_d),
                                              strides, dil, pad, pad);
        convolution_backward_weights::primitive_desc bpd(bd, eng, fpd);
        memory s = input(usrc, bpd.src_desc()), dd = input(udst, bpd.diff_dst_desc());
        memory dw = output(uwei, bpd.diff_weights_desc());
        convolution_backward_weights prim(bpd);
        steps.push_back([this, prim, s, dd, dw]() mutable {
          prim.execute(strm, {{DNNL_ARG_SRC, s}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_WEIGHTS, dw}});
        });
        break;
      }
    }
    for (auto& a : after) steps.push_back(a);
  }
  void run() {
    for (auto& s : steps) s();
    strm.wait();
  }
};

void bench_onednn(benchmark::State& state, const ConvProblem& p, Direction dir) {
  ConvData data = ConvData::random(p, 1);
  if (bench_threads() > 0) omp_set_num_threads(bench_threads());
  OnednnDirect conv(p, dir, data);
  conv.run();
  for (auto _ : state) conv.run();
  set_counters(state, p);
}
#endif

int register_all() {
  for (const NetLayer& l : network_layers("alexnet", kBatch))
    for (Direction dir : kAllDirections) {
      const std::string base = "conv/" + l.id + "/" + std::string(to_string(dir)) + "/";
      benchmark::RegisterBenchmark((base + "cpu.direct").c_str(), bench_algorithm, l.problem, dir,
                                   std::string("cpu.direct"))
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
#if defined(CONVLAB_HAS_ONEDNN)
      benchmark::RegisterBenchmark((base + "onednn_direct_baseline").c_str(), bench_onednn, l.problem, dir)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
#endif
    }
  return 0;
}
const int registered = register_all();

}  // namespace
}  // namespace convlab

BENCHMARK_MAIN();
