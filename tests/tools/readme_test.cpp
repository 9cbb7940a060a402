// The CLI reference (docs/cli.md's CLI block) and the code cannot drift: every
// subcommand in `convlab --help` has a summary in the block, every option its
// `--help` lists appears in that summary and every option the summary names
// exists; the exit codes the block states are the ones tools/main.cpp documents.
// README.md's short command list names every command, and only those.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/cli_fixture.hpp"

namespace convlab {
namespace {

std::string read_source(const std::string& rel) {
  std::ifstream in(std::string(CONVLAB_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::set<std::string> flags_in(const std::string& text) {
  static const std::regex flag("--([a-z][a-z0-9-]*)");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

// docs/cli.md's CLI block: each `convlab CMD ...` line with its indented continuation lines, per CMD,
// and the "exit codes:" paragraph.
struct CliBlock {
  std::map<std::string, std::string> commands;
  std::string exit_codes;
};

CliBlock cli_block() {
  const std::string readme = read_source("docs/cli.md");
  CliBlock b;
  const size_t section = readme.find("\n## CLI\n");
  if (section == std::string::npos) return b;
  const size_t open = readme.find("```\n", section);
  const size_t close = readme.find("\n```", open + 4);
  if (open == std::string::npos || close == std::string::npos) return b;
  std::istringstream lines(readme.substr(open + 4, close - open - 4));
  std::string line, *current = nullptr;
  while (std::getline(lines, line)) {
    if (line.rfind("convlab ", 0) == 0) {
      const std::string cmd = line.substr(8, line.find(' ', 8) - 8);
      current = &b.commands[cmd];
    } else if (line.rfind("exit codes:", 0) == 0) {
      current = &b.exit_codes;
    } else if (line.empty() || line[0] != ' ') {
      current = nullptr;
    }
    if (current) *current += line + "\n";
  }
  return b;
}

class Readme : public testing::CliTest {};

TEST_F(Readme, CliBlockListsEveryCommandAndEveryOption) {
  const CliBlock block = cli_block();
  ASSERT_FALSE(block.commands.empty()) << "docs/cli.md has no ## CLI code block";
  const testing::CliResult top = run("--help");
  ASSERT_EQ(top.code, 0);
  std::set<std::string> commands;
  std::istringstream lines(top.out);
  std::string line;
  static const std::regex command_line("^  ([a-z]+) +.*");
  std::smatch m;
  while (std::getline(lines, line))
    if (std::regex_match(line, m, command_line)) commands.insert(m[1]);
  ASSERT_FALSE(commands.empty()) << top.out;

  for (const auto& cmd : commands) {
    SCOPED_TRACE("convlab " + cmd);
    const auto it = block.commands.find(cmd);
    ASSERT_NE(it, block.commands.end()) << "docs/cli.md's CLI block has no `convlab " << cmd << "` summary";
    const testing::CliResult help = run(cmd + " --help");
    ASSERT_EQ(help.code, 0);
    // Options are the help's "  --name ..." lines.
    std::set<std::string> code_opts;
    static const std::regex option_line("^  --([a-z][a-z0-9-]*)( .*)?$");
    std::istringstream hl(help.out);
    while (std::getline(hl, line))
      if (std::regex_match(line, m, option_line) && m[1] != "help") code_opts.insert(m[1]);
    const std::set<std::string> readme_opts = flags_in(it->second);
    for (const auto& o : code_opts)
      EXPECT_TRUE(readme_opts.count(o)) << "--" << o << " is missing from README's `convlab " << cmd << "` summary";
    for (const auto& o : readme_opts)
      EXPECT_TRUE(code_opts.count(o)) << "docs/cli.md's `convlab " << cmd << "` summary names --" << o
                                      << ", which `convlab " << cmd << " --help` does not list";
  }
  for (const auto& [cmd, text] : block.commands)
    EXPECT_TRUE(commands.count(cmd)) << "docs/cli.md describes `convlab " << cmd
                                     << "`, which `convlab --help` does not list";
  // README.md's list: one "convlab CMD  what it does" line per command.
  const std::string readme = read_source("README.md");
  const size_t section = readme.find("\n## CLI\n");
  ASSERT_NE(section, std::string::npos) << "README.md has no ## CLI section";
  const size_t open = readme.find("```\n", section), close = readme.find("\n```", open + 4);
  ASSERT_TRUE(open != std::string::npos && close != std::string::npos) << "README.md's ## CLI has no code block";
  std::set<std::string> listed;
  std::istringstream list_lines(readme.substr(open + 4, close - open - 4));
  for (std::string line; std::getline(list_lines, line);)
    if (line.rfind("convlab ", 0) == 0) listed.insert(line.substr(8, line.find(' ', 8) - 8));
  EXPECT_EQ(listed, commands) << "README.md's ## CLI list and `convlab --help` name different commands";
}

TEST(ReadmeExitCodes, MatchTheCodesMainDocuments) {
  // tools/main.cpp's comment lists, under "1", one command per line: "//        conv     --check ...".
  const std::string main_cpp = read_source("tools/main.cpp");
  const size_t one = main_cpp.find("//   1  "), two = main_cpp.find("//   2  ");
  ASSERT_NE(one, std::string::npos);
  ASSERT_NE(two, std::string::npos);
  std::set<std::string> exit1;
  static const std::regex cause("//        ([a-z]+) ");
  const std::string list = main_cpp.substr(one, two - one);
  for (auto it = std::sregex_iterator(list.begin(), list.end(), cause); it != std::sregex_iterator(); ++it)
    exit1.insert((*it)[1]);
  ASSERT_GE(exit1.size(), 3u) << list;
  const std::string readme = cli_block().exit_codes;
  ASSERT_FALSE(readme.empty()) << "docs/cli.md's CLI block has no 'exit codes:' paragraph";
  for (const char* code : {"0 ", "1 ", "2 ", "3 "}) {
    EXPECT_NE(readme.find(code), std::string::npos) << code;
    EXPECT_NE(main_cpp.find(std::string("//   ") + code), std::string::npos) << "tools/main.cpp documents no " << code;
  }
  for (const auto& c : exit1)
    EXPECT_NE(readme.find(c + " ("), std::string::npos) << "docs/cli.md's exit codes do not say when " << c << " exits 1";
  // And the other way: every "NAME (" cause in README's exit-1 list is one main.cpp documents.
  const size_t r1 = readme.find(" 1 ");
  ASSERT_NE(r1, std::string::npos);
  static const std::regex readme_cause("([a-z]+) \\(");
  const std::string rl = readme.substr(r1);
  for (auto it = std::sregex_iterator(rl.begin(), rl.end(), readme_cause); it != std::sregex_iterator(); ++it)
    EXPECT_TRUE(exit1.count((*it)[1])) << "docs/cli.md says " << (*it)[1] << " exits 1; tools/main.cpp does not";
}

}  // namespace
}  // namespace convlab
