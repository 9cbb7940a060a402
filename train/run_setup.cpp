// The checks and plans of a TrainConfig before any training: its policies (the
// defaults, the ones that can run, the expectations naming them), the net options
// and the memory the run will hold.
#include "train/run_setup.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "algorithms/registry.hpp"
#include "core/error.hpp"

namespace convlab::train {

std::vector<std::string> default_policies(DeviceKind device) {
  std::vector<std::string> out = {"default", "get", "find", "find-context"};
  std::set<std::string> families;
  for (const Algorithm* a : registry()) {
    if (a->device() != device || a->family() == "reference" || !a->unavailable_reason().empty()) continue;
    if (families.insert(std::string(a->family())).second) out.push_back("fixed:" + std::string(a->name()));
  }
  // The named baselines a comparison is usually read against, when registered.
  const auto baselines = device == DeviceKind::cpu
                             ? std::vector<const char*>{"cpu.im2col_openblas", "cpu.onednn_auto"}
                             : std::vector<const char*>{"cuda.im2col_cublas", "cudnn.implicit_precomp_gemm"};
  for (const char* name : baselines) {
    const std::string p = std::string("fixed:") + name;
    const Algorithm* a = find_algorithm(name);
    if (a && a->device() == device && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

NetOptions net_options(const TrainConfig& cfg) {
  NetOptions no;
  no.batch = cfg.batch;
  no.classes = cfg.classes;
  no.seed = cfg.seed;
  no.first_layer_grad = cfg.first_layer_grad;
  no.ctx.threads = cfg.threads;
  no.ctx.device = cfg.device;
  return no;
}

std::vector<Policy> parse_policies(const std::vector<std::string>& names) {
  std::vector<Policy> out;
  for (const auto& p : names) out.push_back(Policy::parse(p));  // bad names: Error
  return out;
}

std::vector<bool> runnable_policies(const std::vector<Policy>& policies, DeviceKind device) {
  std::vector<bool> out;
  for (const Policy& p : policies) out.push_back(policy_unavailable_reason(p, device).empty());
  return out;
}

void check_expectations(TrainConfig& cfg) {
  const std::vector<std::string> names = cfg.policies.empty() ? default_policies(cfg.device) : cfg.policies;
  std::vector<std::string> canonical;
  for (const auto& n : names) canonical.push_back(Policy::parse(n).name());
  for (Expectation& e : cfg.expect)
    for (std::string* side : {&e.num, &e.den}) {
      *side = Policy::parse(*side).name();
      if (std::find(canonical.begin(), canonical.end(), *side) == canonical.end()) {
        std::string list;
        for (const auto& c : canonical) list += (list.empty() ? "" : ", ") + c;
        fail("--expect '" + printable(e.text) + "': '" + printable(*side) + "' is not one of this run's policies (" +
             list + ")");
      }
    }
}

std::string why_no_policy_can_run(const TrainConfig& cfg) {
  const std::vector<std::string> names = cfg.policies.empty() ? default_policies(cfg.device) : cfg.policies;
  std::string why;
  for (const auto& text : names) {
    const Policy p = Policy::parse(text);
    const std::string r = policy_unavailable_reason(p, cfg.device);
    if (r.empty()) return {};
    why += (why.empty() ? "" : "; ") + p.name() + ": " + r;
  }
  return "no requested policy can run on " + std::string(to_string(cfg.device)) + " (" + why + ")";
}

size_t data_bytes(const TrainConfig& cfg, const Shape4& input) {
  const size_t batch = size_t(cfg.batch) * (size_t(input.per_sample()) * sizeof(float) + sizeof(int));
  size_t bytes = size_t(cfg.warmup + cfg.iters) * batch;
  if (cfg.data == "npy") {
    std::error_code ec;
    for (const std::string& f : {cfg.images_npy, cfg.labels_npy}) {
      const auto size = std::filesystem::file_size(f, ec);
      if (!ec) bytes += size_t(size);
    }
  }
  return bytes;
}

Net build_probe(const TrainConfig& cfg, const NetOptions& no) {
  return naming_memory(cfg.net + " at batch " + std::to_string(no.batch), [&] { return build_network(cfg.net, no); });
}

std::string why_nets_do_not_fit(const TrainConfig& cfg) {
  const std::vector<Policy> policies = parse_policies(cfg.policies.empty() ? default_policies(cfg.device) : cfg.policies);
  const AvailableMemory available = read_available_memory(cfg.device);  // before the probe is allocated
  const Net probe = build_probe(cfg, net_options(cfg));
  return plan_memory(probe, policies, runnable_policies(policies, cfg.device), available,
                     data_bytes(cfg, probe.input_shape()))
      .refusal;
}

}  // namespace convlab::train
