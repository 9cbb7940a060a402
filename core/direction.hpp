// The one Direction type: core (ConvProblem, policies, caches), the kernels
// (kernels/conv_shape.hpp includes this header; device code takes it as a
// kernel argument), the algorithms, the trainer and the tests.
#pragma once

namespace convlab {

enum class Direction { fwd, bwd_data, bwd_filter };

inline constexpr Direction kAllDirections[] = {Direction::fwd, Direction::bwd_data, Direction::bwd_filter};

// 0, 1, 2 in the order above: a row or column of a per-direction table.
constexpr int direction_index(Direction d) { return d == Direction::fwd ? 0 : d == Direction::bwd_data ? 1 : 2; }

}  // namespace convlab
