#include "algorithms/cuda/winograd.hpp"

#include <climits>
#include <string>

#include "kernels/cuda/winograd/winograd_f2x3.hpp"
#include "kernels/cuda/winograd/winograd_f4x3.hpp"

namespace convlab {

Support CudaWinogradF2x3::supports(const ConvProblem& p, Direction) const {
  const char* why = cuda::winograd_f2x3_unsupported(to_shape(p));
  if (*why) return Support::no(why);
  return Support::yes();
}

void CudaWinogradF2x3::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void*,
                           const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  switch (dir) {
    case Direction::fwd: cuda::winograd_f2x3_fwd(sh, buf.src, buf.wei, buf.dst, ctx.stream); break;
    case Direction::bwd_data: cuda::winograd_f2x3_bwd_data(sh, buf.dst, buf.wei, buf.src, ctx.stream); break;
    case Direction::bwd_filter: cuda::winograd_f2x3_bwd_filter(sh, buf.src, buf.dst, buf.wei, ctx.stream); break;
  }
}

Tolerance CudaWinogradF2x3::tolerance(const ConvProblem& p, Direction dir) const {
  Tolerance t = summation_tolerance(p, dir);
  t.elem += cuda::kWinogradF2x3ExtraEps * double(FLT_EPSILON);
  t.basis += " + 8 eps for the F(2x2,3x3) transforms (measured <= 2.7 eps, kernels/cuda/winograd/winograd_f2x3.hpp)";
  return t;
}

namespace {
int dir_index(Direction d) { return d == Direction::fwd ? 0 : d == Direction::bwd_data ? 1 : 2; }
}  // namespace

Support CudaWinogradF4x3::supports(const ConvProblem& p, Direction dir) const {
  const char* why = cuda::winograd_f4x3_unsupported(to_shape(p));
  if (*why) return Support::no(why);
  // The batched SGEMM's N (tiles) and the transformed tensors use 32-bit sizes.
  if (cuda::winograd_f4x3_workspace_floats(to_shape(p), dir_index(dir)) > INT_MAX)
    return Support::no("transformed tensors exceed 2^31 elements");
  return Support::yes();
}

size_t CudaWinogradF4x3::workspace_bytes(const ConvProblem& p, Direction dir) const {
  return size_t(cuda::winograd_f4x3_workspace_floats(to_shape(p), dir_index(dir))) * sizeof(float);
}

void CudaWinogradF4x3::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                           const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  float* ws = static_cast<float*>(workspace);
  switch (dir) {
    case Direction::fwd: cuda::winograd_f4x3_fwd(sh, buf.src, buf.wei, buf.dst, ws, ctx.stream); break;
    case Direction::bwd_data: cuda::winograd_f4x3_bwd_data(sh, buf.dst, buf.wei, buf.src, ws, ctx.stream); break;
    case Direction::bwd_filter:
      cuda::winograd_f4x3_bwd_filter(sh, buf.src, buf.dst, buf.wei, ws, ctx.stream);
      break;
  }
}

Tolerance CudaWinogradF4x3::tolerance(const ConvProblem& p, Direction dir) const {
  Tolerance t = summation_tolerance(p, dir);
  t.elem += cuda::kWinogradF4x3ExtraEps * double(FLT_EPSILON);
  t.basis += " + 64 eps for the F(4x4,3x3) transforms (measured <= 18.4 eps, kernels/cuda/winograd/winograd_f4x3.hpp)";
  return t;
}

}  // namespace convlab
