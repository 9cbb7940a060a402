#include "train/plan.hpp"

#include <algorithm>
#include <cstdio>

#include "autotune/find.hpp"
#include "core/error.hpp"

namespace convlab::train {

std::vector<int> round_order(int policies, int round) {
  if (policies < 1 || round < 0) fail("round_order: need at least one policy and a round >= 0");
  const int P = policies;
  std::vector<int> row0(size_t(P), 0);
  for (int k = 1; k < P; ++k) row0[size_t(k)] = k % 2 ? (k + 1) / 2 : P - k / 2;
  const int rows = P % 2 ? 2 * P : P;
  const int r = round % rows;
  std::vector<int> out(static_cast<size_t>(P));
  for (int k = 0; k < P; ++k) out[size_t(k)] = (row0[size_t(k)] + r) % P;
  if (r >= P) std::reverse(out.begin(), out.end());  // odd P: the second half of the square, reversed rows
  return out;
}

size_t workspace_bound(const Net& net, const Policy& policy) {
  const ExecContext& ctx = net.options().ctx;
  const bool instant = policy.kind == Policy::Kind::default_ || policy.kind == Policy::Kind::fixed;
  const std::vector<const Algorithm*> candidates = find_candidates(ctx.device, policy.tf32);
  size_t bound = 0;
  for (const ConvLayer* c : net.conv_layers())
    for (Direction d : kAllDirections) {
      const ConvProblem& p = c->problem();
      if (instant) {
        bound = std::max(bound, choose_algorithm(policy, p, d, ctx).algo->workspace_bytes(p, d));
        continue;
      }
      for (const Algorithm* a : candidates) {
        if (!a->unavailable_reason().empty() || !a->supports(p, d).ok) continue;
        const size_t ws = a->workspace_bytes(p, d);
        if (ws <= policy.workspace_limit) bound = std::max(bound, ws);
      }
    }
  return bound;
}

namespace {

std::string gib(size_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f GiB", double(bytes) / double(size_t(1) << 30));
  return b;
}

}  // namespace

MemoryPlan plan_memory(const Net& probe, const std::vector<Policy>& policies, const std::vector<bool>& runnable) {
  MemoryPlan m;
  NetMemory base = probe.memory();
  m.on_gpu = base.on_gpu;
  int nets = 0;
  for (size_t i = 0; i < policies.size(); ++i) {
    if (!runnable[i]) {
      m.per_net.push_back(0);
      continue;
    }
    NetMemory n = base;
    n.workspace = workspace_bound(probe, policies[i]);
    m.per_net.push_back(n.device_bytes());
    m.host_total += n.host_bytes();
    m.device_total += n.device_bytes();
    ++nets;
  }
  // The probe already holds its buffers: what is available to the run is what is free plus the probe.
  m.host_available = available_memory_bytes(DeviceKind::cpu, &m.host_source);
  if (m.host_available) m.host_available += base.host_bytes();
  if (m.on_gpu) {
    m.device_available = available_memory_bytes(DeviceKind::cuda, &m.device_source);
    if (m.device_available) m.device_available += base.device_bytes();
  }
  const double keep = 1 - kMemoryMargin;
  auto check = [&](size_t need, size_t avail, const std::string& what, const std::string& source) {
    if (avail == 0 || !m.refusal.empty() || double(need) <= keep * double(avail)) return;
    m.refusal = std::to_string(nets) + " networks (one per policy) of " + probe.name() + " at batch " +
                std::to_string(probe.input_shape().n) + " need " + gib(need) + " of " + what + " but " + gib(avail) +
                " is available (" + source + ", " + std::to_string(int(kMemoryMargin * 100)) +
                " % kept free): run fewer policies or a smaller batch";
  };
  check(m.host_total, m.host_available, m.on_gpu ? "host memory (parameter copies)" : "memory", m.host_source);
  if (m.on_gpu) check(m.device_total, m.device_available, "GPU memory", m.device_source);
  return m;
}

}  // namespace convlab::train
