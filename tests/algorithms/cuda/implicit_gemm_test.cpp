// cuda.implicit_gemm under the SIMT emulator, every direction, against the
// fp64 reference (64x64 GEMM tiles; channels across a tile; groups).
#include <gtest/gtest.h>

#include "algorithms/cuda/implicit_gemm.hpp"
#include "tests/algorithms/cuda/algorithm_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;
using test::sweep;

TEST(CudaImplicitGemm, FwdMatchesReference) { sweep(CudaImplicitGemm(), test::general_shapes(), Dir::fwd); }
TEST(CudaImplicitGemm, BwdDataMatchesReference) { sweep(CudaImplicitGemm(), test::general_shapes(), Dir::bwd_data); }
TEST(CudaImplicitGemm, AsymmetricPaddingAnd1dMatchReference) { test::sweep_asym_1d(CudaImplicitGemm(), 9); }
TEST(CudaImplicitGemm, BwdFilterMatchesReference) {
  sweep(CudaImplicitGemm(), test::general_shapes(), Dir::bwd_filter);
}

}  // namespace
}  // namespace convlab::cuda
