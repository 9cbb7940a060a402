// convlab's one exception type. Every bad input (problem string, shape, .npy
// file, cache file, CLI argument) is reported by throwing convlab::Error with a
// single human-readable line; the CLI prints it and exits non-zero.
#pragma once
#include <stdexcept>
#include <string>

namespace convlab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string& message) { throw Error(message); }

}  // namespace convlab
