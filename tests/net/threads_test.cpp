// One thread runtime: every CPU parallel region of a training
// step -- our kernels, the fc layers' GEMM, oneDNN, OpenBLAS in
// cpu.im2col_openblas -- runs on libgomp's one pool. Before, Debian's pthread
// OpenBLAS started its own pool (CPUs - 1 threads, at load time) that spun
// after each call. The check is deterministic: after all of them ran with T
// threads the process has exactly the threads one OpenMP pool of T accounts
// for, the main thread and T - 1 workers (/proc/self/task). With the pthread
// OpenBLAS (LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread) it
// fails on any machine with two or more CPUs. ctest runs each test in its own
// process, so no earlier test's pool is counted.
#include <gtest/gtest.h>
#include <omp.h>

#include <dirent.h>

#include <vector>

#include "algorithms/registry.hpp"
#include "core/device.hpp"
#include "core/problem.hpp"
#include "core/tensor.hpp"
#include "net/layers.hpp"

namespace convlab::train {
namespace {

int process_threads() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

void run_conv(const char* name, const ConvProblem& p, int threads) {
  const Algorithm& a = get_algorithm(name);
  if (!a.unavailable_reason().empty()) GTEST_SKIP() << name << ": " << a.unavailable_reason();
  std::vector<float> src(size_t(p.src_elems()), 0.5f), wei(size_t(p.wei_elems()), 0.25f), dst(size_t(p.dst_elems()));
  AlignedBuffer<unsigned char> ws(a.workspace_bytes(p, Direction::fwd) + 64);
  ExecContext ctx;
  ctx.threads = threads;
  a.run(p, Direction::fwd, ConvBuffers{src.data(), wei.data(), dst.data()}, ws.data(), ctx);
}

TEST(OneThreadRuntime, FcOpenblasAndOnednnShareOneOpenmpPool) {
  const int T = 2;
  // The OpenMP pool of T threads exists once a region ran (the main thread + T - 1).
#pragma omp parallel num_threads(T)
  { (void)omp_get_thread_num(); }
  const int base = process_threads();  // OpenBLAS and oneDNN are loaded (and initialised) by now
  ASSERT_GT(base, 0) << "cannot read /proc/self/task";

  ExecContext ctx;
  ctx.threads = T;
  FcLayer fc("fc", 256);
  fc.setup(Shape4{8, 512, 1, 1}, ctx);
  fc.init_params(1);
  std::vector<float> x(8 * 512, 0.5f), y(8 * 256), dy(8 * 256, 0.125f), dx(8 * 512);
  fc.forward(x.data(), y.data(), true, 0);
  fc.backward(x.data(), y.data(), dy.data(), dx.data());
  const ConvProblem p = parse_problem("mb4_ic32oc32_ih28iw28_kh3kw3_ph1pw1");
  run_conv("cpu.im2col_openblas", p, T);
  run_conv("onednn.direct", p, T);
  run_conv("cpu.im2col_gemm", p, T);
  // Nothing beyond the one pool: a pthread OpenBLAS adds CPUs - 1 threads.
  EXPECT_EQ(base, T) << "threads other than one OpenMP pool of " << T << " exist";
  EXPECT_EQ(process_threads(), T) << "a second thread pool appeared (OpenBLAS's own pthreads?)";
}

}  // namespace
}  // namespace convlab::train
