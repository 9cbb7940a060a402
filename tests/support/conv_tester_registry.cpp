// ConvTester's by-name constructor: the one part of the tester that needs the
// registry (the SIMT-emulated builds have none and pass algorithm objects).
#include "algorithms/registry.hpp"
#include "convlab/testing.hpp"

namespace convlab::testing {

ConvTester::ConvTester(std::string algorithm)
    : algo_(find_algorithm(algorithm)), name_(std::move(algorithm)),
      dirs_(std::begin(kAllDirections), std::end(kAllDirections)) {}

}  // namespace convlab::testing
