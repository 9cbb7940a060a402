// The sgemm driver's prefetch plan (sgemm.cpp only): which lines of the next
// block's source each micro-kernel call of the current block prefetches.
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/cpu/gemm/sgemm_prefetch.hpp"

namespace convlab::cpu {

// The source of the block packed next, cut into runs for the micro-kernel
// calls of the current block to prefetch (SgemmPrefetch): a region is `rows`
// row segments of `bytes` bytes, `ld` floats apart, each counted as
// bytes / 64 + 1 lines from its first 64-byte line (enough for any alignment).
// Its lines are handed out row by row, `run` to a call, until they run out;
// lines that get no call are not prefetched (packing reads them anyway).
class PrefetchPlan {
 public:
  void add(const float* base, int64_t ld, int rows, int64_t bytes) {
    if (n_ < 2 && rows > 0 && bytes > 0) reg_[n_++] = {base, ld, rows, int(bytes / 64 + 1)};
  }
  void set_run(int lines) { run_ = std::max(lines, 1); }
  const SgemmPrefetch* next(SgemmPrefetch& out) {
    while (r_ < n_) {
      const Region& g = reg_[r_];
      if (row_ < g.rows) {
        out = {g.base + row_ * g.ld, g.ld, x_, g.row_lines, run_};
        const int64_t at = int64_t(x_) + run_;
        row_ += int(at / g.row_lines);
        x_ = int(at % g.row_lines);
        if (row_ >= g.rows) out.lines -= int((int64_t(row_ - g.rows) * g.row_lines) + x_);
        return &out;
      }
      ++r_, row_ = 0, x_ = 0;
    }
    return nullptr;
  }

 private:
  struct Region {
    const float* base;
    int64_t ld;
    int rows, row_lines;
  };
  Region reg_[2] = {};
  int n_ = 0, r_ = 0, run_ = 1, row_ = 0, x_ = 0;
};

}  // namespace convlab::cpu
