#include "algorithms/cuda/direct.hpp"

#include <algorithm>
#include <string>

#include "kernels/cuda/direct/direct.hpp"
#include "kernels/cuda/im2col/im2col.hpp"

namespace convlab {

CudaDirect::CudaDirect()
    : NamedAlgorithm("cuda.direct", DeviceKind::cuda, "direct",
                     "direct convolution: 8x16-pixel tiles x 8 channels per block, input window + filter slice in "
                     "shared memory (fwd; bwd-data gather per stride phase, over its taps only); bwd-filter in "
                     "64-channel x 64-weight tiles, 4x4 weights per thread, its N*P*Q reduction split into chunks "
                     "summed in order") {}

CudaDirectFilterPlan plan_cuda_direct_bwd_filter(const ConvShape& sh, int chunks) {
  const int64_t len = std::max<int64_t>(1, int64_t(sh.n) * sh.p * sh.q);
  const int64_t wei = int64_t(sh.k) * (sh.c / sh.groups) * sh.r * sh.s;
  const int64_t blocks = cuda::direct_bwd_filter_blocks(sh);
  int64_t want = chunks;
  if (want <= 0)
    want = std::min({(kCudaDirectFillBlocks + blocks - 1) / blocks, std::max<int64_t>(1, len / kCudaDirectMinChunk),
                     std::max<int64_t>(1, kCudaDirectPartialFloats / wei)});
  const int64_t step = cuda::kDirectFilterStep;
  CudaDirectFilterPlan pl;
  pl.chunk_len = ((len + want - 1) / want + step - 1) / step * step;
  pl.chunks = int((len + pl.chunk_len - 1) / pl.chunk_len);
  pl.partial_floats = pl.chunks > 1 ? pl.chunks * wei : 0;
  return pl;
}

Support CudaDirect::supports(const ConvProblem& p, Direction dir) const {
  const ConvShape sh = to_shape(p);
  const size_t need = dir == Direction::fwd        ? cuda::direct_fwd_smem_bytes(sh)
                      : dir == Direction::bwd_data ? cuda::direct_bwd_data_smem_bytes(sh)
                                                   : 0;
  if (need > cuda::kDirectSmemLimit)
    return Support::no("tile window needs " + std::to_string(need / 1024) +
                       " KiB of shared memory (> 48 KiB: filter/dilation too large)");
  return Support::yes();
}

size_t CudaDirect::workspace_bytes(const ConvProblem& p, Direction dir) const {
  if (dir != Direction::bwd_filter) return 0;
  return size_t(plan_cuda_direct_bwd_filter(to_shape(p)).partial_floats) * sizeof(float);
}

void CudaDirect::run_bwd_filter_chunked(const ConvProblem& p, const ConvBuffers& buf, float* ws, void* stream,
                                        int chunks) const {
  const ConvShape sh = to_shape(p);
  const CudaDirectFilterPlan pl = plan_cuda_direct_bwd_filter(sh, chunks);
  if (pl.chunks == 1) {
    cuda::direct_conv_bwd_filter_chunks(sh, buf.src, buf.dst, buf.wei, 1, pl.chunk_len, stream);
    return;
  }
  cuda::direct_conv_bwd_filter_chunks(sh, buf.src, buf.dst, ws, pl.chunks, pl.chunk_len, stream);
  cuda::sum_partials(ws, pl.chunks, pl.partial_floats / pl.chunks, buf.wei, false, stream);
}

void CudaDirect::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                     const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  switch (dir) {
    case Direction::fwd: cuda::direct_conv_fwd(sh, buf.src, buf.wei, buf.dst, ctx.stream); break;
    case Direction::bwd_data: cuda::direct_conv_bwd_data(sh, buf.dst, buf.wei, buf.src, ctx.stream); break;
    case Direction::bwd_filter:
      run_bwd_filter_chunked(p, buf, static_cast<float*>(workspace), ctx.stream, 0);
      break;
  }
}

}  // namespace convlab
