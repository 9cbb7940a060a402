// cuda.winograd_f2x3 and the non-fused cuda.winograd_f4x3 / cuda.winograd_f6x3
// (contract in winograd.hpp): geometry per direction, support, workspace
// carving and the pipelines of transform kernels and batched SGEMMs.
#include "algorithms/cuda/winograd.hpp"

#include <cfloat>
#include <climits>
#include <string>

#include "core/error.hpp"
#include "kernels/cuda/gemm/sgemm.hpp"
#include "kernels/cuda/winograd/winograd_f2x3.hpp"
#include "kernels/cuda/winograd/winograd_nonfused.hpp"

namespace convlab {

namespace {

Support winograd_3x3_support(const ConvProblem& p) {
  if (p.r != 3 || p.s != 3) return Support::no("needs a 3x3 filter");
  if (p.stride_h != 1 || p.stride_w != 1) return Support::no("needs stride 1");
  if (p.dil_h != 1 || p.dil_w != 1) return Support::no("needs dilation 1");
  if (p.pad_h > 2 || p.pad_w > 2) return Support::no("needs padding <= 2");
  return Support::yes();
}

// Winograd mixes the terms of neighbouring outputs through its transforms, so
// the error of one output follows the largest sum|terms| around it, not its own
// (an output whose exact value is 0 comes out as rounding noise from its tile):
// the bound has the transform algorithms' form, eps x max_j sum|terms_j|
// (algorithms/algorithm.hpp), as cpu.winograd_* declare theirs. Constants per
// direction (fwd, bwd-data, bwd-filter): 2x the worst measured, rounded up. The
// shared tester (RegistrySweep on a GPU) and the emulated tests
// (tests/algorithms/cuda/winograd_test.cpp) print the measured values in this form.
//   F(2x2): points 0, 1, -1. Measured on an H100 (nvcc contracts into FMAs;
//     cuDNN 9.19, CUDA 13.0, 2026-11-23) over the tester's standard sweep:
//     1.21 / 1.19 / 1.18 eps. The shared matrices compute fwd and bwd-data
//     bit-identically to the hand-written transforms the H100 ran; bwd-filter's
//     G^T M G now sums m0 + m1/2 + m2/2 left to right (was m0 + (m1 + m2)/2).
//   F(4x4): the H100 measurement (18.19 / 14.78 / 15.51 eps) was of the old
//     points 0, +-1, +-2 and no longer applies. With the points of
//     kernels/winograd_math.hpp, 0, -1, 1, 1/2, -2, the constants are 2x the
//     SIMT emulator's worst (plain fp32, no FMA contraction) over the same
//     sweep's 3x3 problems with the tester's data (edge sweep, AlexNet batch 1,
//     random sweep seed 20261122; AlexNet's 3x3 layers also in
//     CudaWinogradF2x3.DISABLED_AlexNetLayersErrorMeasurement): 6.69 / 5.71 /
//     4.52 eps -> 14 / 12 / 10. They AWAIT a GPU re-measurement
//     (scripts/gpu-check.sh runs the registry sweep there). What backs the
//     emulator's figures: over the same problems and data it reproduces the
//     H100's F(2x2) (1.21 / 1.19 / 1.20 eps against 1.21 / 1.19 / 1.18) and, run
//     on the old F(4x4) kernels, the H100's F(4x4) (18.2 / 14.8 / 15.5 eps
//     against 18.19 / 14.78 / 15.51). The shared points cut F(4x4)'s error in
//     this form to about a third.
//   F(6x6): points 0, -1, 1, 1/2, -1/2, 2, -2; likewise 2x the emulator's worst
//     over that sweep, 25.6 / 41.7 / 23.3 eps -> 52 / 84 / 47, awaiting a GPU
//     measurement.
// (Per element, |err| <= (K + c) eps sum|terms_i| does not hold on a GPU: on the
// H100 an output of exact value 0 came out at 1e-16.)
constexpr double kF2x3BoundEps[3] = {3, 3, 3};
constexpr double kF4x3BoundEps[3] = {14, 12, 10};
constexpr double kF6x3BoundEps[3] = {52, 84, 47};

Tolerance winograd_bound(const double (&eps)[3], Direction dir, const std::string& what, const char* where) {
  Tolerance t;
  t.global = eps[direction_index(dir)] * double(FLT_EPSILON);
  t.basis = "measured " + what + " bound " + std::to_string(int(eps[direction_index(dir)])) +
            " eps x max sum|terms| (2x the worst measured " + where + ", algorithms/cuda/winograd.cu)";
  return t;
}

}  // namespace

// ---- cuda.winograd_f2x3 (fused) ------------------------------------------

CudaWinogradF2x3::CudaWinogradF2x3()
    : NamedAlgorithm("cuda.winograd_f2x3", DeviceKind::cuda, "winograd",
                     "fused Winograd F(2x2,3x3): filters transformed once per call into the workspace, then 32 "
                     "tiles x 16 channels per block, input transform in shared memory, output transform in "
                     "registers; bwd-data via the rotated filter, bwd-filter via F(3x3,2x2)") {}

Support CudaWinogradF2x3::supports(const ConvProblem& p, Direction) const { return winograd_3x3_support(p); }

namespace {

// The convolution the fused kernel computes for fwd / bwd-data: bwd-data is the
// fwd one on diff_dst, filter rotated and channel-swapped, padding 2 - pad.
cuda::WinogradFusedGeom fused_geometry(const ConvShape& sh, Direction dir) {
  if (dir == Direction::bwd_data)
    return {sh.n, sh.k, sh.p, sh.q, sh.c, sh.h, sh.w, 2 - sh.pad_h, 2 - sh.pad_w, sh.groups, true};
  return {sh.n, sh.c, sh.h, sh.w, sh.k, sh.p, sh.q, sh.pad_h, sh.pad_w, sh.groups, false};
}

}  // namespace

// fwd / bwd-data: the transformed filters (kernels/cuda/winograd/winograd_f2x3.hpp);
// bwd-filter none.
size_t CudaWinogradF2x3::workspace_bytes(const ConvProblem& p, Direction dir) const {
  if (dir == Direction::bwd_filter) return 0;
  return size_t(cuda::winograd_f2x3_filter_floats(fused_geometry(to_shape(p), dir))) * sizeof(float);
}

void CudaWinogradF2x3::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                           const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  if (dir == Direction::bwd_filter) {
    cuda::winograd_f2x3_bwd_filter(sh, buf.src, buf.dst, buf.wei, ctx.stream);
    return;
  }
  // Filters transformed once into the workspace (16-byte aligned), then the fused kernel.
  const cuda::WinogradFusedGeom geo = fused_geometry(sh, dir);
  float* u = static_cast<float*>(workspace);
  cuda::winograd_f2x3_filter_transform(geo, buf.wei, u, ctx.stream);
  if (dir == Direction::fwd) cuda::winograd_f2x3_fused(geo, buf.src, u, buf.dst, ctx.stream);
  else cuda::winograd_f2x3_fused(geo, buf.dst, u, buf.src, ctx.stream);
}

Tolerance CudaWinogradF2x3::tolerance(const ConvProblem&, Direction dir) const {
  return winograd_bound(kF2x3BoundEps, dir, "F(2x2,3x3)", "on an H100");
}

// ---- cuda.winograd_f4x3 / cuda.winograd_f6x3 (non-fused) -----------------

namespace {

// The convolution the fwd pipeline computes for `dir` (bwd-filter: the forward one).
cuda::WinogradGeom geometry(const ConvShape& sh, Direction dir, int m) {
  if (dir == Direction::bwd_data)
    return {m, sh.n, sh.k, sh.p, sh.q, sh.c, sh.h, sh.w, 2 - sh.pad_h, 2 - sh.pad_w, sh.groups, true};
  return {m, sh.n, sh.c, sh.h, sh.w, sh.k, sh.p, sh.q, sh.pad_h, sh.pad_w, sh.groups, false};
}

// Workspace, floats: fwd / bwd-data U, V, M; bwd-filter Y', V, M (layouts in
// kernels/cuda/winograd/winograd_nonfused.hpp).
struct Carving {
  int64_t first, second, third;
  int64_t total() const { return first + second + third; }
};
Carving carving(const cuda::WinogradGeom& geo, Direction dir) {
  const int64_t a2 = int64_t(geo.alpha()) * geo.alpha(), tiles = geo.tiles();
  const int64_t filt = a2 * geo.groups * (geo.cout / geo.groups) * (geo.cin / geo.groups);
  if (dir == Direction::bwd_filter) return {a2 * geo.cout * tiles, a2 * geo.cin * tiles, filt};  // Y', V, M
  return {filt, a2 * geo.cin * tiles, a2 * geo.cout * tiles};                                     // U, V, M
}

// fwd / bwd-data (in = src or diff_dst, other = wei, out = dst or diff_src):
//   U = G g G^T, V = B^T d B, M[xi] (cout_g, T) = U[xi] (cout_g, cin_g) V[xi] (cin_g, T), out = A^T M A
// bwd-filter (in = src, other = diff_dst, out = diff_wei):
//   Y' = A dY A^T, V, M[xi] (cout_g, cin_g) = Y'[xi] (cout_g, T) V[xi]^T (T, cin_g), dW = G^T M G
// One SGEMM batched over alpha^2 points x groups.
void pipeline(const cuda::WinogradGeom& geo, Direction dir, const float* in, const float* other, float* out,
              float* ws, void* stream) {
  const bool filter_grad = dir == Direction::bwd_filter;
  const int cin_g = geo.cin / geo.groups, cout_g = geo.cout / geo.groups;
  const int tiles = int(geo.tiles());  // < 2^31: supports() bounds the transformed tensors
  const Carving c = carving(geo, dir);
  float* first = ws;  // U or Y'
  float* v = first + c.first;
  float* m = v + c.second;
  if (filter_grad) cuda::winograd_grad_transform(geo, other, first, stream);
  else cuda::winograd_filter_transform(geo, other, first, stream);
  cuda::winograd_input_transform(geo, in, v, stream);
  cuda::SgemmArgs a;
  a.batch = geo.alpha() * geo.alpha() * geo.groups;
  a.m = cout_g;
  a.a = first;
  a.b = v;
  a.ldb = tiles;
  a.stride_b = int64_t(cin_g) * tiles;
  a.c = m;
  if (!filter_grad) {
    a.n = tiles, a.k = cin_g;
    a.lda = cin_g, a.stride_a = int64_t(cout_g) * cin_g;
    a.ldc = tiles, a.stride_c = int64_t(cout_g) * tiles;
  } else {
    a.n = cin_g, a.k = tiles, a.trans_b = true;
    a.lda = tiles, a.stride_a = int64_t(cout_g) * tiles;
    a.ldc = cin_g, a.stride_c = int64_t(cout_g) * cin_g;
  }
  cuda::sgemm(a, stream);
  if (filter_grad) cuda::winograd_weight_grad_transform(geo, m, out, stream);
  else cuda::winograd_output_transform(geo, m, out, stream);
}

std::string tile_name(int m) { return "F(" + std::to_string(m) + "x" + std::to_string(m) + ",3x3)"; }

}  // namespace

CudaWinograd::CudaWinograd(int m)
    : NamedAlgorithm("cuda.winograd_f" + std::to_string(m) + "x3", DeviceKind::cuda, "winograd",
                     "non-fused Winograd " + tile_name(m) + ": filter/input/output transform kernels around the "
                     "hand-written SGEMM batched over " + std::to_string((m + 2) * (m + 2)) +
                     " points x groups; bwd-filter via A dY A^T and G^T M G"),
      m_(m) {
  if (m != 4 && m != 6) fail("cuda.winograd: non-fused tiles are F(4x4) and F(6x6), not " + tile_name(m));
}

Support CudaWinograd::supports(const ConvProblem& p, Direction dir) const {
  if (Support s = winograd_3x3_support(p); !s) return s;
  // The batched SGEMM's N (tiles) and the transformed tensors use 32-bit sizes.
  if (carving(geometry(to_shape(p), dir, m_), dir).total() > INT_MAX)
    return Support::no("transformed tensors exceed 2^31 elements");
  return Support::yes();
}

size_t CudaWinograd::workspace_bytes(const ConvProblem& p, Direction dir) const {
  return size_t(carving(geometry(to_shape(p), dir, m_), dir).total()) * sizeof(float);
}

void CudaWinograd::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                       const ExecContext& ctx) const {
  const cuda::WinogradGeom geo = geometry(to_shape(p), dir, m_);
  float* ws = static_cast<float*>(workspace);
  switch (dir) {
    case Direction::fwd: pipeline(geo, dir, buf.src, buf.wei, buf.dst, ws, ctx.stream); break;
    case Direction::bwd_data: pipeline(geo, dir, buf.dst, buf.wei, buf.src, ws, ctx.stream); break;
    case Direction::bwd_filter: pipeline(geo, dir, buf.src, buf.dst, buf.wei, ws, ctx.stream); break;
  }
}

Tolerance CudaWinograd::tolerance(const ConvProblem&, Direction dir) const {
  return winograd_bound(m_ == 4 ? kF4x3BoundEps : kF6x3BoundEps, dir, tile_name(m_),
                        "under the SIMT emulator; awaits a GPU re-measurement");
}

}  // namespace convlab
