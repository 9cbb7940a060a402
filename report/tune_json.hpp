// The JSON document of a tune() run (`convlab tune --json`): the device, mode,
// cache and probe, one object per (layer, direction) with get's and (mode both or
// find) find's ranked lists and the vendor's picks, the vendor tallies, and
// (when find ran) get's agreement with find three ways. The writer and its
// reader side by side (report/tune_json.cpp).
#pragma once
#include <string>

#include "autotune/tune.hpp"

namespace convlab {

// `mode` is the run's mode as the user named it (both, find or get); `find`: find ran.
std::string tune_json(const TuneResult& res, const std::string& mode, bool find);

namespace json {
struct Value;
}

// tune_json's document read back: tune_json(tune_from_json(v), mode, find) is the
// text v was parsed from. The vendor tallies come back in their sources' name
// order (the parser keeps an object's keys sorted), the order tune() records
// oneDNN's one and cuDNN's two in. What the document does not hold (the get
// lists other than the in-sample one, the agreements per pair, the calibration)
// stays at its default.
struct TuneDocument {
  TuneResult result;
  std::string mode;
  bool find = false;  // find ran: the document has find's lists and "summary"
};
TuneDocument tune_from_json(const json::Value& v);

}  // namespace convlab
