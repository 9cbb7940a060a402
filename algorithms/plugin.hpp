// Algorithms from outside the tree, at run time: a plugin is a shared library
// built against the installed convlab headers (CMake target convlab::plugin:
// the headers only, no copy of the libraries) that defines
//
//   extern "C" void convlab_register_algorithms() {
//     static const MyConv mine;               // lives as long as the process
//     convlab::register_algorithm(mine);      // "user.<name>" (algorithms/registry.hpp)
//   }
//
// The executable that loads it (convlab, bench_conv) exports its own symbols,
// so the plugin's calls reach the one registry of the process. Once loaded,
// the plugin's algorithms are in registry() after the built-ins, and find,
// the cache, `layers`, `fixed:` policies and benchmark filters treat them as
// the built-ins. examples/my_algorithm is one, end to end.
#pragma once
#include <string>

namespace convlab {

// The entry point a plugin defines.
inline constexpr const char* kPluginEntry = "convlab_register_algorithms";

// Opens the plugin at `path` (never closed) and calls its entry point. Throws
// Error with one line on a path that is not a readable file, a library the
// loader refuses (undefined symbols included), a missing entry point, or an
// algorithm name register_algorithm() refuses.
void load_plugin(const std::string& path);

// The plugins named by the environment variable CONVLAB_PLUGINS (paths
// separated by ':'), then by every `--plugin PATH` / `--plugin=PATH` in
// argv[1..argc-1], loaded in that order; the --plugin arguments are removed
// from argv (argc updated). Call before the arguments are interpreted.
void load_plugins(int& argc, char** argv);

}  // namespace convlab
