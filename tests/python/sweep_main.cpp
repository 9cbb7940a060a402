// Prints the shared tester's edge sweep, one "label problem" per line, for the
// Python package's tests (tests/python): the patched layers are checked over
// the same shapes as every algorithm.
#include <convlab/testing.hpp>

#include <cstdio>

int main() {
  for (const convlab::testing::TestProblem& t : convlab::testing::edge_sweep())
    std::printf("%s %s\n", t.label.c_str(), t.problem.canonical().c_str());
  return 0;
}
