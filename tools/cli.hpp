// Small argument parser and the subcommand table of the convlab CLI.
// Every subcommand has --help; every bad argument is one line on stderr and
// exit code 2 (bad usage) -- see tools/main.cpp.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/problem_list.hpp"

namespace convlab::cli {

class Args {
 public:
  Args(std::string command, std::string usage, std::string summary);
  Args& flag(const std::string& name, const std::string& help);
  Args& option(const std::string& name, const std::string& metavar, const std::string& help,
               const std::string& default_value = "");
  // An option that may be given several times; get_all() returns every value in order.
  Args& repeatable(const std::string& name, const std::string& metavar, const std::string& help);
  Args& positionals(const std::string& metavar, const std::string& help, int min, int max);
  // false when --help was printed (the command should return 0).
  bool parse(int argc, char** argv);

  bool has(const std::string& name) const;
  std::string get(const std::string& name) const;  // a repeatable option: its last value
  std::vector<std::string> get_all(const std::string& name) const;
  long get_int(const std::string& name, long min, long max) const;
  std::vector<long> get_int_list(const std::string& name, long min, long max) const;
  const std::vector<std::string>& pos() const { return pos_; }
  std::string help_text() const;

 private:
  struct Opt {
    std::string metavar, help, def;
    bool is_flag;
    bool repeatable = false;
  };
  std::string command_, usage_, summary_;
  std::vector<std::string> order_;
  std::map<std::string, Opt> opts_;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> all_values_;
  std::string pos_metavar_, pos_help_;
  int pos_min_ = 0, pos_max_ = 0;
  std::vector<std::string> pos_;
};

// The NET|PROBLEM|@FILE positionals of problem, tune and layers expanded
// (core/problem_list.hpp), --batch N (when the command has it) overriding every
// minibatch; each verbose log's note goes to stderr.
ProblemSet expand_problem_args(const Args& args);

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);  // argv[0] is the subcommand name
};

const std::vector<Command>& commands();

int cmd_algos(int argc, char** argv);
int cmd_problem(int argc, char** argv);
int cmd_conv(int argc, char** argv);
int cmd_demo(int argc, char** argv);
int cmd_tune(int argc, char** argv);
int cmd_cache(int argc, char** argv);
int cmd_layers(int argc, char** argv);
int cmd_train(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_html(int argc, char** argv);

// A time in seconds as milliseconds, "%.3f"; "-" when it is not finite.
std::string ms(double seconds);

// "convlab report --net tiny ..." as a shell would need it typed: each argument after `program`
// single-quoted when it holds anything but plain characters.
std::string command_line(const std::string& program, int argc, char** argv);

}  // namespace convlab::cli

namespace convlab::cli {
int cmd_peak(int argc, char** argv);
}  // namespace convlab::cli
