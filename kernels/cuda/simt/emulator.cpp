// The SIMT emulator behind simt.hpp's EMULATE path (compiled only into the
// emulated test binaries, never by nvcc).
//
// Execution model: a persistent pool of OS threads, one per GPU thread of a
// block (<= 1024) times the number of block slots (CONVLAB_SIMT_CONCURRENT_BLOCKS,
// default 2): a launch runs that many blocks at a time. Each slot takes the next
// block of the grid (linear order) from a shared counter; every worker runs the
// kernel body for its threadIdx, then leaves its block's barriers
// (arrive_and_drop) and meets the slot's other threads at a block-end barrier
// whose completion step checks for errors and prepares the slot's next block
// (fresh barriers, blockIdx, static and dynamic shared memory = 0xFF bytes, NaN
// in every float). Because threads are real threads, ThreadSanitizer sees a
// missing __syncthreads, and two concurrent blocks writing one element, as data
// races.
//
// Shared memory: each slot owns its dynamic shared memory and its static shared
// memory. CONVLAB_SHARED declarations get offsets in the static area per launch,
// when a thread first passes them (SharedDecl: launch id | offset, relaxed
// atomics so the lookup adds no happens-before edge TSan would trust).
//
// Barriers: __syncthreads is a std::barrier over the block; warp operations use
// a std::barrier over the warp's lanes plus 32 exchange slots. Each thread
// records the call site it waits at; the barrier's completion step (which runs
// once all threads still in the kernel arrived) compares them: different sites
// = divergent barrier, a thread that already returned while others wait at a
// barrier = early return. Both are reported as errors (the launch throws), and
// never hang, since a returned thread has dropped out of every barrier.
//
// The GPU's rules: launch configuration and shared memory limits are checked
// before a launch (convlab::Error, like cudaErrorInvalidConfiguration); a thread
// that throws or a misaligned access (simt::vload / vstore, misaligned pointer
// arguments) is a device fault: the launch throws convlab::DeviceFault and so
// does every later launch and memory call until reset_device_for_tests().
//
// Watchdog: the launching thread waits for the workers with a timeout; if no
// barrier or block completes for CONVLAB_SIMT_WATCHDOG_S seconds (default 120)
// it prints every thread's state and call site and aborts (a real hang: e.g.
// a partial-mask shuffle, or a spin on another block's flag).
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::simt::emu {

namespace {

enum State : int { kIdle, kRunning, kAtSync, kAtWarp, kExited };

struct ThreadRec {
  std::atomic<int> state{kIdle};
  std::atomic<const char*> file{""};
  std::atomic<unsigned> line{0};
  std::atomic<unsigned> column{0};
  std::atomic<const char*> op{""};
};

// A modelled device fault raised inside a kernel (misaligned access).
struct Fault : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Ends a thread after a reported launch error (not a fault).
struct Abort {};

struct Launch;
struct Slot;

struct SyncDone {
  Slot* S;
  void operator()() noexcept;
};
struct WarpDone {
  Slot* S;
  int warp;
  void operator()() noexcept;
};
struct BlockDone {
  Slot* S;
  void operator()() noexcept;
};

struct Warp {
  std::unique_ptr<std::barrier<WarpDone>> bar;
  uint64_t slot[32] = {};
  unsigned full_mask = 0;
  int base = 0, size = 0;
};

std::string xyz(uint64_t x, uint64_t y, uint64_t z) {
  return "(" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}

// A 64-byte aligned, owned byte buffer.
struct Bytes {
  std::unique_ptr<unsigned char[]> store;
  unsigned char* p = nullptr;
  void allocate(size_t n) {
    store = std::make_unique<unsigned char[]>(n + 64);
    p = store.get() + (64 - reinterpret_cast<uintptr_t>(store.get()) % 64) % 64;
  }
};

struct Launch {
  const char* name = "";
  dim3 grid, block;
  size_t shmem = 0, smem_total_limit = 0;
  const std::function<void()>* body = nullptr;
  int nthreads = 0, nwarps = 0;
  uint64_t nblocks = 0;
  std::atomic<uint64_t> next{0};  // next linear block index to hand out
  std::vector<std::unique_ptr<Slot>> slots;
  std::atomic<uint64_t> progress{0};
  uint64_t id = 0;

  std::mutex static_m;
  size_t static_bytes = 0;  // CONVLAB_SHARED bytes assigned so far

  std::mutex err_m;
  std::string error;
  bool fault = false;

  void report(const std::string& msg, bool is_fault) {
    std::lock_guard<std::mutex> lk(err_m);
    if (error.empty()) {
      error = msg;
      fault = is_fault;
    }
  }
  bool has_error() {
    std::lock_guard<std::mutex> lk(err_m);
    return !error.empty();
  }
  size_t static_high_water() {
    std::lock_guard<std::mutex> lk(static_m);
    return static_bytes;
  }
  std::string thread_name(int tid) const {
    const unsigned x = unsigned(tid) % block.x, y = unsigned(tid) / block.x % block.y,
                   z = unsigned(tid) / (block.x * block.y);
    return "thread " + xyz(x, y, z);
  }
};

// One block in flight: its threads' records, barriers and shared memory.
struct Slot {
  Launch* L = nullptr;
  uint64_t cur = 0;  // linear block index
  uint3 cur_block{0, 0, 0};
  bool finished = false;
  std::unique_ptr<ThreadRec[]> recs;
  std::unique_ptr<std::barrier<SyncDone>> sync;
  std::vector<std::unique_ptr<Warp>> warps;
  std::unique_ptr<std::barrier<BlockDone>> block_end;
  Bytes smem, static_smem;

  void report(const std::string& msg, bool is_fault = false) {
    L->report("block " + xyz(cur_block.x, cur_block.y, cur_block.z) + ": " + msg, is_fault);
  }
  std::string site_of(int tid) const {
    const ThreadRec& r = recs[tid];
    return std::string(r.op.load()) + " at " + r.file.load() + ":" + std::to_string(r.line.load());
  }
  bool same_site(int a, int b) const {
    return recs[a].line.load() == recs[b].line.load() && recs[a].column.load() == recs[b].column.load() &&
           std::strcmp(recs[a].file.load(), recs[b].file.load()) == 0 &&
           std::strcmp(recs[a].op.load(), recs[b].op.load()) == 0;
  }
  // Checks the threads [first, first+count) at a completing barrier phase.
  void check_phase(int first, int count, int waiting_state, const char* what) {
    int waiting = -1, exited = -1, n_waiting = 0;
    for (int t = first; t < first + count; ++t) {
      const int s = recs[t].state.load();
      if (s == waiting_state) {
        ++n_waiting;
        if (waiting < 0) {
          waiting = t;
        } else if (!same_site(waiting, t)) {
          report(std::string("divergent ") + what + ": " + L->thread_name(waiting) + " waits at " +
                 site_of(waiting) + ", " + L->thread_name(t) + " at " + site_of(t));
        }
      } else if (s == kExited && exited < 0) {
        exited = t;
      }
    }
    if (n_waiting > 0 && exited >= 0)
      report(L->thread_name(exited) + " returned before the " + site_of(waiting) + " that " +
             std::to_string(n_waiting) + " other thread(s) reached");
    L->progress.fetch_add(1, std::memory_order_relaxed);
  }

  // Sets up block `cur` (called before the slot's first block and by BlockDone).
  void prepare_block() {
    const Launch& l = *L;
    cur_block = uint3{unsigned(cur % l.grid.x), unsigned(cur / l.grid.x % l.grid.y),
                      unsigned(cur / (uint64_t(l.grid.x) * l.grid.y))};
    sync = std::make_unique<std::barrier<SyncDone>>(l.nthreads, SyncDone{this});
    for (int w = 0; w < l.nwarps; ++w) {
      warps[w]->bar = std::make_unique<std::barrier<WarpDone>>(warps[w]->size, WarpDone{this, w});
    }
    if (l.shmem) std::memset(smem.p, 0xFF, l.shmem);  // NaN in every float / double
    if (const size_t st = L->static_high_water()) std::memset(static_smem.p, 0xFF, st);
    for (int t = 0; t < l.nthreads; ++t) recs[t].state.store(kIdle);
  }
};

void SyncDone::operator()() noexcept {
  try {
    S->check_phase(0, S->L->nthreads, kAtSync, "__syncthreads");
  } catch (...) {
  }
}
void WarpDone::operator()() noexcept {
  try {
    const Warp& w = *S->warps[warp];
    S->check_phase(w.base, w.size, kAtWarp, "warp operation");
  } catch (...) {
  }
}
void BlockDone::operator()() noexcept {
  try {
    Launch& L = *S->L;
    L.progress.fetch_add(1, std::memory_order_relaxed);
    if (!L.has_error()) S->cur = L.next.fetch_add(1);
    if (L.has_error() || S->cur >= L.nblocks) {
      S->finished = true;
      return;
    }
    S->prepare_block();
  } catch (...) {
    S->report("emulator: exception while preparing a block");
    S->finished = true;
  }
}

thread_local Launch* t_launch = nullptr;
thread_local Slot* t_slot = nullptr;
thread_local int t_tid = 0;

Slot& current(const char* what) {
  if (!t_slot) {
    std::fprintf(stderr, "simt emulator: %s called outside a kernel\n", what);
    std::abort();
  }
  return *t_slot;
}

void wait_at(Slot& S, int state, const char* op, const Site& site) {
  ThreadRec& r = S.recs[t_tid];
  r.op.store(op);
  r.file.store(site.file_name());
  r.line.store(site.line());
  r.column.store(site.column());
  r.state.store(state);
}

// The device state outside any launch: sticky fault, opt-ins, grid limits.
struct Device {
  std::mutex m;
  std::string fault;                        // the first modelled fault, "" = none
  std::map<const void*, size_t> max_dyn;    // set_max_dynamic_smem, per kernel
  GridLimits limits = kGridLimits;
  uint64_t launches = 0;
};
Device& device() {
  static Device d;
  return d;
}
void record_fault(const std::string& what) {
  Device& d = device();
  std::lock_guard<std::mutex> lk(d.m);
  if (d.fault.empty()) d.fault = what;
}

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lk(m_);
      shutdown_ = true;
    }
    work_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  void run(Launch& L) {
    std::lock_guard<std::mutex> serial(launch_m_);  // one launch at a time, as on one stream
    const int total = L.nthreads * int(L.slots.size());
    {
      std::unique_lock<std::mutex> lk(m_);
      while (int(threads_.size()) < total) {
        const int i = int(threads_.size());
        threads_.emplace_back([this, i] { worker(i); });
      }
      job_ = &L;
      total_ = total;
      done_ = 0;
      ++gen_;
    }
    work_.notify_all();
    const char* env = std::getenv("CONVLAB_SIMT_WATCHDOG_S");
    const int limit_s = env ? std::max(1, std::atoi(env)) : 120;
    std::unique_lock<std::mutex> lk(m_);
    uint64_t last = L.progress.load();
    auto since = std::chrono::steady_clock::now();
    while (done_ < total) {
      done_cv_.wait_for(lk, std::chrono::seconds(1));
      const uint64_t now = L.progress.load();
      if (now != last) {
        last = now;
        since = std::chrono::steady_clock::now();
      } else if (done_ < total && std::chrono::steady_clock::now() - since > std::chrono::seconds(limit_s)) {
        dump_and_abort(L, limit_s);
      }
    }
    job_ = nullptr;
  }

 private:
  void worker(int i) {
    uint64_t seen = 0;
    for (;;) {
      Launch* L = nullptr;
      int total = 0;
      {
        std::unique_lock<std::mutex> lk(m_);
        work_.wait(lk, [&] { return shutdown_ || (gen_ != seen && job_ && i < total_); });
        if (shutdown_) return;
        seen = gen_;
        L = job_;
        total = total_;
      }
      run_thread(*L, *L->slots[i / L->nthreads], i % L->nthreads);
      {
        std::lock_guard<std::mutex> lk(m_);
        if (++done_ == total) done_cv_.notify_one();
      }
    }
  }

  static void run_thread(Launch& L, Slot& S, int tid) {
    t_launch = &L;
    t_slot = &S;
    t_tid = tid;
    threadIdx = uint3{unsigned(tid) % L.block.x, unsigned(tid) / L.block.x % L.block.y,
                      unsigned(tid) / (L.block.x * L.block.y)};
    blockDim = L.block;
    gridDim = L.grid;
    ThreadRec& rec = S.recs[tid];
    Warp& warp = *S.warps[tid / 32];
    for (;;) {
      blockIdx = S.cur_block;
      rec.state.store(kRunning);
      try {
        (*L.body)();
      } catch (const Fault& e) {
        S.report(L.thread_name(tid) + ": " + e.what(), true);
      } catch (const std::exception& e) {
        S.report(L.thread_name(tid) + " threw: " + e.what(), true);
      } catch (const Abort&) {
      } catch (...) {
        S.report(L.thread_name(tid) + " threw a non-std exception", true);
      }
      rec.state.store(kExited);
      S.sync->arrive_and_drop();
      warp.bar->arrive_and_drop();
      S.block_end->arrive_and_wait();
      if (S.finished) break;
    }
    t_launch = nullptr;
    t_slot = nullptr;
  }

  [[noreturn]] static void dump_and_abort(Launch& L, int limit_s) {
    static const char* names[] = {"not started", "running", "waiting", "waiting", "returned"};
    std::fprintf(stderr,
                 "simt emulator watchdog: kernel %s made no progress for %d s (CONVLAB_SIMT_WATCHDOG_S). "
                 "Thread states:\n",
                 L.name, limit_s);
    for (const auto& sp : L.slots) {
      const Slot& S = *sp;
      std::fprintf(stderr, " block (%u,%u,%u)%s:\n", S.cur_block.x, S.cur_block.y, S.cur_block.z,
                   S.finished ? " (slot finished)" : "");
      int t = 0;
      while (t < L.nthreads) {
        int e = t + 1;
        const int s = S.recs[t].state.load();
        const bool waits = s == kAtSync || s == kAtWarp;
        while (e < L.nthreads && S.recs[e].state.load() == s && (!waits || S.same_site(t, e))) ++e;
        std::fprintf(stderr, "  threads %d-%d: %s%s%s\n", t, e - 1, names[s], waits ? " in " : "",
                     waits ? S.site_of(t).c_str() : "");
        t = e;
      }
    }
    std::fflush(stderr);
    std::abort();
  }

  std::mutex launch_m_;
  std::mutex m_;
  std::condition_variable work_, done_cv_;
  std::vector<std::thread> threads_;
  Launch* job_ = nullptr;
  uint64_t gen_ = 0;
  int total_ = 0;
  int done_ = 0;
  bool shutdown_ = false;
};

Pool& pool() {
  static Pool p;
  return p;
}

int concurrent_blocks() {
  const char* env = std::getenv("CONVLAB_SIMT_CONCURRENT_BLOCKS");
  return env ? std::clamp(std::atoi(env), 1, 8) : 2;
}

std::string hex(const void* p) {
  char b[32];
  std::snprintf(b, sizeof b, "%p", p);
  return b;
}

}  // namespace

int lane_id() { return t_tid % 32; }

void* dynamic_shared() { return current("dynamic_shared").smem.p; }

void* static_shared(SharedDecl& decl, size_t bytes, size_t align) {
  Slot& S = current("CONVLAB_SHARED");
  Launch& L = *S.L;
  uint64_t tag = decl.tag.load(std::memory_order_relaxed);
  if ((tag >> 32) != (L.id & 0xffffffffu)) {
    std::lock_guard<std::mutex> lk(L.static_m);
    tag = decl.tag.load(std::memory_order_relaxed);
    if ((tag >> 32) != (L.id & 0xffffffffu)) {
      const size_t offset = (L.static_bytes + align - 1) / align * align;
      const size_t end = offset + bytes;
      std::string err;
      if (end > kMaxStaticSmem)
        err = "static shared memory (CONVLAB_SHARED) " + std::to_string(end) + " B > 48 KiB (49152 B)";
      else if (end + L.shmem > L.smem_total_limit)
        err = "static + dynamic shared memory " + std::to_string(end) + " + " + std::to_string(L.shmem) +
              " B > " + std::to_string(L.smem_total_limit) + " B per block" +
              (L.smem_total_limit == kDefaultMaxDynamicSmem ? " (without simt::set_max_dynamic_smem)" : "");
      if (!err.empty()) {
        S.report(err);
        throw Abort{};
      }
      L.static_bytes = end;
      tag = (uint64_t(L.id & 0xffffffffu) << 32) | offset;
      decl.tag.store(tag, std::memory_order_relaxed);
    }
  }
  return S.static_smem.p + (tag & 0xffffffffu);
}

void syncthreads(const Site& site) {
  Slot& S = current("__syncthreads");
  wait_at(S, kAtSync, "__syncthreads", site);
  S.sync->arrive_and_wait();
  S.recs[t_tid].state.store(kRunning);
}

namespace {
Warp& enter_warp(Slot& S, unsigned mask, const char* op, const Site& site) {
  Warp& w = *S.warps[t_tid / 32];
  if (mask != w.full_mask)
    S.report(S.L->thread_name(t_tid) + ": " + op + " with mask 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%08x", mask);
      return std::string(b);
    }() + " at " + site.file_name() + ":" + std::to_string(site.line()) +
             ": partial-mask warp operations are not supported (the mask must name every lane of the warp)");
  wait_at(S, kAtWarp, op, site);
  return w;
}
unsigned full(Slot& S, unsigned mask) { return mask == 0xffffffffu ? S.warps[t_tid / 32]->full_mask : mask; }
}  // namespace

void syncwarp(unsigned mask, const Site& site) {
  Slot& S = current("__syncwarp");
  Warp& w = enter_warp(S, full(S, mask), "__syncwarp", site);
  w.bar->arrive_and_wait();
  S.recs[t_tid].state.store(kRunning);
}

uint64_t exchange(unsigned mask, uint64_t value, int src, const Site& site) {
  Slot& S = current("__shfl_sync");
  Warp& w = enter_warp(S, full(S, mask), "__shfl*_sync", site);
  const int lane = t_tid - w.base;
  w.slot[lane] = value;
  w.bar->arrive_and_wait();
  const uint64_t out = (src >= 0 && src < w.size) ? w.slot[src] : value;
  w.bar->arrive_and_wait();  // nobody overwrites a slot before every lane read
  S.recs[t_tid].state.store(kRunning);
  return out;
}

unsigned ballot(unsigned mask, bool pred, const Site& site) {
  Slot& S = current("__ballot_sync");
  Warp& w = enter_warp(S, full(S, mask), "__ballot_sync", site);
  w.slot[t_tid - w.base] = pred ? 1 : 0;
  w.bar->arrive_and_wait();
  unsigned bits = 0;
  for (int l = 0; l < w.size; ++l)
    if (w.slot[l]) bits |= 1u << l;
  w.bar->arrive_and_wait();
  S.recs[t_tid].state.store(kRunning);
  return bits;
}

void check_device(const char* what) {
  Device& d = device();
  std::lock_guard<std::mutex> lk(d.m);
  if (!d.fault.empty())
    throw DeviceFault(std::string("simt emulator: ") + what + " after a device fault: " + d.fault +
                      " (the emulated device, like a CUDA context, is unusable for the rest of this process)");
}

void misaligned(const void* p, size_t bytes, size_t align, const char* what) {
  throw Fault("misaligned address (cudaErrorMisalignedAddress): " + std::to_string(bytes) + "-byte " + what +
              " at " + hex(p) + ", which is not " + std::to_string(align) + "-byte aligned");
}

void misaligned_argument(const char* name, int index, const void* p, size_t align) {
  const std::string msg = std::string("simt emulator: kernel ") + name +
                          ": misaligned address (cudaErrorMisalignedAddress): pointer argument " +
                          std::to_string(index) + " = " + hex(p) + " is not " + std::to_string(align) +
                          "-byte aligned, as its pointee type requires";
  record_fault(msg);
  throw DeviceFault(msg);
}

GridLimits grid_limits() {
  Device& d = device();
  std::lock_guard<std::mutex> lk(d.m);
  return d.limits;
}

void set_max_dynamic_smem(const void* kernel, size_t bytes) {
  check_device("set_max_dynamic_smem");
  if (bytes > kMaxDynamicSmemOptIn)
    fail("simt emulator: set_max_dynamic_smem(" + std::to_string(bytes) +
         " B) > the 227 KiB (232448 B) sm_90 limit (cudaErrorInvalidValue)");
  Device& d = device();
  std::lock_guard<std::mutex> lk(d.m);
  d.max_dyn[kernel] = bytes;
}

void launch(const char* name, const void* kernel, dim3 grid, dim3 block, size_t shmem,
            const std::function<void()>& body) {
  const std::string who = std::string("simt emulator: kernel ") + name + ": ";
  if (t_slot) fail(who + "launched from inside a kernel (dynamic parallelism is not emulated)");
  check_device(name);
  const uint64_t nthreads = uint64_t(block.x) * block.y * block.z;
  const uint64_t nblocks = uint64_t(grid.x) * grid.y * grid.z;
  const std::string bad = " (cudaErrorInvalidConfiguration)";
  const std::string blk = "invalid block " + xyz(block.x, block.y, block.z) + ": ";
  if (nthreads == 0) fail(who + blk + "a zero dimension" + bad);
  if (nthreads > 1024) fail(who + blk + std::to_string(nthreads) + " threads > 1024 per block" + bad);
  if (block.z > 64) fail(who + blk + "blockDim.z = " + std::to_string(block.z) + " > 64" + bad);
  const GridLimits lim = grid_limits();
  const std::string grd = "invalid grid " + xyz(grid.x, grid.y, grid.z) + ": ";
  if (nblocks == 0) fail(who + grd + "a zero dimension" + bad);
  if (grid.x > lim.x) fail(who + grd + "gridDim.x > " + std::to_string(lim.x) + bad);
  if (grid.y > lim.y) fail(who + grd + "gridDim.y > " + std::to_string(lim.y) + bad);
  if (grid.z > lim.z) fail(who + grd + "gridDim.z > " + std::to_string(lim.z) + bad);
  size_t opt_in = 0;
  uint64_t id = 0;
  {
    Device& d = device();
    std::lock_guard<std::mutex> lk(d.m);
    const auto it = d.max_dyn.find(kernel);
    if (it != d.max_dyn.end()) opt_in = it->second;
    id = ++d.launches;
  }
  if (shmem > kMaxDynamicSmemOptIn)
    fail(who + "dynamic shared memory " + std::to_string(shmem) + " B > the 227 KiB (232448 B) sm_90 limit" + bad);
  if (shmem > std::max(opt_in, kDefaultMaxDynamicSmem))
    fail(who + "dynamic shared memory " + std::to_string(shmem) + " B > " +
         (opt_in ? std::to_string(opt_in) + " B set with simt::set_max_dynamic_smem"
                 : std::string("48 KiB (49152 B) without simt::set_max_dynamic_smem(kernel, bytes) "
                               "(cudaFuncAttributeMaxDynamicSharedMemorySize)")) +
         bad);

  Launch L;
  L.name = name;
  L.grid = grid;
  L.block = block;
  L.shmem = shmem;
  L.smem_total_limit = opt_in ? kMaxDynamicSmemOptIn : kDefaultMaxDynamicSmem;
  L.body = &body;
  L.nthreads = int(nthreads);
  L.nwarps = int((nthreads + 31) / 32);
  L.nblocks = nblocks;
  L.id = id;
  const int nslots = int(std::min<uint64_t>(uint64_t(concurrent_blocks()), nblocks));
  for (int s = 0; s < nslots; ++s) {
    auto S = std::make_unique<Slot>();
    S->L = &L;
    S->recs = std::make_unique<ThreadRec[]>(nthreads);
    for (int w = 0; w < L.nwarps; ++w) {
      auto warp = std::make_unique<Warp>();
      warp->base = w * 32;
      warp->size = std::min(32, L.nthreads - w * 32);
      warp->full_mask = warp->size == 32 ? 0xffffffffu : (1u << warp->size) - 1;
      S->warps.push_back(std::move(warp));
    }
    if (shmem) S->smem.allocate(shmem);
    S->static_smem.allocate(kMaxStaticSmem);
    std::memset(S->static_smem.p, 0xFF, kMaxStaticSmem);
    S->block_end = std::make_unique<std::barrier<BlockDone>>(L.nthreads, BlockDone{S.get()});
    S->cur = L.next.fetch_add(1);
    S->prepare_block();
    L.slots.push_back(std::move(S));
  }
  pool().run(L);
  if (L.error.empty()) return;
  if (L.fault) {
    record_fault("kernel " + std::string(name) + ": " + L.error);
    throw DeviceFault(who + L.error + " (a device fault: every later launch and memory call fails)");
  }
  fail(who + L.error);
}

}  // namespace convlab::simt::emu

namespace convlab::simt {

void set_grid_limits_for_tests(GridLimits limits) {
  emu::Device& d = emu::device();
  std::lock_guard<std::mutex> lk(d.m);
  d.limits = limits;
}

void reset_device_for_tests() {
  emu::Device& d = emu::device();
  std::lock_guard<std::mutex> lk(d.m);
  d.fault.clear();
}

}  // namespace convlab::simt
