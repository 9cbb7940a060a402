// kernels/cuda/implicit_gemm under the SIMT emulator, every direction, against
// the fp64 reference.
#include <gtest/gtest.h>

#include "kernels/cuda/implicit_gemm/implicit_gemm.hpp"
#include "tests/kernels/cuda/conv_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;

void run_implicit(Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
  if (d == Dir::fwd) implicit_gemm_conv_fwd(sh, src, wei, dst, nullptr);
  if (d == Dir::bwd_data) implicit_gemm_conv_bwd_data(sh, dst, wei, src, nullptr);
  if (d == Dir::bwd_filter) implicit_gemm_conv_bwd_filter(sh, src, dst, wei, nullptr);
}

TEST(CudaImplicitGemm, FwdMatchesReference) {
  for (const ConvShape& sh : test::sanitized_subset(test::general_shapes())) test::check_conv(sh, Dir::fwd, run_implicit);
}
TEST(CudaImplicitGemm, BwdDataMatchesReference) {
  for (const ConvShape& sh : test::sanitized_subset(test::general_shapes())) test::check_conv(sh, Dir::bwd_data, run_implicit);
}
TEST(CudaImplicitGemm, BwdFilterMatchesReference) {
  for (const ConvShape& sh : test::sanitized_subset(test::general_shapes())) test::check_conv(sh, Dir::bwd_filter, run_implicit);
}

}  // namespace
}  // namespace convlab::cuda
