// The SIMT emulator behind simt.hpp's EMULATE path (compiled only into the
// emulated test binaries, never by nvcc).
//
// Execution model: a persistent pool of OS threads, one per GPU thread of a
// block (<= 1024). A launch runs the blocks of the grid one at a time, in
// linear order; every worker runs the kernel body for its threadIdx, then
// leaves the block's barriers (arrive_and_drop) and meets the others at a
// block-end barrier whose completion step checks for errors and prepares the
// next block (fresh barriers, blockIdx, dynamic shared memory = NaN bytes).
// Because threads are real threads, ThreadSanitizer sees a missing
// __syncthreads as a data race.
//
// Barriers: __syncthreads is a std::barrier over the block; warp operations use
// a std::barrier over the warp's lanes plus 32 exchange slots. Each thread
// records the call site it waits at; the barrier's completion step (which runs
// once all threads still in the kernel arrived) compares them: different sites
// = divergent barrier, a thread that already returned while others wait at a
// barrier = early return. Both are reported as errors (the launch throws), and
// never hang, since a returned thread has dropped out of every barrier.
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
#include <memory>
#include <mutex>
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

struct Launch;

struct SyncDone {
  Launch* L;
  void operator()() noexcept;
};
struct WarpDone {
  Launch* L;
  int warp;
  void operator()() noexcept;
};
struct BlockDone {
  Launch* L;
  void operator()() noexcept;
};

struct Warp {
  std::unique_ptr<std::barrier<WarpDone>> bar;
  uint64_t slot[32] = {};
  unsigned full_mask = 0;
  int base = 0, size = 0;
};

std::string xyz(unsigned x, unsigned y, unsigned z) {
  return "(" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}

struct Launch {
  const char* name = "";
  dim3 grid, block;
  size_t shmem = 0;
  const std::function<void()>* body = nullptr;
  int nthreads = 0, nwarps = 0;
  uint64_t nblocks = 0, cur = 0;  // linear block index
  uint3 cur_block{0, 0, 0};
  bool finished = false;
  std::unique_ptr<ThreadRec[]> recs;
  std::unique_ptr<std::barrier<SyncDone>> sync;
  std::vector<std::unique_ptr<Warp>> warps;
  std::unique_ptr<std::barrier<BlockDone>> block_end;
  unsigned char* smem = nullptr;
  std::unique_ptr<unsigned char[]> smem_store;
  std::atomic<uint64_t> progress{0};

  std::mutex err_m;
  std::string error;

  void report(const std::string& msg) {
    std::lock_guard<std::mutex> lk(err_m);
    if (error.empty()) error = "block " + xyz(cur_block.x, cur_block.y, cur_block.z) + ": " + msg;
  }
  bool has_error() {
    std::lock_guard<std::mutex> lk(err_m);
    return !error.empty();
  }
  std::string thread_name(int tid) const {
    const unsigned x = unsigned(tid) % block.x, y = unsigned(tid) / block.x % block.y,
                   z = unsigned(tid) / (block.x * block.y);
    return "thread " + xyz(x, y, z);
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
          report(std::string("divergent ") + what + ": " + thread_name(waiting) + " waits at " + site_of(waiting) +
                 ", " + thread_name(t) + " at " + site_of(t));
        }
      } else if (s == kExited && exited < 0) {
        exited = t;
      }
    }
    if (n_waiting > 0 && exited >= 0)
      report(thread_name(exited) + " returned before the " + site_of(waiting) + " that " +
             std::to_string(n_waiting) + " other thread(s) reached");
    progress.fetch_add(1, std::memory_order_relaxed);
  }

  // Sets up block `cur` (called before the first block and by BlockDone).
  void prepare_block() {
    cur_block = uint3{unsigned(cur % grid.x), unsigned(cur / grid.x % grid.y), unsigned(cur / (uint64_t(grid.x) * grid.y))};
    sync = std::make_unique<std::barrier<SyncDone>>(nthreads, SyncDone{this});
    for (int w = 0; w < nwarps; ++w) {
      warps[w]->bar = std::make_unique<std::barrier<WarpDone>>(warps[w]->size, WarpDone{this, w});
    }
    if (shmem) std::memset(smem, 0xFF, shmem);  // NaN in every float / double
    for (int t = 0; t < nthreads; ++t) recs[t].state.store(kIdle);
  }
};

void SyncDone::operator()() noexcept {
  try {
    L->check_phase(0, L->nthreads, kAtSync, "__syncthreads");
  } catch (...) {
  }
}
void WarpDone::operator()() noexcept {
  try {
    const Warp& w = *L->warps[warp];
    L->check_phase(w.base, w.size, kAtWarp, "warp operation");
  } catch (...) {
  }
}
void BlockDone::operator()() noexcept {
  try {
    L->progress.fetch_add(1, std::memory_order_relaxed);
    if (L->has_error() || ++L->cur == L->nblocks) {
      L->finished = true;
      return;
    }
    L->prepare_block();
  } catch (...) {
    L->report("emulator: exception while preparing a block");
    L->finished = true;
  }
}

thread_local Launch* t_launch = nullptr;
thread_local int t_tid = 0;

Launch& current(const char* what) {
  if (!t_launch) {
    std::fprintf(stderr, "simt emulator: %s called outside a kernel\n", what);
    std::abort();
  }
  return *t_launch;
}

void wait_at(Launch& L, int state, const char* op, const Site& site) {
  ThreadRec& r = L.recs[t_tid];
  r.op.store(op);
  r.file.store(site.file_name());
  r.line.store(site.line());
  r.column.store(site.column());
  r.state.store(state);
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
    std::lock_guard<std::mutex> serial(launch_m_);  // one launch at a time: statics are the shared memory
    {
      std::unique_lock<std::mutex> lk(m_);
      while (int(threads_.size()) < L.nthreads) {
        const int i = int(threads_.size());
        threads_.emplace_back([this, i] { worker(i); });
      }
      job_ = &L;
      done_ = 0;
      ++gen_;
    }
    work_.notify_all();
    const char* env = std::getenv("CONVLAB_SIMT_WATCHDOG_S");
    const int limit_s = env ? std::max(1, std::atoi(env)) : 120;
    std::unique_lock<std::mutex> lk(m_);
    uint64_t last = L.progress.load();
    auto since = std::chrono::steady_clock::now();
    while (done_ < L.nthreads) {
      done_cv_.wait_for(lk, std::chrono::seconds(1));
      const uint64_t now = L.progress.load();
      if (now != last) {
        last = now;
        since = std::chrono::steady_clock::now();
      } else if (done_ < L.nthreads && std::chrono::steady_clock::now() - since > std::chrono::seconds(limit_s)) {
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
      {
        std::unique_lock<std::mutex> lk(m_);
        work_.wait(lk, [&] { return shutdown_ || (gen_ != seen && job_ && i < job_->nthreads); });
        if (shutdown_) return;
        seen = gen_;
        L = job_;
      }
      run_thread(*L, i);
      {
        std::lock_guard<std::mutex> lk(m_);
        if (++done_ == L->nthreads) done_cv_.notify_one();
      }
    }
  }

  static void run_thread(Launch& L, int tid) {
    t_launch = &L;
    t_tid = tid;
    threadIdx = uint3{unsigned(tid) % L.block.x, unsigned(tid) / L.block.x % L.block.y,
                      unsigned(tid) / (L.block.x * L.block.y)};
    blockDim = L.block;
    gridDim = L.grid;
    ThreadRec& rec = L.recs[tid];
    Warp& warp = *L.warps[tid / 32];
    for (;;) {
      blockIdx = L.cur_block;
      rec.state.store(kRunning);
      try {
        (*L.body)();
      } catch (const std::exception& e) {
        L.report(L.thread_name(tid) + " threw: " + e.what());
      } catch (...) {
        L.report(L.thread_name(tid) + " threw a non-std exception");
      }
      rec.state.store(kExited);
      L.sync->arrive_and_drop();
      warp.bar->arrive_and_drop();
      L.block_end->arrive_and_wait();
      if (L.finished) break;
    }
    t_launch = nullptr;
  }

  [[noreturn]] static void dump_and_abort(Launch& L, int limit_s) {
    static const char* names[] = {"not started", "running", "waiting", "waiting", "returned"};
    std::fprintf(stderr,
                 "simt emulator watchdog: kernel %s, block (%u,%u,%u) made no progress for %d s "
                 "(CONVLAB_SIMT_WATCHDOG_S). Thread states:\n",
                 L.name, L.cur_block.x, L.cur_block.y, L.cur_block.z, limit_s);
    int t = 0;
    while (t < L.nthreads) {
      int e = t + 1;
      const int s = L.recs[t].state.load();
      const bool waits = s == kAtSync || s == kAtWarp;
      while (e < L.nthreads && L.recs[e].state.load() == s && (!waits || L.same_site(t, e))) ++e;
      std::fprintf(stderr, "  threads %d-%d: %s%s%s\n", t, e - 1, names[s], waits ? " in " : "",
                   waits ? L.site_of(t).c_str() : "");
      t = e;
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
  int done_ = 0;
  bool shutdown_ = false;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

int lane_id() { return t_tid % 32; }

void* dynamic_shared() { return current("dynamic_shared").smem; }

void syncthreads(const Site& site) {
  Launch& L = current("__syncthreads");
  wait_at(L, kAtSync, "__syncthreads", site);
  L.sync->arrive_and_wait();
  L.recs[t_tid].state.store(kRunning);
}

namespace {
Warp& enter_warp(Launch& L, unsigned mask, const char* op, const Site& site) {
  Warp& w = *L.warps[t_tid / 32];
  if (mask != w.full_mask)
    L.report(L.thread_name(t_tid) + ": " + op + " with mask 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%08x", mask);
      return std::string(b);
    }() + " at " + site.file_name() + ":" + std::to_string(site.line()) +
             ": partial-mask warp operations are not supported (the mask must name every lane of the warp)");
  wait_at(L, kAtWarp, op, site);
  return w;
}
}  // namespace

void syncwarp(unsigned mask, const Site& site) {
  Launch& L = current("__syncwarp");
  Warp& w = enter_warp(L, mask == 0xffffffffu ? L.warps[t_tid / 32]->full_mask : mask, "__syncwarp", site);
  w.bar->arrive_and_wait();
  L.recs[t_tid].state.store(kRunning);
}

uint64_t exchange(unsigned mask, uint64_t value, int src, const Site& site) {
  Launch& L = current("__shfl_sync");
  Warp& w = enter_warp(L, mask == 0xffffffffu ? L.warps[t_tid / 32]->full_mask : mask, "__shfl*_sync", site);
  const int lane = t_tid - w.base;
  w.slot[lane] = value;
  w.bar->arrive_and_wait();
  const uint64_t out = (src >= 0 && src < w.size) ? w.slot[src] : value;
  w.bar->arrive_and_wait();  // nobody overwrites a slot before every lane read
  L.recs[t_tid].state.store(kRunning);
  return out;
}

unsigned ballot(unsigned mask, bool pred, const Site& site) {
  Launch& L = current("__ballot_sync");
  Warp& w = enter_warp(L, mask == 0xffffffffu ? L.warps[t_tid / 32]->full_mask : mask, "__ballot_sync", site);
  w.slot[t_tid - w.base] = pred ? 1 : 0;
  w.bar->arrive_and_wait();
  unsigned bits = 0;
  for (int l = 0; l < w.size; ++l)
    if (w.slot[l]) bits |= 1u << l;
  w.bar->arrive_and_wait();
  L.recs[t_tid].state.store(kRunning);
  return bits;
}

void launch(const char* name, dim3 grid, dim3 block, size_t shmem, const std::function<void()>& body) {
  const uint64_t nthreads = uint64_t(block.x) * block.y * block.z;
  const uint64_t nblocks = uint64_t(grid.x) * grid.y * grid.z;
  const std::string who = std::string("simt emulator: kernel ") + name + ": ";
  if (nthreads == 0 || nthreads > 1024 || block.z > 64)
    fail(who + "invalid block " + xyz(block.x, block.y, block.z) + " (1..1024 threads, z <= 64)");
  if (nblocks == 0 || grid.y > 65535 || grid.z > 65535)
    fail(who + "invalid grid " + xyz(grid.x, grid.y, grid.z));
  if (shmem > 227 * 1024) fail(who + "dynamic shared memory " + std::to_string(shmem) + " B > 227 KiB");
  if (t_launch) fail(who + "launched from inside a kernel (dynamic parallelism is not emulated)");

  Launch L;
  L.name = name;
  L.grid = grid;
  L.block = block;
  L.shmem = shmem;
  L.body = &body;
  L.nthreads = int(nthreads);
  L.nwarps = int((nthreads + 31) / 32);
  L.nblocks = nblocks;
  L.recs = std::make_unique<ThreadRec[]>(nthreads);
  for (int w = 0; w < L.nwarps; ++w) {
    auto warp = std::make_unique<Warp>();
    warp->base = w * 32;
    warp->size = std::min(32, L.nthreads - w * 32);
    warp->full_mask = warp->size == 32 ? 0xffffffffu : (1u << warp->size) - 1;
    L.warps.push_back(std::move(warp));
  }
  if (shmem) {
    L.smem_store = std::make_unique<unsigned char[]>(shmem + 64);
    L.smem = L.smem_store.get() + (64 - reinterpret_cast<uintptr_t>(L.smem_store.get()) % 64) % 64;
  }
  L.block_end = std::make_unique<std::barrier<BlockDone>>(L.nthreads, BlockDone{&L});
  L.prepare_block();
  pool().run(L);
  if (!L.error.empty()) fail(who + L.error);
}

}  // namespace convlab::simt::emu
