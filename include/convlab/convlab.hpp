// convlab's public C++ API: one include, one CMake target.
//
//   find_package(convlab REQUIRED)                       # after `cmake --install build --prefix DIR`
//   target_link_libraries(app PRIVATE convlab::convlab)  # CMAKE_PREFIX_PATH=DIR
//   #include <convlab/convlab.hpp>
//
// What a program needs to ask "which algorithm, how fast, how accurate" for its
// own layers (examples/consumer/main.cpp uses every part):
//
//   problem    ConvProblem, parse_problem("mb32ic96ih27oc256oh27kh5ph2"),
//              Direction {fwd, bwd_data, bwd_filter}               core/problem.hpp
//   lookup     registry() (the ordered list), find_algorithm("cpu.winograd_f4x3")
//              (nullptr when unknown), get_algorithm (throws), and per
//              algorithm available() / supports() / workspace_bytes() / tolerance()
//                                                                  algorithms/registry.hpp
//   run        run_on_host(): one call on host tensors (ConvData); ConvRunner
//              for repeated timed runs on device buffers; compute_reference() +
//              compare() for the error against the fp64 oracle    algorithms/execute.hpp
//   find/get   find() measures every candidate, get() predicts with the cost
//              model; choose_algorithm(Policy) applies a policy ("find",
//              "get", "cache:<file>", "fixed:<name>", constraints), and
//              tuned_algorithm() is find behind a persistent cache file
//                                                                  autotune/{find,get,policy,cache}.hpp
//
// Everything the CLI does goes through these same functions; errors are
// convlab::Error (one line), a sticky device error convlab::DeviceFault
// (core/error.hpp).
#pragma once

#include <string>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "autotune/cache.hpp"
#include "autotune/find.hpp"
#include "autotune/get.hpp"
#include "autotune/policy.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"

namespace convlab {

// Runs `algo` once for `dir` on host tensors: uploads data's inputs, runs,
// writes the output of `dir` back into data (data.output(dir)). Throws Error
// when the algorithm is unavailable here or does not support the problem.
inline void run_on_host(const Algorithm& algo, const ConvProblem& p, Direction dir, ConvData& data,
                        const ExecContext& ctx = {}) {
  ConvRunner runner(algo, p, dir, ctx);
  runner.upload(data);
  runner.run();
  runner.download_output(data);
}

// The fastest algorithm for (p, dir) on ctx's device by exhaustive find, read
// from the cache file at `cache_path` when this build on this machine tuned it
// before, else measured and stored there ("" = TuneCache::default_path()).
inline Choice tuned_algorithm(const ConvProblem& p, Direction dir, const std::string& cache_path,
                              const ExecContext& ctx = {}) {
  Policy policy;
  policy.kind = Policy::Kind::cache;
  policy.cache_path = cache_path;
  return choose_algorithm(policy, p, dir, ctx);
}

}  // namespace convlab
