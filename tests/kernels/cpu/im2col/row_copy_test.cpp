// copy_strided and its stride-2 ISA variants: every length around the vector widths, every stride 1-4,
// the row's last element against a page no access may touch (a read past in[(n - 1) * stride] faults).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "kernels/cpu/im2col/row_copy.hpp"

namespace convlab::cpu {
namespace {

// `floats` floats ending where an inaccessible page begins.
class GuardedRow {
 public:
  explicit GuardedRow(size_t floats) {
    page_ = size_t(sysconf(_SC_PAGESIZE));
    data_pages_ = (floats * sizeof(float) + page_ - 1) / page_ + 1;
    base_ = static_cast<char*>(mmap(nullptr, (data_pages_ + 1) * page_, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(base_, MAP_FAILED);
    EXPECT_EQ(mprotect(base_ + data_pages_ * page_, page_, PROT_NONE), 0);
    row_ = reinterpret_cast<float*>(base_ + data_pages_ * page_) - floats;
    for (size_t i = 0; i < floats; ++i) row_[i] = float(i) + 0.5f;
  }
  ~GuardedRow() { munmap(base_, (data_pages_ + 1) * page_); }
  const float* data() const { return row_; }

 private:
  size_t page_ = 0, data_pages_ = 0;
  char* base_ = nullptr;
  float* row_ = nullptr;
};

void check(const std::function<void(const float*, int, float*)>& copy, int stride, const std::string& what) {
  for (int n = 0; n <= 70; ++n) {
    const GuardedRow row(n == 0 ? 1 : size_t(n - 1) * stride + 1);
    std::vector<float> out(size_t(n) + 1, -7.f);
    copy(row.data(), n, out.data());
    for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], row.data()[int64_t(i) * stride]) << what << " n " << n << " i " << i;
    ASSERT_EQ(out[n], -7.f) << what << " n " << n << ": wrote past the row";
  }
}

TEST(RowCopy, EveryStrideAndLengthReadsNothingPastTheRow) {
  for (int stride = 1; stride <= 4; ++stride)
    check([stride](const float* in, int n, float* out) { copy_strided(in, stride, n, out); }, stride,
          "copy_strided stride " + std::to_string(stride) + " on " + cpu_info().isa());
}

TEST(RowCopy, Stride2Avx2) {
  if (!(cpu_info().avx2 && cpu_info().fma)) GTEST_SKIP() << "no AVX2 on this CPU";
  check(copy_stride2_avx2, 2, "avx2");
}

TEST(RowCopy, Stride2Avx512) {
  if (cpu_info().isa() != "avx512") GTEST_SKIP() << "no AVX-512 on this CPU (" << cpu_info().isa() << ")";
  check(copy_stride2_avx512, 2, "avx512");
}

}  // namespace
}  // namespace convlab::cpu
