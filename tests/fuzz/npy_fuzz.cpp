// libFuzzer target: see fuzz_checks.hpp for the invariants; scripts/fuzz.sh builds and runs it.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  convlab::fuzz::check_npy_input(data, size);
  return 0;
}
