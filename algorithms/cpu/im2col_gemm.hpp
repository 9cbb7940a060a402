// cpu.im2col_gemm and cpu.im2col_openblas: the Caffe lowering. One composition
// (Im2colGemmBase), two GEMMs plugged in as the strategy: the hand-written
// SGEMM (kernels/cpu/gemm) or OpenBLAS cblas_sgemm.
//
// Per group g and batch chunk of nb images (L = nb*P*Q columns, CRS = Cg*R*S):
//   fwd        col = im2col(src)              (CRS x L)
//              tmp = W_g (Kg x CRS) * col      (Kg x L), scattered into dst
//   bwd-data   dyc = gather(diff_dst)          (Kg x L)
//              col = W_g^T (CRS x Kg) * dyc    (CRS x L), diff_src = col2im(col)
//   bwd-filter col = im2col(src), dyc = gather(diff_dst)
//              diff_wei_g (Kg x CRS) (+)= dyc * col^T   (beta = 0 on the first chunk)
// With nb == 1 the GEMM reads/writes dst/diff_dst in place (no tmp/dyc).
// 1x1, stride-1, pad-0 problems skip im2col: src is already the column matrix.
// With a GEMM that reads and writes its operands through grids (the hand SGEMM:
// SgemmGrid), each group is one GEMM over the whole batch, its long side
// running over (image, pixel) with the images' planes where they lie
// (plan.batched: fwd and bwd-data read B and write C through grids,
// bwd-filter reads A and B^T along k through them; the weights are packed once
// per call, not once per image, and a 7x7 image's 49 pixels no longer make
// the whole of a GEMM's N or K). Otherwise (OpenBLAS) per-image GEMMs straight
// on the tensors, workspace = the GEMM's own. With a grid GEMM, so does the
// backward-filter of a strided 1x1 pad-0 one: the GEMM's packing samples every
// stride-th pixel of the image as it lies (grid Q x stride_w, rows stride_h * W
// apart), where the column matrix this saves outweighs the per-image GEMMs
// (2 P Q >= K/g: ResNet's 56x56 -> 28x28 downsample, not its 14x14 -> 7x7 one).
// Forward keeps the column matrix: one GEMM over the batch's columns ran it
// faster than per-image sampled GEMMs (1.1-1.4x, Zen 3, 2 threads, on
// mb16ic256ih56oc512oh28kh1sh2). Backward-data of a strided 1x1 keeps it too:
// its GEMM writes it densely and col2im scatters it with the stride, zeroing
// the pixels no output reads.
// The chunk nb is the largest that keeps col + tmp/dyc under kColumnBudget.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>

#include "algorithms/algorithm.hpp"

namespace convlab {

// An operand's long side read through a grid (kernels/cpu/gemm/sgemm.hpp SgemmGrid); cols == 0: dense.
struct Im2colGemmGrid {
  int cols = 0;
  int64_t col_step = 1, row_step = 0;
  bool on() const { return cols > 0; }
};

// One GEMM call of the lowering: row-major C(m x n) = op(A) op(B) (+ beta C).
struct Im2colGemmCall {
  bool trans_a = false, trans_b = false;
  int m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  Im2colGemmGrid a_grid, b_grid, c_grid;  // A's k index, B's long side, C's columns
  double flops() const { return 2.0 * m * n * double(k); }
  // A call on dense operands.
  static Im2colGemmCall dense(bool ta, bool tb, int m, int n, int k, int64_t lda, int64_t ldb, int64_t ldc) {
    Im2colGemmCall g;
    g.trans_a = ta, g.trans_b = tb, g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = ldc;
    return g;
  }
};

struct Im2colGemmPlan {
  bool direct = false;        // 1x1 stride 1 pad 0 (or strided, below): no im2col, per-image GEMMs on the tensors
  bool batched = false;       // 1x1 stride 1 pad 0, grid GEMM: one GEMM per group over the batch, through grids
  bool strided = false;       // 1x1 pad 0 with stride, bwd-filter, GEMM reading B through a grid
  int nb = 1;                 // images per chunk
  int chunks = 1;
  int64_t col_elems = 0;      // CRS x L (0 when direct)
  int64_t buf_elems = 0;      // Kg x L for fwd's tmp / the dy gather (0 when nb == 1)
  Im2colGemmCall gemm;        // the GEMM of one full chunk and group (calls = groups * chunks, groups * N if direct,
                              // groups if batched)
  int64_t gemm_calls = 0;
};

inline constexpr int64_t kColumnBudget = int64_t(32) << 20;  // bytes for col + tmp/dyc

// grid_gemm: the GEMM reads B through a grid (Im2colGemmBase::gemm_reads_grid()).
Im2colGemmPlan plan_im2col_gemm(const ConvProblem& p, Direction dir, bool grid_gemm = false);

class Im2colGemmBase : public NamedAlgorithm {
 public:
  Im2colGemmBase(std::string name, std::string description)
      : NamedAlgorithm(std::move(name), DeviceKind::cpu, "gemm", std::move(description)) {}
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  CostPhases cost_phases(const ConvProblem& p, Direction dir) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override;
  // Whether gemm() takes calls with a grid (Im2colGemmCall::grid_cols).
  virtual bool gemm_reads_grid() const { return false; }

 protected:
  // The strategy: row-major SGEMM and the scratch it needs for a call of this
  // shape with `threads` threads. workspace_bytes() sizes it for the
  // hardware's thread count; run() never gives the GEMM more threads than that.
  virtual size_t gemm_workspace_bytes(const Im2colGemmCall& g, int threads) const = 0;
  virtual void gemm(const Im2colGemmCall& g, float alpha, const float* a, const float* b, float beta, float* c,
                    int threads, void* workspace) const = 0;

 private:
  // The batched 1x1 (plan.batched): one GEMM per group over the whole batch, through grids.
  void run_batched(const ConvProblem& p, Direction dir, const Im2colGemmPlan& pl, const ConvBuffers& buf,
                   void* gemm_ws, int threads, const ExecContext& ctx) const;
  // The strided 1x1 backward-filter (plan.strided): one parallel region in which each of
  // `parts` threads owns a block of the output channels (the GEMMs' M rows) and
  // runs every image's one-thread GEMM on it, so a batch costs one fork/join,
  // not one per image. Each element sums in the order of the one-call GEMM.
  void run_strided(const ConvProblem& p, const Im2colGemmPlan& pl, const ConvBuffers& buf,
                   void* gemm_ws, int parts) const;
  // The block of rows thread t of `parts` owns, [first, second), and the scratch each needs.
  static std::pair<int, int> strided_rows(int m, int t, int parts);
  size_t strided_workspace_per_thread(const Im2colGemmPlan& pl) const;
};

class CpuIm2colGemm final : public Im2colGemmBase {
 public:
  CpuIm2colGemm()
      : Im2colGemmBase("cpu.im2col_gemm",
                       "im2col/col2im + the hand-written packed SGEMM (AVX-512 12x32 / AVX2 6x16 / portable "
                       "micro-kernels; strided 1x1 layers sampled in the GEMM's packing)") {}
  bool gemm_reads_grid() const override { return true; }

 protected:
  size_t gemm_workspace_bytes(const Im2colGemmCall& g, int threads) const override;
  void gemm(const Im2colGemmCall& g, float alpha, const float* a, const float* b, float beta, float* c, int threads,
            void* workspace) const override;
};

// The OpenBLAS strategy lives in its own file (algorithms/cpu/im2col_openblas.cpp), as the cuBLAS one
// does on the CUDA side (algorithms/cuda/im2col_cublas.cu).
class CpuIm2colOpenblas final : public Im2colGemmBase {
 public:
  CpuIm2colOpenblas()
      : Im2colGemmBase("cpu.im2col_openblas", "im2col/col2im + OpenBLAS cblas_sgemm (the classic Caffe approach)") {}
  // OpenBLAS's pthread workers busy-wait ~2^28 cycles after a call before they sleep.
  double spin_after_run_s() const override { return 0.3; }
  bool library_backed() const override { return true; }
  bool comparison_baseline() const override { return true; }  // Caffe's path

 protected:
  size_t gemm_workspace_bytes(const Im2colGemmCall&, int) const override { return 0; }  // OpenBLAS owns its buffers
  void gemm(const Im2colGemmCall& g, float alpha, const float* a, const float* b, float beta, float* c, int threads,
            void* workspace) const override;
};

}  // namespace convlab
