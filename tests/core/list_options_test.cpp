// The list options every command reads (--dir, --threads, ...): split_list and
// parse_directions (core/problem.hpp), parse_int / parse_int_list and
// item_directions (core/problem_list.hpp).
#include <gtest/gtest.h>

#include <functional>

#include "core/error.hpp"
#include "core/problem_list.hpp"

namespace convlab {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ListOptions, SplitKeepsEmptyItems) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(split_list("fwd"), V{"fwd"});
  EXPECT_EQ(split_list("1,2"), (V{"1", "2"}));
  EXPECT_EQ(split_list("1,,2,"), (V{"1", "", "2", ""}));
  EXPECT_EQ(split_list(""), V{""});
  EXPECT_EQ(split_list("a;b,c", ';'), (V{"a", "b,c"}));
}

TEST(ListOptions, Directions) {
  using V = std::vector<Direction>;
  EXPECT_EQ(parse_directions("all"), (V{Direction::fwd, Direction::bwd_data, Direction::bwd_filter}));
  EXPECT_EQ(parse_directions("bwd-filter,fwd"), (V{Direction::bwd_filter, Direction::fwd}));
  EXPECT_EQ(parse_directions("bwd_data"), V{Direction::bwd_data});
  EXPECT_NE(message_of([] { parse_directions("fwd,sideways"); }).find("unknown direction 'sideways'"), std::string::npos);
  EXPECT_NE(message_of([] { parse_directions("fwd,"); }).find("unknown direction ''"), std::string::npos);
  EXPECT_THROW(parse_directions("all,fwd"), Error);
}

TEST(ListOptions, Integers) {
  EXPECT_EQ(parse_int("12", 0, 64, "--n"), 12);
  EXPECT_EQ(parse_int_list("1,2,16", 0, 4096, "--threads"), (std::vector<long>{1, 2, 16}));
  EXPECT_EQ(message_of([] { parse_int("x", 0, 9, "convlab layers: --threads"); }),
            "convlab layers: --threads expects an integer, got 'x'");
  EXPECT_EQ(message_of([] { parse_int("10", 0, 9, "convlab layers: --threads"); }),
            "convlab layers: --threads must be in [0, 9], got 10");
  EXPECT_EQ(message_of([] { parse_int_list("1,,2", 0, 9, "--t"); }), "--t expects an integer, got ''");
  EXPECT_THROW(parse_int("99999999999999999999", 0, 9, "--t"), Error);
}

TEST(ListOptions, ItemDirections) {
  ProblemItem plain{"p", parse_problem("mb1ic2ih6oc2kh3"), std::nullopt, 1, ""};
  ProblemItem logged = plain;
  logged.dir = Direction::bwd_data;
  const std::vector<Direction> all = parse_directions("all"), fwd = {Direction::fwd};
  EXPECT_EQ(item_directions(plain, all, false), all);
  EXPECT_EQ(item_directions(plain, fwd, true), fwd);
  EXPECT_EQ(item_directions(logged, all, false), std::vector<Direction>{Direction::bwd_data});
  EXPECT_EQ(item_directions(logged, fwd, true), fwd);
}

TEST(ListOptions, NetworkBatch) {
  EXPECT_EQ(expand_problems({"alexnet"}).network_batch, 32);
  EXPECT_EQ(expand_problems({"alexnet"}, 4).network_batch, 4);
  EXPECT_EQ(expand_problems({"alexnet"}, 0, 8).items.front().problem.n, 8);
}

}  // namespace
}  // namespace convlab
