// A lowered address-space limit (RLIMIT_AS, what `ulimit -v` sets) for the
// span of one test: `room` bytes above what the process maps now. Every
// allocation past it fails instead of touching memory, so a test of the memory
// checks cannot take the machine down even when the check it tests is broken.
// The soft limit goes back to what it was when the object goes out of scope.
#pragma once
#include <sys/resource.h>
#include <unistd.h>

#include <cstddef>
#include <fstream>

namespace convlab::testing {

// This process's virtual size in bytes (/proc/self/statm).
inline size_t virtual_size() {
  std::ifstream statm("/proc/self/statm");
  unsigned long long pages = 0;
  statm >> pages;
  return size_t(pages) * size_t(sysconf(_SC_PAGESIZE));
}

class ScopedAddressSpaceLimit {
 public:
  explicit ScopedAddressSpaceLimit(size_t room) {
    getrlimit(RLIMIT_AS, &saved_);
    rlimit lower = saved_;
    lower.rlim_cur = rlim_t(virtual_size() + room);
    ok_ = setrlimit(RLIMIT_AS, &lower) == 0;
  }
  ~ScopedAddressSpaceLimit() { setrlimit(RLIMIT_AS, &saved_); }
  ScopedAddressSpaceLimit(const ScopedAddressSpaceLimit&) = delete;
  ScopedAddressSpaceLimit& operator=(const ScopedAddressSpaceLimit&) = delete;
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  bool ok_ = false;
};

}  // namespace convlab::testing
