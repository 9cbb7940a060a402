// The JSON document of a tune() run (`convlab tune --json`): the device, mode,
// cache and probe, one object per (layer, direction) with get's and (mode both or
// find) find's ranked lists and the vendor's picks, the vendor tallies, and
// (when find ran) get's agreement with find three ways.
#pragma once
#include <string>

#include "autotune/tune.hpp"

namespace convlab {

// `mode` is the run's mode as the user named it (both, find or get); `find`: find ran.
std::string tune_json(const TuneResult& res, const std::string& mode, bool find);

}  // namespace convlab
