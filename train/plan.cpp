#include "train/plan.hpp"

#include <algorithm>
#include <cstdio>

#include "autotune/find.hpp"
#include "core/error.hpp"
#include "core/device.hpp"

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

AvailableMemory read_available_memory(DeviceKind device) {
  AvailableMemory a;
  a.host = available_memory_bytes(DeviceKind::cpu, &a.host_source);
  if (device != DeviceKind::cpu) a.device = available_memory_bytes(device, &a.device_source);
  return a;
}

MemoryPlan plan_memory(const Net& probe, const std::vector<Policy>& policies, const std::vector<bool>& runnable,
                       const AvailableMemory& available, size_t data_bytes) {
  MemoryPlan m;
  NetMemory base = probe.memory();
  m.on_gpu = base.on_gpu;
  const ExecContext& ctx = probe.options().ctx;
  int nets = 0;
  MemoryNeed find;
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
    const Policy& p = policies[i];
    if (p.kind == Policy::Kind::find || p.kind == Policy::Kind::find_context || p.kind == Policy::Kind::cache) {
      FindOptions fo;
      fo.workspace_limit = p.workspace_limit;
      const std::vector<const Algorithm*> candidates = find_candidates(ctx.device, p.tf32);
      for (const ConvLayer* c : probe.conv_layers())
        for (Direction d : kAllDirections) find.keep_max(find_memory(c->problem(), d, ctx, fo, candidates));
    }
  }
  m.data = data_bytes;
  m.find_host = find.host;
  m.find_device = find.device;
  m.host_total += m.data + m.find_host;
  if (m.on_gpu) m.device_total += m.find_device;
  m.host_available = available.host;
  m.host_source = available.host_source;
  if (m.on_gpu) {
    m.device_available = available.device;
    m.device_source = available.device_source;
  }
  auto check = [&](size_t need, size_t avail, const std::string& what, const std::string& source, size_t data,
                   size_t find_bytes) {
    if (!m.refusal.empty()) return;
    const std::string why = memory_refusal(need, avail, source, what);
    if (why.empty()) return;
    m.refusal = std::to_string(nets) + " network" + (nets == 1 ? "" : "s") + " (one per policy) of " + probe.name() +
                " at batch " + std::to_string(probe.input_shape().n);
    if (data) m.refusal += ", the batches (" + format_bytes(data) + ")";
    if (find_bytes) m.refusal += ", find's buffers (" + format_bytes(find_bytes) + ")";
    // memory_refusal's line starts "needs": "need" after a list.
    const bool plural = nets != 1 || data || find_bytes;
    m.refusal += (plural ? " need" : " needs") + why.substr(5) + ": run fewer policies or a smaller batch";
  };
  check(m.host_total, m.host_available, m.on_gpu ? "host memory (parameter copies)" : "memory", m.host_source, m.data,
        m.find_host);
  if (m.on_gpu) check(m.device_total, m.device_available, "GPU memory", m.device_source, 0, m.find_device);
  return m;
}

}  // namespace convlab::train
