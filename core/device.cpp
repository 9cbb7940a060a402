#include "core/device.hpp"

#include <cpuid.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace convlab {

std::string_view to_string(DeviceKind d) { return d == DeviceKind::cpu ? "cpu" : "cuda"; }

DeviceKind parse_device(std::string_view text) {
  if (text == "cpu") return DeviceKind::cpu;
  if (text == "cuda" || text == "gpu") return DeviceKind::cuda;
  fail("unknown device '" + printable(text) + "' (expected cpu or cuda)");
}

std::string CpuInfo::isa() const {
  if (avx512f && avx512vl && avx512bw && avx512dq && fma) return "avx512";
  if (avx2 && fma) return "avx2";
  return "portable";
}

CpuInfo apply_isa_cap(CpuInfo info, std::string_view cap) {
  if (cap.empty()) return info;
  int want = -1, have = -1;
  for (int i = 0; i < int(std::size(kIsaLevels)); ++i) {
    if (cap == kIsaLevels[i]) want = i;
    if (info.isa() == kIsaLevels[i]) have = i;
  }
  if (want < 0)
    fail("CONVLAB_ISA='" + printable(cap) + "' is not an ISA level (expected avx512, avx2 or portable)");
  if (want < have)
    fail("CONVLAB_ISA=" + std::string(cap) + " but this CPU (" + info.model + ") has only " + info.isa());
  if (want >= 1) info.avx512f = info.avx512vl = info.avx512bw = info.avx512dq = false;
  if (want >= 2) info.avx2 = info.fma = false;
  info.isa_cap = std::string(cap);
  return info;
}

namespace {
// "32K" / "1M" / "65536" -> bytes; -1 when it is not one of those.
int64_t parse_size(std::string_view v) {
  int64_t unit = 1;
  if (!v.empty() && (v.back() == 'K' || v.back() == 'k')) unit = 1 << 10, v.remove_suffix(1);
  else if (!v.empty() && (v.back() == 'M' || v.back() == 'm')) unit = 1 << 20, v.remove_suffix(1);
  if (v.empty() || v.size() > 9) return -1;
  int64_t n = 0;
  for (char ch : v) {
    if (ch < '0' || ch > '9') return -1;
    n = n * 10 + (ch - '0');
  }
  return n * unit;
}
}  // namespace

CpuInfo apply_cache_override(CpuInfo info, std::string_view spec) {
  if (spec.empty()) return info;
  const std::string what = "CONVLAB_CACHES='" + printable(spec) + "'";
  for (size_t begin = 0, comma = 0; comma != std::string_view::npos; begin = comma + 1) {
    comma = spec.find(',', begin);
    const std::string_view item = spec.substr(begin, comma == std::string_view::npos ? comma : comma - begin);
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const int64_t bytes = eq == std::string_view::npos ? -1 : parse_size(item.substr(eq + 1));
    if (key == "l1d") {
      if (bytes < (4 << 10) || bytes > (4 << 20)) fail(what + ": l1d needs a size from 4K to 4M (e.g. l1d=32K)");
      info.l1d_bytes = bytes;
    } else if (key == "l2") {
      if (bytes < (64 << 10) || bytes > (256 << 20)) fail(what + ": l2 needs a size from 64K to 256M (e.g. l2=1M)");
      info.l2_bytes = bytes;
    } else {
      fail(what + " is not a cache list (expected l1d=SIZE,l2=SIZE, e.g. l1d=32K,l2=512K)");
    }
  }
  info.cache_override = std::string(spec);
  return info;
}

std::string describe_caches(const CpuInfo& c) {
  const auto kib = [](int64_t b) { return b > 0 ? std::to_string(b >> 10) + " KiB" : std::string("unknown"); };
  return "caches l1d " + kib(c.l1d_bytes) + ", l2 " + kib(c.l2_bytes) +
         (c.cache_override.empty() ? " (CPUID)" : " (CONVLAB_CACHES=" + c.cache_override + ")");
}

std::string describe_isa(const CpuInfo& c) {
  if (!c.isa_cap.empty()) return "isa " + c.isa() + " (CONVLAB_ISA=" + c.isa_cap + "; this CPU has " + c.detected_isa + ")";
  return "isa " + c.isa() + " (all this CPU has; CONVLAB_ISA=avx2|portable caps it)";
}

namespace {

// The L1 data and L2 caches from the deterministic cache parameters leaf
// (4 on Intel, 0x8000001D on AMD; the same layout): one subleaf per cache,
// type in EAX[4:0] (1 data, 3 unified), level in EAX[7:5], size =
// ways * partitions * line size * sets.
void detect_caches(CpuInfo& info) {
  unsigned a, b, c, d;
  for (unsigned leaf : {4u, 0x8000001Du}) {
    const unsigned base = leaf & 0x80000000u;
    if (__get_cpuid_max(base, nullptr) < leaf) continue;
    for (unsigned sub = 0; sub < 16; ++sub) {
      __cpuid_count(leaf, sub, a, b, c, d);
      const unsigned type = a & 0x1f, level = (a >> 5) & 7;
      if (type == 0) break;
      const int64_t bytes = int64_t((b >> 22) + 1) * (((b >> 12) & 0x3ff) + 1) * ((b & 0xfff) + 1) * (int64_t(c) + 1);
      if (level == 1 && type == 1) info.l1d_bytes = bytes;
      if (level == 2 && (type == 3 || type == 1)) info.l2_bytes = bytes;
    }
    if (info.l1d_bytes > 0 && info.l2_bytes > 0) return;
  }
}

CpuInfo detect_cpu() {
  CpuInfo info;
  unsigned a, b, c, d;
  if (__get_cpuid(0, &a, &b, &c, &d)) {
    char v[13] = {};
    std::memcpy(v, &b, 4);
    std::memcpy(v + 4, &d, 4);
    std::memcpy(v + 8, &c, 4);
    info.vendor = v;
  }
  bool osxsave = false, os_avx = false, os_avx512 = false;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    info.fma = c & bit_FMA;
    osxsave = c & bit_OSXSAVE;
  }
  if (osxsave) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    os_avx = (lo & 0x6) == 0x6;
    os_avx512 = os_avx && (lo & 0xe0) == 0xe0;
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    info.avx2 = os_avx && (b & bit_AVX2);
    info.avx512f = os_avx512 && (b & bit_AVX512F);
    info.avx512dq = os_avx512 && (b & bit_AVX512DQ);
    info.avx512bw = os_avx512 && (b & bit_AVX512BW);
    info.avx512vl = os_avx512 && (b & bit_AVX512VL);
  }
  info.fma = info.fma && os_avx;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) info.model = line.substr(colon + 2);
      break;
    }
  }
  if (info.model.empty()) info.model = info.vendor.empty() ? "unknown CPU" : info.vendor;
  // The CPUs this process may run on (taskset, cgroups cpusets, CI runners), as
  // nproc counts them; hardware_concurrency() counts the whole machine's.
  cpu_set_t set;
  CPU_ZERO(&set);
  const int allowed = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
  info.hardware_threads = allowed > 0 ? allowed : int(std::max(1u, std::thread::hardware_concurrency()));
  detect_caches(info);
  info.detected_isa = info.isa();
  return info;
}

}  // namespace

const CpuInfo& cpu_info() {
  // A throw leaves the static uninitialised: every later call throws the same line.
  static const CpuInfo info = [] {
    const char* cap = std::getenv("CONVLAB_ISA");
    const char* caches = std::getenv("CONVLAB_CACHES");
    return apply_cache_override(apply_isa_cap(detect_cpu(), cap ? cap : ""), caches ? caches : "");
  }();
  return info;
}

const CudaInfo& cuda_info() {
  static const CudaInfo info = cuda::rt::query();
  return info;
}

std::string device_fingerprint(DeviceKind d, int threads) {
  if (d == DeviceKind::cpu) {
    const auto& c = cpu_info();
    const int t = threads > 0 ? threads : c.hardware_threads;
    return c.model + " | " + c.isa() + " | " + std::to_string(t) + " threads" +
           (c.cache_override.empty() ? "" : " | caches " + c.cache_override);
  }
  const auto& g = cuda_info();
  if (!g.available) return "cuda unavailable: " + g.reason;
  return g.name + " | sm" + std::to_string(g.cc_major) + std::to_string(g.cc_minor) + " x" + std::to_string(g.sm_count) +
         " | driver " + std::to_string(g.driver_version) + " | cudnn " + std::to_string(g.cudnn_version);
}

int ExecContext::resolved_threads() const { return threads > 0 ? threads : cpu_info().hardware_threads; }

void fail_allocation(DeviceKind d, size_t bytes, const std::string& detail) {
  std::string source;
  const size_t avail = available_memory_bytes(d, &source);
  std::string msg = "cannot allocate " + format_bytes(bytes) + " (" + std::to_string(bytes) + " bytes) of " +
                    (d == DeviceKind::cpu ? "host" : std::string(to_string(d))) + " memory";
  if (!detail.empty()) msg += " (" + detail + ")";
  if (avail) msg += "; " + format_bytes(avail) + " is available (" + source + ")";
  throw OutOfMemory(msg);
}

void* device_alloc(DeviceKind d, size_t bytes) {
  if (d == DeviceKind::cuda) {
    try {
      return cuda::rt::alloc(bytes);
    } catch (const OutOfMemory& e) {
      fail_allocation(d, bytes, e.what());
    }
  }
  const size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p) fail_allocation(d, bytes);
  return p;
}

void device_free(DeviceKind d, void* p) noexcept {
  if (d == DeviceKind::cuda) cuda::rt::free(p);
  else std::free(p);
}

void copy_to_device(DeviceKind d, void* dst, const void* src, size_t bytes) {
  if (d == DeviceKind::cuda) cuda::rt::copy_h2d(dst, src, bytes);
  else if (bytes) std::memcpy(dst, src, bytes);
}

void copy_to_host(DeviceKind d, void* dst, const void* src, size_t bytes) {
  if (d == DeviceKind::cuda) cuda::rt::copy_d2h(dst, src, bytes);
  else if (bytes) std::memcpy(dst, src, bytes);
}

void device_fill_bytes(DeviceKind d, void* dst, unsigned char value, size_t bytes) {
  if (d == DeviceKind::cuda) cuda::rt::fill_bytes(dst, value, bytes);
  else if (bytes) std::memset(dst, value, bytes);
}

void device_copy(const ExecContext& ctx, void* dst, const void* src, size_t bytes) {
  if (ctx.device == DeviceKind::cuda) cuda::rt::copy_d2d(dst, src, bytes, ctx.stream);
  else if (bytes) std::memmove(dst, src, bytes);
}

namespace {

// The first number in `path` ("max" or a missing file: 0 = no limit / unknown).
size_t read_bytes(const std::string& path) {
  std::ifstream in(path);
  unsigned long long v = 0;
  return in >> v ? size_t(v) : 0;
}

// MemAvailable from /proc/meminfo, in bytes (0 when missing).
size_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  unsigned long long kb = 0;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return size_t(kb) * 1024;
  }
  return 0;
}

// What the address-space limit leaves: RLIMIT_AS minus this process's virtual
// size; SIZE_MAX without a limit.
size_t address_space_room() {
  rlimit lim{};
  if (getrlimit(RLIMIT_AS, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  std::ifstream statm("/proc/self/statm");
  unsigned long long pages = 0;
  if (!(statm >> pages)) return SIZE_MAX;
  const size_t vm = size_t(pages) * size_t(sysconf(_SC_PAGESIZE));
  return size_t(lim.rlim_cur) > vm ? size_t(lim.rlim_cur) - vm : 0;
}

}  // namespace

size_t cgroup_memory_room(const std::string& proc_cgroup, const std::string& root, std::string* source) {
  std::ifstream in(proc_cgroup);
  std::string line;
  size_t best = SIZE_MAX;
  while (std::getline(in, line)) {
    // hierarchy-ID:controller-list:path ("0::/a/b" on v2, "4:memory:/a/b" on v1)
    const size_t c1 = line.find(':'), c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1);
    std::string path = line.substr(c2 + 1);
    const bool v1 = ("," + controllers + ",").find(",memory,") != std::string::npos;
    if (!v1 && !(line.compare(0, 2, "0:") == 0 && controllers.empty())) continue;
    // The mounts a hierarchy may sit at: v1 under root/memory; v2 at root (unified) or root/unified (hybrid).
    const std::vector<std::string> mounts = v1 ? std::vector<std::string>{root + "/memory"}
                                               : std::vector<std::string>{root, root + "/unified"};
    const char* limit_name = v1 ? "/memory.limit_in_bytes" : "/memory.max";
    const char* usage_name = v1 ? "/memory.usage_in_bytes" : "/memory.current";
    // This cgroup and every parent: a parent's limit bounds its children too.
    while (!path.empty() && path.back() == '/') path.pop_back();
    for (;;) {
      for (const std::string& m : mounts) {
        const std::string dir = m + path;
        const size_t limit = read_bytes(dir + limit_name), usage = read_bytes(dir + usage_name);
        if (limit == 0 || limit >= (size_t(1) << 60)) continue;  // "max", v1's "unlimited", or not there
        const size_t room = limit > usage ? limit - usage : 0;
        if (room < best) {
          best = room;
          if (source) *source = "cgroup " + dir + limit_name + " - usage";
        }
      }
      if (path.empty()) break;
      path.erase(path.rfind('/'));
    }
  }
  return best;
}

size_t available_memory_bytes(DeviceKind d, std::string* source) {
  if (d == DeviceKind::cuda) {
    if (source) *source = "cudaMemGetInfo free";
    return cuda::rt::free_bytes();
  }
  size_t avail = mem_available();
  std::string from = "MemAvailable";
  auto consider = [&](size_t room, const std::string& what) {
    if (room != SIZE_MAX && (avail == 0 || room < avail)) {
      avail = std::max<size_t>(room, 1);  // no room at all is still a reading (0 means none)
      from = what;
    }
  };
  // A cgroup limit far below the machine's memory (containers, CI) is the real bound.
  std::string cgroup;
  const size_t cg = cgroup_memory_room("/proc/self/cgroup", "/sys/fs/cgroup", &cgroup);
  consider(cg, cgroup);
  consider(address_space_room(), "the address-space limit (ulimit -v) minus this process's size");
  if (source) *source = avail ? from : "nothing readable";
  return avail;
}

std::string memory_refusal(size_t need, size_t available, const std::string& source, const std::string& memory) {
  if (available == 0 || double(need) <= (1 - kMemoryMargin) * double(available)) return {};
  return "needs " + format_bytes(need) + " of " + memory + " but " + format_bytes(available) + " is available (" +
         source + "; runs over " + std::to_string(int(std::lround(100 * (1 - kMemoryMargin)))) +
         " % of it are refused)";
}

void require_memory(DeviceKind d, size_t need, const std::string& what) {
  std::string source;
  const size_t avail = available_memory_bytes(d, &source);
  const std::string why =
      memory_refusal(need, avail, source, d == DeviceKind::cpu ? "memory" : std::string(to_string(d)) + " memory");
  if (!why.empty()) throw OutOfMemory(what + " " + why);
}

void device_synchronize(const ExecContext& ctx) {
  if (ctx.device == DeviceKind::cuda) cuda::rt::synchronize(ctx.stream);
}

}  // namespace convlab
