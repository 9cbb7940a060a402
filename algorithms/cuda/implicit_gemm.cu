#include "algorithms/cuda/implicit_gemm.hpp"

#include <climits>
#include <cmath>
#include <string>

#include "kernels/cuda/implicit_gemm/implicit_gemm.hpp"

namespace convlab {

namespace {
cuda::Math math_of(bool tf32) { return tf32 ? cuda::Math::tf32 : cuda::Math::fp32; }
}  // namespace

CudaImplicitGemm::CudaImplicitGemm(bool tf32)
    : NamedAlgorithm(tf32 ? "cuda.implicit_gemm_tf32" : "cuda.implicit_gemm", DeviceKind::cuda, "implicit_gemm",
                     tf32 ? "implicit GEMM on the tensor cores (TF32): cuda.implicit_gemm's gathers, tables, stride "
                            "phases and split K; each shared-memory slab element rounded to TF32 (cvt.rna), every "
                            "warp's 32x16 or 16x32 part of a 64x64, 32x64 or 16x128 tile as mma.sync m16n8k8 with "
                            "fp32 accumulators; GEMMs of at most 4 rows keep the 4x128 FMA tile"
                          : "implicit GEMM with precomputed gather offsets (a row table in the workspace, no division in "
                            "the K loop): 64x64, 32x64, 16x128 or 4x128 block tiles chosen from M, 4x4 (4x1) per "
                            "thread, double-buffered shared memory; strided backward-data as one dense GEMM per stride "
                            "phase, the phases in one launch (wei^T gathered dense once, phases no tap reaches "
                            "zero-filled in one pass); backward-filter splits K (partial sums in the workspace) when "
                            "its tiles would not fill the GPU; groups as grid z"),
      tf32_(tf32) {}

// fp32: the summation bound. tf32 (derived): every A and B element is rounded
// to TF32 by cvt.rna (round to nearest: relative error <= u = 2^-11 each);
// the product of two TF32 values is exact in fp32 (11 x 11 significant bits),
// so each term a*b enters as a(1+d1) b(1+d2), off by at most (2u + u^2)|a b|;
// the tensor cores' and the split reduction's fp32 sums add the summation
// bound K*eps on magnitudes at most (1 + 2u + u^2)|a b|:
//     |y - ref| <= [ (2u + u^2) + K*eps*(1 + 2u + u^2) ] * sum |a b|.
Tolerance CudaImplicitGemm::tolerance(const ConvProblem& p, Direction dir) const {
  Tolerance t = summation_tolerance(p, dir);
  if (!tf32_) return t;
  const double u = std::ldexp(1.0, -11), rounding = 2 * u + u * u;
  t.elem = rounding + t.elem * (1 + rounding);
  t.basis = "TF32 inputs rounded to nearest (u=2^-11): (2u+u^2) + K*eps*(1+2u+u^2), K=" +
            std::to_string(std::max<int64_t>(p.reduction_length(dir), 1));
  return t;
}

NominalCost CudaImplicitGemm::nominal_cost(const ConvProblem& p, Direction) const {
  return nominal_implicit_gemm(p);
}

Support CudaImplicitGemm::supports(const ConvProblem& p, Direction) const {
  // Gather offsets are 32-bit and may point up to a padding margin outside a
  // tensor before the bounds test rejects them: every tensor, padded, stays
  // below 2^30 elements.
  const int64_t lim = int64_t(INT_MAX) / 2;
  const int64_t padded_src = int64_t(p.n) * p.c * p.padded_h64() * p.padded_w64();
  const int64_t padded_dst =
      int64_t(p.n) * p.k * (p.p64() + int64_t(p.r) * p.dil_h) * (p.q64() + int64_t(p.s) * p.dil_w);
  if (p.src_elems() > lim || padded_src > lim || padded_dst > lim || p.wei_elems() > lim)
    return Support::no("tensors (with their padding) over 2^30 elements (32-bit gather offsets)");
  return Support::yes();
}

size_t CudaImplicitGemm::workspace_bytes(const ConvProblem& p, Direction dir) const {
  return cuda::implicit_gemm_workspace_bytes(to_shape(p), dir, math_of(tf32_));
}

void CudaImplicitGemm::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                           const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  switch (dir) {
    case Direction::fwd:
      cuda::implicit_gemm_conv_fwd(sh, buf.src, buf.wei, buf.dst, workspace, ctx.stream, math_of(tf32_));
      break;
    case Direction::bwd_data:
      cuda::implicit_gemm_conv_bwd_data(sh, buf.dst, buf.wei, buf.src, workspace, ctx.stream, math_of(tf32_));
      break;
    case Direction::bwd_filter:
      cuda::implicit_gemm_conv_bwd_filter(sh, buf.src, buf.dst, buf.wei, workspace, ctx.stream, math_of(tf32_));
      break;
  }
}

}  // namespace convlab
