// FFT benchmarks.
//  (a) fft/{r2c,c2r}/<Lh>x<Lw>/{hand,fftw}: the hand-written batched 2-D
//      transform vs FFTW (FFTW_MEASURE, guru split, 16 transforms per execute,
//      the same layouts) on the transform sizes cpu.fft / cpu.fft_tiled pick
//      for AlexNet's stride-1 layers, and FFTW in its own favourite layout
//      (.../fftw_contig: plan_many over 16 contiguous images, interleaved
//      complex). 1024 transforms per iteration, one thread; counter GFLOP/s = 2.5 N log2 N per real transform (N = Lh*Lw).
//  (b) conv/alexnet.conv2/<dir>/<algo>: each FFT algorithm (and
//      cpu.onednn_auto when registered) on AlexNet conv2 at batch 32, both
//      cores; GFLOP/s counts the direct convolution's flops. Beside them the
//      direct oneDNN baseline conv/.../onednn.auto: convolution_auto with
//      format `any`, user tensors NCHW / GOIHW, the reorders to and from
//      oneDNN's blocked layouts inside the timed loop.
#include <benchmark/benchmark.h>
#include <fftw3.h>

#include <cmath>
#ifdef CONVLAB_HAS_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif
#include <set>
#include <tuple>
#include <vector>

#include "algorithms/cpu/fft.hpp"
#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/layers.hpp"
#include "core/tensor.hpp"
#include "kernels/cpu/fft/fft.hpp"

namespace convlab {
namespace {

constexpr int V = fft::kLanes;
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
  state.counters["GFLOP/s"] = benchmark::Counter(2.5 * nn * std::log2(nn) * kBlocks * V * 1e-9 *
                                                     double(state.iterations()),
                                                 benchmark::Counter::kIsRate);
}

void BM_transform(benchmark::State& state, int lh, int lw, bool inverse, bool use_fftw) {
  fft::Plan2D plan(lh, lw);
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
        if (inverse) fft::c2r_2d(plan, sp, 2 * V, 0, lh, fr, scratch.data());
        else fft::r2c_2d(plan, fr, 0, lh, sp, 2 * V, scratch.data());
      }
    }
    benchmark::ClobberMemory();
  }
  if (fp) fftwf_destroy_plan(fp);
  const double n = double(lh) * lw;
  state.counters["GFLOP/s"] = benchmark::Counter(2.5 * n * std::log2(n) * kBlocks * V * 1e-9 *
                                                     double(state.iterations()),
                                                 benchmark::Counter::kIsRate);
  state.SetLabel(fft::isa_used());
}

void BM_conv(benchmark::State& state, std::string algo, ConvProblem p, Direction dir) {
  const Algorithm& a = get_algorithm(algo);
  ConvRunner r(a, p, dir, ExecContext{});
  r.upload(ConvData::random(p, 1));
  r.run();  // warm-up: plans, page faults
  for (auto _ : state) r.run();
  state.counters["GFLOP/s"] =
      benchmark::Counter(p.flops() * 1e-9 * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["ws_MiB"] = double(r.workspace_bytes()) / (1 << 20);
  if (const auto* f = dynamic_cast<const FftConvolution*>(&a)) {
    const FftGeometry g = f->geometry(p, dir);
    state.SetLabel("T=" + std::to_string(g.h.t) + "x" + std::to_string(g.w.t) + " tiles=" +
                   std::to_string(g.h.tiles) + "x" + std::to_string(g.w.tiles) + " " + fft::isa_used());
  }
}

#ifdef CONVLAB_HAS_ONEDNN
void BM_onednn(benchmark::State& state, ConvProblem p, Direction dir) {
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  const memory::dims src_d = {p.n, p.c, p.h, p.w}, dst_d = {p.n, p.k, p.p(), p.q()};
  const memory::dims wei_d = {p.groups, p.k_per_group(), p.c_per_group(), p.r, p.s};
  const memory::dims strides = {1, 1}, pad = {p.pad_h, p.pad_w};
  const memory::desc src_any(src_d, dt::f32, tag::any), dst_any(dst_d, dt::f32, tag::any),
      wei_any(wei_d, dt::f32, tag::any);
  const memory::desc src_u(src_d, dt::f32, tag::nchw), dst_u(dst_d, dt::f32, tag::nchw),
      wei_u(wei_d, dt::f32, tag::goihw);
  ConvData data = ConvData::random(p, 1);
  memory src_m(src_u, eng, data.src.data()), dst_m(dst_u, eng, data.dst.data()), wei_m(wei_u, eng, data.wei.data());
  convolution_forward::desc fd(prop_kind::forward_training, algorithm::convolution_auto, src_any, wei_any, dst_any,
                               strides, pad, pad);
  convolution_forward::primitive_desc fpd(fd, eng);
  // (user memory, the primitive's desc, is_input)
  std::vector<std::tuple<memory*, memory::desc, bool>> args;
  primitive prim;
  int a_src = 0, a_wei = 0, a_dst = 0;
  std::string impl;
  memory::desc ws_md;
  if (dir == Direction::fwd) {
    prim = convolution_forward(fpd);
    args = {{&src_m, fpd.src_desc(), true}, {&wei_m, fpd.weights_desc(), true}, {&dst_m, fpd.dst_desc(), false}};
    a_src = DNNL_ARG_SRC; a_wei = DNNL_ARG_WEIGHTS; a_dst = DNNL_ARG_DST;
    impl = fpd.impl_info_str();
    ws_md = fpd.scratchpad_desc();
  } else if (dir == Direction::bwd_data) {
    convolution_backward_data::desc bd(algorithm::convolution_auto, src_any, wei_any, dst_any, strides, pad, pad);
    convolution_backward_data::primitive_desc bpd(bd, eng, fpd);
    prim = convolution_backward_data(bpd);
    args = {{&dst_m, bpd.diff_dst_desc(), true}, {&wei_m, bpd.weights_desc(), true}, {&src_m, bpd.diff_src_desc(), false}};
    a_src = DNNL_ARG_DIFF_DST; a_wei = DNNL_ARG_WEIGHTS; a_dst = DNNL_ARG_DIFF_SRC;
    impl = bpd.impl_info_str();
  } else {
    convolution_backward_weights::desc bd(algorithm::convolution_auto, src_any, wei_any, dst_any, strides, pad, pad);
    convolution_backward_weights::primitive_desc bpd(bd, eng, fpd);
    prim = convolution_backward_weights(bpd);
    args = {{&src_m, bpd.src_desc(), true}, {&dst_m, bpd.diff_dst_desc(), true}, {&wei_m, bpd.diff_weights_desc(), false}};
    a_src = DNNL_ARG_SRC; a_wei = DNNL_ARG_DIFF_DST; a_dst = DNNL_ARG_DIFF_WEIGHTS;
    impl = bpd.impl_info_str();
  }
  // Internal memories in the primitive's layouts (the same as the user's when they match).
  std::vector<memory> internal;
  for (auto& [user, md, in] : args) internal.push_back(md == user->get_desc() ? *user : memory(md, eng));
  const int arg_ids[3] = {a_src, a_wei, a_dst};
  auto once = [&]() {
    for (size_t i = 0; i < 2; ++i)
      if (internal[i] != *std::get<0>(args[i])) reorder(*std::get<0>(args[i]), internal[i]).execute(strm, *std::get<0>(args[i]), internal[i]);
    prim.execute(strm, {{arg_ids[0], internal[0]}, {arg_ids[1], internal[1]}, {arg_ids[2], internal[2]}});
    if (internal[2] != *std::get<0>(args[2])) reorder(internal[2], *std::get<0>(args[2])).execute(strm, internal[2], *std::get<0>(args[2]));
    strm.wait();
  };
  once();
  for (auto _ : state) once();
  state.counters["GFLOP/s"] =
      benchmark::Counter(p.flops() * 1e-9 * double(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(impl);
}
#endif

void register_all() {
  // (a) the transform sizes the FFT algorithms pick for AlexNet's stride-1 layers.
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
  // (b) AlexNet conv2, batch 32, all directions.
  const NetLayer l = network_layer("alexnet.conv2", 32);
  for (Direction d : kAllDirections) {
    for (const char* algo : {"cpu.fft", "cpu.fft_tiled", "cpu.fft_fftw", "cpu.onednn_auto"}) {
      if (!find_algorithm(algo)) continue;
      const std::string name = "conv/" + l.id + "/" + std::string(to_string(d)) + "/" + algo;
      benchmark::RegisterBenchmark(name.c_str(), BM_conv, std::string(algo), l.problem, d)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->MinTime(1.0);
    }
#ifdef CONVLAB_HAS_ONEDNN
    const std::string name = "conv/" + l.id + "/" + std::string(to_string(d)) + "/onednn.auto";
    benchmark::RegisterBenchmark(name.c_str(), BM_onednn, l.problem, d)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->MinTime(1.0);
#endif
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
