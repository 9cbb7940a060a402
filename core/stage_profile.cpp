#include "core/stage_profile.hpp"

namespace convlab {

const char* stage_kind_name(StageKind k) { return k == StageKind::compute ? "compute" : "memory"; }

void StageProfile::add(std::string_view name, StageKind kind, double seconds, double flops, double bytes) {
  for (auto& s : stages_)
    if (s.name == name) {
      s.seconds += seconds;
      s.flops += flops;
      s.bytes += bytes;
      ++s.calls;
      return;
    }
  stages_.push_back({std::string(name), kind, seconds, flops, bytes, 1});
}

double StageProfile::total_seconds() const {
  double t = 0;
  for (const auto& s : stages_) t += s.seconds;
  return t;
}

}  // namespace convlab
