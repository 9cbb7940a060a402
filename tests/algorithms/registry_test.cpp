// register_algorithm()'s refusals and load_plugin()'s (algorithms/registry.hpp,
// algorithms/plugin.hpp): one line each, nothing added to the registry. A
// successful registration, from a plugin through the installed CLI, is the
// ctest install.my_algorithm (examples/my_algorithm).
#include <gtest/gtest.h>

#include <string>

#include "algorithms/plugin.hpp"
#include "algorithms/registry.hpp"

namespace convlab {
namespace {

struct Named : NamedAlgorithm {
  explicit Named(std::string name) : NamedAlgorithm(std::move(name), DeviceKind::cpu, "direct", "test") {}
  Support supports(const ConvProblem&, Direction) const override { return {false, "test only"}; }
  void run(const ConvProblem&, Direction, const ConvBuffers&, void*, const ExecContext&) const override {}
};

std::string refusal(const std::string& name) {
  const Named a(name);
  const size_t before = registry().size();
  try {
    register_algorithm(a);
  } catch (const Error& e) {
    EXPECT_EQ(registry().size(), before) << name;
    return e.what();
  }
  ADD_FAILURE() << name << " was registered";
  return {};
}

TEST(Registry, RefusesReservedAndMalformedNames) {
  for (const char* name : {"cpu.direct", "cpu.mine", "cuda.mine", "cudnn.mine"})
    EXPECT_NE(refusal(name).find("is reserved for the built-in algorithms"), std::string::npos) << name;
  for (const char* name : {"mine", "user.", "lab.mine", ""})
    EXPECT_NE(refusal(name).find("is user.<name>"), std::string::npos) << name;
  for (const char* name : {"user.Mine", "user.my-conv", "user.a b", "user.\x1b[31m"})
    EXPECT_NE(refusal(name).find("lowercase letters, digits"), std::string::npos) << name;
  EXPECT_EQ(refusal("user.\x1b").find('\x1b'), std::string::npos) << "the name is escaped";
}

TEST(Registry, BuiltInsAreNotRegisteredAtRunTime) {
  for (const Algorithm* a : registry()) EXPECT_FALSE(registered_at_run_time(*a)) << a->name();
}

TEST(Plugin, BadPathsAreOneLineErrors) {
  EXPECT_THROW(load_plugin(""), Error);
  try {
    load_plugin("/no/such/plugin.so");
    ADD_FAILURE() << "loaded a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("plugin '/no/such/plugin.so'"), std::string::npos) << e.what();
  }
  char prog[] = "convlab", opt[] = "--plugin";
  char* argv[] = {prog, opt, nullptr};
  int argc = 2;
  EXPECT_THROW(load_plugins(argc, argv), Error);
}

TEST(Plugin, ArgumentsWithoutPluginsAreLeftAlone) {
  char prog[] = "convlab", cmd[] = "algos", json[] = "--json";
  char* argv[] = {prog, cmd, json, nullptr};
  int argc = 3;
  load_plugins(argc, argv);
  EXPECT_EQ(argc, 3);
  EXPECT_STREQ(argv[1], "algos");
  EXPECT_STREQ(argv[2], "--json");
}

}  // namespace
}  // namespace convlab
