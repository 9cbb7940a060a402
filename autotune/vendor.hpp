// The vendor's own algorithm selection, shown beside convlab's find and get
// For one (problem, direction, context) what the
// vendor library would pick, and what OUR find measured for that pick.
//
//   CUDA  "cudnnFind"    cudnnFindConvolution*Algorithm: cuDNN times every
//                        algorithm itself; the first successful entry of its
//                        list (sorted by its time) within the constraints.
//         "cudnnGet_v7"  cudnnGetConvolution*Algorithm_v7: cuDNN's heuristic,
//                        nothing runs; its first successful entry likewise.
//   CPU   "onednn_auto"  oneDNN has no Find/Get pair, only convolution_auto:
//                        onednn.auto's implementation string (oneDNN's
//                        impl_info_str) and the family it amounts to.
//
// The family of oneDNN's pick is the algorithm's word for it
// (Algorithm::implementation_family; oneDNN's mapping: algorithms/cpu/onednn.hpp).
//
// Nothing is invented: without oneDNN in the build, without a CUDA device, or
// when the vendor rejects the problem, `status` says so and `choices` is empty
// (or holds only what did run). A choice's `our_time` is NaN when find did not
// run that algorithm successfully (not a candidate, rejected, or get mode).
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "autotune/perf.hpp"

namespace convlab {

struct VendorChoice {
  std::string source;          // "cudnnFind", "cudnnGet_v7" or "onednn_auto"
  std::string algo;            // the convlab algorithm it corresponds to (cudnn.*, onednn.auto)
  std::string family;          // oneDNN: the algorithm's implementation_family(); cuDNN: the registered entry's family
  std::string implementation;  // oneDNN's impl_info_str; "" for cuDNN
  std::string vendor_status;   // cuDNN's status string for the entry; "ok" for oneDNN
  std::string math;            // cuDNN's math type for the entry ("fma", "tensor_op", ...); "fp32" for oneDNN
  double vendor_time = std::numeric_limits<double>::quiet_NaN();  // seconds, cudnnFind's own timing; else NaN
  size_t workspace = 0;        // bytes, as the vendor reports it (oneDNN: onednn.auto's workspace_bytes)
  bool deterministic = true;   // as the vendor reports it
  double our_time = std::numeric_limits<double>::quiet_NaN();  // seconds, find's median for `algo`
  // cuDNN picked an algorithm id convlab registers no entry for (algo is
  // "cudnn.unknown_<id>", family "unknown"): reported as cuDNN's pick, never
  // measured by find and never convlab's choice.
  bool unknown_id = false;
};

struct VendorReport {
  std::string status = "ok";  // "ok", or why there is no (or only a partial) vendor choice
  std::vector<VendorChoice> choices;
};

struct VendorOptions {
  bool measure = true;     // run cudnnFind (it executes every algorithm); false: only what runs nothing
  bool tf32 = false;       // ask cuDNN with its tensor-op (TF32) descriptor, as the _tf32 variants do
  size_t workspace_limit = size_t(-1);  // cuDNN: the first successful entry within it
  bool deterministic = false;           // cuDNN: the first successful deterministic entry
};

// `found` is find's ranked list for the same (problem, direction, context),
// empty when find did not run.
VendorReport vendor_choices(const ConvProblem& p, Direction dir, const ExecContext& ctx,
                            const std::vector<AlgoPerf>& found, const VendorOptions& opt = {});

// find's measured time for `algo` (status ok), NaN when it has none.
double measured_time(const std::vector<AlgoPerf>& found, std::string_view algo);

// One line for a person: what the vendor picks, its own detail, our measured
// time for it, and the ratios to convlab's find pick and get pick (both
// measured by find; get's time NaN -> "-"), e.g.
//   cudnnFind -> cudnn.implicit_precomp_gemm (its time 1.234 ms, ws 2.1 MB, det, fma): our find 1.300 ms
//     = 1.05x find's pick cuda.implicit_gemm (1.238 ms), 0.90x get's pick cudnn.gemm (1.444 ms)
//   onednn_auto -> jit:avx512_core (direct), onednn.auto: our find 23.827 ms
//     = 1.13x find's and get's pick cpu.fft_tiled (21.066 ms)
std::string vendor_text(const VendorChoice& v, const std::string& find_algo, double find_time,
                        const std::string& get_algo, double get_time);

// One choice as a JSON object (the form `convlab tune --json` and the layers
// document use):
//   {"source", "algorithm", "family", "implementation" (null for cuDNN),
//    "vendor_status", "math", "vendor_time_ms" (cudnnFind's own time, else null),
//    "workspace_bytes", "deterministic", "time_ms" (our find's median, null if
//    not measured), "find_choice", "find_time_ms", "same_as_find",
//    "ratio_to_find" (time_ms / find_time_ms), "get_choice", "get_time_ms"
//    (find's measured time of get's pick), "ratio_to_get"}   -- null where unknown
std::string vendor_json(const VendorChoice& v, const std::string& find_algo, double find_time,
                        const std::string& get_algo, double get_time);

// How often each source's pick equals find's pick / is within 10 % of its time.
struct VendorTally {
  std::string source;
  int pairs = 0;         // (layer, direction) pairs with a choice from this source and a find pick
  int same = 0;          // the vendor's algorithm is find's pick
  int within_10pct = 0;  // our measured time of the vendor's pick <= 1.10 x find's pick (same included)
  int unmeasured = 0;    // find has no time for the vendor's pick (a registered algorithm)
  int unknown_ids = 0;   // the vendor's pick was a cuDNN id convlab has no entry for (VendorChoice::unknown_id)
};
void tally(std::vector<VendorTally>& tallies, const VendorReport& r, const std::string& find_algo, double find_time);
// "same pick 3/15, within 10% 7/15, 1 not measured by find, 1 unknown cuDNN id"
std::string tally_text(const VendorTally& t);

}  // namespace convlab
