// The prefetch strip and the second C destination the sgemm driver hands a
// micro-kernel call (see the micro-kernel contract in sgemm.hpp), in a plain
// header of their own so that the ISA translation units (sgemm_ukernel_*.cpp)
// include nothing else.
#pragma once
#include <cstdint>

namespace convlab::cpu {

// A C tile written to two places: columns [0, split) at c + j as usual, [split, n) at
// c2 + (j - split), rows ldc apart in both (a tile across two images of a batch's grid).
struct SgemmCTwo {
  float* c2;
  int split;  // 1..31
};

// A run of `lines` cache lines of a 2-D region of rows `ld` floats apart,
// taken row by row (consecutive lines share a page: no page walk per line):
// it starts at line x of the row that begins at `row` (lines counted from
// the 64-byte line holding row[0]), and a row has `row_lines` lines. Part of
// the source of the block the driver packs next, prefetched into L2 while
// the kernel computes.
struct SgemmPrefetch {
  const float* row;
  int64_t ld;
  int x, row_lines, lines;
};

// The kernels' cursor over an SgemmPrefetch run (header-only, no library
// calls: it is compiled into each ISA's micro-kernel).
struct PrefetchWalk {
  explicit PrefetchWalk(const SgemmPrefetch* pf)
      : row(pf ? reinterpret_cast<const char*>(pf->row) : nullptr),
        ld_bytes(pf ? pf->ld * int64_t(sizeof(float)) : 0),
        x(pf ? pf->x : 0),
        row_lines(pf ? pf->row_lines : 1),
        left(pf ? pf->lines : 0) {}
  const char* line() const {
    return reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(row) & ~uintptr_t(63)) + 64 * x;
  }
  void advance() {
    --left;
    if (++x == row_lines) {
      x = 0;
      row += ld_bytes;
    }
  }
  const char* row;
  int64_t ld_bytes;
  int x, row_lines, left;
};

}  // namespace convlab::cpu
