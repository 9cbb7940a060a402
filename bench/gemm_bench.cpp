// The CPU GEMM on AlexNet (batch 32):
//   gemm/alexnet.convN/<dir>/{sgemm,openblas,dnnl}: the GEMM call the im2col
//     lowering makes for one chunk and group (shapes from plan_im2col_gemm on
//     network_layers("alexnet", 32)), hand SGEMM vs cblas_sgemm vs dnnl_sgemm,
//     all with the same thread count, consecutively per shape.
//   gemm/alexnet.fcN/<dir>/...: the fully connected layers' GEMMs at batch 32
//     (fwd Y = X W^T, bwd-filter dW = dY^T X, bwd-data dX = dY W): what
//     train::FcLayer runs (the hand SGEMM; OpenBLAS and dnnl_sgemm beside it).
// After the run: a table of GFLOP/s, the ratio to dnnl_sgemm and the fraction
// of the measured FMA peak. Whole convolutions of the GEMM family
// (cpu.im2col_gemm beside cpu.im2col_openblas and oneDNN) are bench_conv's:
//   bench_conv --family=gemm
// Times are medians when --benchmark_repetitions > 1, else the mean of the run.
//   ./build-cpu/bench_gemm [--threads N] [--table_time=cpu] [--benchmark_filter=...] [--benchmark_repetitions=5]
// --table_time=cpu builds the tables from the benchmark thread's CPU time
// instead of wall time: with --threads 1 every contender runs on that thread
// (OpenBLAS and oneDNN with one thread compute in the caller), so on a shared,
// overloaded machine it measures the work and not the waiting for a core.
// OPENBLAS_CORETYPE is left as the environment sets it; the core OpenBLAS
// picked is printed beside its numbers.
#include <benchmark/benchmark.h>
#include <cblas.h>
#ifdef CONVLAB_HAS_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "algorithms/cpu/im2col_gemm.hpp"
#include "core/device.hpp"
#include "core/layers.hpp"
#include "core/peak.hpp"
#include "core/tensor.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"

using namespace convlab;

namespace {

int g_threads = 0;
bool g_cpu_table = false;  // --table_time=cpu: tables from the benchmark thread's CPU time

struct Shape {
  std::string id;  // alexnet.conv3/fwd
  Im2colGemmCall g;
};

std::vector<Shape> alexnet_gemm_shapes() {
  std::vector<Shape> out;
  for (const NetLayer& l : network_layers("alexnet", 32))
    for (Direction d : kAllDirections)
      out.push_back({l.id + "/" + std::string(to_string(d)), plan_im2col_gemm(l.problem, d).gemm});
  // AlexNet's classifier, row-major, batch 32: (in, out) of fc6, fc7, fc8.
  const int batch = 32;
  const int fc[3][3] = {{6, 9216, 4096}, {7, 4096, 4096}, {8, 4096, 1000}};
  for (const auto& f : fc) {
    const std::string id = "alexnet.fc" + std::to_string(f[0]) + "/";
    const int in = f[1], o = f[2];
    out.push_back({id + "fwd", Im2colGemmCall::dense(false, true, batch, o, in, in, in, o)});
    out.push_back({id + "bwd-data", Im2colGemmCall::dense(false, false, batch, in, o, o, in, in)});
    out.push_back({id + "bwd-filter", Im2colGemmCall::dense(true, false, o, in, batch, o, in, in)});
  }
  return out;
}

struct Operands {
  AlignedBuffer<float> a, b, c;
  explicit Operands(const Im2colGemmCall& g)
      : a(size_t((g.trans_a ? g.k : g.m) * g.lda)), b(size_t((g.trans_b ? g.n : g.k) * g.ldb)),
        c(size_t(int64_t(g.m) * g.ldc)) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto& x : a) x = d(rng);
    for (auto& x : b) x = d(rng);
    std::memset(c.data(), 0, c.bytes());
  }
};

// OpenBLAS's pthread workers busy-wait ~2^28 cycles after a call before they
// sleep; without a pause they would steal the cores from the next benchmark
// (OpenMP-threaded: the hand SGEMM, oneDNN). Not timed.
void let_openblas_threads_sleep() { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

void set_flops(benchmark::State& st, double flops) {
  st.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

void bench_sgemm(benchmark::State& st, Im2colGemmCall g) {
  Operands o(g);
  cpu::SgemmConfig cfg;
  cfg.threads = g_threads;
  AlignedBuffer<unsigned char> ws(cpu::sgemm_workspace_bytes(g.m, g.n, g.k, cfg));
  for (auto _ : st)
    cpu::sgemm(cpu::Layout::row_major, g.trans_a ? cpu::Trans::yes : cpu::Trans::no,
               g.trans_b ? cpu::Trans::yes : cpu::Trans::no, g.m, g.n, g.k, 1.0f, o.a.data(), g.lda, o.b.data(),
               g.ldb, 0.0f, o.c.data(), g.ldc, cfg, ws.data());
  set_flops(st, g.flops());
}

void bench_openblas(benchmark::State& st, Im2colGemmCall g) {
  Operands o(g);
  openblas_set_num_threads(g_threads);
  for (auto _ : st)
    cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans, g.m,
                g.n, g.k, 1.0f, o.a.data(), int(g.lda), o.b.data(), int(g.ldb), 0.0f, o.c.data(), int(g.ldc));
  set_flops(st, g.flops());
  st.SetLabel(std::string("core=") + openblas_get_corename());
  let_openblas_threads_sleep();
}

#ifdef CONVLAB_HAS_ONEDNN
void bench_dnnl(benchmark::State& st, Im2colGemmCall g) {
  Operands o(g);
  omp_set_num_threads(g_threads);  // oneDNN's OpenMP runtime uses the default team size
  for (auto _ : st) {
    const dnnl_status_t s = dnnl_sgemm(g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', g.m, g.n, g.k, 1.0f, o.a.data(),
                                       g.lda, o.b.data(), g.ldb, 0.0f, o.c.data(), g.ldc);
    if (s != dnnl_success) {
      st.SkipWithError("dnnl_sgemm failed");
      break;
    }
  }
  set_flops(st, g.flops());
}
#endif

// Collects per-benchmark times (ms) for the closing tables.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> ms;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      const std::string name = r.run_name.function_name;
      if (r.error_occurred) continue;
      const double t = g_cpu_table ? r.GetAdjustedCPUTime() : r.GetAdjustedRealTime();
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "median") ms[name] = t;
      } else {
        ms[name] = t;  // the median aggregate, when there is one, comes later
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--threads", 9) == 0) {
      g_threads = std::atoi(argv[i][9] == '=' ? argv[i] + 10 : (i + 1 < argc ? argv[i + 1] : "0"));
    }
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--table_time=cpu") == 0) g_cpu_table = true;
  if (g_threads <= 0) g_threads = cpu_info().hardware_threads;

  // Wall time in ms (two cores: CPU time would double count).
  auto reg = [](benchmark::internal::Benchmark* b) { b->UseRealTime()->Unit(benchmark::kMillisecond); };
  const std::vector<Shape> shapes = alexnet_gemm_shapes();
  for (const Shape& s : shapes) {
    const std::string base = "gemm/" + s.id + "/";
    reg(benchmark::RegisterBenchmark((base + "sgemm").c_str(), bench_sgemm, s.g));
    reg(benchmark::RegisterBenchmark((base + "openblas").c_str(), bench_openblas, s.g));
#ifdef CONVLAB_HAS_ONEDNN
    reg(benchmark::RegisterBenchmark((base + "dnnl").c_str(), bench_dnnl, s.g));
#endif
  }
  benchmark::Initialize(&argc, argv);

  // The same measured peak every convlab report uses (core/peak.hpp), wall-clock based.
  double peak = measure_fma_peak(g_threads).gflops * 1e9;
  std::printf("convlab bench_gemm: %s, isa %s, threads %d, sgemm micro-kernel %s, L1d %lld KiB, L2 %lld KiB, "
              "OpenBLAS core %s\n",
              cpu_info().model.c_str(), cpu_info().isa().c_str(), g_threads,
              cpu::sgemm_ukernel(cpu::GemmIsa::auto_).name, (long long)(cpu_info().l1d_bytes >> 10),
              (long long)(cpu_info().l2_bytes >> 10), openblas_get_corename());
  if (peak > 0) std::printf("measured FMA peak, %d threads: %.1f GFLOP/s\n", g_threads, peak * 1e-9);

  TableReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);

  auto gflops = [&](const std::string& name, double flops) {
    auto it = rep.ms.find(name);
    return it == rep.ms.end() || it->second <= 0 ? 0.0 : flops / (it->second * 1e-3) * 1e-9;
  };
  std::printf("\nSGEMM on AlexNet's im2col GEMMs (batch 32, %d threads, %s time; OpenBLAS core %s)\n", g_threads,
              g_cpu_table ? "thread CPU" : "wall", openblas_get_corename());
  std::printf("%-26s %-5s %6s %6s %6s %9s %9s %9s %8s %8s %7s\n", "shape", "op", "M", "N", "K", "sgemm",
              "openblas", "dnnl", "sg/dnnl", "ob/dnnl", "sg%pk");
  for (const Shape& s : shapes) {
    const std::string base = "gemm/" + s.id + "/";
    const double f = s.g.flops();
    const double sg = gflops(base + "sgemm", f), ob = gflops(base + "openblas", f), dn = gflops(base + "dnnl", f);
    if (sg == 0 && ob == 0 && dn == 0) continue;
    std::printf("%-26s %c%c    %6d %6d %6d %9.1f %9.1f %9.1f %8.2f %8.2f %6.0f%%\n", s.id.c_str(),
                s.g.trans_a ? 'T' : 'N', s.g.trans_b ? 'T' : 'N', s.g.m, s.g.n, s.g.k, sg, ob, dn,
                dn > 0 ? sg / dn : 0.0, dn > 0 ? ob / dn : 0.0, peak > 0 ? 100 * sg * 1e9 / peak : 0.0);
  }
  benchmark::Shutdown();
  return 0;
}
