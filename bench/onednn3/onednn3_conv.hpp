// oneDNN 3.x's convolution primitive (PyPI's `onednn` wheel, the build
// frameworks ship) driven the way convlab drives Debian's oneDNN 2.6
// (algorithms/cpu/onednn.cpp), for the side-by-side peer benchmark
// (bench/onednn3/onednn3_bench.cpp). This file is compiled only into the
// separate tool convlab_onednn3, never into a binary that links oneDNN 2.6:
// the two libraries' symbols share names (dnnl_*), so they live in separate
// processes.
//
// Per (kind, problem, direction) a Plan holds the convolution created with
// every tensor's format_tag::any (oneDNN picks its blocked layouts), plus one
// reorder for each tensor whose chosen layout differs from ours: NCHW src/dst
// and (K, C/g, R, S) weights (5-D goihw with groups). One timed run is what a
// run of onednn.* times in convlab: the input reorders, the convolution, the
// output reorder, then the stream's wait. oneDNN keeps its scratchpad
// (scratchpad_mode::library, its default). Every buffer is oneDNN's own memory
// (allocated by the engine: the SYCL CPU runtime's USM), filled through
// map_data.
#pragma once
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <variant>
#include <vector>

#include "core/direction.hpp"
#include "core/problem.hpp"

namespace convlab::onednn3 {

enum class Kind { automatic, direct, winograd };
inline constexpr Kind kKinds[] = {Kind::automatic, Kind::direct, Kind::winograd};

// "onednn3.auto", "onednn3.direct", "onednn3.winograd".
std::string kind_name(Kind k);

// One of src / wei / dst: our layout's memory and, when oneDNN wants another
// layout, its memory and the reorder between them.
struct PlanTensor {
  dnnl::memory ours, theirs;  // theirs == ours when no reorder is needed
  bool reorder = false;
  dnnl::reorder convert;      // ours -> theirs for an input, theirs -> ours for the output
};

enum Role { kSrc = 0, kWei = 1, kDst = 2 };

struct Plan {
  ConvProblem p;
  Direction dir = Direction::fwd;
  dnnl::primitive conv;
  PlanTensor t[3];       // by Role: src (diff_src), wei (diff_wei), dst (diff_dst)
  int arg[3] = {};       // the convolution's DNNL_ARG_* for each role in this direction
  int out = kDst;        // the role the direction writes
  std::string impl;      // oneDNN's implementation name (e.g. "jit_1x1:avx2", "brg_conv_fwd:avx2")
};

using PlanOrWhy = std::variant<std::shared_ptr<Plan>, std::string>;

// The CPU engine (SYCL CPU device); throws dnnl::error when none can be made.
const dnnl::engine& engine();
// "3.13.2 (SYCL CPU runtime)" and the ISA oneDNN dispatches to ("avx2", ...).
std::string version();
std::string cpu_isa();

// oneDNN's reason for rejecting a primitive descriptor, in one line.
std::string rejection(Kind kind, const dnnl::error& e);

// The plan, or oneDNN's reason for rejecting the problem.
PlanOrWhy make_plan(Kind kind, const ConvProblem& p, Direction dir);

// Our-layout tensors of the plan: src (N,C,H,W), wei (K,C/g,R,S), dst (N,K,P,Q)
// (for the backward directions dst holds diff_dst and src / wei the gradients).
// Writes count floats (the role's element count) into a role's tensor / reads them back.
void write_tensor(Plan& plan, Role role, const float* data, size_t count);
void read_tensor(Plan& plan, Role role, float* data, size_t count);

// One run: input reorders, the convolution, the output reorder, wait.
void run(Plan& plan, dnnl::stream& strm);

}  // namespace convlab::onednn3
