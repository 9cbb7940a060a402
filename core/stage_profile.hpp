// Where one algorithm run's time goes, stage by stage: the
// benchmarks set ExecContext::profile, the CPU algorithms record each phase
// (transforms, packing, the GEMM or direct kernel, scatter) with the work it
// did, and bench_conv --stages prints every stage against its limit: a compute
// stage's FLOP rate as a fraction of the measured FMA peak, a memory stage's
// byte rate as a fraction of the measured stream bandwidth. A slow stage then
// shows by itself, not hidden in a layer's total.
//
// Counting rules (so stages of different algorithms compare):
//   flops  the arithmetic the stage must do: 2 per real multiply-add, 8 per
//          complex one, 2.5 N log2 N per real N-point FFT (the usual nominal).
//   bytes  the tensors the stage must read plus what it must write, each once
//          (its compulsory traffic; a stage that re-reads costs more time, not
//          more bytes).
// Phases run one after another (each an OpenMP loop that ends in a barrier),
// so a phase's wall time is its cost. Recording when profile is null is one
// branch; the algorithms always call it.
#pragma once
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace convlab {

enum class StageKind { compute, memory };
const char* stage_kind_name(StageKind k);

struct StageRecord {
  std::string name;
  StageKind kind = StageKind::compute;
  double seconds = 0, flops = 0, bytes = 0;
  int calls = 0;
};

class StageProfile {
 public:
  // Adds to the stage of that name (first-seen order kept); kind of the first call.
  void add(std::string_view name, StageKind kind, double seconds, double flops, double bytes);
  const std::vector<StageRecord>& stages() const { return stages_; }
  double total_seconds() const;
  void clear() { stages_.clear(); }

 private:
  std::vector<StageRecord> stages_;
};

// Wall time from construction, or from the previous lap, to each lap(). Inert
// when the profile is null. Not thread-safe: inside a parallel region lap()
// from one thread (omp master) after the barrier that ends the phase.
class StageClock {
 public:
  explicit StageClock(StageProfile* p) : p_(p) {
    if (p_) t_ = std::chrono::steady_clock::now();
  }
  bool active() const { return p_ != nullptr; }
  void lap(std::string_view name, StageKind kind, double flops, double bytes) {
    if (!p_) return;
    const auto now = std::chrono::steady_clock::now();
    p_->add(name, kind, std::chrono::duration<double>(now - t_).count(), flops, bytes);
    t_ = now;
  }
  // Restarts the clock without recording (time spent between stages that is nobody's).
  void restart() {
    if (p_) t_ = std::chrono::steady_clock::now();
  }

 private:
  StageProfile* p_;
  std::chrono::steady_clock::time_point t_{};
};

}  // namespace convlab
