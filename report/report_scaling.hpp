// The data-parallel scaling report (dist/scaling.hpp's run_scaling), written
// for people (Markdown) and for the notebooks (JSON).
#pragma once
#include <string>

#include "dist/scaling.hpp"

namespace convlab::train {

// The scaling section (Markdown) followed by the full report of the largest rank count.
std::string scaling_markdown(const ScalingReport& s);
// The largest rank count's train JSON with a "scaling" object added.
std::string scaling_json(const ScalingReport& s);

}  // namespace convlab::train
