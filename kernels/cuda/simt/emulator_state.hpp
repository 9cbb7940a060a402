// The SIMT emulator's state shared by its two files (emulator.cpp: the
// worker pool and launch; emulator_threads.cpp: what a kernel thread calls —
// barriers, warp exchange, shared memory, alignment checks). Internal to the
// emulator: nothing outside kernels/cuda/simt includes it. See emulator.cpp
// for the execution model.
#pragma once

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

namespace convlab::simt::emu::detail {

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

// The counting runtime's hooks (kernels/cuda/simt/counters.cpp, linked only
// into the counting build; null otherwise). launch_begin may choose a sample
// of blocks (Launch::sample); flush runs while every thread of the slot is
// stopped (a completing __syncthreads, or the end of a block).
struct CountHooks {
  void (*launch_begin)(Launch&);
  void (*slot_ready)(Slot&);
  void (*thread_begin)(Slot&, int tid);
  void (*thread_end)();
  void (*flush)(Slot&, bool at_barrier);
  void (*launch_end)(Launch&);
  void (*atomic)(const void* p, size_t bytes, const void* pc);
  void (*mma)();  // the calling lane took part in one warp MMA
};
inline const CountHooks* count_hooks = nullptr;

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
  float frag[32][6] = {};  // mma: each lane's A (4) and B (2) fragment registers
  unsigned full_mask = 0;
  int base = 0, size = 0;
};

inline std::string xyz(uint64_t x, uint64_t y, uint64_t z) {
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
  const void* kernel = nullptr;
  dim3 grid, block;
  size_t shmem = 0, smem_total_limit = 0;
  const std::function<void()>* body = nullptr;
  int nthreads = 0, nwarps = 0, nslots = 0;
  uint64_t nblocks = 0;
  std::vector<uint64_t> sample;   // the blocks to run (counting build's sampling); empty = all
  uint64_t to_run = 0;            // blocks handed out: nblocks, or sample.size()
  std::atomic<uint64_t> next{0};  // next index (into the grid, or into sample) to hand out
  std::shared_ptr<void> counting;  // the counting runtime's state for this launch
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
  std::shared_ptr<void> counting;  // the counting runtime's state for this slot

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
  // Checks the threads [first, first+count) at a completing barrier phase;
  // returns how many wait there (0: the phase completed as the last ones left).
  int check_phase(int first, int count, int waiting_state, const char* what) {
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
    return n_waiting;
  }

  // Sets up block `cur` (called before the slot's first block and by BlockDone).
  void prepare_block() {
    const Launch& l = *L;
    const uint64_t b = l.sample.empty() ? cur : l.sample[cur];
    cur_block = uint3{unsigned(b % l.grid.x), unsigned(b / l.grid.x % l.grid.y),
                      unsigned(b / (uint64_t(l.grid.x) * l.grid.y))};
    sync = std::make_unique<std::barrier<SyncDone>>(l.nthreads, SyncDone{this});
    for (int w = 0; w < l.nwarps; ++w) {
      warps[w]->bar = std::make_unique<std::barrier<WarpDone>>(warps[w]->size, WarpDone{this, w});
    }
    if (l.shmem) std::memset(smem.p, 0xFF, l.shmem);  // NaN in every float / double
    if (const size_t st = L->static_high_water()) std::memset(static_smem.p, 0xFF, st);
    for (int t = 0; t < l.nthreads; ++t) recs[t].state.store(kIdle);
  }
};

inline void SyncDone::operator()() noexcept {
  try {
    const int waiting = S->check_phase(0, S->L->nthreads, kAtSync, "__syncthreads");
    if (count_hooks && waiting) count_hooks->flush(*S, true);
  } catch (...) {
  }
}
inline void WarpDone::operator()() noexcept {
  try {
    const Warp& w = *S->warps[warp];
    S->check_phase(w.base, w.size, kAtWarp, "warp operation");
  } catch (...) {
  }
}
inline void BlockDone::operator()() noexcept {
  try {
    Launch& L = *S->L;
    L.progress.fetch_add(1, std::memory_order_relaxed);
    if (count_hooks) count_hooks->flush(*S, false);
    if (!L.has_error()) S->cur = L.next.fetch_add(1);
    if (L.has_error() || S->cur >= L.to_run) {
      S->finished = true;
      return;
    }
    S->prepare_block();
  } catch (...) {
    S->report("emulator: exception while preparing a block");
    S->finished = true;
  }
}

inline thread_local Launch* t_launch = nullptr;
inline thread_local Slot* t_slot = nullptr;
inline thread_local int t_tid = 0;

inline Slot& current(const char* what) {
  if (!t_slot) {
    std::fprintf(stderr, "simt emulator: %s called outside a kernel\n", what);
    std::abort();
  }
  return *t_slot;
}

inline void wait_at(Slot& S, int state, const char* op, const Site& site) {
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
  std::map<uintptr_t, size_t> allocations;  // device_malloc'ed ranges: start -> bytes
  GridLimits limits = kGridLimits;
  uint64_t launches = 0;
};
inline Device& device() {
  static Device d;
  return d;
}
inline void record_fault(const std::string& what) {
  Device& d = device();
  std::lock_guard<std::mutex> lk(d.m);
  if (d.fault.empty()) d.fault = what;
}

inline std::string hex(const void* p) {
  char b[32];
  std::snprintf(b, sizeof b, "%p", p);
  return b;
}

}  // namespace convlab::simt::emu::detail
