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

#include <algorithm>
#include <cstdlib>
#include <string>

#include "kernels/cuda/simt/emulator_state.hpp"

namespace convlab::simt::emu {

using namespace detail;

namespace {

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
      if (count_hooks) count_hooks->thread_begin(S, tid);
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
      if (count_hooks) count_hooks->thread_end();
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

}  // namespace

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
  L.kernel = kernel;
  L.grid = grid;
  L.block = block;
  L.shmem = shmem;
  L.smem_total_limit = opt_in ? kMaxDynamicSmemOptIn : kDefaultMaxDynamicSmem;
  L.body = &body;
  L.nthreads = int(nthreads);
  L.nwarps = int((nthreads + 31) / 32);
  L.nblocks = nblocks;
  L.id = id;
  L.to_run = nblocks;
  if (count_hooks) {
    count_hooks->launch_begin(L);
    if (!L.sample.empty()) L.to_run = L.sample.size();
  }
  const int nslots = int(std::min<uint64_t>(uint64_t(concurrent_blocks()), L.to_run));
  L.nslots = nslots;
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
    if (count_hooks) count_hooks->slot_ready(*S);
    L.slots.push_back(std::move(S));
  }
  pool().run(L);
  if (count_hooks && L.error.empty()) count_hooks->launch_end(L);
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