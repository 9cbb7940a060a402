#include "kernels/cpu/gemm/sgemm_grid.hpp"

#include <vector>

namespace convlab::cpu {

void pack_rows_grid(const float* b, int64_t ldb, const SgemmGrid& g, int64_t p0, int kc, int64_t j0, int len,
                    int width, float* dst) {
  const int panels = (len + width - 1) / width;
  std::vector<int64_t> off(size_t(panels) * size_t(width), 0);  // the row offsets of the block's columns
  for (int j = 0; j < len; ++j) off[size_t(j)] = g.at(j0 + j);
  for (int p = 0; p < kc; ++p) {
    const float* s = b + (p0 + p) * ldb;
    for (int q = 0; q < panels; ++q) {
      const int v = len - q * width < width ? len - q * width : width;
      float* d = dst + int64_t(q) * width * kc + int64_t(p) * width;
      const int64_t* o = off.data() + int64_t(q) * width;
      for (int j = 0; j < v; ++j) d[j] = s[o[j]];
      for (int j = v; j < width; ++j) d[j] = 0.0f;
    }
  }
}

void pack_cols_grid(const float* b, int64_t ldb, const SgemmGrid& g, int64_t p0, int kc, int64_t j0, int nv, int NR,
                    float* dst) {
  std::vector<int64_t> off(static_cast<size_t>(kc), 0);  // the row offsets of the block's k indices
  for (int p = 0; p < kc; ++p) off[size_t(p)] = g.at(p0 + p);
  for (int p = 0; p < kc; ++p) {
    float* d = dst + int64_t(p) * NR;
    for (int j = nv; j < NR; ++j) d[j] = 0.0f;
  }
  // 8 columns of op(B) (8 rows of b) at a time, so the writes of one panel row stay in one cache line.
  for (int jb = 0; jb < nv; jb += 8) {
    const int je = jb + 8 < nv ? jb + 8 : nv;
    for (int p = 0; p < kc; ++p) {
      float* d = dst + int64_t(p) * NR;
      for (int j = jb; j < je; ++j) d[j] = b[(j0 + j) * ldb + off[size_t(p)]];
    }
  }
}

}  // namespace convlab::cpu
