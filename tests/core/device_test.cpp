// The run-time ISA cap (CONVLAB_ISA): apply_isa_cap() on made-up CPUs, and on
// this machine every dispatch site (sgemm, direct, Winograd, FFT kernel tables,
// the peak loop's ISA, the cache fingerprint) follows cpu_info().isa(). CTest
// runs this binary's DeviceIsaCap.* again under CONVLAB_ISA=avx2 and =portable
// (tests/CMakeLists.txt), so the narrower paths are exercised on any CPU.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sched.h>

#include <cstdlib>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "kernels/cpu/direct/direct_ukernel.hpp"
#include "kernels/cpu/fft/fft.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"
#include "kernels/cpu/winograd/winograd_kernels.hpp"

namespace convlab {
namespace {

CpuInfo fake_cpu(bool avx512, bool avx2) {
  CpuInfo c;
  c.model = "test CPU";
  c.avx512f = c.avx512vl = c.avx512bw = c.avx512dq = avx512;
  c.avx2 = c.fma = avx2;
  c.hardware_threads = 3;
  c.detected_isa = c.isa();
  return c;
}

std::string error_of(const CpuInfo& c, const char* cap) {
  try {
    (void)apply_isa_cap(c, cap);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceIsaCap, ClearsTheFlagsAboveTheCap) {
  const CpuInfo full = fake_cpu(true, true);
  ASSERT_EQ(full.isa(), "avx512");
  const CpuInfo none = apply_isa_cap(full, "");
  EXPECT_EQ(none.isa(), "avx512");
  EXPECT_EQ(none.isa_cap, "");
  const CpuInfo same = apply_isa_cap(full, "avx512");
  EXPECT_EQ(same.isa(), "avx512");
  EXPECT_EQ(same.isa_cap, "avx512");
  const CpuInfo avx2 = apply_isa_cap(full, "avx2");
  EXPECT_EQ(avx2.isa(), "avx2");
  EXPECT_FALSE(avx2.avx512f || avx2.avx512vl || avx2.avx512bw || avx2.avx512dq);
  EXPECT_TRUE(avx2.avx2 && avx2.fma);
  EXPECT_EQ(avx2.detected_isa, "avx512");
  EXPECT_EQ(avx2.hardware_threads, 3);
  const CpuInfo portable = apply_isa_cap(full, "portable");
  EXPECT_EQ(portable.isa(), "portable");
  EXPECT_FALSE(portable.avx512f || portable.avx2 || portable.fma);
  EXPECT_EQ(apply_isa_cap(fake_cpu(false, true), "portable").isa(), "portable");
  EXPECT_EQ(apply_isa_cap(fake_cpu(false, false), "portable").isa(), "portable");
  EXPECT_NE(describe_isa(avx2).find("isa avx2 (CONVLAB_ISA=avx2; this CPU has avx512)"), std::string::npos)
      << describe_isa(avx2);
}

// Asking for more than the CPU has, or for no known level, is one line naming both.
TEST(DeviceIsaCap, RefusesWhatTheCpuLacks) {
  EXPECT_EQ(error_of(fake_cpu(false, true), "avx512"), "CONVLAB_ISA=avx512 but this CPU (test CPU) has only avx2");
  EXPECT_EQ(error_of(fake_cpu(false, false), "avx2"), "CONVLAB_ISA=avx2 but this CPU (test CPU) has only portable");
  EXPECT_NE(error_of(fake_cpu(true, true), "AVX2").find("'AVX2' is not an ISA level (expected avx512, avx2 or portable)"),
            std::string::npos);
  EXPECT_NE(error_of(fake_cpu(true, true), "sse4\n").find("'sse4\\x0a'"), std::string::npos)
      << error_of(fake_cpu(true, true), "sse4\n");
}

// The cap in the environment is the one in force (under CTest's
// CONVLAB_ISA=avx2 run this is what proves the no-AVX-512 path ran).
TEST(DeviceIsaCap, FollowsTheEnvironment) {
  const CpuInfo& c = cpu_info();
  const char* env = std::getenv("CONVLAB_ISA");
  if (env && *env) {
    EXPECT_EQ(c.isa_cap, env);
    EXPECT_EQ(c.isa(), env);
  } else {
    EXPECT_EQ(c.isa_cap, "");
    EXPECT_EQ(c.isa(), c.detected_isa);
  }
  EXPECT_NE(device_fingerprint(DeviceKind::cpu, 1).find(" | " + c.isa() + " | 1 threads"), std::string::npos)
      << device_fingerprint(DeviceKind::cpu, 1);
}

// CONVLAB_CACHES replaces the two sizes the blocking reads, or says in one line why it cannot.
TEST(DeviceCacheOverride, ReplacesTheSizesOrRefuses) {
  CpuInfo c = fake_cpu(true, true);
  c.l1d_bytes = 48 << 10, c.l2_bytes = 1 << 20;
  const CpuInfo same = apply_cache_override(c, "");
  EXPECT_EQ(same.l1d_bytes, 48 << 10);
  EXPECT_EQ(same.cache_override, "");
  EXPECT_NE(describe_caches(same).find("caches l1d 48 KiB, l2 1024 KiB (CPUID)"), std::string::npos);
  const CpuInfo both = apply_cache_override(c, "l1d=32K,l2=512K");
  EXPECT_EQ(both.l1d_bytes, 32 << 10);
  EXPECT_EQ(both.l2_bytes, 512 << 10);
  EXPECT_EQ(both.isa(), "avx512");
  EXPECT_NE(describe_caches(both).find("(CONVLAB_CACHES=l1d=32K,l2=512K)"), std::string::npos);
  const CpuInfo l2 = apply_cache_override(c, "l2=2m");
  EXPECT_EQ(l2.l1d_bytes, 48 << 10);
  EXPECT_EQ(l2.l2_bytes, 2 << 20);
  EXPECT_EQ(apply_cache_override(c, "l1d=65536").l1d_bytes, 65536);
  const auto error = [&](const char* spec) -> std::string {
    try {
      (void)apply_cache_override(c, spec);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error("l1d=32").find("l1d needs a size from 4K to 4M"), std::string::npos);
  EXPECT_NE(error("l2=8G").find("l2 needs a size from 64K to 256M"), std::string::npos);
  EXPECT_NE(error("l2=-1M").find("l2 needs a size"), std::string::npos);
  EXPECT_NE(error("l3=32M").find("is not a cache list"), std::string::npos);
  EXPECT_NE(error("l1d=32K,").find("is not a cache list"), std::string::npos);
  EXPECT_NE(error("l1d=32K\n").find("'l1d=32K\\x0a'"), std::string::npos) << error("l1d=32K\n");
}

// The override in the environment is the one in force (the GEMM blocking reads these sizes)
// (under CTest's caches_* runs this is what proves the other machine's sizes were used).
TEST(DeviceCacheOverride, FollowsTheEnvironment) {
  const char* env = std::getenv("CONVLAB_CACHES");
  EXPECT_EQ(cpu_info().cache_override, env ? env : "");
  if (env && *env) {
    EXPECT_NE(device_fingerprint(DeviceKind::cpu, 1).find(std::string(" | caches ") + env), std::string::npos);
  }
}

// Every kernel table picks the level cpu_info() reports, no wider, no narrower.
TEST(DeviceIsaCap, EveryKernelTableFollowsTheCpu) {
  const std::string isa = cpu_info().isa();
  EXPECT_EQ(cpu::to_string(cpu::sgemm_resolve_isa(cpu::GemmIsa::auto_)), isa);
  const std::string sgemm = cpu::sgemm_ukernel(cpu::GemmIsa::auto_).name;
  EXPECT_EQ(sgemm.substr(sgemm.rfind('_') + 1), isa) << sgemm;
  EXPECT_EQ(cpu::direct::select_ukernels().isa, isa);
  EXPECT_EQ(cpu::winograd::best_kernels().isa, isa);
  EXPECT_EQ(cpu::fft::isa_used(), isa);
  if (isa != "avx512") {
    EXPECT_FALSE(cpu::sgemm_isa_supported(cpu::GemmIsa::avx512));
  }
  if (isa == "portable") {
    EXPECT_FALSE(cpu::sgemm_isa_supported(cpu::GemmIsa::avx2));
  }
}

// hardware_threads is what this process may use (its affinity mask, as nproc
// counts), and "all threads" resolves to it. Under CTest's `taskset -c 0` run
// (one_cpu.core) CONVLAB_EXPECT_CPUS=1 says how many that is.
TEST(DeviceThreads, FollowTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(cpu_info().hardware_threads, CPU_COUNT(&set));
  EXPECT_EQ(ExecContext{}.resolved_threads(), CPU_COUNT(&set));
  if (const char* want = std::getenv("CONVLAB_EXPECT_CPUS")) {
    EXPECT_EQ(cpu_info().hardware_threads, std::atoi(want));
  }
}

}  // namespace
}  // namespace convlab

namespace convlab {
namespace {

// Without the driver library the runtime only says "CUDA driver version is insufficient for CUDA runtime
// version"; the reason a user reads says that there is no NVIDIA driver.
TEST(DeviceCuda, NoDriverIsSaidInTheUsersWords) {
  if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    dlclose(driver);
    GTEST_SKIP() << "an NVIDIA driver library is installed here";
  }
  const CudaInfo& info = cuda_info();
  EXPECT_FALSE(info.available);
#ifdef CONVLAB_HAS_CUDA
  EXPECT_EQ(info.reason, "no NVIDIA driver: libcuda.so.1 is not installed");
#endif
  EXPECT_EQ(info.reason.find("insufficient"), std::string::npos) << info.reason;
}

}  // namespace
}  // namespace convlab
