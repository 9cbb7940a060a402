// The cost model's whole output, pinned: every registered algorithm's estimate
// (seconds to nine digits, its formula text, supports or the refusal) and
// get's ranking on every layer of alexnet, vgg16 and resnet50, all three
// directions, under a fixed synthetic machine probe built here (nothing is
// measured) and a fixed nominal machine (the model without a probe). The file
// tests/autotune/data/get_golden_<isa>.txt was written by this test
// (CONVLAB_WRITE_GOLDEN=1); any change of the model's arithmetic shows as a
// diff of it. The plans behind the estimates depend on the ISA (the GEMM
// micro-kernel's tile, the SIMD lanes, what oneDNN picks and the workspace it
// sizes for the hardware threads, the cache blocking), so the file is per ISA
// and the test skips on a machine whose ISA has none or whose file header (the
// tile, the thread count, the cache sizes, the registered algorithms) differs.
// CTest's isa_avx2.get_golden runs it under CONVLAB_ISA=avx2 with the file's
// cache sizes (CONVLAB_CACHES), so every 2-CPU machine with AVX2 checks it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "algorithms/registry.hpp"
#include "autotune/get.hpp"
#include "autotune/probe.hpp"
#include "core/layers.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"

namespace convlab {
namespace {

constexpr int kThreads = 4;
constexpr int kBatch = 16;

std::string g9(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// Every kernel rate, and an algorithm rate for every registered CPU algorithm
// the probe measures (those that run the probe problem) but one direction of
// one algorithm (the model's "not probed" path); all made up, all distinct.
MachineProbe synthetic_probe() {
  MachineProbe pr;
  pr.device = device_fingerprint(DeviceKind::cpu, kThreads);
  pr.rates = {{"fma_gflops", 410.5},  {"copy_gbs", 61.25},     {"dram_gbs", 17.5},    {"copy1_gbs", 21.75},
              {"dram1_gbs", 9.125},   {"ukernel_gflops", 301.5}, {"im2col_gbs", 23.5}, {"col2im_gbs", 11.25},
              {"cgemm_gflops", 180.25}};
  double v = 0.5;
  for (int m : {2, 4, 6})
    for (const char* t : {"in", "out", "dst"}) pr.rates["wino" + std::to_string(m) + "_" + t + "_gtps"] = (v += 0.375);
  pr.rates["fft_fwd_16_us"] = 0.61, pr.rates["fft_fwd_32_us"] = 2.9;
  pr.rates["fft_inv_16_us"] = 0.66, pr.rates["fft_inv_32_us"] = 3.1;
  pr.rates["fftw_fwd_32_us"] = 2.2, pr.rates["fftw_inv_32_us"] = 2.45;
  double g = 20;
  for (const Algorithm* a : registry()) {
    if (a->device() != DeviceKind::cpu) continue;
    for (Direction d : {Direction::fwd, Direction::bwd_data, Direction::bwd_filter}) {
      if (a->name() == "cpu.winograd_f6x3" && d == Direction::bwd_filter) continue;  // not probed
      // As the probe: an algorithm that runs here but not the probe problem (a depthwise-only one) has no rate.
      if (a->unavailable_reason().empty() && !a->supports(probe_problem_3x3(), d)) continue;
      pr.rates[probe_algo_key(a->name(), d, "3x3")] = (g += 3.5);
      pr.rates[probe_algo_key(a->name(), d, "1x1")] = g * 1.25;
    }
  }
  return pr;
}

MachineModel nominal_machine(DeviceKind d) {
  MachineModel m;
  m.peak_flops = d == DeviceKind::cpu ? 1.5e12 : 2.0e13;
  m.bandwidth = d == DeviceKind::cpu ? 9.0e10 : 1.8e12;
  m.simd_lanes = d == DeviceKind::cpu ? 16 : 32;
  m.threads = d == DeviceKind::cpu ? kThreads : 1;
  return m;
}

void print_nominal(std::ostream& os, const Algorithm& a, const ConvProblem& p, Direction dir, size_t ws) {
  const CostEstimate n = model_cost(a, p, dir, nominal_machine(a.device()), ws);
  os << "    nominal " << g9(n.seconds) << " " << g9(n.main_flops) << " " << g9(n.transform_flops) << " "
     << g9(n.traffic_bytes) << " | " << n.formula << "\n";
}

void one_case(std::ostream& os, const ConvProblem& p, Direction dir, const MachineModel& probed) {
  for (const Algorithm* a : registry()) {
    os << "  " << a->name() << ": ";
    const Support s = a->supports(p, dir);
    if (!s) {
      os << "unsupported: " << s.reason << "\n";
      // Unavailable here (cuDNN without a device): its nominal statement still is arithmetic.
      if (!a->unavailable_reason().empty()) print_nominal(os, *a, p, dir, 0);
      continue;
    }
    const size_t ws = a->workspace_bytes(p, dir);
    os << "ws " << ws << "\n";
    if (a->device() == DeviceKind::cpu) {
      const CostEstimate e = model_cost(*a, p, dir, probed, ws);
      os << "    probed " << g9(e.seconds) << " | " << e.formula << "\n";
    }
    print_nominal(os, *a, p, dir, ws);
  }
  ExecContext ctx;
  ctx.threads = kThreads;
  for (const AlgoPerf& r : get(p, dir, ctx)) {
    os << "  get " << r.algo << " " << to_string(r.status) << " " << g9(r.time);
    if (r.status == PerfStatus::ok) os << " | " << r.note.substr(r.note.rfind(", x"));
    os << "\n";
  }
}

std::string header() {
  const cpu::SgemmUkernel& u = cpu::sgemm_ukernel(cpu::sgemm_resolve_isa(cpu::GemmIsa::auto_));
  // oneDNN sizes its workspace for all hardware threads: the file is of this thread count too.
  std::string h = "isa " + cpu_info().isa() + ", ukernel " + std::to_string(u.mr) + "x" + std::to_string(u.nr) +
                  ", " + std::to_string(cpu_info().hardware_threads) + " hardware threads, " +
                  describe_caches(cpu_info()).substr(0, describe_caches(cpu_info()).find(" (")) + ", algorithms";
  for (const Algorithm* a : registry()) h += " " + std::string(a->name());
  return h + "\n";
}

TEST(GetGolden, EveryAlgorithmEveryLayerEveryDirection) {
  const std::string path =
      std::string(CONVLAB_SOURCE_DIR) + "/tests/autotune/data/get_golden_" + cpu_info().isa() + ".txt";
  const MachineProbe pr = synthetic_probe();
  clear_probes();
  register_probe(pr);
  MachineModel probed = nominal_machine(DeviceKind::cpu);
  probed.probe = current_probe(pr.device);
  probed.peak_flops = pr.rate("fma_gflops") * 1e9;
  probed.bandwidth = pr.rate("copy_gbs") * 1e9;
  probed.simd_lanes = MachineModel::for_context(ExecContext{DeviceKind::cpu, kThreads}).simd_lanes;
  std::ostringstream os;
  os << header();
  for (const char* net : {"alexnet", "vgg16", "resnet50"})
    for (const NetLayer& l : network_layers(net, kBatch))
      for (Direction dir : {Direction::fwd, Direction::bwd_data, Direction::bwd_filter}) {
        os << "# " << l.id << " " << to_string(dir) << " " << l.problem.canonical() << "\n";
        one_case(os, l.problem, dir, probed);
      }
  clear_probes();
  // Refusals name a CONVLAB_ISA cap and the CPU's own level ("... under CONVLAB_ISA=avx2 (avx512 without
  // it)"): not part of the model's output, so the file reads the same from an AVX2 CPU and a capped one.
  std::string text = os.str();
  for (size_t at; (at = text.find(" under CONVLAB_ISA=")) != std::string::npos;) {
    const size_t end = text.find("without it)", at);
    if (end == std::string::npos) break;
    text.erase(at, end + std::strlen("without it)") - at);
  }
  if (std::getenv("CONVLAB_WRITE_GOLDEN")) {
    std::ofstream(path) << text;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << "no golden file for this ISA: " << path;
  std::stringstream want;
  want << in.rdbuf();
  const std::string w = want.str(), got = text;
  if (w.substr(0, w.find('\n')) != got.substr(0, got.find('\n')))
    GTEST_SKIP() << "the golden file is of another build or machine: " << w.substr(0, w.find('\n'));
  if (w == got) return;
  // The first differing line, with its case.
  std::istringstream a(w), b(got);
  std::string la, lb, where;
  for (int line = 1; std::getline(a, la) && std::getline(b, lb); ++line) {
    if (la.rfind("# ", 0) == 0) where = la;
    if (la != lb) FAIL() << path << ":" << line << " (" << where << ")\n  want: " << la << "\n  got:  " << lb;
  }
  FAIL() << path << ": lengths differ (" << w.size() << " vs " << got.size() << " bytes)";
}

}  // namespace
}  // namespace convlab
