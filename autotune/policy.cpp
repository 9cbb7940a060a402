#include "autotune/policy.hpp"

#include "algorithms/registry.hpp"
#include "core/error.hpp"

namespace convlab {

std::string Policy::name() const {
  switch (kind) {
    case Kind::default_: return "default";
    case Kind::fixed: return "fixed:" + fixed_algo;
    case Kind::get: return "get";
    case Kind::find: return "find";
    case Kind::cache: return cache_path.empty() ? "cache" : "cache:" + cache_path;
  }
  return "?";
}

Policy Policy::parse(std::string_view text) {
  Policy p;
  if (text == "default") return p;
  if (text == "get") { p.kind = Kind::get; return p; }
  if (text == "find") { p.kind = Kind::find; return p; }
  if (text == "cache") { p.kind = Kind::cache; return p; }
  if (text.rfind("cache:", 0) == 0) {
    p.kind = Kind::cache;
    p.cache_path = std::string(text.substr(6));
    if (p.cache_path.empty()) fail("policy 'cache:' needs a file path");
    return p;
  }
  if (text.rfind("fixed:", 0) == 0) {
    p.kind = Kind::fixed;
    p.fixed_algo = std::string(text.substr(6));
    const Algorithm& a = get_algorithm(p.fixed_algo);  // throws for unknown names
    if (a.family() == "reference") fail("policy 'fixed:" + p.fixed_algo + "': the reference is not a policy choice");
    return p;
  }
  fail("unknown policy '" + std::string(text) + "' (expected default, fixed:<algorithm>, get, find, cache[:<path>])");
}

namespace {
bool usable(const Algorithm& a, const ConvProblem& p, Direction dir, const ExecContext& ctx, size_t ws_limit) {
  return a.device() == ctx.device && a.family() != "reference" && a.unavailable_reason().empty() &&
         a.supports(p, dir).ok && a.workspace_bytes(p, dir) <= ws_limit;
}
}  // namespace

Choice choose_algorithm(const Policy& policy, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                        size_t workspace_limit) {
  if (policy.kind == Policy::Kind::fixed) {
    const Algorithm& a = get_algorithm(policy.fixed_algo);
    if (usable(a, p, dir, ctx, workspace_limit)) return {&a, "fixed", 0};
  }
  if (policy.kind == Policy::Kind::get || policy.kind == Policy::Kind::find || policy.kind == Policy::Kind::cache)
    fail("policy '" + policy.name() + "' needs the autotuner (autotune/find, get, cache)");
  for (const Algorithm* a : registry())
    if (usable(*a, p, dir, ctx, workspace_limit))
      return {a, policy.kind == Policy::Kind::fixed ? "fixed algorithm unsupported here; first supporting in registry order"
                                                    : "first supporting in registry order",
              0};
  fail("no " + std::string(to_string(ctx.device)) + " algorithm supports " + p.key() + " " + std::string(to_string(dir)));
}

}  // namespace convlab
