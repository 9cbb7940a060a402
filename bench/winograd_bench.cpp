// Winograd F(2,4,6 x 3) on AlexNet's 3x3 layers (conv3, conv4, conv5) at batch 32,
// every direction, beside a direct oneDNN baseline in the same run:
//   conv/alexnet.conv3/fwd/cpu.winograd_f4x3
//   conv/alexnet.conv3/fwd/onednn.convolution_auto   (NCHW in/out, reorders counted)
// Counter GFLOP/s = direct-convolution FLOPs (2*N*K*P*Q*C/g*R*S) / time, i.e.
// *effective* GFLOP/s for the transform algorithms. Real time, median of reps;
// the CPU column is process CPU time (all threads): on a shared machine run with
// OMP_WAIT_POLICY=passive and compare CPU times (flops / (cpu / threads)).
//   ./build-cpu/bench_winograd --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/layers.hpp"

#ifdef CONVLAB_HAS_ONEDNN
#include <dnnl.hpp>
#endif

namespace convlab {
namespace {

constexpr int kBatch = 32;
const char* const kLayers[] = {"alexnet.conv3", "alexnet.conv4", "alexnet.conv5"};
const char* const kAlgos[] = {"cpu.winograd_f2x3", "cpu.winograd_f4x3", "cpu.winograd_f6x3"};

void set_counters(benchmark::State& state, const ConvProblem& p) {
  state.counters["GFLOP/s"] = benchmark::Counter(p.flops() * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void bench_algo(benchmark::State& state, std::string algo, ConvProblem p, Direction dir) {
  const Algorithm& a = get_algorithm(algo);
  ConvRunner runner(a, p, dir, ExecContext{});
  runner.upload(ConvData::random(p, 1));
  runner.run();
  for (auto _ : state) runner.run();
  set_counters(state, p);
  state.counters["ws_MiB"] = double(runner.workspace_bytes()) / (1 << 20);
}

#ifdef CONVLAB_HAS_ONEDNN
// oneDNN convolution_auto from user NCHW / (G)OIHW buffers: input reorders,
// the primitive, and the output reorder, all inside the timed loop.
void bench_onednn(benchmark::State& state, ConvProblem p, Direction dir) {
  using namespace dnnl;
  using tag = memory::format_tag;
  const auto f32 = memory::data_type::f32;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  const memory::dims src_d{p.n, p.c, p.h, p.w}, dst_d{p.n, p.k, p.p(), p.q()};
  const memory::dims wei_d = p.groups > 1 ? memory::dims{p.groups, p.k_per_group(), p.c_per_group(), p.r, p.s}
                                          : memory::dims{p.k, p.c, p.r, p.s};
  const memory::dims strides{p.stride_h, p.stride_w}, dil{p.dil_h - 1, p.dil_w - 1}, pad{p.pad_h, p.pad_w};
  memory::desc src_any(src_d, f32, tag::any), wei_any(wei_d, f32, tag::any), dst_any(dst_d, f32, tag::any);
  memory usr_src({src_d, f32, tag::nchw}, eng), usr_dst({dst_d, f32, tag::nchw}, eng);
  memory usr_wei({wei_d, f32, p.groups > 1 ? tag::goihw : tag::oihw}, eng);
  const ConvData data = ConvData::random(p, 1);
  std::memcpy(usr_src.get_data_handle(), data.src.data(), size_t(p.src_elems()) * 4);
  std::memcpy(usr_wei.get_data_handle(), data.wei.data(), size_t(p.wei_elems()) * 4);
  std::memcpy(usr_dst.get_data_handle(), data.dst.data(), size_t(p.dst_elems()) * 4);

  convolution_forward::primitive_desc fwd_pd(
      convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_auto, src_any, wei_any, dst_any,
                                strides, dil, pad, pad),
      eng);
  std::vector<std::function<void()>> steps;
  std::vector<memory> keep;
  // in: user -> primitive layout (reorder only when they differ); out: back.
  auto input = [&](memory& usr, const memory::desc& want) {
    if (want == usr.get_desc()) return usr;
    memory m(want, eng);
    keep.push_back(m);
    auto r = std::make_shared<reorder>(usr, m);
    memory u = usr;
    steps.push_back([r, u, m, &strm]() mutable { r->execute(strm, u, m); });
    return m;
  };
  std::function<void()> conv;
  std::function<void()> out_step;
  auto output = [&](memory& usr, const memory::desc& have) {
    if (have == usr.get_desc()) return usr;
    memory m(have, eng);
    keep.push_back(m);
    auto r = std::make_shared<reorder>(m, usr);
    memory u = usr;
    out_step = [r, u, m, &strm]() mutable { r->execute(strm, m, u); };
    return m;
  };
  std::string impl;
  if (dir == Direction::fwd) {
    memory s = input(usr_src, fwd_pd.src_desc()), w = input(usr_wei, fwd_pd.weights_desc());
    memory d = output(usr_dst, fwd_pd.dst_desc());
    auto prim = std::make_shared<convolution_forward>(fwd_pd);
    conv = [=, &strm]() { prim->execute(strm, {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, d}}); };
    impl = fwd_pd.impl_info_str();
  } else if (dir == Direction::bwd_data) {
    convolution_backward_data::primitive_desc pd(
        convolution_backward_data::desc(algorithm::convolution_auto, src_any, wei_any, dst_any, strides, dil, pad, pad),
        eng, fwd_pd);
    memory dd = input(usr_dst, pd.diff_dst_desc()), w = input(usr_wei, pd.weights_desc());
    memory ds = output(usr_src, pd.diff_src_desc());
    auto prim = std::make_shared<convolution_backward_data>(pd);
    conv = [=, &strm]() {
      prim->execute(strm, {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, ds}});
    };
    impl = pd.impl_info_str();
  } else {
    convolution_backward_weights::primitive_desc pd(
        convolution_backward_weights::desc(algorithm::convolution_auto, src_any, wei_any, dst_any, strides, dil, pad,
                                           pad),
        eng, fwd_pd);
    memory s = input(usr_src, pd.src_desc()), dd = input(usr_dst, pd.diff_dst_desc());
    memory dw = output(usr_wei, pd.diff_weights_desc());
    auto prim = std::make_shared<convolution_backward_weights>(pd);
    conv = [=, &strm]() {
      prim->execute(strm, {{DNNL_ARG_SRC, s}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_WEIGHTS, dw}});
    };
    impl = pd.impl_info_str();
  }
  auto once = [&]() {
    for (auto& f : steps) f();
    conv();
    if (out_step) out_step();
    strm.wait();
  };
  once();
  for (auto _ : state) once();
  set_counters(state, p);
  state.SetLabel(impl);
}
#endif

int register_all() {
  for (const char* id : kLayers) {
    const ConvProblem p = network_layer(id, kBatch).problem;
    for (Direction dir : kAllDirections) {
      const std::string prefix = "conv/" + std::string(id) + "/" + std::string(to_string(dir)) + "/";
      for (const char* algo : kAlgos)
        benchmark::RegisterBenchmark((prefix + algo).c_str(), bench_algo, std::string(algo), p, dir)
            ->UseRealTime()
            ->MeasureProcessCPUTime()
            ->Unit(benchmark::kMillisecond);
#ifdef CONVLAB_HAS_ONEDNN
      benchmark::RegisterBenchmark((prefix + "onednn.convolution_auto").c_str(), bench_onednn, p, dir)
          ->UseRealTime()
            ->MeasureProcessCPUTime()
          ->Unit(benchmark::kMillisecond);
#endif
    }
  }
  return 0;
}
const int registered = register_all();

}  // namespace
}  // namespace convlab

BENCHMARK_MAIN();
