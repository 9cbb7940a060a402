// The algorithm through convlab's tester: every direction of the standard sweep
// against the fp64 reference (NaN-filled outputs, guard zones, its own
// tolerance()); bwd-data and bwd-filter are counted as unsupported.
#include <convlab/testing.hpp>
#include <gtest/gtest.h>

#include "my_algorithm.hpp"

TEST(UserDirect, MatchesReference) {
  const UserDirect algorithm;  // outlives the tester, which keeps a pointer to it
  convlab::testing::ConvTester tester(algorithm);
  tester.sweep(convlab::testing::edge_sweep()).run();
  EXPECT_GT(tester.cases_run(), 40);
}

// Registered, it is found by name like a built-in; names the registry keeps for
// itself, or one already taken, are refused.
TEST(UserDirect, RegistersUnderItsOwnName) {
  static const UserDirect algorithm;
  convlab::register_algorithm(algorithm);
  EXPECT_EQ(convlab::find_algorithm("user.direct_naive"), &algorithm);
  EXPECT_EQ(convlab::registry().back(), &algorithm);
  EXPECT_THROW(convlab::register_algorithm(algorithm), convlab::Error);
}
