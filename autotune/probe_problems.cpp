// The machine probe's problems and their classes (autotune/probe.hpp).
#include "autotune/probe.hpp"

namespace convlab {

const ConvProblem& probe_problem_3x3() {
  static const ConvProblem p = parse_problem("mb2ic96ih20oc128oh20kh3ph1");
  return p;
}
const ConvProblem& probe_problem_1x1() {
  // 8 images of 28 x 28, 128 -> 128 channels (3.2 MB tensors, past the L2 as network 1x1 layers are):
  // on 2 images of 20 x 20 with 256 channels (L2-sized) cpu.im2col_gemm, cpu.im2col_openblas and
  // oneDNN ran within 5 % of each other on two threads, which on ResNet-50's and DenseNet-121's 1x1
  // layers differ by 1.1-1.7x (medians; Zen 4): here 1.0 : 1.3 : 1.1, as there.
  static const ConvProblem p = parse_problem("mb8ic128ih28oc128oh28kh1");
  return p;
}
const ConvProblem& probe_problem_dw() {
  // Tensors of 4.8 MB: past the L2, as a network's depthwise layers are (their kernels are bound by
  // memory there; on an L2-resident problem the ranking against oneDNN's inverts).
  static const ConvProblem p = parse_problem("g96mb4ic96ih56oc96oh56kh3ph1");
  return p;
}
const ConvProblem& probe_problem_dw_small() {
  // A 14 x 14 layer of MobileNetV2's size at batch 8 (2.4 MB tensors): on images up to 28 x 28 the
  // depthwise kernels run other paths (convlab's in the plain layout) and rank otherwise than on 56 x 56.
  static const ConvProblem p = parse_problem("g384mb8ic384ih14oc384oh14kh3ph1");
  return p;
}
const ConvProblem& probe_problem_3x3_wgrad() {
  // The 3x3 problem with 8 images: backward-filter sums over every tile of the batch, and on 2 images
  // (50 F(4x4) tiles) the fixed part of an algorithm's cost (its filter-gradient transform, the reduction
  // of its threads' partial sums) weighs as on no network layer: measured on one thread (Zen 5), oneDNN's
  // Winograd takes 0.79x cpu.winograd_f4x3's time on 2 images, 1.10x on 8, 1.12x on VGG-16's conv5_1.
  static const ConvProblem p = parse_problem("mb8ic96ih20oc128oh20kh3ph1");
  return p;
}
const ConvProblem& probe_problem_1x1_wgrad() {
  // A 1x1 backward-filter sums over every pixel of the batch: 16 images of 14 x 14, 512 -> 128
  // channels, as DenseNet-121's and ResNet-50's 14 x 14 layers. On the forward's problem (8 images of
  // 28 x 28, 128 channels) oneDNN and cpu.im2col_gemm ran within 5 % of each other on two threads
  // (Zen 4), on these layers oneDNN takes 1.2x (medians), here 1.2x.
  static const ConvProblem p = parse_problem("mb16ic512ih14oc128oh14kh1");
  return p;
}
const ConvProblem& probe_problem(std::string_view cls, Direction dir) {
  if (cls == "1x1" && dir == Direction::bwd_filter) return probe_problem_1x1_wgrad();
  if (cls == "dw_small") return probe_problem_dw_small();
  if (cls == "3x3" && dir == Direction::bwd_filter) return probe_problem_3x3_wgrad();
  return cls == "dw" ? probe_problem_dw() : cls == "1x1" ? probe_problem_1x1() : probe_problem_3x3();
}
bool probe_all_threads(std::string_view cls) { return cls == "dw" || cls == "dw_small" || cls == "1x1"; }
std::string_view probe_class(const ConvProblem& p) {
  if (p.groups > 1 && p.c_per_group() == 1) return int64_t(p.h) * p.w <= kProbeSmallImage ? "dw_small" : "dw";
  return p.r == 1 && p.s == 1 ? "1x1" : "3x3";
}
std::string probe_algo_key(std::string_view algo, Direction dir, std::string_view cls) {
  return std::string(algo) + "|" + std::string(to_string(dir)) + "|" + std::string(cls);
}

}  // namespace convlab
