// The counting runtime (counters.hpp): the emulator's hooks record every
// shared / global access of a kernel thread as (code address, occurrence of
// that address in this thread since the last reconvergence point, address,
// bytes); at each reconvergence point (a completing __syncthreads, the end of
// a block: every thread of the block is stopped there) the accesses of each
// warp are grouped by (code address, occurrence) into warp instructions and
// priced as the hardware would (sectors, wavefronts). Not instrumented itself.
#include "kernels/cuda/simt/counters.hpp"

#include <algorithm>
#include <mutex>
#include <random>
#include <set>

#include "core/device.hpp"
#include "kernels/cuda/simt/counters_runtime.hpp"
#include "kernels/cuda/simt/emulator_state.hpp"

namespace convlab::simt::counters {

Counts& Counts::operator+=(const Counts& o) {
  global_ld_requests += o.global_ld_requests, global_ld_sectors += o.global_ld_sectors;
  global_st_requests += o.global_st_requests, global_st_sectors += o.global_st_sectors;
  global_atom_requests += o.global_atom_requests, global_atom_sectors += o.global_atom_sectors;
  shared_ld_requests += o.shared_ld_requests, shared_ld_wavefronts += o.shared_ld_wavefronts;
  shared_ld_conflicts += o.shared_ld_conflicts;
  shared_st_requests += o.shared_st_requests, shared_st_wavefronts += o.shared_st_wavefronts;
  shared_st_conflicts += o.shared_st_conflicts;
  warp_instructions += o.warp_instructions, active_lanes += o.active_lanes;
  fma_instructions += o.fma_instructions, fma_lanes += o.fma_lanes, fma_useful_lanes += o.fma_useful_lanes;
  mma_instructions += o.mma_instructions;
  barriers += o.barriers;
  return *this;
}

Counts LaunchCounts::scaled() const {
  if (sampled_blocks == 0 || sampled_blocks == blocks) return counted;
  const auto sc = [&](uint64_t x) {
    return uint64_t((unsigned __int128)x * blocks / sampled_blocks +
                    ((unsigned __int128)x * blocks % sampled_blocks * 2 >= sampled_blocks ? 1 : 0));
  };
  const Counts& c = counted;
  Counts s;
  s.global_ld_requests = sc(c.global_ld_requests), s.global_ld_sectors = sc(c.global_ld_sectors);
  s.global_st_requests = sc(c.global_st_requests), s.global_st_sectors = sc(c.global_st_sectors);
  s.global_atom_requests = sc(c.global_atom_requests), s.global_atom_sectors = sc(c.global_atom_sectors);
  s.shared_ld_requests = sc(c.shared_ld_requests), s.shared_ld_wavefronts = sc(c.shared_ld_wavefronts);
  s.shared_ld_conflicts = sc(c.shared_ld_conflicts);
  s.shared_st_requests = sc(c.shared_st_requests), s.shared_st_wavefronts = sc(c.shared_st_wavefronts);
  s.shared_st_conflicts = sc(c.shared_st_conflicts);
  s.warp_instructions = sc(c.warp_instructions), s.active_lanes = sc(c.active_lanes);
  s.fma_instructions = sc(c.fma_instructions), s.fma_lanes = sc(c.fma_lanes);
  s.fma_useful_lanes = sc(c.fma_useful_lanes);
  s.mma_instructions = sc(c.mma_instructions);
  s.barriers = sc(c.barriers);
  return s;
}

std::vector<uint64_t> sample_of(unsigned gx, unsigned gy, unsigned gz, const Options& o) {
  const uint64_t n = uint64_t(gx) * gy * gz;
  std::vector<uint64_t> all;
  if (o.sample_blocks == 0 || o.sample_blocks >= n) {
    all.resize(n);
    for (uint64_t i = 0; i < n; ++i) all[i] = i;
    return all;
  }
  std::set<uint64_t> chosen;
  for (unsigned z : {0u, gz - 1})
    for (unsigned y : {0u, gy - 1})
      for (unsigned x : {0u, gx - 1})
        if (chosen.size() < o.sample_blocks) chosen.insert(x + uint64_t(gx) * (y + uint64_t(gy) * z));
  std::mt19937_64 rng(o.seed ^ (uint64_t(gx) * 0x9E3779B97F4A7C15ull) ^ (uint64_t(gy) << 32) ^ gz);
  std::uniform_int_distribution<uint64_t> pick(0, n - 1);
  while (chosen.size() < o.sample_blocks) chosen.insert(pick(rng));
  return {chosen.begin(), chosen.end()};
}

namespace {

using emu::detail::Launch;
using emu::detail::Slot;

enum Space : uint8_t { kShared = 0, kGlobal = 1 };

struct Event {
  uintptr_t pc, addr;
  uint32_t occ;
  uint16_t bytes;
  uint8_t op, space;
};

struct LaneEvent {
  uintptr_t pc, addr;
  uint32_t occ;
  uint16_t bytes;
  uint8_t op, space, lane;
};

// Per thread, per code address: a V since the last reconvergence point (open
// addressing, power-of-two capacity).
template <typename V>
class PcTable {
 public:
  V& at(uintptr_t pc) {
    if (keys_.empty() || 2 * (used_ + 1) > keys_.size()) grow();
    size_t i = hash(pc);
    while (keys_[i] != 0 && keys_[i] != pc) i = (i + 1) & (keys_.size() - 1);
    if (keys_[i] == 0) keys_[i] = pc, ++used_;
    return vals_[i];
  }
  template <typename F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] != 0) f(keys_[i], vals_[i]);
  }
  void clear() {
    if (used_ == 0) return;
    std::fill(keys_.begin(), keys_.end(), 0);
    std::fill(vals_.begin(), vals_.end(), V{});
    used_ = 0;
  }

 private:
  size_t hash(uintptr_t pc) const { return size_t((pc * 0x9E3779B97F4A7C15ull) >> 20) & (keys_.size() - 1); }
  void grow() {
    std::vector<uintptr_t> keys = std::move(keys_);
    std::vector<V> vals = std::move(vals_);
    keys_.assign(std::max<size_t>(64, keys.size() * 2), 0);
    vals_.assign(keys_.size(), V{});
    for (size_t j = 0; j < keys.size(); ++j) {
      if (keys[j] == 0) continue;
      size_t i = hash(keys[j]);
      while (keys_[i] != 0) i = (i + 1) & (keys_.size() - 1);
      keys_[i] = keys[j], vals_[i] = vals[j];
    }
  }
  std::vector<uintptr_t> keys_;
  std::vector<V> vals_;
  size_t used_ = 0;
};

struct FmaCount {
  uint64_t lanes = 0, useful = 0;  // fmaf calls at this address; those with no zero multiplicand
};

struct LaunchState {
  std::vector<std::pair<uintptr_t, uintptr_t>> global;  // [begin, end), sorted by begin
  size_t memory = 0;  // bytes the recorded accesses may take (half of what is available), 0 = unknown
  bool is_global(uintptr_t a) const {
    auto it = std::upper_bound(global.begin(), global.end(), std::make_pair(a, ~uintptr_t(0)));
    return it != global.begin() && a < std::prev(it)->second;
  }
};

struct ThreadState;

struct SlotState {
  LaunchState* launch = nullptr;
  Slot* slot = nullptr;
  size_t max_events = ~size_t(0);  // per thread, between two reconvergence points
  uintptr_t dyn_lo = 0, dyn_hi = 0, static_lo = 0, static_hi = 0;
  std::vector<ThreadState> threads;
  std::vector<LaneEvent> scratch;
  std::vector<std::pair<uintptr_t, FmaCount>> fma_scratch;
  std::vector<uintptr_t> ids;  // sectors or words of one request
  Counts counts;
};

struct ThreadState {
  SlotState* slot = nullptr;
  std::vector<Event> events;
  PcTable<uint32_t> occ;
  PcTable<FmaCount> fma;
  uint64_t mma = 0;  // warp MMAs this lane took part in since the warp's last flush
};

thread_local ThreadState* t_state = nullptr;

struct Global {
  std::mutex m;
  Options options;
  std::vector<LaunchCounts> records;
};
Global& global() {
  static Global g;
  return g;
}

// The distinct 32-byte sectors the lanes of one global request touch.
uint64_t sectors(const LaneEvent* b, const LaneEvent* e, std::vector<uintptr_t>& ids) {
  ids.clear();
  for (const LaneEvent* x = b; x != e; ++x)
    for (uintptr_t s = x->addr >> 5; s <= (x->addr + x->bytes - 1) >> 5; ++s) ids.push_back(s);
  std::sort(ids.begin(), ids.end());
  return uint64_t(std::unique(ids.begin(), ids.end()) - ids.begin());
}

// Shared-memory wavefronts of one request, and the fewest its data could take
// (one per phase with an active lane, or per 32 distinct words a phase moves).
std::pair<uint64_t, uint64_t> wavefronts(const LaneEvent* b, const LaneEvent* e, std::vector<uintptr_t>& words) {
  unsigned bytes = 0;
  for (const LaneEvent* x = b; x != e; ++x) bytes = std::max<unsigned>(bytes, x->bytes);
  const unsigned phase_lanes = bytes <= 4 ? 32 : 16;
  uint64_t total = 0, phases = 0;
  for (unsigned first = 0; first < 32; first += phase_lanes) {
    words.clear();
    for (const LaneEvent* x = b; x != e; ++x)
      if (x->lane >= first && x->lane < first + phase_lanes)
        for (uintptr_t w = x->addr >> 2; w <= (x->addr + x->bytes - 1) >> 2; ++w) words.push_back(w);
    if (words.empty()) continue;
    std::sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    unsigned per_bank[32] = {};
    unsigned most = 0;
    for (uintptr_t w : words) most = std::max(most, ++per_bank[w & 31]);
    total += most;
    phases += (words.size() + 31) / 32;
  }
  return {total, phases};
}

void price(const LaneEvent* b, const LaneEvent* e, SlotState& ss) {
  Counts& c = ss.counts;
  uint32_t lanes = 0;
  for (const LaneEvent* x = b; x != e; ++x) lanes |= 1u << x->lane;
  ++c.warp_instructions;
  c.active_lanes += uint64_t(__builtin_popcount(lanes));
  if (b->space == kGlobal) {
    const uint64_t s = sectors(b, e, ss.ids);
    uint64_t& requests = b->op == kLoad    ? c.global_ld_requests
                         : b->op == kStore ? c.global_st_requests
                                           : c.global_atom_requests;
    uint64_t& sum = b->op == kLoad    ? c.global_ld_sectors
                    : b->op == kStore ? c.global_st_sectors
                                      : c.global_atom_sectors;
    ++requests;
    sum += s;
    return;
  }
  const auto [w, phases] = wavefronts(b, e, ss.ids);
  const bool load = b->op == kLoad;  // a shared atomic counts as a store
  ++(load ? c.shared_ld_requests : c.shared_st_requests);
  (load ? c.shared_ld_wavefronts : c.shared_st_wavefronts) += w;
  (load ? c.shared_ld_conflicts : c.shared_st_conflicts) += w - phases;
}

// The fmaf calls of lanes [first, last) of one warp: a warp issues, per code
// address, as many instructions as its busiest lane made calls there.
void count_fmas(SlotState& ss, int first, int last) {
  auto& v = ss.fma_scratch;
  v.clear();
  for (int t = first; t < last; ++t) {
    ss.threads[size_t(t)].fma.for_each([&](uintptr_t pc, const FmaCount& f) { v.emplace_back(pc, f); });
    ss.threads[size_t(t)].fma.clear();
  }
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Counts& c = ss.counts;
  for (size_t i = 0; i < v.size();) {
    uint64_t most = 0;
    size_t j = i;
    for (; j < v.size() && v[j].first == v[i].first; ++j) {
      most = std::max(most, v[j].second.lanes);
      c.fma_lanes += v[j].second.lanes, c.fma_useful_lanes += v[j].second.useful;
    }
    c.fma_instructions += most;
    i = j;
  }
}

// Every thread of the slot is stopped: group each warp's accesses into
// requests, price them, and start counting occurrences afresh (the warp
// reconverges here).
void flush(Slot& S, bool at_barrier) {
  auto* ss = static_cast<SlotState*>(S.counting.get());
  if (!ss) return;
  if (at_barrier) ++ss->counts.barriers;
  const int n = int(ss->threads.size());
  for (int w0 = 0; w0 < n; w0 += 32) {
    std::vector<LaneEvent>& v = ss->scratch;
    v.clear();
    for (int t = w0; t < std::min(n, w0 + 32); ++t) {
      ThreadState& ts = ss->threads[t];
      for (const Event& ev : ts.events)
        v.push_back({ev.pc, ev.addr, ev.occ, ev.bytes, ev.op, ev.space, uint8_t(t - w0)});
      ts.events.clear();
      ts.occ.clear();
    }
    count_fmas(*ss, w0, std::min(n, w0 + 32));
    uint64_t mma = 0;  // every lane takes part in each of its warp's MMAs
    for (int t = w0; t < std::min(n, w0 + 32); ++t) mma = std::max(mma, ss->threads[t].mma), ss->threads[t].mma = 0;
    ss->counts.mma_instructions += mma;
    std::sort(v.begin(), v.end(), [](const LaneEvent& a, const LaneEvent& b) {
      return a.pc != b.pc ? a.pc < b.pc : a.occ != b.occ ? a.occ < b.occ : a.lane < b.lane;
    });
    for (size_t i = 0; i < v.size();) {
      size_t j = i + 1;
      while (j < v.size() && v[j].pc == v[i].pc && v[j].occ == v[i].occ) ++j;
      price(v.data() + i, v.data() + j, *ss);
      i = j;
    }
  }
}

void launch_begin(Launch& L) {
  auto ls = std::make_shared<LaunchState>();
  {
    emu::detail::Device& d = emu::detail::device();
    std::lock_guard<std::mutex> lk(d.m);
    for (const auto& [p, bytes] : d.allocations) ls->global.emplace_back(p, p + std::max<size_t>(bytes, 1));
  }
  Options o;
  {
    Global& g = global();
    std::lock_guard<std::mutex> lk(g.m);
    o = g.options;
  }
  if (o.sample_blocks && o.sample_blocks < L.nblocks) L.sample = sample_of(L.grid.x, L.grid.y, L.grid.z, o);
  ls->memory = o.max_access_bytes ? size_t(o.max_access_bytes) : available_memory_bytes(DeviceKind::cpu) / 2;
  L.counting = ls;
}

void slot_ready(Slot& S) {
  auto ss = std::make_shared<SlotState>();
  ss->launch = static_cast<LaunchState*>(S.L->counting.get());
  ss->slot = &S;
  if (ss->launch->memory)
    ss->max_events = std::max<size_t>(
        1024, ss->launch->memory / sizeof(Event) / size_t(S.L->nthreads) / size_t(std::max(1, S.L->nslots)));
  ss->dyn_lo = reinterpret_cast<uintptr_t>(S.smem.p), ss->dyn_hi = ss->dyn_lo + S.L->shmem;
  ss->static_lo = reinterpret_cast<uintptr_t>(S.static_smem.p), ss->static_hi = ss->static_lo + kMaxStaticSmem;
  ss->threads.resize(size_t(S.L->nthreads));
  for (ThreadState& t : ss->threads) t.slot = ss.get();
  S.counting = ss;
}

void thread_begin(Slot& S, int tid) {
  auto* ss = static_cast<SlotState*>(S.counting.get());
  t_state = ss ? &ss->threads[size_t(tid)] : nullptr;
}

void thread_end() { t_state = nullptr; }

void launch_end(Launch& L) {
  LaunchCounts r;
  r.kernel = L.name;
  r.function = function_name(L.kernel);
  r.grid[0] = L.grid.x, r.grid[1] = L.grid.y, r.grid[2] = L.grid.z;
  r.block[0] = L.block.x, r.block[1] = L.block.y, r.block[2] = L.block.z;
  r.dynamic_smem = L.shmem;
  r.blocks = L.nblocks;
  r.sampled_blocks = L.to_run;
  for (const auto& S : L.slots)
    if (const auto* ss = static_cast<const SlotState*>(S->counting.get())) r.counted += ss->counts;
  Global& g = global();
  std::lock_guard<std::mutex> lk(g.m);
  g.records.push_back(std::move(r));
}

// A thread's accesses since the last reconvergence point would outgrow the
// memory the launch may use: a reported error (the launch throws), not a
// machine out of memory.
[[noreturn]] void too_many_accesses(const SlotState& ss) {
  char mib[32];
  std::snprintf(mib, sizeof mib, "%.1f", double(ss.max_events * sizeof(Event) * ss.threads.size()) / 1048576.0);
  ss.slot->report(
      "the counting runtime keeps every access of a block until its next __syncthreads or its end, and "
      "a thread made more than " +
      std::to_string(ss.max_events) + " accesses (" + mib +
      " MiB for the block; a launch may use half the available memory, or Options::max_access_bytes): "
      "count a smaller problem (a smaller batch)");
  throw emu::detail::Abort{};
}

void atomic(const void* p, size_t bytes, const void* pc) { record(p, bytes, kAtomic, pc); }
void mma() {
  if (t_state) ++t_state->mma;
}

const emu::detail::CountHooks kHooks{launch_begin, slot_ready, thread_begin, thread_end, flush, launch_end, atomic, mma};

}  // namespace

void record(const void* p, size_t bytes, int op, const void* pc) {
  ThreadState* ts = t_state;
  if (!ts || bytes == 0) return;
  const SlotState& ss = *ts->slot;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const bool shared = (a >= ss.static_lo && a < ss.static_hi) || (a >= ss.dyn_lo && a < ss.dyn_hi);
  if (!shared && !ss.launch->is_global(a)) return;
  const uint8_t space = shared ? kShared : kGlobal;
  if (ts->events.size() >= ss.max_events) too_many_accesses(ss);
  const uintptr_t site = reinterpret_cast<uintptr_t>(pc);
  ts->events.push_back({site, a, ts->occ.at(site)++, uint16_t(std::min<size_t>(bytes, 0xffff)), uint8_t(op), space});
}

void record_fma(float a, float b, const void* pc) {
  ThreadState* ts = t_state;
  if (!ts) return;
  FmaCount& f = ts->fma.at(reinterpret_cast<uintptr_t>(pc));
  ++f.lanes;
  if (a != 0.0f && b != 0.0f) ++f.useful;
}

void start(const Options& options) {
  Global& g = global();
  {
    std::lock_guard<std::mutex> lk(g.m);
    g.options = options;
    g.records.clear();
  }
  emu::detail::count_hooks = &kHooks;
}

std::vector<LaunchCounts> stop() {
  emu::detail::count_hooks = nullptr;
  Global& g = global();
  std::lock_guard<std::mutex> lk(g.m);
  return std::move(g.records);
}

}  // namespace convlab::simt::counters
