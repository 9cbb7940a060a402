// Devices, device memory and execution context.
//
// Every algorithm runs on one DeviceKind and receives device pointers. For the
// CPU these are host pointers; for CUDA they come from cudaMalloc. The CUDA half
// (core/cuda_runtime.cu, compiled by nvcc) answers "no CUDA device" cleanly at
// run time on machines without a GPU; a build without CUDA answers "built
// without CUDA".
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace convlab {

enum class DeviceKind { cpu, cuda };
std::string_view to_string(DeviceKind d);
DeviceKind parse_device(std::string_view text);  // "cpu" | "cuda"; throws Error

// The CPU's features as convlab's kernels see them. Every run-time dispatch
// (kernels/cpu/{gemm,direct,winograd,fft}, the peak loop, oneDNN's ISA cap)
// reads these flags, so capping them caps everything.
struct CpuInfo {
  std::string vendor, model;
  bool avx512f = false, avx512vl = false, avx512bw = false, avx512dq = false;
  bool avx2 = false, fma = false;
  int hardware_threads = 1;  // CPUs this process may use (its affinity mask, like nproc)
  // Data cache sizes of one core from CPUID's cache descriptors (leaf 4, or
  // 0x8000001D on AMD); 0 where the CPU (or its hypervisor) does not say.
  // Kernels size their cache blocking from them (kernels/cpu/gemm).
  int64_t l1d_bytes = 0, l2_bytes = 0;
  // CONVLAB_CACHES as applied ("" when unset): the sizes above are then its, not CPUID's.
  std::string cache_override;
  // The widest level the CPU itself has, before any cap ("avx512", ...).
  std::string detected_isa;
  // CONVLAB_ISA as applied ("" when unset): isa() is at most this.
  std::string isa_cap;
  // The widest SIMD level usable here: "avx512" (F/VL/BW/DQ + FMA), "avx2"
  // (AVX2 + FMA) or "portable" (baseline x86-64).
  std::string isa() const;
};

// The levels CONVLAB_ISA accepts, widest first.
inline constexpr const char* kIsaLevels[] = {"avx512", "avx2", "portable"};

// `detected` with the flags above `cap` cleared ("avx2" clears AVX-512;
// "portable" clears AVX-512, AVX2 and FMA); an empty cap changes nothing.
// Throws Error (one line) for an unknown level or one the CPU lacks.
CpuInfo apply_isa_cap(CpuInfo detected, std::string_view cap);

// "isa avx2 (CONVLAB_ISA=avx2; this CPU has avx512)" or "isa avx512 (all this
// CPU has; CONVLAB_ISA=avx2|portable caps it)": for `convlab algos` / `peak`.
std::string describe_isa(const CpuInfo& c);

// `detected` with its L1 data and L2 sizes replaced as `spec` says: "l1d=32K,l2=512K" (either or
// both; K, M or a plain byte count; l1d 4K..4M, l2 64K..256M); an empty spec changes nothing. It
// lets one machine run the cache blocking another machine's caches give (kernels/cpu/gemm sizes its
// blocks and, with them, its scratch from these): the tests run the blocking-dependent algorithms
// under the cache sizes of the CPUs seen, and a user can reproduce another machine's plan.
// Throws Error (one line) for anything else.
CpuInfo apply_cache_override(CpuInfo detected, std::string_view spec);
// "caches l1d 32 KiB, l2 1024 KiB (CPUID)" or "(CONVLAB_CACHES=...)".
std::string describe_caches(const CpuInfo& c);

// This machine's CPU, capped by the environment variable CONVLAB_ISA
// (avx512 | avx2 | portable; unset: the best the CPU has), its cache sizes
// replaced by CONVLAB_CACHES where that is set. Detected once.
// Throws Error while CONVLAB_ISA is invalid or asks for what the CPU lacks
// (the CLI calls it first thing, so that is one line and exit 2).
const CpuInfo& cpu_info();

struct CudaInfo {
  bool available = false;
  std::string reason;  // why not, when !available ("no CUDA device", "built without CUDA", ...)
  std::string name;
  int sm_count = 0, cc_major = 0, cc_minor = 0;
  int driver_version = 0, runtime_version = 0, cudnn_version = 0;  // cudnn_version 0: cuDNN not loaded
};
// Queried once; never throws.
const CudaInfo& cuda_info();

// A string that identifies the machine for cache entries: CPU model + (capped)
// ISA + threads, or GPU name / SM count / driver / cuDNN version.
std::string device_fingerprint(DeviceKind d, int threads);

// Where and how an algorithm runs. threads = 0 means all hardware threads.
class StageProfile;  // core/stage_profile.hpp

struct ExecContext {
  DeviceKind device = DeviceKind::cpu;
  int threads = 0;
  void* stream = nullptr;  // cudaStream_t on CUDA, unused on the CPU
  // When set, CPU algorithms record where the run's time goes, stage by stage
  // (the benchmarks' per-stage limits); null in every timed comparison.
  StageProfile* profile = nullptr;
  int resolved_threads() const;
};

// Device memory. All throw Error on failure (with the runtime's message);
// an allocation that cannot be had throws OutOfMemory naming its size.
void* device_alloc(DeviceKind d, size_t bytes);
// Throws OutOfMemory: "cannot allocate 1.50 GiB (1610612736 bytes) of host
// memory (detail); 1.20 GiB is available (source)". For every allocation that
// fails (device_alloc, AlignedBuffer).
[[noreturn]] void fail_allocation(DeviceKind d, size_t bytes, const std::string& detail = {});
void device_free(DeviceKind d, void* p) noexcept;
void copy_to_device(DeviceKind d, void* dst, const void* src, size_t bytes);
void copy_to_host(DeviceKind d, void* dst, const void* src, size_t bytes);
void device_fill_bytes(DeviceKind d, void* dst, unsigned char value, size_t bytes);
// dst = src, both on ctx.device; asynchronous on ctx.stream for CUDA.
void device_copy(const ExecContext& ctx, void* dst, const void* src, size_t bytes);
void device_synchronize(const ExecContext& ctx);

// Bytes a new allocation on `d` can count on now. On the CPU the smallest of
//   - /proc/meminfo's MemAvailable (pages allocated but never touched are still
//     in it, so read it before allocating what is being planned);
//   - the room in this process's memory cgroup and each of its parents (v2
//     memory.max minus memory.current, v1 memory.limit_in_bytes minus
//     memory.usage_in_bytes; the paths from /proc/self/cgroup);
//   - the room under the address-space limit (RLIMIT_AS, `ulimit -v`) minus
//     this process's virtual size (/proc/self/statm), where a limit is set.
// On CUDA cudaMemGetInfo's free bytes. `source` (optional) says which figure
// it was. 0 when nothing could be read (the caller then cannot check).
// Every memory check in convlab reads this one function.
size_t available_memory_bytes(DeviceKind d, std::string* source = nullptr);

// The smallest room (limit minus usage) over the memory cgroups that the file
// `proc_cgroup` (in /proc/<pid>/cgroup's format) lists, each looked up under
// `root` (normally /sys/fs/cgroup) with its parents; SIZE_MAX when none of them
// has a limit. `source` names the cgroup file that gave the figure.
size_t cgroup_memory_room(const std::string& proc_cgroup, const std::string& root, std::string* source = nullptr);

// Keep this fraction of the available memory free (other processes, allocator
// overhead, what a command allocates besides what it counts): every command
// refuses a run whose counted bytes exceed 80 % of available_memory_bytes.
inline constexpr double kMemoryMargin = 0.2;

// "" when `need` bytes fit in (1 - kMemoryMargin) of `available` (or when
// `available` is 0: nothing could be read); else one line: "needs 12.00 GiB
// of memory but 9.80 GiB is available (MemAvailable; runs over 80 % of it are
// refused)". Callers put the subject in front ("cpu.direct on ... fwd ").
std::string memory_refusal(size_t need, size_t available, const std::string& source, const std::string& memory = "memory");
// Reads available_memory_bytes(d) and throws OutOfMemory ("<what> " +
// memory_refusal's line) when `need` does not fit. Call it before allocating.
void require_memory(DeviceKind d, size_t need, const std::string& what);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceKind d, size_t bytes) : dev_(d), bytes_(bytes), ptr_(bytes ? device_alloc(d, bytes) : nullptr) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : dev_(o.dev_), bytes_(o.bytes_), ptr_(o.ptr_) { o.ptr_ = nullptr; o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) { reset(); dev_ = o.dev_; bytes_ = o.bytes_; ptr_ = o.ptr_; o.ptr_ = nullptr; o.bytes_ = 0; }
    return *this;
  }
  ~DeviceBuffer() { reset(); }
  void reset() { if (ptr_) device_free(dev_, ptr_); ptr_ = nullptr; bytes_ = 0; }
  void* get() const { return ptr_; }
  float* f32() const { return static_cast<float*>(ptr_); }
  size_t bytes() const { return bytes_; }
  DeviceKind device() const { return dev_; }

 private:
  DeviceKind dev_ = DeviceKind::cpu;
  size_t bytes_ = 0;
  void* ptr_ = nullptr;
};

// Implemented by core/cuda_runtime.cu (nvcc) or core/cuda_none.cpp.
namespace cuda::rt {
CudaInfo query();
void* alloc(size_t bytes);
void free(void* p) noexcept;
void copy_h2d(void* dst, const void* src, size_t bytes);
void copy_d2h(void* dst, const void* src, size_t bytes);
void fill_bytes(void* dst, unsigned char value, size_t bytes);
void copy_d2d(void* dst, const void* src, size_t bytes, void* stream);
void synchronize(void* stream);
size_t free_bytes();  // cudaMemGetInfo's free memory; 0 without a device
}  // namespace cuda::rt

}  // namespace convlab
