// The results files in tests/data/results (written by an earlier convlab: see
// before_files_test.cpp), read whole.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace convlab::testing {

inline std::string results_data(const std::string& name) {
  std::ifstream in(std::string(CONVLAB_SOURCE_DIR) + "/tests/data/results/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace convlab::testing
