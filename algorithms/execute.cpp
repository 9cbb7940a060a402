#include "algorithms/execute.hpp"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "core/cuda_stream.hpp"
#include "core/error.hpp"
#include "kernels/ref/conv_ref.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace convlab {

ConvData::ConvData(const ConvProblem& p)
    : src(naming_memory("the host copy of src", [&] { return Tensor(src_shape(p)); })),
      wei(naming_memory("the host copy of wei", [&] { return Tensor(wei_shape(p)); })),
      dst(naming_memory("the host copy of dst", [&] { return Tensor(dst_shape(p)); })) {}

ConvData ConvData::random(const ConvProblem& p, uint64_t seed) {
  ConvData d(p);
  fill_uniform(d.src.data(), size_t(d.src.size()), seed * 3 + 1);
  fill_uniform(d.wei.data(), size_t(d.wei.size()), seed * 3 + 2);
  fill_uniform(d.dst.data(), size_t(d.dst.size()), seed * 3 + 3);
  return d;
}

Tensor& ConvData::output(Direction d) {
  return d == Direction::fwd ? dst : d == Direction::bwd_data ? src : wei;
}
const Tensor& ConvData::output(Direction d) const {
  return d == Direction::fwd ? dst : d == Direction::bwd_data ? src : wei;
}

Reference compute_reference(const ConvProblem& p, Direction dir, const ConvData& in, int threads) {
  const ConvShape sh = to_shape(p);
  const size_t n = size_t(in.output(dir).size());
  Reference ref = naming_memory("the fp64 reference", [&] {
    return Reference{AlignedBuffer<double>(n), AlignedBuffer<double>(n)};
  });
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
  if (threads > 0) omp_set_num_threads(threads);
#else
  (void)threads;  // the SIMT-emulated test builds: no OpenMP
#endif
  switch (dir) {
    case Direction::fwd: ref::conv_fwd(sh, in.src.data(), in.wei.data(), ref.value.data(), ref.mag.data()); break;
    case Direction::bwd_data: ref::conv_bwd_data(sh, in.dst.data(), in.wei.data(), ref.value.data(), ref.mag.data()); break;
    case Direction::bwd_filter: ref::conv_bwd_filter(sh, in.src.data(), in.dst.data(), ref.value.data(), ref.mag.data()); break;
  }
#ifdef _OPENMP
  omp_set_num_threads(saved);
#endif
  for (size_t i = 0; i < n; ++i) {
    ref.max_mag = std::max(ref.max_mag, ref.mag[i]);
    ref.max_abs = std::max(ref.max_abs, std::fabs(ref.value[i]));
  }
  return ref;
}

ErrorStats compare(const float* out, const Reference& ref, const Tolerance& tol) {
  ErrorStats st;
  const double rel_floor = 1e-3 * ref.max_abs;
  for (size_t i = 0; i < ref.value.size(); ++i) {
    const double y = out[i];
    if (!std::isfinite(y)) {
      if (st.non_finite++ == 0 && st.worst_index < 0) st.worst_index = int64_t(i);
      st.worst_ratio = std::numeric_limits<double>::infinity();
      continue;
    }
    const double err = std::fabs(y - ref.value[i]);
    st.max_abs = std::max(st.max_abs, err);
    const double a = std::fabs(ref.value[i]);
    if (a >= rel_floor && a > 0) st.max_rel = std::max(st.max_rel, err / a);
    const double allowed = tol.elem * ref.mag[i] + tol.global * ref.max_mag;
    const double ratio = allowed > 0 ? err / allowed : (err > 0 ? std::numeric_limits<double>::infinity() : 0);
    if (ratio > 1) ++st.bad;
    if (ratio > st.worst_ratio || st.worst_index < 0) {
      if (ratio >= st.worst_ratio) st.worst_index = int64_t(i);
      st.worst_ratio = std::max(st.worst_ratio, ratio);
    }
  }
  return st;
}

namespace {
constexpr size_t kGuardBytes = 256;
constexpr unsigned char kGuardByte = 0xA5;
constexpr unsigned char kPoisonByte = 0xFF;  // as fp32: NaN
}  // namespace

size_t data_bytes(const ConvProblem& p) { return size_t(p.src_elems() + p.wei_elems() + p.dst_elems()) * sizeof(float); }

size_t reference_bytes(const ConvProblem& p, Direction dir) {
  const int64_t n = dir == Direction::fwd ? p.dst_elems() : dir == Direction::bwd_data ? p.src_elems() : p.wei_elems();
  return 2 * size_t(n) * sizeof(double);
}

size_t runner_bytes(const Algorithm& a, const ConvProblem& p, Direction dir) {
  return data_bytes(p) + a.workspace_bytes(p, dir) + 4 * kGuardBytes;
}

void MemoryNeed::require(DeviceKind device_kind, const std::string& what) const {
  require_memory(DeviceKind::cpu, host, what);
  if (device_kind != DeviceKind::cpu) require_memory(device_kind, device, what);
}

ConvRunner::ConvRunner(const Algorithm& algo, const ConvProblem& p, Direction dir, const ExecContext& ctx)
    : algo_(algo), p_(p), dir_(dir), ctx_(ctx) {
  ctx_.device = algo.device();
  if (auto why = algo.unavailable_reason(); !why.empty()) fail(std::string(algo.name()) + ": " + why);
  if (auto e = p.validate(); !e.empty()) fail(e);
  if (auto s = algo.supports(p, dir); !s) fail("unsupported: " + s.reason);
  ws_bytes_ = algo.workspace_bytes(p, dir);
  const DeviceKind d = algo.device();
  auto buffer = [&](const char* what, size_t bytes) {
    return naming_memory(std::string(algo.name()) + "'s " + what + " buffer",
                         [&] { return DeviceBuffer(d, bytes + kGuardBytes); });
  };
  src_ = buffer("src", size_t(p.src_elems()) * 4);
  wei_ = buffer("wei", size_t(p.wei_elems()) * 4);
  dst_ = buffer("dst", size_t(p.dst_elems()) * 4);
  ws_ = buffer("workspace", ws_bytes_);
  for (auto* b : {&src_, &wei_, &dst_, &ws_}) device_fill_bytes(d, b->get(), kGuardByte, b->bytes());
}

float* ConvRunner::out_ptr() const {
  return dir_ == Direction::fwd ? dst_.f32() : dir_ == Direction::bwd_data ? src_.f32() : wei_.f32();
}
size_t ConvRunner::out_bytes() const {
  return 4 * size_t(dir_ == Direction::fwd ? p_.dst_elems() : dir_ == Direction::bwd_data ? p_.src_elems() : p_.wei_elems());
}

void ConvRunner::upload(const ConvData& data) {
  const DeviceKind d = algo_.device();
  copy_to_device(d, src_.get(), data.src.data(), size_t(data.src.size()) * 4);
  copy_to_device(d, wei_.get(), data.wei.data(), size_t(data.wei.size()) * 4);
  copy_to_device(d, dst_.get(), data.dst.data(), size_t(data.dst.size()) * 4);
}

void ConvRunner::poison() {
  const DeviceKind d = algo_.device();
  device_fill_bytes(d, out_ptr(), kPoisonByte, out_bytes());
  device_fill_bytes(d, ws_.get(), kPoisonByte, ws_bytes_);
}

void ConvRunner::run() {
  algo_.run(p_, dir_, ConvBuffers{src_.f32(), wei_.f32(), dst_.f32()}, ws_bytes_ ? ws_.get() : nullptr, ctx_);
  device_synchronize(ctx_);
}

void ConvRunner::run_profiled(StageProfile* profile) {
  ExecContext ctx = ctx_;
  ctx.profile = profile;
  algo_.run(p_, dir_, ConvBuffers{src_.f32(), wei_.f32(), dst_.f32()}, ws_bytes_ ? ws_.get() : nullptr, ctx);
  device_synchronize(ctx);
}

TimingStats ConvRunner::time(const TimingOptions& opt) {
  if (algo_.device() == DeviceKind::cuda) {
    // CUDA events around the enqueued work, L2 evicted before every rep (core/cuda_stream.hpp).
    const ConvBuffers buf{src_.f32(), wei_.f32(), dst_.f32()};
    void* ws = ws_bytes_ ? ws_.get() : nullptr;
    return time_cuda([&] { algo_.run(p_, dir_, buf, ws, ctx_); }, ctx_.stream, opt);
  }
  return time_it([&] { run(); }, opt);
}

void ConvRunner::download_output(ConvData& data) const {
  Tensor& out = data.output(dir_);
  copy_to_host(algo_.device(), out.data(), out_ptr(), out_bytes());
}

std::string ConvRunner::check_inputs(const ConvData& uploaded) const {
  struct In { const char* what; const DeviceBuffer* b; const Tensor* t; bool input; };
  for (auto [what, b, t, input] : {In{"src", &src_, &uploaded.src, dir_ != Direction::bwd_data},
                                   In{"wei", &wei_, &uploaded.wei, dir_ != Direction::bwd_filter},
                                   In{"dst (diff_dst)", &dst_, &uploaded.dst, dir_ != Direction::fwd}}) {
    if (!input) continue;
    std::vector<float> now(size_t(t->size()));
    copy_to_host(algo_.device(), now.data(), b->get(), now.size() * 4);
    if (std::memcmp(now.data(), t->data(), now.size() * 4) != 0) return std::string("modified its input ") + what;
  }
  return {};
}

std::string ConvRunner::check_guards() const {
  struct G { const char* what; const DeviceBuffer* b; size_t used; };
  for (auto [what, b, used] : {G{"src", &src_, size_t(p_.src_elems()) * 4}, G{"wei", &wei_, size_t(p_.wei_elems()) * 4},
                               G{"dst", &dst_, size_t(p_.dst_elems()) * 4}, G{"workspace", &ws_, ws_bytes_}}) {
    std::vector<unsigned char> tail(kGuardBytes);
    copy_to_host(algo_.device(), tail.data(), static_cast<const char*>(b->get()) + used, kGuardBytes);
    for (unsigned char c : tail)
      if (c != kGuardByte) return std::string("wrote past the end of ") + what;
  }
  return {};
}

std::vector<StageRecord> profile_stages(const Algorithm& a, const ConvProblem& p, Direction dir, ExecContext ctx,
                                        int runs) {
  if (a.device() != DeviceKind::cpu) fail("stage profiles are for CPU algorithms; " + std::string(a.name()) + " is not");
  if (runs < 1) fail("profile_stages: runs must be at least 1");
  ctx.profile = nullptr;
  ConvRunner runner(a, p, dir, ctx);
  runner.upload(ConvData::random(p, 1));
  runner.run();  // untimed: plans, page faults
  std::vector<StageProfile> profiles(static_cast<size_t>(runs));
  std::vector<double> whole(static_cast<size_t>(runs));
  for (int r = 0; r < runs; ++r) {
    const double t0 = now_seconds();
    runner.run_profiled(&profiles[size_t(r)]);
    whole[size_t(r)] = now_seconds() - t0;
  }
  std::vector<StageRecord> out;
  if (profiles[0].stages().empty()) {
    StageRecord s;
    s.name = "whole run";
    s.kind = StageKind::compute;
    s.flops = p.flops();
    s.bytes = p.bytes();
    s.calls = 1;
    std::sort(whole.begin(), whole.end());
    s.seconds = whole[whole.size() / 2];
    out.push_back(s);
    return out;
  }
  for (const StageRecord& first : profiles[0].stages()) {
    std::vector<double> secs;
    for (const StageProfile& pr : profiles)
      for (const StageRecord& s : pr.stages())
        if (s.name == first.name) secs.push_back(s.seconds);
    std::sort(secs.begin(), secs.end());
    StageRecord s = first;
    s.seconds = secs[secs.size() / 2];
    out.push_back(s);
  }
  return out;
}

}  // namespace convlab
