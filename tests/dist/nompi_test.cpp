// The transports compiled without MPI (and so without NCCL): every entry point
// says why, none pretends (a build without MPI/NCCL keeps working).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "dist/comm.hpp"

namespace convlab::train {
namespace {

TEST(NoMpi, EveryEntryPointSaysWhy) {
  const std::string why = mpi_unavailable_reason();
  EXPECT_NE(why.find("built without MPI"), std::string::npos) << why;
  EXPECT_NE(why.find("libopenmpi-dev"), std::string::npos) << why;
  try {
    mpi_world();
    FAIL() << "mpi_world() without MPI returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built without MPI"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(mpi_initialised());
  abort_world(2);  // nothing to abort: returns
  EXPECT_FALSE(nccl_unavailable_reason().empty());
}

TEST(NoMpi, LauncherEnvironmentIsRead) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  EXPECT_TRUE(launched_by_mpi());
  EXPECT_EQ(launcher_world_size(), 4);
  EXPECT_EQ(launcher_world_rank(), 3);
  ::setenv("OMPI_COMM_WORLD_SIZE", "x", 1);  // unreadable: no world
  EXPECT_EQ(launcher_world_size(), 1);
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("OMPI_COMM_WORLD_RANK");
}

}  // namespace
}  // namespace convlab::train
