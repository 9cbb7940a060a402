#include "bench/onednn3/onednn3_measure.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/stats.hpp"
#include "core/tensor.hpp"
#include "core/timing.hpp"
#include "kernels/ref/conv_ref.hpp"

namespace convlab::onednn3 {

namespace {

size_t elems(const ConvProblem& p, Role r) {
  return size_t(r == kSrc ? p.src_elems() : r == kWei ? p.wei_elems() : p.dst_elems());
}

Role out_role(Direction d) { return d == Direction::fwd ? kDst : d == Direction::bwd_data ? kSrc : kWei; }

ConvShape shape_of(const ConvProblem& p) {
  return ConvShape{p.n,     p.c,       p.h,       p.w,         p.k,         p.r,        p.s,        p.p(),     p.q(),
                   p.pad_h, p.pad_w,   p.pad_h_end, p.pad_w_end, p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.groups};
}

// The direction's inputs, uniform in [-1, 1) (each role its own stream); `images` of
// the batch are filled, the rest zero.
void fill_inputs(Plan& plan, int images, uint64_t seed) {
  const ConvProblem& p = plan.p;
  for (Role r : {kSrc, kWei, kDst}) {
    if (r == plan.out) continue;
    std::vector<float> v(elems(p, r), 0.f);
    const size_t n = r == kWei ? v.size() : v.size() / size_t(p.n) * size_t(images);
    fill_uniform(v.data(), n, seed * 3 + uint64_t(r));
    write_tensor(plan, r, v.data(), v.size());
  }
}

std::string g3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// The check described in the header; "" when it passes, else what failed. Sets row.err_ratio.
std::string check(Plan& plan, uint64_t seed, Row& row) {
  const ConvProblem& p = plan.p;
  const Role out = out_role(plan.dir);
  fill_inputs(plan, 1, seed);
  std::vector<float> y(elems(p, out), NAN);
  write_tensor(plan, out, y.data(), y.size());
  dnnl::stream strm(engine());
  run(plan, strm);
  read_tensor(plan, out, y.data(), y.size());

  // The reference of image 0, read back from the plan's own inputs.
  const ConvProblem one = p.with_batch(1);
  std::vector<float> in[3];
  for (Role r : {kSrc, kWei, kDst}) {
    if (r == out) continue;
    in[r].resize(elems(p, r));
    read_tensor(plan, r, in[r].data(), in[r].size());
  }
  std::vector<double> ref(elems(p, out), 0.0), mag(elems(p, out), 0.0);  // zero past image 0
  const ConvShape sh = shape_of(one);
  if (plan.dir == Direction::fwd) ref::conv_fwd(sh, in[kSrc].data(), in[kWei].data(), ref.data(), mag.data());
  if (plan.dir == Direction::bwd_data) ref::conv_bwd_data(sh, in[kDst].data(), in[kWei].data(), ref.data(), mag.data());
  if (plan.dir == Direction::bwd_filter)
    ref::conv_bwd_filter(sh, in[kSrc].data(), in[kDst].data(), ref.data(), mag.data());

  const double elem = double(std::max<int64_t>(p.reduction_length(plan.dir), 1)) * double(FLT_EPSILON);
  const bool wino = plan.impl.find("wino") != std::string::npos;
  const double max_mag = *std::max_element(mag.begin(), mag.end());
  const double global = wino ? 16 * double(FLT_EPSILON) * max_mag : 0.0;
  int64_t bad = 0, non_finite = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) {
      ++non_finite;
      row.err_ratio = INFINITY;
      continue;
    }
    const double err = std::fabs(double(y[i]) - ref[i]);
    const double allowed = elem * mag[i] + global;
    const double ratio = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0);
    row.err_ratio = std::max(row.err_ratio, ratio);
    if (ratio > 1) ++bad;
  }
  if (bad == 0 && non_finite == 0) return {};
  return std::to_string(bad) + " elements over the K*eps" + std::string(wino ? " + 16 eps * max magnitude" : "") +
         " bound, " + std::to_string(non_finite) + " non-finite; worst err/bound " + g3(row.err_ratio);
}

void time_plan(Plan& plan, const MeasureOptions& opt, Row& row) {
  fill_inputs(plan, plan.p.n, opt.seed);
  dnnl::stream strm(engine());
  TimingOptions t;  // find's rule (autotune/find.hpp: FindOptions), without its pruning
  t.warmup = 1;
  t.warmup_seconds = kCpuWarmupSeconds;
  t.min_reps = 3;
  t.max_reps = 25;
  t.max_seconds = opt.max_seconds;
  t.stable_rel = 0.02;
  const TimingStats st = time_it([&] { run(plan, strm); }, t);
  const stats::Interval ci = stats::median_ci(st.samples);
  row.time = st.median;
  row.lo = ci.lo;
  row.hi = ci.hi;
  row.spread = st.spread;
  row.reps = st.reps;
}

}  // namespace

size_t measure_bytes(const ConvProblem& p, Direction dir) {
  const size_t tensors = size_t(p.src_elems() + p.wei_elems() + p.dst_elems()) * sizeof(float);
  return 3 * tensors + 2 * elems(p, out_role(dir)) * sizeof(double);
}

Row measure(Kind kind, const ConvProblem& p, Direction dir, const MeasureOptions& opt) {
  Row row;
  row.problem = p.canonical();
  row.direction = std::string(to_string(dir));
  row.algorithm = kind_name(kind);
  row.threads = opt.threads;
  row.flops = p.flops();
  row.time = row.lo = row.hi = row.spread = NAN;
  PlanOrWhy got = make_plan(kind, p, dir);
  if (auto* why = std::get_if<std::string>(&got)) {
    row.status = "unsupported";
    row.note = *why;
    return row;
  }
  Plan& plan = *std::get<std::shared_ptr<Plan>>(got);
  row.impl = plan.impl;
  if (std::string bad = check(plan, opt.seed, row); !bad.empty()) {
    row.status = "inaccurate";
    row.note = bad;
    return row;
  }
  time_plan(plan, opt, row);
  row.status = "ok";
  return row;
}

}  // namespace convlab::onednn3
