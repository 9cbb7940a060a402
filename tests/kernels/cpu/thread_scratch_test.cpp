// Scratch owned by the calling thread (kernels/cpu/thread_scratch.hpp): aligned, kept, grown, per thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>

#include "kernels/cpu/thread_scratch.hpp"

namespace convlab::cpu {
namespace {

TEST(ThreadScratch, AlignedKeptAndGrown) {
  void* a = thread_scratch(100);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_GE(thread_scratch_held(), 100u);
  std::memset(a, 1, 100);
  EXPECT_EQ(thread_scratch(50), a);  // smaller: the same buffer
  const size_t held = thread_scratch_held();
  void* b = thread_scratch(held + 1);  // larger: grown
  ASSERT_NE(b, nullptr);
  EXPECT_GE(thread_scratch_held(), held + 1);
  std::memset(b, 2, held + 1);  // all of it is writable
}

TEST(ThreadScratch, EachThreadItsOwn) {
  void* mine = thread_scratch(4096);
  void* theirs = nullptr;
  size_t theirs_before = 1;
  std::thread t([&] {
    theirs_before = thread_scratch_held();
    theirs = thread_scratch(4096);
  });
  t.join();
  EXPECT_EQ(theirs_before, 0u);  // a new thread holds nothing until it asks
  ASSERT_NE(theirs, nullptr);
  EXPECT_NE(theirs, mine);
}

}  // namespace
}  // namespace convlab::cpu
