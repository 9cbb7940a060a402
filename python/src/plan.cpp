#include "plan.hpp"

#include <mutex>

#include "algorithms/registry.hpp"
#include "core/error.hpp"

namespace convlab::py {

namespace {

std::string shape_text(const int64_t (&s)[4]) {
  return "(" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]) + ", " +
         std::to_string(s[3]) + ")";
}

void expected_shapes(const ConvProblem& p, int64_t (&src)[4], int64_t (&wei)[4], int64_t (&dst)[4]) {
  const int64_t s[4] = {p.n, p.c, p.h, p.w};
  const int64_t w[4] = {p.k, p.c_per_group(), p.r, p.s};
  const int64_t d[4] = {p.n, p.k, p.p64(), p.q64()};
  for (int i = 0; i < 4; ++i) {
    src[i] = s[i];
    wei[i] = w[i];
    dst[i] = d[i];
  }
}

}  // namespace

std::string shape_mismatch(const char* role, const int64_t (&got)[4], const int64_t (&want)[4]) {
  for (int i = 0; i < 4; ++i)
    if (got[i] != want[i])
      return std::string(role) + " has shape " + shape_text(got) + " but the problem's " + role + " is " +
             shape_text(want);
  return {};
}

Plan::Plan(std::string_view algo, const ConvProblem& p, Direction dir, DeviceKind device, int threads)
    : p_(p), dir_(dir), device_(device), threads_(threads) {
  if (std::string why = p.validate(); !why.empty()) throw Error("invalid problem: " + why);
  if (threads < 0) throw Error("threads must be >= 0 (0: all), got " + std::to_string(threads));
  algo_ = &get_algorithm(algo);
  if (algo_->device() != device)
    throw Error(std::string(algo_->name()) + " runs on " + std::string(to_string(algo_->device())) +
                " buffers, not " + std::string(to_string(device)) + " ones");
  if (std::string why = algo_->unavailable_reason(); !why.empty())
    throw Error(std::string(algo_->name()) + " cannot run here: " + why);
  if (Support s = algo_->supports(p, dir); !s)
    throw Error(std::string(algo_->name()) + " does not support " + p.canonical() + " " +
                std::string(to_string(dir)) + ": " + s.reason);
  const size_t ws = algo_->workspace_bytes(p, dir);
  require_memory(device, ws,
                 std::string(algo_->name()) + " on " + p.canonical() + " " + std::string(to_string(dir)) +
                     ": its workspace");
  ws_ = DeviceBuffer(device, ws);
}

void Plan::run(const ArrayView& src, const ArrayView& wei, const ArrayView& dst, uintptr_t stream) const {
  int64_t want_src[4], want_wei[4], want_dst[4];
  expected_shapes(p_, want_src, want_wei, want_dst);
  const std::pair<const char*, const ArrayView*> views[3] = {{"src", &src}, {"wei", &wei}, {"dst", &dst}};
  const int64_t(*wants[3])[4] = {&want_src, &want_wei, &want_dst};
  for (int i = 0; i < 3; ++i) {
    const auto& [role, v] = views[i];
    if (std::string why = shape_mismatch(role, v->shape, *wants[i]); !why.empty()) throw Error(why);
    if (v->device != device_)
      throw Error(std::string(role) + " is a " + std::string(to_string(v->device)) + " array but " +
                  std::string(algo_->name()) + " runs on " + std::string(to_string(device_)) + " buffers");
  }
  run_trusted(src.data, wei.data, dst.data, stream);
}

void Plan::run_trusted(float* src, float* wei, float* dst, uintptr_t stream) const {
  ExecContext ctx;
  ctx.device = device_;
  ctx.threads = threads_;
  ctx.stream = reinterpret_cast<void*>(stream);
  ConvBuffers buf{src, wei, dst};
  std::lock_guard<std::mutex> lock(mutex_);
  algo_->run(p_, dir_, buf, ws_.get(), ctx);
}

}  // namespace convlab::py
