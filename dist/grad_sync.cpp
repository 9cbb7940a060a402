#include "dist/grad_sync.hpp"

#include <algorithm>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "core/cuda_stream.hpp"
#include "core/error.hpp"
#include "core/timing.hpp"

#if CONVLAB_HAS_NCCL
#include <cuda_runtime.h>
#endif

namespace convlab::train {

double SyncStep::comm() const {
  double s = 0;
  for (const Bucket& b : buckets) s += b.end - b.start;
  return s;
}

double SyncStep::exposed(size_t b) const {
  const Bucket& k = buckets[b];
  return std::max(0.0, k.end - std::max(k.start, backward_end));
}

struct GradSync::Impl {
  Comm& comm;
  ExecContext ctx;  // the net's (device, stream)
  GradSyncOptions opt;
  std::vector<GradBucket>& buckets;
  SyncStep& last;
  bool gpu;
  std::vector<std::vector<float>> packed;  // CPU buckets of several tensors
  double t0 = 0;                            // the step's clock
  bool started = false;
  size_t next = 0;                          // the next bucket to hand to the transport

  // CPU: the communication thread and its queue of bucket indices.
  std::thread thread;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<size_t> queue;
  size_t done = 0;
  bool stop = false;
  std::exception_ptr error;

#if CONVLAB_HAS_NCCL
  std::unique_ptr<DeviceComm> nccl;
  cudaStream_t stream = nullptr;  // communication stream
  std::vector<cudaEvent_t> ready, start, end;
  cudaEvent_t origin = nullptr;
#endif

  Impl(Comm& c, Net& n, GradSyncOptions o, std::vector<GradBucket>& b, SyncStep& l)
      : comm(c), ctx(n.options().ctx), opt(o), buckets(b), last(l), gpu(ctx.device != DeviceKind::cpu) {}

  void reduce_cpu(size_t bi) {
    GradBucket& b = buckets[bi];
    if (bi == 0) {
      const double h0 = now_seconds();
      double handshake = 0;
      comm.allreduce_sum(&handshake, 1);
      last.skew = now_seconds() - h0;
    }
    last.buckets[bi].start = now_seconds() - t0;
    if (b.params.size() == 1) {
      comm.allreduce_sum(b.params[0]->g(), b.floats);  // in place: no copy
    } else {
      float* buf = packed[bi].data();
      size_t off = 0;
      for (Param* p : b.params) {
        std::memcpy(buf + off, p->g(), size_t(p->value.size()) * sizeof(float));
        off += size_t(p->value.size());
      }
      comm.allreduce_sum(buf, b.floats);
      off = 0;
      for (Param* p : b.params) {
        std::memcpy(p->g(), buf + off, size_t(p->value.size()) * sizeof(float));
        off += size_t(p->value.size());
      }
    }
    last.buckets[bi].end = now_seconds() - t0;
  }

  void run_thread() {
    for (;;) {
      size_t bi;
      {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [&] { return stop || !queue.empty(); });
        if (queue.empty()) return;
        bi = queue.front();
        queue.pop_front();
      }
      try {
        reduce_cpu(bi);
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu);
        if (!error) error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lk(mu);
        ++done;
      }
      cv.notify_all();
    }
  }

  void hand_over(size_t bi) {
    if (gpu) {
      enqueue_gpu(bi);
      return;
    }
    {
      std::lock_guard<std::mutex> lk(mu);
      queue.push_back(bi);
    }
    cv.notify_all();
  }

  void enqueue_gpu(size_t bi) {
#if CONVLAB_HAS_NCCL
    auto compute = static_cast<cudaStream_t>(ctx.stream);
    cudaEventRecord(ready[bi], compute);
    cudaStreamWaitEvent(stream, ready[bi], 0);
    cudaEventRecord(start[bi], stream);
    // One NCCL group per bucket: its tensors' all-reduces are fused by NCCL.
    nccl->begin_group();
    for (Param* p : buckets[bi].params) nccl->allreduce_sum_async(p->g(), size_t(p->value.size()), stream);
    nccl->end_group();
    cudaEventRecord(end[bi], stream);
#else
    (void)bi;
    fail("GradSync on CUDA: " + nccl_unavailable_reason());
#endif
  }
};

GradSync::GradSync(Comm& comm, Net& net, GradSyncOptions opt) : net_(&net) {
  if (opt.bucket_bytes < sizeof(float)) fail("GradSync: bucket size must be at least one float");
  const NetOptions& no = net.options();
  if (no.grad_batch != no.batch * comm.size())
    fail("GradSync: the net's loss gradient must be a mean over the global batch " +
         std::to_string(no.batch * comm.size()) + " (NetOptions::grad_batch), not " + std::to_string(no.grad_batch));
  // Buckets in backward order: layers from last to first. A tensor of at least
  // bucket_bytes is a bucket alone (reduced in place); smaller ones are packed
  // together until the bucket holds bucket_bytes.
  const auto& layers = net.layers();
  GradBucket cur;
  auto close = [&] {
    if (!cur.params.empty()) buckets_.push_back(std::move(cur));
    cur = GradBucket{};
  };
  auto add = [&](GradBucket& b, Param* p, size_t layer) {
    b.params.push_back(p);
    b.floats += size_t(p->value.size());
    if (b.layers.empty() || b.layers.back() != layer) b.layers.push_back(layer);
    b.ready_after = layer;
  };
  for (size_t i = layers.size(); i-- > 0;) {
    for (Param* p : layers[i]->params()) {
      if (size_t(p->value.size()) * sizeof(float) >= opt.bucket_bytes) {
        close();  // the smaller tensors before it are ready first
        GradBucket alone;
        add(alone, p, i);
        buckets_.push_back(std::move(alone));
        continue;
      }
      add(cur, p, i);
      if (cur.floats * sizeof(float) >= opt.bucket_bytes) close();
    }
  }
  close();
  if (buckets_.empty()) fail("GradSync: network '" + net.name() + "' has no parameters");
  impl_ = std::make_unique<Impl>(comm, net, opt, buckets_, last_);
  last_.buckets.resize(buckets_.size());
  if (impl_->gpu) {
#if CONVLAB_HAS_NCCL
    impl_->nccl = make_nccl_comm(comm);
    if (cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking) != cudaSuccess)
      fail("GradSync: cannot create the communication stream");
    for (auto* v : {&impl_->ready, &impl_->start, &impl_->end}) {
      v->resize(buckets_.size());
      for (auto& e : *v) cudaEventCreate(&e);
    }
    cudaEventCreate(&impl_->origin);
#else
    fail("data-parallel training on CUDA: " + nccl_unavailable_reason());
#endif
  } else {
    impl_->packed.resize(buckets_.size());
    for (size_t b = 0; b < buckets_.size(); ++b)
      if (buckets_[b].params.size() > 1) impl_->packed[b].resize(buckets_[b].floats);
    if (opt.overlap) impl_->thread = std::thread([this] { impl_->run_thread(); });
  }
}

GradSync::~GradSync() {
  if (!impl_) return;
  if (impl_->thread.joinable()) {
    {
      std::lock_guard<std::mutex> lk(impl_->mu);
      impl_->stop = true;
    }
    impl_->cv.notify_all();
    impl_->thread.join();
  }
#if CONVLAB_HAS_NCCL
  if (impl_->gpu) {
    if (impl_->stream) cudaStreamSynchronize(impl_->stream);
    for (auto* v : {&impl_->ready, &impl_->start, &impl_->end})
      for (auto& e : *v) cudaEventDestroy(e);
    if (impl_->origin) cudaEventDestroy(impl_->origin);
    if (impl_->stream) cudaStreamDestroy(impl_->stream);
  }
#endif
}

void GradSync::backward_done(size_t layer) {
  Impl& m = *impl_;
  if (!m.started) {
    m.started = true;
    m.t0 = now_seconds();
    m.next = 0;
    m.done = 0;
#if CONVLAB_HAS_NCCL
    if (m.gpu) cudaEventRecord(m.origin, static_cast<cudaStream_t>(m.ctx.stream));
#endif
  }
  if (!m.opt.overlap) return;
  // Layers arrive in backward order; every bucket whose earliest layer is done can go.
  while (m.next < buckets_.size() && buckets_[m.next].ready_after >= layer) m.hand_over(m.next++);
}

void GradSync::wait() {
  Impl& m = *impl_;
  if (!m.started) {  // no backward_done (a net whose layers reported nothing): still reduce everything
    m.started = true;
    m.t0 = now_seconds();
    m.next = 0;
    m.done = 0;
  }
  last_.backward_end = now_seconds() - m.t0;
  const double w0 = now_seconds();
  if (m.gpu) {
    while (m.next < buckets_.size()) m.hand_over(m.next++);
#if CONVLAB_HAS_NCCL
    auto compute = static_cast<cudaStream_t>(m.ctx.stream);
    cudaEventSynchronize(m.end.back());
    cudaStreamWaitEvent(compute, m.end.back(), 0);
    for (size_t b = 0; b < buckets_.size(); ++b) {
      float s = 0, e = 0;
      cudaEventElapsedTime(&s, m.origin, m.start[b]);
      cudaEventElapsedTime(&e, m.origin, m.end[b]);
      last_.buckets[b] = {s * 1e-3, e * 1e-3};
    }
    throw_if_device_fault("NCCL all-reduce");
#endif
  } else if (!m.opt.overlap) {
    for (size_t b = 0; b < buckets_.size(); ++b) m.reduce_cpu(b);
    m.next = buckets_.size();
  } else {
    while (m.next < buckets_.size()) m.hand_over(m.next++);
    std::unique_lock<std::mutex> lk(m.mu);
    m.cv.wait(lk, [&] { return m.done == buckets_.size(); });
    if (m.error) {
      std::exception_ptr e = m.error;
      m.error = nullptr;
      m.started = false;
      std::rethrow_exception(e);
    }
  }
  last_.wait = now_seconds() - w0;
  m.started = false;
}

ExchangeStep GradSync::last_step() const {
  ExchangeStep out;
  out.comm = last_.comm();
  out.skew = last_.skew;
  for (size_t b = 0; b < last_.buckets.size(); ++b) out.after_backward += last_.exposed(b);
  const auto& layers = net_->layers();
  for (size_t li = 0; li < layers.size(); ++li) {
    double c = 0, e = 0;
    for (size_t b = 0; b < buckets_.size(); ++b)
      if (std::find(buckets_[b].layers.begin(), buckets_[b].layers.end(), li) != buckets_[b].layers.end()) {
        double mine = 0;  // this layer's tensors in bucket b
        for (Param* p : layers[li]->params())
          if (std::find(buckets_[b].params.begin(), buckets_[b].params.end(), p) != buckets_[b].params.end())
            mine += double(p->value.size());
        const double share = mine / double(buckets_[b].floats);
        c += share * (last_.buckets[b].end - last_.buckets[b].start);
        e += share * last_.exposed(b);
      }
    out.layer_comm.push_back(c);
    out.layer_exposed.push_back(e);
  }
  return out;
}

size_t GradSync::bytes() const {
  size_t n = 0;
  for (const GradBucket& b : buckets_) n += b.floats * sizeof(float);
  return n;
}

std::string GradSync::describe() const {
  char line[160];
  std::snprintf(line, sizeof line, "%zu buckets of >= %.0f MiB (%.1f MB of gradients), %s", buckets_.size(),
                double(impl_->opt.bucket_bytes) / (1 << 20), double(bytes()) / 1e6,
                impl_->opt.overlap ? "overlapped with the backward" : "after the backward");
  return line;
}

}  // namespace convlab::train
