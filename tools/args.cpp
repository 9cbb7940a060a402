#include <cstdio>
#include <sstream>

#include "core/error.hpp"
#include "core/problem_list.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

Args::Args(std::string command, std::string usage, std::string summary)
    : command_(std::move(command)), usage_(std::move(usage)), summary_(std::move(summary)) {}

Args& Args::flag(const std::string& name, const std::string& help) {
  order_.push_back(name);
  opts_[name] = {"", help, "", true};
  return *this;
}

Args& Args::option(const std::string& name, const std::string& metavar, const std::string& help,
                   const std::string& default_value) {
  order_.push_back(name);
  opts_[name] = {metavar, help, default_value, false};
  return *this;
}

Args& Args::repeatable(const std::string& name, const std::string& metavar, const std::string& help) {
  order_.push_back(name);
  opts_[name] = {metavar, help, "", false, true};
  return *this;
}

Args& Args::positionals(const std::string& metavar, const std::string& help, int min, int max) {
  pos_metavar_ = metavar;
  pos_help_ = help;
  pos_min_ = min;
  pos_max_ = max;
  return *this;
}

std::string Args::help_text() const {
  std::ostringstream o;
  o << "usage: convlab " << command_ << " " << usage_ << "\n\n" << summary_ << "\n";
  if (!pos_metavar_.empty()) o << "\n  " << pos_metavar_ << "\n      " << pos_help_ << "\n";
  o << "\noptions:\n";
  for (const auto& name : order_) {
    const Opt& op = opts_.at(name);
    std::string left = "--" + name + (op.is_flag ? "" : " " + op.metavar);
    o << "  " << left << "\n      " << op.help;
    if (op.repeatable) o << " (may be given more than once)";
    if (!op.def.empty()) o << " (default: " << op.def << ")";
    o << "\n";
  }
  o << "  --help\n      print this help\n";
  return o.str();
}

bool Args::parse(int argc, char** argv) {
  const std::string cmd = "convlab " + command_;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(help_text().c_str(), stdout);
      return false;
    }
    if (a.rfind("--", 0) == 0 && a.size() > 2) {
      std::string name = a.substr(2), value;
      bool inline_value = false;
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        inline_value = true;
      }
      auto it = opts_.find(name);
      const std::string shown = "'--" + printable(name) + "'";
      if (it == opts_.end()) fail(cmd + ": unknown option " + shown + " (see --help)");
      if (values_.count(name) && !it->second.repeatable) fail(cmd + ": option " + shown + " given twice");
      if (it->second.is_flag) {
        if (inline_value) fail(cmd + ": " + shown + " takes no value");
        values_[name] = "1";
      } else {
        if (!inline_value) {
          if (i + 1 >= argc) fail(cmd + ": " + shown + " needs a value (" + it->second.metavar + ")");
          value = argv[++i];
        }
        if (value.empty()) fail(cmd + ": " + shown + " needs a non-empty value");
        values_[name] = value;
        all_values_[name].push_back(value);
      }
      continue;
    }
    pos_.push_back(a);
  }
  if (int(pos_.size()) < pos_min_)
    fail("convlab " + command_ + ": missing " + pos_metavar_ + " (usage: convlab " + command_ + " " + usage_ + ")");
  if (int(pos_.size()) > pos_max_)
    fail(cmd + ": unexpected argument '" + printable(pos_[size_t(pos_max_)]) + "' (see --help)");
  return true;
}

bool Args::has(const std::string& name) const { return values_.count(name) > 0; }

std::vector<std::string> Args::get_all(const std::string& name) const {
  if (auto it = all_values_.find(name); it != all_values_.end()) return it->second;
  return {};
}

std::string Args::get(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  return opts_.at(name).def;
}

long Args::get_int(const std::string& name, long min, long max) const {
  return parse_int(get(name), min, max, "convlab " + command_ + ": --" + name);
}

std::vector<long> Args::get_int_list(const std::string& name, long min, long max) const {
  return parse_int_list(get(name), min, max, "convlab " + command_ + ": --" + name);
}

ProblemSet expand_problem_args(const Args& args) {
  const int batch = args.has("batch") ? int(args.get_int("batch", 1, 1 << 20)) : 0;
  ProblemSet set = expand_problems(args.pos(), batch);
  for (const auto& note : set.notes) std::fprintf(stderr, "note: %s\n", printable(note).c_str());
  return set;
}

}  // namespace convlab::cli
