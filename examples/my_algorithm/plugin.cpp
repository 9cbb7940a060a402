// The plugin: `convlab --plugin libmy_algorithm.so ...` (or CONVLAB_PLUGINS)
// calls this once, before reading its arguments; user.direct_naive is then in
// `convlab algos`, find, the cache, `layers`, `fixed:` policies and bench_conv.
#include "my_algorithm.hpp"

extern "C" void convlab_register_algorithms() {
  static const UserDirect algorithm;
  convlab::register_algorithm(algorithm);
}
