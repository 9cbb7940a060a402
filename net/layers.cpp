// The layers of net/layers.hpp, CPU and CUDA.
//
// CPU: the kernels of kernels/cpu/layers/ (per ISA, one pass over memory each,
// bit-identical for any thread count: see its header) on ctx.resolved_threads()
// OpenMP threads. The fully connected layer runs the hand-written SGEMM
// (kernels/cpu/gemm) on the same OpenMP runtime and thread count: no second
// thread pool (OpenBLAS's pthreads kept spinning after each call and slowed
// the layers after it; bench_gemm's alexnet.fc* rows measure the choice).
//
// CUDA: each method's first line hands the same pointers to the kernels of
// kernels/cuda/layers/ (deterministic, documented there) or to cuBLAS, on the
// context's stream. A build without CUDA never gets there: Net refuses a CUDA
// context up front (and device_alloc fails with "built without CUDA").
#include "net/layers.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "core/timing.hpp"
#include "kernels/counter_rng.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"
#include "kernels/cpu/layers/layers.hpp"

#if CONVLAB_HAS_CUDA
#include "algorithms/cuda/cublas.hpp"
#include "kernels/cuda/layers/layers.hpp"
// On a CUDA context, run `call` (asynchronously, on the context's stream) and return.
#define CONVLAB_ON_GPU(call) \
  do {                       \
    if (on_gpu()) {          \
      call;                  \
      return;                \
    }                        \
  } while (0)
#else
// Net refuses a CUDA context in a build without CUDA; a layer used on its own is refused here.
#define CONVLAB_ON_GPU(call)                                          \
  do {                                                                \
    if (on_gpu()) fail(name_ + ": CUDA layers: built without CUDA"); \
  } while (0)
#endif

namespace convlab::train {

std::string Shape4::str() const {
  return "(" + std::to_string(n) + ", " + std::to_string(c) + ", " + std::to_string(h) + ", " + std::to_string(w) + ")";
}

Param::Param(std::string n, std::vector<int64_t> shape, bool decay_)
    : name(std::move(n)), value(shape), grad(shape), momentum(shape), decay(decay_) {
  std::fill(value.buf.begin(), value.buf.end(), 0.f);
  std::fill(grad.buf.begin(), grad.buf.end(), 0.f);
  std::fill(momentum.buf.begin(), momentum.buf.end(), 0.f);
}

namespace {

using rng::mix;
using rng::uniform01;

// Gaussian N(0, std^2) fill (Box-Muller on a counter-based stream).
void fill_normal(Tensor& t, double std, uint64_t seed) {
  const int64_t n = t.size();
  for (int64_t i = 0; i < n; ++i) {
    const double u1 = std::max(uniform01(seed * 0x100000001B3ull + uint64_t(2 * i)), 1e-300);
    const double u2 = uniform01(seed * 0x100000001B3ull + uint64_t(2 * i + 1));
    t.data()[i] = float(std * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
}

void zero(Tensor& t) { std::fill(t.buf.begin(), t.buf.end(), 0.f); }

#if CONVLAB_HAS_CUDA
// The conv layer's output epilogue on CUDA: the same composition as the CPU's
// fused pass (bias, then ReLU), as two launches.
void gpu_bias_relu_fwd(int n, int k, int64_t pq, const float* b, bool relu, float* y, void* stream) {
  if (b) cuda::bias_add(n, k, pq, b, y, stream);
  if (relu) cuda::relu_fwd(int64_t(n) * k * pq, y, y, stream);
}
void gpu_bias_relu_bwd(int n, int k, int64_t pq, const float* y, float* dy, float* db, void* stream) {
  if (y) cuda::relu_bwd(int64_t(n) * k * pq, y, dy, dy, stream);  // y > 0 exactly where x > 0
  if (db) cuda::bias_grad(n, k, pq, dy, db, stream);
}
#endif

uint64_t name_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ uint64_t(static_cast<unsigned char>(c))) * 1099511628211ull;
  return h;
}


}  // namespace

void Param::place(DeviceKind d) {
  device = d;
  if (d == DeviceKind::cpu) {
    d_value.reset();
    d_grad.reset();
    d_momentum.reset();
    return;
  }
  const size_t bytes = size_t(value.size()) * sizeof(float);
  d_value = DeviceBuffer(d, bytes);
  d_grad = DeviceBuffer(d, bytes);
  d_momentum = DeviceBuffer(d, bytes);
}

void Param::upload() {
  if (device == DeviceKind::cpu) return;
  const size_t bytes = size_t(value.size()) * sizeof(float);
  copy_to_device(device, d_value.get(), value.data(), bytes);
  copy_to_device(device, d_grad.get(), grad.data(), bytes);
  copy_to_device(device, d_momentum.get(), momentum.data(), bytes);
}

void Param::download() {
  if (device == DeviceKind::cpu) return;
  const size_t bytes = size_t(value.size()) * sizeof(float);
  copy_to_host(device, value.data(), d_value.get(), bytes);
  copy_to_host(device, grad.data(), d_grad.get(), bytes);
  copy_to_host(device, momentum.data(), d_momentum.get(), bytes);
}

// ---- convolution ------------------------------------------------------------------

ConvLayer::ConvLayer(std::string name, const ConvProblem& problem, bool bias)
    : Layer(std::move(name)), p_(problem), has_bias_(bias) {
  if (auto e = p_.validate(); !e.empty()) fail(name_ + ": " + e);
  wei_ = std::make_unique<Param>(name_ + ".wei", wei_shape(p_));
  if (has_bias_) bias_ = std::make_unique<Param>(name_ + ".bias", std::vector<int64_t>{p_.k}, false);
}

Shape4 ConvLayer::setup(const Shape4& in, const ExecContext& ctx) {
  const Shape4 want{p_.n, p_.c, p_.h, p_.w};
  if (!(in == want))
    fail(name_ + ": input is " + in.str() + " but the convolution " + p_.canonical() + " expects " + want.str());
  in_ = in;
  ctx_ = ctx;
  out_ = {p_.n, p_.k, p_.p(), p_.q()};
  wei_->place(ctx.device);
  if (has_bias_) bias_->place(ctx.device);
  return out_;
}

std::vector<Param*> ConvLayer::params() {
  std::vector<Param*> v{wei_.get()};
  if (has_bias_) v.push_back(bias_.get());
  return v;
}

void ConvLayer::init_params(uint64_t seed) {
  fill_normal(wei_->value, std::sqrt(2.0 / double(p_.c_per_group() * p_.r * p_.s)), seed ^ name_hash(wei_->name));
  zero(wei_->momentum);
  if (has_bias_) {
    zero(bias_->value);
    zero(bias_->momentum);
    bias_->upload();
  }
  wei_->upload();
}

void ConvLayer::choose(const Policy& policy, size_t workspace_limit, bool need_input_grad) {
  for (Direction d : kAllDirections) {
    const double t0 = now_seconds();
    const bool unused = d == Direction::bwd_data && !need_input_grad;
    Choice c = choose_algorithm(unused ? Policy{} : policy, p_, d, ctx_, workspace_limit);
    if (unused) c.why = "input gradient not computed; default's choice, run only to report its cost";
    // Policies that choose without timing report 0; record the call's own cost anyway.
    if (c.tuning_seconds <= 0) c.tuning_seconds = now_seconds() - t0;
    choice_[direction_index(d)] = c;
  }
}

void ConvLayer::inject(Direction dir, const Algorithm& algo, std::string why) {
  if (algo.device() != ctx_.device)
    fail(std::string(algo.name()) + " runs on " + std::string(to_string(algo.device())) + " but " + name_ + " is on " +
         std::string(to_string(ctx_.device)));
  if (auto u = algo.unavailable_reason(); !u.empty()) fail(std::string(algo.name()) + ": " + u);
  if (auto s = algo.supports(p_, dir); !s)
    fail(std::string(algo.name()) + " cannot run " + name_ + " " + std::string(to_string(dir)) + ": " + s.reason);
  choice_[direction_index(dir)] = Choice{&algo, std::move(why), 0};
}

bool ConvLayer::chosen() const {
  return std::all_of(std::begin(choice_), std::end(choice_), [](const Choice& c) { return c.algo != nullptr; });
}

size_t ConvLayer::workspace_bytes() const {
  size_t ws = 0;
  for (Direction d : kAllDirections)
    if (const Algorithm* a = choice_[direction_index(d)].algo) ws = std::max(ws, a->workspace_bytes(p_, d));
  return ws;
}

void ConvLayer::run(Direction dir, const float* src, const float* wei, const float* dst, float* out) {
  const Algorithm* a = choice_[direction_index(dir)].algo;
  if (!a) fail(name_ + ": no algorithm chosen for " + std::string(to_string(dir)));
  assert(ws_bytes_ >= a->workspace_bytes(p_, dir));
  ConvBuffers b{const_cast<float*>(src), const_cast<float*>(wei), const_cast<float*>(dst)};
  if (dir == Direction::fwd) b.dst = out;
  else if (dir == Direction::bwd_data) b.src = out;
  else b.wei = out;
  ExecContext ctx = ctx_;
  ctx.device = a->device();
  a->run(p_, dir, b, ws_bytes_ ? ws_ : nullptr, ctx);
}

void ConvLayer::forward(const float* x, float* y, bool, int64_t) {
  run(Direction::fwd, x, wei_->w(), nullptr, y);
  t_epilogue_fwd_ = 0;
  const bool relu = !fused_relu_.empty();
  if (!has_bias_ && !relu) return;
  const int n = p_.n, k = p_.k;
  const int64_t pq = int64_t(p_.p()) * p_.q();
  const float* b = has_bias_ ? bias_->w() : nullptr;
  // The epilogue timed apart (on CUDA between two synchronisations, as backward's halves).
  if (on_gpu()) device_synchronize(ctx_);
  const double t0 = now_seconds();
  if (on_gpu()) {
#if CONVLAB_HAS_CUDA
    gpu_bias_relu_fwd(n, k, pq, b, relu, y, ctx_.stream);
    device_synchronize(ctx_);
#else
    fail(name_ + ": CUDA layers: built without CUDA");
#endif
  } else {
    cpu::bias_relu_fwd(n, k, pq, b, relu, y, ctx_.resolved_threads());
  }
  t_epilogue_fwd_ = now_seconds() - t0;
}

void ConvLayer::backward(const float* x, const float* y, const float* dy, float* dx) {
  // On CUDA the halves are timed by synchronising after each (a few microseconds).
  if (on_gpu()) device_synchronize(ctx_);
  double t0 = now_seconds();
  const bool relu = !fused_relu_.empty();
  if (has_bias_ || relu) {
    // The epilogue's backward first (counted with bwd-filter): the fused ReLU
    // masks dy in place -- the net's gradient buffer of this layer's output,
    // read by nobody after this backward -- and the bias gradient is summed.
    const int n = p_.n, k = p_.k;
    const int64_t pq = int64_t(p_.p()) * p_.q();
    float* g = const_cast<float*>(dy);
    float* db = has_bias_ ? bias_->g() : nullptr;
    if (on_gpu()) {
#if CONVLAB_HAS_CUDA
      gpu_bias_relu_bwd(n, k, pq, relu ? y : nullptr, g, db, ctx_.stream);
#endif
    } else {
      cpu::bias_relu_bwd(n, k, pq, relu ? y : nullptr, g, db, ctx_.resolved_threads());
    }
    if (on_gpu()) device_synchronize(ctx_);
  }
  t_epilogue_bwd_ = now_seconds() - t0;
  run(Direction::bwd_filter, x, nullptr, dy, wei_->g());
  if (on_gpu()) device_synchronize(ctx_);
  double t1 = now_seconds();
  t_bwd_filter_ = t1 - t0;
  t_bwd_data_ = 0;
  if (dx) {
    run(Direction::bwd_data, nullptr, wei_->w(), dy, dx);
    if (on_gpu()) device_synchronize(ctx_);
    t_bwd_data_ = now_seconds() - t1;
  }
}

double ConvLayer::bytes_moved(bool backward) const {
  const double x = double(in_.count()), y = double(out_.count()), w = double(p_.wei_elems()), b = has_bias_ ? p_.k : 0;
  return 4 * (backward ? x + y + 2 * w + b + x : x + w + b + y);
}

void ConvLayer::run_bwd_data(const float* dy, float* dx) { run(Direction::bwd_data, nullptr, wei_->w(), dy, dx); }

// ---- relu ---------------------------------------------------------------------------

Shape4 ReluLayer::setup(const Shape4& in, const ExecContext& ctx) {
  in_ = out_ = in;
  ctx_ = ctx;
  return out_;
}

void ReluLayer::forward(const float* x, float* y, bool, int64_t) {
  const int64_t n = in_.count();
  CONVLAB_ON_GPU(cuda::relu_fwd(n, x, y, ctx_.stream));
  cpu::relu_fwd(n, x, y, ctx_.resolved_threads());
}

void ReluLayer::backward(const float* x, const float*, const float* dy, float* dx) {
  if (!dx) return;
  const int64_t n = in_.count();
  CONVLAB_ON_GPU(cuda::relu_bwd(n, x, dy, dx, ctx_.stream));
  cpu::relu_bwd(n, x, dy, dx, ctx_.resolved_threads());
}

// ---- lrn ------------------------------------------------------------------------------

Shape4 LrnLayer::setup(const Shape4& in, const ExecContext& ctx) {
  if (size_ < 1 || size_ % 2 == 0 || size_ > 15) fail(name_ + ": LRN size must be odd, positive and at most 15");
  in_ = out_ = in;
  ctx_ = ctx;
  if (ctx.device != DeviceKind::cpu) scale_ = DeviceBuffer(ctx.device, size_t(in.count()) * sizeof(float));
  return out_;
}

void LrnLayer::forward(const float* x, float* y, bool, int64_t) {
  const int64_t hw = int64_t(in_.h) * in_.w;
  CONVLAB_ON_GPU(cuda::lrn_fwd(in_.n, in_.c, hw, cuda::LrnParams{size_, alpha_, beta_, k_}, x, y, scale_.f32(),
                               ctx_.stream));
  cpu::lrn_fwd(in_.n, in_.c, hw, cpu::LrnParams{size_, alpha_, beta_, k_}, x, y, ctx_.resolved_threads());
}

void LrnLayer::backward(const float* x, const float* y, const float* dy, float* dx) {
  if (!dx) return;
  const int64_t hw = int64_t(in_.h) * in_.w;
  CONVLAB_ON_GPU(cuda::lrn_bwd(in_.n, in_.c, hw, cuda::LrnParams{size_, alpha_, beta_, k_}, x, y, scale_.f32(), dy,
                               dx, ctx_.stream));
  (void)y;  // the CPU recomputes s from x
  cpu::lrn_bwd(in_.n, in_.c, hw, cpu::LrnParams{size_, alpha_, beta_, k_}, x, dy, dx, ctx_.resolved_threads());
}

// ---- max pooling -------------------------------------------------------------------------

Shape4 MaxPoolLayer::setup(const Shape4& in, const ExecContext& ctx) {
  if (in.h < size_ || in.w < size_) fail(name_ + ": input " + in.str() + " is smaller than the pooling window");
  if (size_ < 1 || size_ > 16 || stride_ < 1) fail(name_ + ": pooling window must be 1..16 with a positive stride");
  in_ = in;
  ctx_ = ctx;
  out_ = {in.n, in.c, (in.h - size_) / stride_ + 1, (in.w - size_) / stride_ + 1};
  const size_t per = ctx.device == DeviceKind::cpu ? sizeof(uint8_t) : sizeof(int32_t);
  argmax_ = DeviceBuffer(ctx.device, size_t(out_.count()) * per);
  return out_;
}

void MaxPoolLayer::forward(const float* x, float* y, bool, int64_t) {
  const int64_t planes = int64_t(in_.n) * in_.c;
  CONVLAB_ON_GPU(cuda::maxpool_fwd(cuda::PoolShape{planes, in_.h, in_.w, out_.h, out_.w, size_, stride_}, x, y,
                                   static_cast<int32_t*>(argmax_.get()), ctx_.stream));
  cpu::maxpool_fwd(cpu::PoolShape{planes, in_.h, in_.w, out_.h, out_.w, size_, stride_}, x, y,
                   static_cast<uint8_t*>(argmax_.get()), ctx_.resolved_threads());
}

void MaxPoolLayer::backward(const float*, const float*, const float* dy, float* dx) {
  if (!dx) return;
  const int64_t planes = int64_t(in_.n) * in_.c;
  CONVLAB_ON_GPU(cuda::maxpool_bwd(cuda::PoolShape{planes, in_.h, in_.w, out_.h, out_.w, size_, stride_}, dy,
                                   static_cast<const int32_t*>(argmax_.get()), dx, ctx_.stream));
  cpu::maxpool_bwd(cpu::PoolShape{planes, in_.h, in_.w, out_.h, out_.w, size_, stride_}, dy,
                   static_cast<const uint8_t*>(argmax_.get()), dx, ctx_.resolved_threads());
}

// ---- fully connected ---------------------------------------------------------------------

Shape4 FcLayer::setup(const Shape4& in, const ExecContext& ctx) {
  in_ = in;
  ctx_ = ctx;
  out_ = {in.n, out_features_, 1, 1};
  if (in.per_sample() > std::numeric_limits<int>::max() || out_features_ < 1)
    fail(name_ + ": " + std::to_string(in.per_sample()) + " -> " + std::to_string(out_features_) +
         " features is not a valid fully connected layer");
#if CONVLAB_HAS_CUDA
  if (ctx.device == DeviceKind::cuda)  // its GEMMs are cuBLAS's: say so now, not at the first step
    if (std::string why = cuda::cublas::unavailable_reason(); !why.empty()) fail(name_ + " on cuda: " + why);
#endif
  wei_ = std::make_unique<Param>(name_ + ".wei", std::vector<int64_t>{out_features_, in.per_sample()});
  bias_ = std::make_unique<Param>(name_ + ".bias", std::vector<int64_t>{out_features_}, false);
  wei_->place(ctx.device);
  bias_->place(ctx.device);
  if (ctx.device == DeviceKind::cpu) {
    const int n = in.n, o = out_features_, k = int(in.per_sample());
    const cpu::SgemmConfig cfg = gemm_cfg();
    gemm_ws_ = AlignedBuffer<unsigned char>(std::max({cpu::sgemm_workspace_bytes(n, o, k, cfg),
                                                      cpu::sgemm_workspace_bytes(o, k, n, cfg),
                                                      cpu::sgemm_workspace_bytes(n, k, o, cfg)}));
  }
  return out_;
}

cpu::SgemmConfig FcLayer::gemm_cfg() const {
  cpu::SgemmConfig c;
  c.threads = ctx_.resolved_threads();
  return c;
}

void FcLayer::init_params(uint64_t seed) {
  const double std = init_std_ > 0 ? double(init_std_) : std::sqrt(2.0 / double(in_.per_sample()));
  fill_normal(wei_->value, std, seed ^ name_hash(wei_->name));
  zero(wei_->momentum);
  zero(bias_->value);
  zero(bias_->momentum);
  wei_->upload();
  bias_->upload();
}

double FcLayer::bytes_moved(bool backward) const {
  const double x = double(in_.count()), y = double(out_.count()), w = double(out_features_) * double(in_.per_sample());
  return 4 * (backward ? x + y + 2 * w + out_features_ + x : x + w + out_features_ + y);
}

void FcLayer::forward(const float* x, float* y, bool, int64_t) {
  const int n = in_.n, out = out_features_, in = int(in_.per_sample());
#if CONVLAB_HAS_CUDA
  if (on_gpu()) {
    // cuBLAS is column-major: row-major Y (n, out) is column-major Y^T (out, n) = W X^T,
    // with W row-major (out, in) = column-major (in, out), hence op(A) = T.
    const float one = 1.f, zero_f = 0.f;
    cuda::cublas::check(cuda::cublas::api().cublasSgemm(cuda::cublas::handle(ctx_.stream), CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &one,
                                            wei_->w(), in, x, in, &zero_f, y, out),
                  "fc forward");
    cuda::bias_add(n, out, 1, bias_->w(), y, ctx_.stream);
    return;
  }
#endif
  const float* b = bias_->value.data();
  for (int i = 0; i < n; ++i) std::memcpy(y + int64_t(i) * out, b, size_t(out) * sizeof(float));
  // Y (n, out) = X (n, in) * W^T (in, out) + Y
  cpu::sgemm(cpu::Layout::row_major, cpu::Trans::no, cpu::Trans::yes, n, out, in, 1.f, x, in, wei_->value.data(), in,
             1.f, y, out, gemm_cfg(), gemm_ws_.data());
}

void FcLayer::backward(const float* x, const float*, const float* dy, float* dx) {
  const int n = in_.n, out = out_features_, in = int(in_.per_sample());
#if CONVLAB_HAS_CUDA
  if (on_gpu()) {
    const float one = 1.f, zero_f = 0.f;
    cublasHandle_t h = cuda::cublas::handle(ctx_.stream);
    const auto sgemm = cuda::cublas::api().cublasSgemm;
    // dW (out, in) row-major = column-major (in, out) = X^T (in, n) * dY (n, out); dY^T is column-major (out, n).
    cuda::cublas::check(sgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, &one, x, in, dy, out, &zero_f, wei_->g(), in),
                  "fc weight gradient");
    cuda::bias_grad(n, out, 1, dy, bias_->g(), ctx_.stream);
    // dX (n, in) row-major = column-major (in, n) = W^T (in, out) * dY^T (out, n).
    if (dx)
      cuda::cublas::check(sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &one, wei_->w(), in, dy, out, &zero_f, dx, in),
                    "fc input gradient");
    return;
  }
#endif
  // dW (out, in) = dY^T (out, n) * X (n, in)
  cpu::sgemm(cpu::Layout::row_major, cpu::Trans::yes, cpu::Trans::no, out, in, n, 1.f, dy, out, x, in, 0.f,
             wei_->grad.data(), in, gemm_cfg(), gemm_ws_.data());
  float* db = bias_->grad.data();
  for (int o = 0; o < out; ++o) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += dy[int64_t(i) * out + o];
    db[o] = float(s);
  }
  // dX (n, in) = dY (n, out) * W (out, in)
  if (dx)
    cpu::sgemm(cpu::Layout::row_major, cpu::Trans::no, cpu::Trans::no, n, in, out, 1.f, dy, out, wei_->value.data(),
               in, 0.f, dx, in, gemm_cfg(), gemm_ws_.data());
}

// ---- dropout -------------------------------------------------------------------------------

Shape4 DropoutLayer::setup(const Shape4& in, const ExecContext& ctx) {
  if (!(p_ >= 0.f && p_ < 1.f)) fail(name_ + ": dropout probability must be in [0, 1)");
  in_ = out_ = in;
  ctx_ = ctx;
  if (ctx.device != DeviceKind::cpu) mask_ = DeviceBuffer(ctx.device, size_t(in.count()) * sizeof(float));
  return out_;
}

void DropoutLayer::forward(const float* x, float* y, bool training, int64_t iteration) {
  const int64_t n = in_.count();
  last_training_ = training;
  if (!training || p_ == 0.f) {
    CONVLAB_ON_GPU(device_copy(ctx_, y, x, size_t(n) * sizeof(float)));
    std::memcpy(y, x, size_t(n) * sizeof(float));
    return;
  }
  key_ = mix(seed_ ^ name_hash(name_)) ^ mix(uint64_t(iteration) * 0x9E3779B97F4A7C15ull);
  key_ = rng::dropout_key_at(key_, first_sample_ * in_.per_sample());
  CONVLAB_ON_GPU(cuda::dropout_fwd(n, p_, key_, x, y, mask_.f32(), ctx_.stream));
  cpu::dropout_fwd(n, p_, key_, x, y, ctx_.resolved_threads());
}

void DropoutLayer::backward(const float*, const float*, const float* dy, float* dx) {
  if (!dx) return;
  const int64_t n = in_.count();
  if (!last_training_ || p_ == 0.f) {
    CONVLAB_ON_GPU(device_copy(ctx_, dx, dy, size_t(n) * sizeof(float)));
    std::memcpy(dx, dy, size_t(n) * sizeof(float));
    return;
  }
  CONVLAB_ON_GPU(cuda::dropout_bwd(n, dy, mask_.f32(), dx, ctx_.stream));
  cpu::dropout_bwd(n, p_, key_, dy, dx, ctx_.resolved_threads());
}

}  // namespace convlab::train
