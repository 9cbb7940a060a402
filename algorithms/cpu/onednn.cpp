// oneDNN 2.6 convolution primitives behind the convlab algorithm interface.
//
// Per (algorithm kind, problem, direction, threads) a Plan is built once and
// cached (thread-safe map): the convolution primitive created with every
// tensor's format_tag::any, so oneDNN picks its blocked layouts (nChw16c,
// OIhw16i16o, ...), plus one reorder primitive for every tensor whose chosen
// layout differs from ours — NCHW src/dst and (K, C/g, R, S) weights, 5-D goihw
// when groups > 1. run() executes, on oneDNN's OpenMP runtime with the
// requested thread count:
//   inputs: reorder ours -> oneDNN's (into the workspace)
//   the convolution
//   output: reorder oneDNN's -> ours
// Workspace: [reorder buffer src | wei | dst | scratchpad], 64-byte aligned
// pieces (+64 bytes so an unaligned workspace pointer can be aligned). The
// scratchpad region serves the convolution and the reorders, which run one
// after another (scratchpad_mode::user everywhere: oneDNN allocates nothing).
// Dilation is 0-based in oneDNN (dil - 1); padding_l / padding_r are the two sides of each axis.
#include "algorithms/cpu/onednn.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <variant>

#include "core/error.hpp"

namespace convlab {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

// oneDNN's ISA, capped at convlab's (cpu_info(): CONVLAB_ISA) before its first
// primitive, so that a cap takes oneDNN's JIT kernels down with ours. The cap
// can only be set before oneDNN first dispatches: everything here goes through
// cpu_engine(), which applies it first.
struct OnednnIsa {
  std::string error;  // why the cap could not be applied; empty when it was (or none was asked)
  dnnl::cpu_isa effective = dnnl::cpu_isa::all;
};

const OnednnIsa& onednn_isa_state() {
  static const OnednnIsa state = [] {
    OnednnIsa s;
    const CpuInfo& ci = cpu_info();
    if (!ci.isa_cap.empty()) {
      const std::string isa = ci.isa();
      // convlab's avx512 is F/VL/BW/DQ: oneDNN's avx512_core. Below AVX2, oneDNN's lowest JIT level.
      const dnnl::cpu_isa want = isa == "avx512" ? dnnl::cpu_isa::avx512_core
                                 : isa == "avx2" ? dnnl::cpu_isa::avx2
                                                 : dnnl::cpu_isa::sse41;
      const dnnl::status st = dnnl::set_max_cpu_isa(want);
      if (st != dnnl::status::success)
        s.error = "oneDNN could not be capped at " + isa + " (CONVLAB_ISA): dnnl_set_max_cpu_isa returned status " +
                  std::to_string(int(st));
    }
    s.effective = dnnl::get_effective_cpu_isa();
    return s;
  }();
  return state;
}

const dnnl::engine& cpu_engine() {
  static const dnnl::engine eng = [] {
    (void)onednn_isa_state();
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return eng;
}

// At least avx512_core: its bits (0x27) are all set in every level above it.
bool onednn_has_avx512_core() {
  return (unsigned(onednn_isa_state().effective) & unsigned(dnnl::cpu_isa::avx512_core)) ==
         unsigned(dnnl::cpu_isa::avx512_core);
}

constexpr size_t kAlign = 64;
size_t align_up(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// omp_set_num_threads for the lifetime of the object (oneDNN's OpenMP runtime
// reads omp_get_max_threads() when a primitive is created and when it runs).
class OmpThreads {
 public:
  explicit OmpThreads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~OmpThreads() { omp_set_num_threads(saved_); }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int saved_;
};

dnnl::algorithm to_dnnl(OnednnKind k) {
  switch (k) {
    case OnednnKind::direct: return dnnl::algorithm::convolution_direct;
    case OnednnKind::winograd: return dnnl::algorithm::convolution_winograd;
    case OnednnKind::automatic: return dnnl::algorithm::convolution_auto;
  }
  return dnnl::algorithm::convolution_direct;
}

// One of src / wei / dst: our layout, oneDNN's, and the reorder between them.
struct PlanTensor {
  memory::desc ours, theirs;
  bool reorder = false;    // layouts differ: go through a buffer in the workspace
  dnnl::primitive to_theirs, to_ours;  // the one needed (input: to_theirs, output: to_ours)
  size_t offset = 0, bytes = 0;        // reorder buffer in the workspace
};

struct Plan {
  dnnl::primitive conv;
  PlanTensor src, wei, dst;
  size_t scratch_offset = 0, scratch_bytes = 0;
  size_t workspace = 0;  // total, including the alignment slack
  std::string impl;      // oneDNN's implementation name
};

// Either a plan or oneDNN's reason for rejecting the problem.
using PlanOrWhy = std::variant<std::shared_ptr<const Plan>, std::string>;

memory::dims dims_src(const ConvProblem& p) { return {p.n, p.c, p.h, p.w}; }
memory::dims dims_dst(const ConvProblem& p) { return {p.n, p.k, p.p(), p.q()}; }
memory::dims dims_wei(const ConvProblem& p) {
  if (p.groups == 1) return {p.k, p.c, p.r, p.s};
  return {p.groups, p.k_per_group(), p.c_per_group(), p.r, p.s};
}

// The conditions under which oneDNN 2.6's f32 Winograd (jit_wino_4x3:avx512_core
// here) declines, as observed on this build (channel counts are padded to 16,
// so any C and K work). Only used to explain a rejection oneDNN made.
std::string winograd_limits(const ConvProblem& p) {
  std::string why;
  auto add = [&](const std::string& s) { why += (why.empty() ? "" : ", ") + s; };
  if (cpu_info().isa() != "avx512") add("needs AVX-512");
  if (p.groups != 1) add("groups " + std::to_string(p.groups));
  if (p.r != 3 || p.s != 3) add(std::to_string(p.r) + "x" + std::to_string(p.s) + " filter, needs 3x3");
  if (p.stride_h != 1 || p.stride_w != 1) add("stride " + std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w));
  if (p.dil_h != 1 || p.dil_w != 1) add("dilation");
  if (std::max({p.pad_h, p.pad_w, p.pad_h_end, p.pad_w_end}) > 1)
    add("padding " + std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w) +
        (p.symmetric_padding() ? "" : " (end " + std::to_string(p.pad_h_end) + "x" + std::to_string(p.pad_w_end) + ")") +
        ", at most 1");
  return why;
}

std::string rejection(OnednnKind kind, const ConvProblem& p, const dnnl::error& e) {
  const std::string lib = std::string(e.what()) + (e.status == dnnl_unimplemented ? " (unimplemented)" : "");
  if (kind == OnednnKind::winograd) {
    const std::string limits = winograd_limits(p);
    if (!limits.empty()) return "oneDNN has no Winograd for this problem (" + limits + "): " + lib;
    return "oneDNN's Winograd rejected this problem: " + lib;
  }
  return "oneDNN rejected this problem: " + lib;
}

// Fills `t` for a tensor oneDNN wants as `theirs`; `input` says which reorder.
void plan_tensor(PlanTensor& t, const memory::desc& ours, const memory::desc& theirs, bool input,
                 const dnnl::primitive_attr& attr, size_t& scratch) {
  const dnnl::engine& eng = cpu_engine();
  t.ours = ours;
  t.theirs = theirs;
  t.reorder = !(ours == theirs);
  if (!t.reorder) return;
  t.bytes = theirs.get_size();
  dnnl::reorder::primitive_desc rpd =
      input ? dnnl::reorder::primitive_desc(eng, ours, eng, theirs, attr)
            : dnnl::reorder::primitive_desc(eng, theirs, eng, ours, attr);
  scratch = std::max(scratch, rpd.scratchpad_desc().get_size());
  (input ? t.to_theirs : t.to_ours) = dnnl::reorder(rpd);
}

// A tensor of a primitive: ours (plain NCHW / OIHW), the layout oneDNN chose.
struct TensorRole {
  PlanTensor* plan;
  const memory::desc* ours;
  memory::desc theirs;
};

// The primitive of pd, its implementation name and scratchpad, and its tensors
// (roles: the two inputs, then the output) planned with their reorders.
template <class Primitive, class PrimitiveDesc>
void adopt(Plan& plan, const PrimitiveDesc& pd, const dnnl::primitive_attr& attr, size_t& scratch,
           const std::array<TensorRole, 3>& roles) {
  plan.conv = Primitive(pd);
  plan.impl = pd.impl_info_str();
  scratch = pd.scratchpad_desc().get_size();
  for (size_t i = 0; i < roles.size(); ++i)
    plan_tensor(*roles[i].plan, *roles[i].ours, roles[i].theirs, i < 2, attr, scratch);
}

PlanOrWhy build_plan(OnednnKind kind, const ConvProblem& p, Direction dir, int threads) {
  OmpThreads omp(threads);
  const dnnl::engine& eng = cpu_engine();
  const memory::desc src_ours(dims_src(p), memory::data_type::f32, tag::nchw);
  const memory::desc dst_ours(dims_dst(p), memory::data_type::f32, tag::nchw);
  const memory::desc wei_ours(dims_wei(p), memory::data_type::f32, p.groups == 1 ? tag::oihw : tag::goihw);
  const memory::desc src_any(dims_src(p), memory::data_type::f32, tag::any);
  const memory::desc dst_any(dims_dst(p), memory::data_type::f32, tag::any);
  const memory::desc wei_any(dims_wei(p), memory::data_type::f32, tag::any);
  const memory::dims strides = {p.stride_h, p.stride_w};
  const memory::dims dilates = {p.dil_h - 1, p.dil_w - 1};
  // oneDNN takes both sides: padding_l (top, left) and padding_r (bottom, right).
  const memory::dims pad = {p.pad_h, p.pad_w}, pad_r = {p.pad_h_end, p.pad_w_end};
  const dnnl::algorithm alg = to_dnnl(kind);

  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);

  auto plan = std::make_shared<Plan>();
  size_t scratch = 0;
  try {
    // The forward descriptor: the primitive for fwd, the hint for the backward ones.
    const dnnl::convolution_forward::desc fwd_d(dnnl::prop_kind::forward_training, alg, src_any, wei_any, dst_any,
                                                strides, dilates, pad, pad_r);
    const dnnl::convolution_forward::primitive_desc fwd_pd(fwd_d, attr, eng);
    // Each primitive's tensors in the order they flow: the two inputs, then the output.
    switch (dir) {
      case Direction::fwd:
        adopt<dnnl::convolution_forward>(*plan, fwd_pd, attr, scratch,
                                         {{{&plan->src, &src_ours, fwd_pd.src_desc()},
                                           {&plan->wei, &wei_ours, fwd_pd.weights_desc()},
                                           {&plan->dst, &dst_ours, fwd_pd.dst_desc()}}});
        break;
      case Direction::bwd_data: {
        const dnnl::convolution_backward_data::desc d(alg, src_any, wei_any, dst_any, strides, dilates, pad, pad_r);
        const dnnl::convolution_backward_data::primitive_desc pd(d, attr, eng, fwd_pd);
        adopt<dnnl::convolution_backward_data>(*plan, pd, attr, scratch,
                                               {{{&plan->dst, &dst_ours, pd.diff_dst_desc()},
                                                 {&plan->wei, &wei_ours, pd.weights_desc()},
                                                 {&plan->src, &src_ours, pd.diff_src_desc()}}});
        break;
      }
      case Direction::bwd_filter: {
        const dnnl::convolution_backward_weights::desc d(alg, src_any, wei_any, dst_any, strides, dilates, pad, pad_r);
        const dnnl::convolution_backward_weights::primitive_desc pd(d, attr, eng, fwd_pd);
        adopt<dnnl::convolution_backward_weights>(*plan, pd, attr, scratch,
                                                  {{{&plan->src, &src_ours, pd.src_desc()},
                                                    {&plan->dst, &dst_ours, pd.diff_dst_desc()},
                                                    {&plan->wei, &wei_ours, pd.diff_weights_desc()}}});
        break;
      }
    }
  } catch (const dnnl::error& e) {
    return rejection(kind, p, e);
  }
  size_t off = 0;
  for (PlanTensor* t : {&plan->src, &plan->wei, &plan->dst}) {
    t->offset = off;
    off += align_up(t->bytes);
  }
  plan->scratch_offset = off;
  plan->scratch_bytes = scratch;
  off += align_up(scratch);
  plan->workspace = off ? off + kAlign : 0;
  return std::shared_ptr<const Plan>(std::move(plan));
}

// The plan cache: built on first use, shared by every caller after.
PlanOrWhy get_plan(OnednnKind kind, const ConvProblem& p, Direction dir, int threads) {
  static std::mutex mu;
  static std::map<std::string, PlanOrWhy> cache;
  const std::string key = std::to_string(int(kind)) + "/" + p.key() + "/" + std::string(to_string(dir)) + "/" +
                          std::to_string(threads);
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  // Built outside the lock (creation can take milliseconds); a racing builder's
  // identical plan is simply dropped.
  PlanOrWhy plan = build_plan(kind, p, dir, threads);
  std::lock_guard lock(mu);
  if (cache.size() >= 512) cache.clear();  // bounded; plans in use stay alive through their shared_ptr
  return cache.emplace(key, std::move(plan)).first->second;
}

int default_threads() { return ExecContext{}.resolved_threads(); }

}  // namespace


std::string onednn_cpu_isa() {
  const OnednnIsa& s = onednn_isa_state();
  switch (s.effective) {
    case dnnl::cpu_isa::all: return "all";
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
  }
  return "isa " + std::to_string(int(s.effective));
}

std::string CpuOnednn::unavailable_reason() const {
  if (const std::string& e = onednn_isa_state().error; !e.empty()) return e;
  if (kind_ != OnednnKind::winograd) return {};
  // oneDNN 2.6's only f32 Winograd is jit_wino_4x3:avx512_core.
  const CpuInfo& ci = cpu_info();
  if (ci.isa() != "avx512") {
    if (ci.isa_cap.empty()) return "oneDNN's Winograd needs AVX-512; this CPU has " + ci.isa();
    return "oneDNN's Winograd needs AVX-512; this CPU has " + ci.isa() + " under CONVLAB_ISA=" + ci.isa_cap + " (" +
           ci.detected_isa + " without it)";
  }
  if (!onednn_has_avx512_core())
    return "oneDNN's Winograd needs AVX-512; oneDNN is limited to " + onednn_cpu_isa() +
           " here (ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA?)";
  return {};
}

namespace {

struct OnednnNames {
  const char *name, *family, *description;
};

OnednnNames onednn_names(OnednnKind kind) {
  switch (kind) {
    case OnednnKind::direct:
      return {"onednn.direct", "direct",
              "oneDNN 2.6 convolution_direct (its JIT direct or GEMM-based kernels), blocked layouts, reorders timed"};
    case OnednnKind::winograd:
      return {"onednn.winograd", "winograd",
              "oneDNN 2.6 convolution_winograd (F(4x4,3x3), AVX-512; 3x3, stride 1, no groups or dilation, "
              "pad <= 1), reorders timed"};
    case OnednnKind::automatic:
      break;
  }
  return {"onednn.auto", "direct",
          "oneDNN 2.6 convolution_auto: oneDNN picks direct or Winograd per problem, reorders timed"};
}

}  // namespace

CpuOnednn::CpuOnednn(OnednnKind kind)
    : NamedAlgorithm(onednn_names(kind).name, DeviceKind::cpu, onednn_names(kind).family,
                     onednn_names(kind).description),
      kind_(kind) {}

Support CpuOnednn::supports(const ConvProblem& p, Direction dir) const {
  if (auto e = p.validate(); !e.empty()) return Support::no(e);
  if (auto why = unavailable_reason(); !why.empty()) return Support::no(why);
  PlanOrWhy plan = get_plan(kind_, p, dir, default_threads());
  if (auto* why = std::get_if<std::string>(&plan)) return Support::no(*why);
  return Support::yes();
}

size_t CpuOnednn::workspace_bytes(const ConvProblem& p, Direction dir) const {
  size_t bytes = 0;
  for (int t : {1, default_threads()}) {
    PlanOrWhy plan = get_plan(kind_, p, dir, t);
    if (auto* ok = std::get_if<std::shared_ptr<const Plan>>(&plan)) bytes = std::max(bytes, (*ok)->workspace);
  }
  return bytes;
}

std::string CpuOnednn::implementation(const ConvProblem& p, Direction dir, int threads) const {
  PlanOrWhy plan = get_plan(kind_, p, dir, threads > 0 ? threads : default_threads());
  if (auto* why = std::get_if<std::string>(&plan)) fail(std::string(name()) + ": " + *why);
  return std::get<std::shared_ptr<const Plan>>(plan)->impl;
}

void CpuOnednn::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                    const ExecContext& ctx) const {
  // No more threads than this process has CPUs (as cpu.direct and cpu.fft): a
  // request for 2 on a 1-CPU machine runs on 1, within workspace_bytes().
  const int threads = std::clamp(ctx.resolved_threads(), 1, default_threads());
  PlanOrWhy got = get_plan(kind_, p, dir, threads);
  if (auto* why = std::get_if<std::string>(&got)) fail(std::string(name()) + " at " + std::to_string(threads) + " threads: " + *why);
  const Plan& plan = *std::get<std::shared_ptr<const Plan>>(got);
  if (threads != 1 && threads != default_threads() && plan.workspace > workspace_bytes(p, dir))
    fail(std::string(name()) + ": oneDNN needs " + std::to_string(plan.workspace) + " workspace bytes at " +
         std::to_string(threads) + " threads, more than workspace_bytes() reports");

  const dnnl::engine& eng = cpu_engine();
  char* ws = static_cast<char*>(workspace);
  if (ws) ws += (kAlign - reinterpret_cast<uintptr_t>(ws) % kAlign) % kAlign;

  OmpThreads omp(threads);
  dnnl::stream strm(eng);
  std::unordered_map<int, memory> scratch_arg;
  if (plan.scratch_bytes) {
    // A 1-D byte view of the scratchpad region; every primitive takes what it needs from its start.
    const memory::desc md({memory::dim(plan.scratch_bytes)}, memory::data_type::u8, tag::a);
    scratch_arg[DNNL_ARG_SCRATCHPAD] = memory(md, eng, ws + plan.scratch_offset);
  }
  auto with_scratch = [&](std::unordered_map<int, memory> args) {
    args.insert(scratch_arg.begin(), scratch_arg.end());
    return args;
  };
  // Our buffer as oneDNN memory, and the memory the convolution reads/writes.
  auto bind = [&](const PlanTensor& t, float* ours, bool input, memory& conv_mem) {
    memory user(t.ours, eng, ours);
    if (!t.reorder) {
      conv_mem = user;
      return user;
    }
    conv_mem = memory(t.theirs, eng, ws + t.offset);
    if (input) t.to_theirs.execute(strm, with_scratch({{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, conv_mem}}));
    return user;
  };
  auto finish = [&](const PlanTensor& t, memory& user, memory& conv_mem) {
    if (t.reorder) t.to_ours.execute(strm, with_scratch({{DNNL_ARG_FROM, conv_mem}, {DNNL_ARG_TO, user}}));
  };

  memory src, wei, dst;
  switch (dir) {
    case Direction::fwd: {
      bind(plan.src, buf.src, true, src);
      bind(plan.wei, buf.wei, true, wei);
      memory user = bind(plan.dst, buf.dst, false, dst);
      plan.conv.execute(strm, with_scratch({{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}}));
      finish(plan.dst, user, dst);
      break;
    }
    case Direction::bwd_data: {
      bind(plan.dst, buf.dst, true, dst);
      bind(plan.wei, buf.wei, true, wei);
      memory user = bind(plan.src, buf.src, false, src);
      plan.conv.execute(strm,
                        with_scratch({{DNNL_ARG_DIFF_DST, dst}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DIFF_SRC, src}}));
      finish(plan.src, user, src);
      break;
    }
    case Direction::bwd_filter: {
      bind(plan.src, buf.src, true, src);
      bind(plan.dst, buf.dst, true, dst);
      memory user = bind(plan.wei, buf.wei, false, wei);
      plan.conv.execute(strm,
                        with_scratch({{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dst}, {DNNL_ARG_DIFF_WEIGHTS, wei}}));
      finish(plan.wei, user, wei);
      break;
    }
  }
  strm.wait();
}

// oneDNN's Winograd (jit_wino_4x3: F(4x4, 3x3) tiles, all three directions)
// transforms src/dst tiles and filters, sums C (fwd), K (bwd-data) or N*tiles
// (bwd-filter) products per transform-domain element, and transforms back. Its
// bound: the summation's K*eps per element plus a global term for the
// transforms, which mix the terms of neighbouring outputs:
//   |y_i - ref_i| <= K*eps * mag_i + 16*eps * max_j mag_j
// Measured (tests/algorithms/cpu/onednn_test.cpp, OnednnMeasure.DISABLED_WinogradError,
// 2 threads, Xeon Skylake-SP) over AlexNet's 3x3 layers (alexnet.conv3,
// alexnet-owt.conv3/4/5, batch 2) plus 4 x 60 random 3x3 stride-1 problems
// (seeds 20261122, 1, 2, 3; C, K 1..64, images 1..24, pad 0..1): the error
// above K*eps*mag_i never exceeded 7.43 eps * max mag (fwd 2.44, bwd-data
// 2.12, bwd-filter 7.43); on the AlexNet layers it was 0 (all within K*eps;
// max err / max mag 2.95 eps). 16 eps is that worst case with a 2x margin.
// At batch 32 (`convlab conv alexnet.conv3 --algo onednn.winograd --dir D
// --check`) the worst error/bound was 0.0015 (fwd), 0.0010 (bwd-data), 0.00017
// (bwd-filter).
// Per element alone the error reached 364 eps * mag_i on outputs whose own
// terms are small: a transform algorithm has no per-element bound.
constexpr double kWinogradGlobalEps = 16;

Tolerance CpuOnednn::tolerance(const ConvProblem& p, Direction dir) const {
  // Direct and GEMM-based kernels sum the same products in some order: K*eps.
  Tolerance t = summation_tolerance(p, dir);
  // onednn.auto declares Winograd's bound wherever oneDNN's Winograd
  // exists: its choice may depend on the thread count, which tolerance() is not told.
  // Where Winograd cannot run (no AVX-512, or CONVLAB_ISA below it) auto cannot
  // pick it, and supports() says no: K*eps.
  const bool winograd = kind_ == OnednnKind::winograd ||
                        (kind_ == OnednnKind::automatic && CpuOnednn(OnednnKind::winograd).supports(p, dir));
  if (winograd) {
    t.global = kWinogradGlobalEps * FLT_EPSILON;
    t.basis = "oneDNN Winograd F(4x4,3x3): K*eps per element + 16 eps * max sum|terms| (measured worst 7.43 eps)";
  }
  return t;
}

}  // namespace convlab
