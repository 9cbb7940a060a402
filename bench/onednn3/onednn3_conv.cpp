#include "bench/onednn3/onednn3_conv.hpp"

#include <cstring>

namespace convlab::onednn3 {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

memory::dims dims_src(const ConvProblem& p) { return {p.n, p.c, p.h, p.w}; }
memory::dims dims_dst(const ConvProblem& p) { return {p.n, p.k, p.p(), p.q()}; }
memory::dims dims_wei(const ConvProblem& p) {
  if (p.groups == 1) return {p.k, p.c, p.r, p.s};
  return {p.groups, p.k_per_group(), p.c_per_group(), p.r, p.s};
}

dnnl::algorithm to_dnnl(Kind k) {
  switch (k) {
    case Kind::direct: return dnnl::algorithm::convolution_direct;
    case Kind::winograd: return dnnl::algorithm::convolution_winograd;
    case Kind::automatic: break;
  }
  return dnnl::algorithm::convolution_auto;
}

// Our layout and the one oneDNN chose for a role; `input` says which way the reorder goes.
void plan_tensor(PlanTensor& t, const memory::desc& ours, const memory::desc& theirs, bool input) {
  const dnnl::engine& eng = engine();
  t.ours = memory(ours, eng);
  t.reorder = !(ours == theirs);
  if (!t.reorder) {
    t.theirs = t.ours;
    return;
  }
  t.theirs = memory(theirs, eng);
  t.convert = input ? dnnl::reorder(t.ours, t.theirs) : dnnl::reorder(t.theirs, t.ours);
}

struct Descs {
  memory::desc ours[3], any[3];
  memory::dims strides, dilates, pad_l, pad_r;
};

Descs descs(const ConvProblem& p) {
  Descs d;
  const auto f32 = memory::data_type::f32;
  const memory::dims dims[3] = {dims_src(p), dims_wei(p), dims_dst(p)};
  const tag plain[3] = {tag::nchw, p.groups == 1 ? tag::oihw : tag::goihw, tag::nchw};
  for (int i = 0; i < 3; ++i) {
    d.ours[i] = memory::desc(dims[i], f32, plain[i]);
    d.any[i] = memory::desc(dims[i], f32, tag::any);
  }
  d.strides = {p.stride_h, p.stride_w};
  d.dilates = {p.dil_h - 1, p.dil_w - 1};  // 0-based in oneDNN
  d.pad_l = {p.pad_h, p.pad_w};
  d.pad_r = {p.pad_h_end, p.pad_w_end};
  return d;
}

// The primitive of pd and its tensors: roles in flow order (two inputs, then the output) with their args.
template <class Primitive, class PD>
void adopt(Plan& plan, const PD& pd, const Descs& d, const Role (&roles)[3], const int (&args)[3],
           const memory::desc (&theirs)[3]) {
  plan.conv = Primitive(pd);
  plan.impl = pd.impl_info_str();
  for (int i = 0; i < 3; ++i) {
    plan_tensor(plan.t[roles[i]], d.ours[roles[i]], theirs[i], i < 2);
    plan.arg[roles[i]] = args[i];
  }
  plan.out = roles[2];
}

}  // namespace

std::string rejection(Kind kind, const dnnl::error& e) {
  std::string what = e.what();
  if (size_t cut = what.find(". Run workload"); cut != std::string::npos) what.resize(cut);
  if (e.status == dnnl_unimplemented) what += " (unimplemented)";
  const std::string isa = cpu_isa();
  if (kind == Kind::winograd && isa.rfind("avx512", 0) != 0 && isa.rfind("avx10", 0) != 0)
    return "oneDNN 3's f32 Winograd needs AVX-512; oneDNN dispatches to " + isa + " here: " + what;
  return "oneDNN " + version() + " rejected this problem: " + what;
}

std::string kind_name(Kind k) {
  switch (k) {
    case Kind::direct: return "onednn3.direct";
    case Kind::winograd: return "onednn3.winograd";
    case Kind::automatic: break;
  }
  return "onednn3.auto";
}

const dnnl::engine& engine() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

std::string version() {
  const dnnl_version_t* v = dnnl::version();
  std::string s = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  const char* rt = v->cpu_runtime == DNNL_RUNTIME_SYCL ? "SYCL"
                   : v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP"
                   : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                                                        : "other";
  return s + " (" + rt + " CPU runtime)";
}

std::string cpu_isa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx2_vnni_2: return "avx2_vnni_2";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx10_1_512: return "avx10_1_512";
    case dnnl::cpu_isa::avx10_1_512_amx: return "avx10_1_512_amx";
    case dnnl::cpu_isa::avx10_1_512_amx_fp16: return "avx10_1_512_amx_fp16";
    default: break;
  }
  return "isa " + std::to_string(int(dnnl::get_effective_cpu_isa()));
}

PlanOrWhy make_plan(Kind kind, const ConvProblem& p, Direction dir) {
  const dnnl::engine& eng = engine();
  const Descs d = descs(p);
  const dnnl::algorithm alg = to_dnnl(kind);
  auto plan = std::make_shared<Plan>();
  plan->p = p;
  plan->dir = dir;
  try {
    // The forward descriptor: the primitive for fwd, the hint for the backward ones.
    const dnnl::convolution_forward::primitive_desc fwd(eng, dnnl::prop_kind::forward_training, alg, d.any[kSrc],
                                                        d.any[kWei], d.any[kDst], d.strides, d.dilates, d.pad_l,
                                                        d.pad_r);
    switch (dir) {
      case Direction::fwd:
        adopt<dnnl::convolution_forward>(*plan, fwd, d, {kSrc, kWei, kDst},
                                         {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                                         {fwd.src_desc(), fwd.weights_desc(), fwd.dst_desc()});
        break;
      case Direction::bwd_data: {
        const dnnl::convolution_backward_data::primitive_desc pd(eng, alg, d.any[kSrc], d.any[kWei], d.any[kDst],
                                                                 d.strides, d.dilates, d.pad_l, d.pad_r, fwd);
        adopt<dnnl::convolution_backward_data>(*plan, pd, d, {kDst, kWei, kSrc},
                                               {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC},
                                               {pd.diff_dst_desc(), pd.weights_desc(), pd.diff_src_desc()});
        break;
      }
      case Direction::bwd_filter: {
        const dnnl::convolution_backward_weights::primitive_desc pd(eng, alg, d.any[kSrc], d.any[kWei], d.any[kDst],
                                                                    d.strides, d.dilates, d.pad_l, d.pad_r, fwd);
        adopt<dnnl::convolution_backward_weights>(*plan, pd, d, {kSrc, kDst, kWei},
                                                  {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS},
                                                  {pd.src_desc(), pd.diff_dst_desc(), pd.diff_weights_desc()});
        break;
      }
    }
  } catch (const dnnl::error& e) {
    return rejection(kind, e);
  }
  return plan;
}

void write_tensor(Plan& plan, Role role, const float* data, size_t count) {
  dnnl::memory& m = plan.t[role].ours;
  float* dst = m.map_data<float>();
  std::memcpy(dst, data, count * sizeof(float));
  m.unmap_data(dst);
}

void read_tensor(Plan& plan, Role role, float* data, size_t count) {
  dnnl::memory& m = plan.t[role].ours;
  float* src = m.map_data<float>();
  std::memcpy(data, src, count * sizeof(float));
  m.unmap_data(src);
}

void run(Plan& plan, dnnl::stream& strm) {
  for (int role = 0; role < 3; ++role) {
    PlanTensor& t = plan.t[role];
    if (role != plan.out && t.reorder) t.convert.execute(strm, t.ours, t.theirs);
  }
  plan.conv.execute(strm, {{plan.arg[kSrc], plan.t[kSrc].theirs},
                           {plan.arg[kWei], plan.t[kWei].theirs},
                           {plan.arg[kDst], plan.t[kDst].theirs}});
  PlanTensor& o = plan.t[plan.out];
  if (o.reorder) o.convert.execute(strm, o.theirs, o.ours);
  strm.wait();
}

}  // namespace convlab::onednn3
