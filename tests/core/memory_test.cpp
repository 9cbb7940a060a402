// The one reading of the available memory (core/device.hpp
// available_memory_bytes: MemAvailable, the cgroups, the address-space limit),
// the 80 % rule every command applies before allocating, and what an
// allocation that fails anyway says.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"
#include "tests/support/memory_limit.hpp"

namespace convlab {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(AvailableMemory, ReadsSomethingOnThisMachine) {
  std::string source;
  EXPECT_GT(available_memory_bytes(DeviceKind::cpu, &source), 0u);
  EXPECT_FALSE(source.empty());
}

// `ulimit -v` bounds what a process can allocate whatever MemAvailable says: the
// reading is at most the room left under it.
TEST(AvailableMemory, TheAddressSpaceLimitBoundsIt) {
  const size_t room = size_t(256) << 20;
  size_t avail = 0;
  std::string source;
  {
    testing::ScopedAddressSpaceLimit limit(room);
    ASSERT_TRUE(limit.ok());
    avail = available_memory_bytes(DeviceKind::cpu, &source);
  }
  // The limit was set at this process's size then plus `room`; the size moves by
  // a few pages between that reading and the library's (the allocator gives
  // pages back), so the reading may exceed `room` by those pages, never by more.
  EXPECT_LE(avail, room + (size_t(1) << 20)) << source;
  EXPECT_GT(avail, room / 2) << source;  // only this test's own few pages were mapped since
  EXPECT_NE(source.find("ulimit -v"), std::string::npos) << source;
  // And without the limit the reading is back to the machine's.
  EXPECT_GT(available_memory_bytes(DeviceKind::cpu), room);
}

// The cgroup reader on made-up trees: v1 and v2 file names, the process's own
// cgroup and its parents (the smallest room wins), "max" and v1's "unlimited".
TEST(AvailableMemory, CgroupRoomOfTheProcessAndItsParents) {
  const fs::path root = fs::temp_directory_path() / ("convlab_cgroup_" + std::to_string(::getpid()));
  fs::remove_all(root);
  std::string source;
  // v2: the leaf has no limit, its parent allows 3000 with 1000 used.
  write(root / "v2/proc", "0::/a/b\n");
  write(root / "v2/sys/a/b/memory.max", "max\n");
  write(root / "v2/sys/a/b/memory.current", "500\n");
  write(root / "v2/sys/a/memory.max", "3000\n");
  write(root / "v2/sys/a/memory.current", "1000\n");
  EXPECT_EQ(cgroup_memory_room((root / "v2/proc").string(), (root / "v2/sys").string(), &source), 2000u);
  EXPECT_NE(source.find("a/memory.max"), std::string::npos) << source;
  // v2 in a hybrid layout (under unified/), the leaf the tighter one.
  write(root / "hy/proc", "4:memory:/x\n0::/x\n");
  write(root / "hy/sys/unified/x/memory.max", "1000\n");
  write(root / "hy/sys/unified/x/memory.current", "900\n");
  EXPECT_EQ(cgroup_memory_room((root / "hy/proc").string(), (root / "hy/sys").string()), 100u);
  // v1: the memory controller (listed with another), v1's "unlimited" at the root is no limit.
  write(root / "v1/proc", "7:cpu,cpuacct:/x\n5:blkio,memory:/x\n");
  write(root / "v1/sys/memory/x/memory.limit_in_bytes", "8192\n");
  write(root / "v1/sys/memory/x/memory.usage_in_bytes", "4096\n");
  write(root / "v1/sys/memory/memory.limit_in_bytes", "9223372036854771712\n");
  write(root / "v1/sys/memory/memory.usage_in_bytes", "4096\n");
  EXPECT_EQ(cgroup_memory_room((root / "v1/proc").string(), (root / "v1/sys").string(), &source), 4096u);
  EXPECT_NE(source.find("memory.limit_in_bytes"), std::string::npos) << source;
  // Usage above the limit: no room at all. No limit anywhere (or no file): SIZE_MAX.
  write(root / "over/proc", "0::/\n");
  write(root / "over/sys/memory.max", "100\n");
  write(root / "over/sys/memory.current", "150\n");
  EXPECT_EQ(cgroup_memory_room((root / "over/proc").string(), (root / "over/sys").string()), 0u);
  EXPECT_EQ(cgroup_memory_room((root / "none/proc").string(), (root / "none/sys").string()), SIZE_MAX);
  fs::remove_all(root);
}

TEST(AvailableMemory, RefusalAboveEightyPercentIsOneLineNamingTheSizes) {
  const size_t gib = size_t(1) << 30;
  EXPECT_EQ(memory_refusal(8 * gib, 10 * gib, "MemAvailable"), "");
  EXPECT_EQ(memory_refusal(100 * gib, 0, "nothing readable"), "");  // nothing to check against
  const std::string why = memory_refusal(9 * gib, 10 * gib, "MemAvailable");
  EXPECT_EQ(why, "needs 9.00 GiB of memory but 10.00 GiB is available (MemAvailable; runs over 80 % of it are refused)");
  try {
    require_memory(DeviceKind::cpu, SIZE_MAX / 2, "this test");
    ADD_FAILURE() << "SIZE_MAX / 2 bytes fit?";
  } catch (const OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("this test needs ", 0), 0u) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  require_memory(DeviceKind::cpu, 1 << 20, "a MiB");  // fits anywhere this runs
}

// An allocation that fails anyway is one OutOfMemory naming its size, not a bare std::bad_alloc.
TEST(AvailableMemory, AFailedAllocationNamesItsSize) {
  testing::ScopedAddressSpaceLimit limit(size_t(64) << 20);
  ASSERT_TRUE(limit.ok());
  try {
    AlignedBuffer<float> b(size_t(1) << 28);  // 1 GiB
    ADD_FAILURE() << "1 GiB allocated under a 64 MiB limit";
  } catch (const OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot allocate 1.00 GiB (1073741824 bytes) of host memory"), std::string::npos) << m;
    EXPECT_NE(m.find("is available"), std::string::npos) << m;
  }
  try {
    DeviceBuffer b(DeviceKind::cpu, size_t(1) << 30);
    ADD_FAILURE() << "1 GiB allocated under a 64 MiB limit";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("1073741824 bytes"), std::string::npos) << e.what();
  }
  // The name of what the buffer was for goes in front.
  try {
    naming_memory("conv1's output", [] { return DeviceBuffer(DeviceKind::cpu, size_t(1) << 30); });
    ADD_FAILURE();
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(std::string(e.what()).rfind("conv1's output: cannot allocate 1.00 GiB", 0), 0u) << e.what();
  }
  // A container's std::bad_alloc (its size unknown) still says what it was for.
  try {
    naming_memory("policy find: iteration 3", [] { throw std::bad_alloc(); });
    ADD_FAILURE();
  } catch (const OutOfMemory& e) {
    EXPECT_STREQ(e.what(), "policy find: iteration 3: an allocation failed (std::bad_alloc; its size is not known)");
  }
}

}  // namespace
}  // namespace convlab
