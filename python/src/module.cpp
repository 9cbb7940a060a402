// The Python module convlab._convlab: problems, the registry, plans run on
// NumPy arrays and PyTorch tensors in place (DLPack, no copies), and the
// autotuner's policies. The Python package (python/convlab) wraps it.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/registry.hpp"
#include "autotune/policy.hpp"
#include "core/peak.hpp"
#include "core/stats.hpp"
#include "report/html/report_html.hpp"
#include "train/context_find.hpp"
#include "train/plan.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"
#include "core/problem_list.hpp"
#include "plan.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace convlab::py {
namespace {

using AnyArray = nb::ndarray<nb::ro>;

std::string python_type_name(nb::handle h) { return nb::type_name(h.type()).c_str(); }

// The array behind `obj` (NumPy, PyTorch, anything with __dlpack__), checked
// for what every kernel assumes: float32, 4-D, C-contiguous, CPU or CUDA.
ArrayView view_of(const char* role, nb::handle obj) {
  AnyArray a;
  if (!nb::try_cast(obj, a))
    throw Error(std::string(role) + " must be an array (NumPy, PyTorch or another DLPack producer), got " +
                python_type_name(obj));
  if (a.dtype() != nb::dtype<float>())
    throw Error(std::string(role) + " must be float32, got another dtype (convert with .astype(np.float32) or "
                ".float())");
  if (a.ndim() != 4) throw Error(std::string(role) + " must be 4-D (NCHW), got " + std::to_string(a.ndim()) + "-D");
  int64_t expect = 1;
  for (int i = 3; i >= 0; --i) {
    if (a.shape(i) != 1 && a.stride(i) != expect)
      throw Error(std::string(role) + " must be C-contiguous NCHW (call .contiguous() or np.ascontiguousarray)");
    expect *= int64_t(a.shape(i));
  }
  ArrayView v;
  v.data = const_cast<float*>(static_cast<const float*>(a.data()));
  if (a.device_type() == nb::device::cpu::value) {
    v.device = DeviceKind::cpu;
  } else if (a.device_type() == nb::device::cuda::value) {
    v.device = DeviceKind::cuda;
  } else {
    throw Error(std::string(role) + " lives on a device convlab does not run on (DLPack device type " +
                std::to_string(a.device_type()) + "); CPU and CUDA arrays only");
  }
  v.device_id = a.device_id();
  for (int i = 0; i < 4; ++i) v.shape[i] = int64_t(a.shape(i));
  return v;
}

void run_plan(const Plan& plan, nb::handle src, nb::handle wei, nb::handle dst, uintptr_t stream) {
  ArrayView s = view_of("src", src), w = view_of("wei", wei), d = view_of("dst", dst);
  nb::gil_scoped_release release;
  plan.run(s, w, d, stream);
}

// The same run on raw pointers, for callers that checked the buffers
// themselves (convlab.torch's layer: float32, C-contiguous, the plan's shapes,
// on the plan's device): DLPack's import costs microseconds per tensor.
void run_plan_pointers(const Plan& plan, uintptr_t src, uintptr_t wei, uintptr_t dst, uintptr_t stream) {
  nb::gil_scoped_release release;
  plan.run_trusted(reinterpret_cast<float*>(src), reinterpret_cast<float*>(wei), reinterpret_cast<float*>(dst),
                   stream);
}

// Seconds of each of `reps` runs timed in C++ around Plan::run alone (CPU
// plans: a CUDA run is asynchronous to this clock): what a Python call's time
// is compared with to measure the bridge's own cost.
std::vector<double> time_plan(const Plan& plan, nb::handle src, nb::handle wei, nb::handle dst, int reps) {
  if (plan.device() != DeviceKind::cpu) throw Error("Plan.time times CPU plans (CUDA runs are asynchronous)");
  if (reps < 1) throw Error("reps must be >= 1, got " + std::to_string(reps));
  ArrayView s = view_of("src", src), w = view_of("wei", wei), d = view_of("dst", dst);
  nb::gil_scoped_release release;
  std::vector<double> out;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    plan.run(s, w, d, 0);
    out.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return out;
}

nb::dict algorithm_info(const Algorithm& a) {
  nb::dict d;
  d["name"] = std::string(a.name());
  d["device"] = std::string(to_string(a.device()));
  d["family"] = std::string(a.family());
  d["math"] = std::string(a.math());
  d["description"] = std::string(a.description());
  d["unavailable"] = a.unavailable_reason();
  d["vendor"] = a.vendor_peer();
  d["deterministic"] = a.deterministic();
  d["oracle"] = a.is_oracle();
  return d;
}

ConvProblem make_problem(int n, int c, int h, int w, int k, int r, int s, std::tuple<int, int> stride,
                         std::tuple<int, int> pad, std::tuple<int, int> dilation, int groups, std::string name) {
  ConvProblem p;
  p.n = n, p.c = c, p.h = h, p.w = w, p.k = k, p.r = r, p.s = s;
  std::tie(p.stride_h, p.stride_w) = stride;
  std::tie(p.pad_h, p.pad_w) = pad;
  p.pad_h_end = p.pad_h;
  p.pad_w_end = p.pad_w;
  std::tie(p.dil_h, p.dil_w) = dilation;
  p.groups = groups;
  p.name = std::move(name);
  if (std::string why = p.validate(); !why.empty()) throw Error("invalid problem: " + why);
  p.normalize_padding();
  return p;
}

void bind_problem(nb::module_& m) {
  nb::class_<ConvProblem>(m, "Problem")
      .def(nb::init<const ConvProblem&>())
      .def_static("make", &make_problem, "n"_a, "c"_a, "h"_a, "w"_a, "k"_a, "r"_a, "s"_a,
                  "stride"_a = std::make_tuple(1, 1), "pad"_a = std::make_tuple(0, 0),
                  "dilation"_a = std::make_tuple(1, 1), "groups"_a = 1, "name"_a = "")
      .def_static("parse", [](std::string_view text) { return parse_problem(text); }, "text"_a)
      .def_ro("n", &ConvProblem::n).def_ro("c", &ConvProblem::c).def_ro("h", &ConvProblem::h)
      .def_ro("w", &ConvProblem::w).def_ro("k", &ConvProblem::k).def_ro("r", &ConvProblem::r)
      .def_ro("s", &ConvProblem::s).def_ro("groups", &ConvProblem::groups).def_ro("name", &ConvProblem::name)
      .def_prop_ro("stride", [](const ConvProblem& p) { return std::make_tuple(p.stride_h, p.stride_w); })
      .def_prop_ro("dilation", [](const ConvProblem& p) { return std::make_tuple(p.dil_h, p.dil_w); })
      .def_prop_ro("pad", [](const ConvProblem& p) { return std::make_tuple(p.pad_h, p.pad_w); })
      .def_prop_ro("pad_end", [](const ConvProblem& p) { return std::make_tuple(p.pad_h_end, p.pad_w_end); })
      .def_prop_ro("p", &ConvProblem::p).def_prop_ro("q", &ConvProblem::q)
      .def_prop_ro("flops", &ConvProblem::flops)
      .def_prop_ro("src_shape", [](const ConvProblem& p) { return std::make_tuple(p.n, p.c, p.h, p.w); })
      .def_prop_ro("wei_shape",
                   [](const ConvProblem& p) { return std::make_tuple(p.k, p.c_per_group(), p.r, p.s); })
      .def_prop_ro("dst_shape", [](const ConvProblem& p) { return std::make_tuple(p.n, p.k, p.p(), p.q()); })
      .def("with_batch", &ConvProblem::with_batch, "batch"_a)
      .def("key", &ConvProblem::key)
      .def("__str__", &ConvProblem::canonical)
      .def("__repr__", [](const ConvProblem& p) { return "convlab.Problem('" + p.canonical() + "')"; })
      .def("__eq__", [](const ConvProblem& a, const ConvProblem& b) { return a.key() == b.key(); })
      .def("__hash__", [](const ConvProblem& p) { return nb::hash(nb::str(p.key().c_str())); });

  // NET | LAYER | PROBLEM | @FILE, as every command reads them:
  // [(label, problem, direction or None, count)].
  m.def(
      "problems",
      [](const std::vector<std::string>& args, int batch) {
        std::vector<std::tuple<std::string, ConvProblem, std::optional<std::string>, int>> out;
        for (const ProblemItem& it : expand_problems(args, batch).items)
          out.emplace_back(it.label, it.problem,
                           it.dir ? std::optional<std::string>(std::string(to_string(*it.dir))) : std::nullopt,
                           it.count);
        return out;
      },
      "args"_a, "batch"_a = 0);
}

void bind_algorithms(nb::module_& m) {
  m.def("algorithms", [] {
    nb::list out;
    for (const Algorithm* a : registry()) out.append(algorithm_info(*a));
    return out;
  });
  m.def(
      "supports",
      [](std::string_view algo, const ConvProblem& p, std::string_view dir) {
        if (std::string why = p.validate(); !why.empty()) return "invalid problem: " + why;
        const Algorithm& a = get_algorithm(algo);
        Support s = a.supports(p, parse_direction(dir));
        return s ? std::string() : s.reason;
      },
      "algo"_a, "problem"_a, "dir"_a);
  m.def(
      "tolerance",
      [](std::string_view algo, const ConvProblem& p, std::string_view dir) {
        Tolerance t = get_algorithm(algo).tolerance(p, parse_direction(dir));
        return std::make_tuple(t.elem, t.global, t.basis);
      },
      "algo"_a, "problem"_a, "dir"_a);
  m.def(
      "workspace_bytes",
      [](std::string_view algo, const ConvProblem& p, std::string_view dir) {
        if (std::string why = p.validate(); !why.empty()) throw Error("invalid problem: " + why);
        const Algorithm& a = get_algorithm(algo);
        const Direction d = parse_direction(dir);
        if (Support s = a.supports(p, d); !s)
          throw Error(std::string(a.name()) + " does not support " + p.canonical() + " " + std::string(to_string(d)) +
                      ": " + s.reason);
        return a.workspace_bytes(p, d);
      },
      "algo"_a, "problem"_a, "dir"_a);
  m.def("cpu_isa", [] { return describe_isa(cpu_info()); });

  nb::class_<Plan>(m, "Plan")
      .def_static(
          "make",
          [](std::string_view algo, const ConvProblem& p, std::string_view dir, std::string_view device, int threads) {
            return new Plan(algo, p, parse_direction(dir), parse_device(device), threads);
          },
          "algo"_a, "problem"_a, "dir"_a, "device"_a = "cpu", "threads"_a = 0, nb::rv_policy::take_ownership)
      .def("run", &run_plan, "src"_a, "wei"_a, "dst"_a, "stream"_a = 0)
      .def("run_pointers", &run_plan_pointers, "src"_a, "wei"_a, "dst"_a, "stream"_a = 0)
      .def("time", &time_plan, "src"_a, "wei"_a, "dst"_a, "reps"_a = 100)
      .def_prop_ro("algo", [](const Plan& p) { return std::string(p.algorithm().name()); })
      .def_prop_ro("problem", &Plan::problem)
      .def_prop_ro("dir", [](const Plan& p) { return std::string(to_string(p.direction())); })
      .def_prop_ro("device", [](const Plan& p) { return std::string(to_string(p.device())); })
      .def_prop_ro("threads", &Plan::threads)
      .def_prop_ro("workspace_bytes", &Plan::workspace_bytes);
}

// A policy call's arguments checked and parsed (Error with the CLI's line on a bad one).
struct PolicyCall {
  Policy policy;
  ExecContext ctx;
  Direction dir;
};
PolicyCall policy_call(std::string_view policy_text, const ConvProblem& p, std::string_view dir,
                       std::string_view device, int threads) {
  PolicyCall q{Policy::parse(policy_text), {}, parse_direction(dir)};
  if (std::string why = p.validate(); !why.empty()) throw Error("invalid problem: " + why);
  q.ctx.device = parse_device(device);
  q.ctx.threads = threads;
  return q;
}

void bind_policies(nb::module_& m) {
  // The policy's choice for (p, dir): (algorithm, why, seconds spent choosing).
  // find and cache measure (the GIL is released meanwhile); cache:<file> reads
  // and writes the CLI's cache files.
  m.def(
      "choose",
      [](std::string_view policy_text, const ConvProblem& p, std::string_view dir, std::string_view device,
         int threads) {
        const PolicyCall q = policy_call(policy_text, p, dir, device, threads);
        Choice c;
        {
          nb::gil_scoped_release release;
          c = choose_algorithm(q.policy, p, q.dir, q.ctx);
        }
        return std::make_tuple(std::string(c.algo->name()), c.why, c.tuning_seconds);
      },
      "policy"_a, "problem"_a, "dir"_a, "device"_a = "cpu", "threads"_a = 0);
  m.def("check_policy", [](std::string_view text) { return Policy::parse(text).name(); }, "policy"_a);
  // find's ranked list for (p, dir) within the policy's constraints, fastest first: [(algorithm, seconds)]
  // (find / find-context: the process's memo, find on a miss; cache:<file>: the file's list).
  m.def(
      "find_ranking",
      [](std::string_view policy_text, const ConvProblem& p, std::string_view dir, std::string_view device,
         int threads) {
        const PolicyCall q = policy_call(policy_text, p, dir, device, threads);
        std::vector<AlgoPerf> ranked;
        {
          nb::gil_scoped_release release;
          ranked = find_ranking(q.policy, p, q.dir, q.ctx);
        }
        std::vector<std::tuple<std::string, double>> out;
        for (const AlgoPerf& r : ranked) out.emplace_back(r.algo, r.time);
        return out;
      },
      "policy"_a, "problem"_a, "dir"_a, "device"_a = "cpu", "threads"_a = 0);
}

// The training comparison's method, the same code `convlab train` runs: the
// balanced round order, bootstrap intervals of medians and of paired ratios,
// and the machine's measured limits for the step's napkin limit.
void bind_method(nb::module_& m) {
  m.def("round_order", &train::round_order, "policies"_a, "round"_a);
  m.def(
      "median_ci",
      [](const std::vector<double>& x) {
        stats::Interval i = stats::median_ci(x);
        return std::make_tuple(stats::median(x), i.lo, i.hi);
      },
      "x"_a);
  m.def(
      "median_ratio_ci",
      [](const std::vector<double>& a, const std::vector<double>& b) {
        stats::Interval i = stats::median_ratio_ci(a, b);
        return std::make_tuple(stats::median(a) / stats::median(b), i.lo, i.hi);
      },
      "a"_a, "b"_a);
  // median(a) - median(b) with its bootstrap interval, a[i] and b[i] paired (measured in the same round).
  m.def(
      "median_diff_ci",
      [](const std::vector<double>& a, const std::vector<double>& b) {
        stats::Interval i = stats::median_diff_ci(a, b);
        return std::make_tuple(stats::median(a) - stats::median(b), i.lo, i.hi);
      },
      "a"_a, "b"_a);
  // find-context's ranking of one (layer, direction) from its candidates' in-context samples (the
  // isolated winner first, samples paired by round): train/context_find's settle_pair, as convlab train
  // ranks. Returns (in-context order [(algo, median s, lo, hi)], agree, tie, cost ratio, lo, hi).
  m.def(
      "settle_context_pair",
      [](const std::vector<std::tuple<std::string, double, std::vector<double>>>& candidates) {
        if (candidates.empty()) throw Error("settle_context_pair: no candidates");
        train::ContextPair pair;
        for (const auto& [algo, isolated_s, samples] : candidates) {
          if (samples.empty()) throw Error("settle_context_pair: " + algo + " has no in-context samples");
          if (samples.size() != std::get<2>(candidates.front()).size())
            throw Error("settle_context_pair: the candidates' samples are paired by round and must be as many");
          train::ContextCandidate c;
          c.algo = algo;
          c.isolated_s = isolated_s;
          c.samples = samples;
          pair.isolated.push_back(std::move(c));
        }
        train::settle_pair(pair);
        std::vector<std::tuple<std::string, double, double, double>> order;
        for (const train::ContextCandidate& c : pair.in_context)
          order.emplace_back(c.algo, c.context_s, c.context_ci.lo, c.context_ci.hi);
        return std::make_tuple(order, pair.agree, pair.tie, pair.cost_ratio, pair.cost_ratio_ci.lo,
                               pair.cost_ratio_ci.hi);
      },
      "candidates"_a);
  // convlab's report page drawn from a train.json text (`convlab report` / `convlab html` draw the same).
  m.def(
      "report_html",
      [](const std::string& train_json, const std::string& command, const std::string& source,
         const std::string& title) {
        train::HtmlInputs in;
        in.command = command;
        in.source = source;
        train::HtmlHalf half;
        half.title = title;
        half.train_json = train_json;
        in.halves.push_back(std::move(half));
        return train::report_html(in);
      },
      "train_json"_a, "command"_a, "source"_a, "title"_a = "");
  m.def(
      "machine_limits",
      [](int threads) {
        nb::gil_scoped_release release;
        PeakResult peak = measure_fma_peak(threads);
        return std::make_tuple(peak.gflops * 1e9, measure_stream_bandwidth(threads) * 1e9, peak.isa);
      },
      "threads"_a);
}

}  // namespace
}  // namespace convlab::py

NB_MODULE(_convlab, m) {
  m.doc() = "convlab's C++ core: problems, algorithms, plans and policies";
  // Plans a Python program still holds at exit (a patched model's layers) are
  // freed with the process; nanobind would list each as a leak.
  nb::set_leak_warnings(false);
  // convlab.Error is a ValueError carrying convlab's one-line message;
  // convlab.OutOfMemoryError a MemoryError (registered last: tried first).
  nb::exception<convlab::Error>(m, "Error", PyExc_ValueError);
  nb::exception<convlab::OutOfMemory>(m, "OutOfMemoryError", PyExc_MemoryError);
  convlab::py::bind_problem(m);
  convlab::py::bind_algorithms(m);
  convlab::py::bind_policies(m);
  convlab::py::bind_method(m);
}
