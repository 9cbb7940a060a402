// Algorithm-selection policies: how a caller (the trainer, `convlab layers`,
// a user of the library) picks one algorithm per (layer, direction).
//
//   default          the first algorithm in registry order that is available on
//                    the device and supports the problem (oneDNN's ordered list)
//   fixed:<name>     that algorithm where it supports the problem, else default
//   get[:<path>]     the top of the cost model's ranking (nothing runs), its
//                    efficiency factors calibrated from the find results in
//                    the cache file (default file when it exists)
//   find             the fastest measured by exhaustive find (times candidates)
//   find-context     find's choice here (each candidate timed alone); the trainer
//                    then times find's near-best candidates of every (layer,
//                    direction) inside training steps and keeps the fastest
//                    there (train/context_find.hpp: that needs a network)
//   cache[:<path>]   the persistent autotune cache; find on a miss, then stored
//
// Constraints may follow after commas (a global workspace limit,
// accuracy budget and determinism requirement), e.g.
//   find,max-error=1e-5,deterministic      cache:/tmp/t.jsonl,workspace=256M
// and `tf32`, which admits reduced-precision math (Algorithm::math() != "fp32":
// the cuDNN _tf32 variants) into find/get/cache candidates and the `default`
// order; without it they are never chosen (fixed:<name> runs one regardless):
//   find,tf32
// and `own`, which keeps the choice among convlab's own convolutions: no
// vendor library's convolution (Algorithm::vendor_peer(): oneDNN's, cuDNN's) is
// chosen, so `find,own` against `find` is what the vendor library adds:
//   find,own
// The accuracy budget is checked against find's measured max relative error;
// get (which measures nothing) applies the workspace and determinism limits
// only. The reference is never chosen.
//
// Lists of policies (the CLI's `--policy`, see split_policy_list): policies are
// separated by ';' (or given as separate strings), constraints follow a policy
// after ','. A plain comma list of policies without constraints
// ("default,get,find") is still read as a list where that is unambiguous.
#pragma once
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "autotune/perf.hpp"

namespace convlab {

struct Policy {
  enum class Kind { default_, fixed, get, find, cache, find_context };
  Kind kind = Kind::default_;
  std::string fixed_algo;  // Kind::fixed
  std::string cache_path;  // Kind::cache / get ("" = the default cache file)
  // Constraints (all policies; see above).
  double max_error = std::numeric_limits<double>::infinity();
  bool deterministic = false;
  size_t workspace_limit = size_t(-1);  // min'd with choose_algorithm's argument
  bool tf32 = false;                    // admit reduced-precision math (see above)
  bool own = false;                     // convlab's own convolutions only (see above)
  std::string name() const;               // "default", "fixed:cpu.direct", "get", ...
  static Policy parse(std::string_view);  // throws Error with one line
};

struct Choice {
  const Algorithm* algo = nullptr;
  std::string why;              // "fastest of 7 measured", "fixed", "first supporting in registry order", ...
  double tuning_seconds = 0;    // wall time spent choosing (find / cache miss)
};

// One policy string per policy in `text`, each accepted by Policy::parse:
//   "find,deterministic;fixed:cpu.direct"     ';' separates policies; a trailing ';' is allowed
//   "cache:/tmp/a,b.jsonl,workspace=64M"      one policy (a path may contain ',')
//   "default,get,find"                        the plain comma list: every ','-token a policy
// Without ';', text that reads both as one policy and as a comma list of
// policies ("cache:a.jsonl,find") is refused as ambiguous rather than guessed;
// a bad policy or constraint throws Error with one line.
std::vector<std::string> split_policy_list(std::string_view text);

// find's ranked list for (p, dir) -- the list choose_algorithm picks from for
// find and find-context (memoised per process; find runs on a miss), and for
// cache[:path] the file's list (find on a miss, then stored) -- keeping
// only the entries the policy's constraints admit (ok, registered, workspace,
// max-error, determinism, tf32), fastest first. Throws Error when none is admitted.
std::vector<AlgoPerf> find_ranking(const Policy& policy, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                                   size_t workspace_limit = size_t(-1));

// "4096", "64K", "256M", "2G" (binary units) -> bytes; throws Error with one line.
size_t parse_bytes(std::string_view text);

// Why `policy` cannot run on `device` at all ("" when it can): fixed:<name>
// whose algorithm runs on the other device or is unavailable here (no CUDA
// device, a library or CPU feature missing). Such a policy is skipped with this
// reason, never replaced by another algorithm under its name.
std::string policy_unavailable_reason(const Policy& policy, DeviceKind device);

// Throws Error when no algorithm on ctx.device supports the problem (within the
// constraints), and when policy_unavailable_reason() is not empty. get / find /
// cache results are memoised per process; cache additionally reads and writes
// its file (autotune/cache.hpp).
Choice choose_algorithm(const Policy& policy, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                        size_t workspace_limit = size_t(-1));

}  // namespace convlab
