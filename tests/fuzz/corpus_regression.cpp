// fuzz_corpus_regression DIR...: runs every file of each seed-corpus folder
// through the check function its fuzz target uses (the folder's name picks it:
// problem, npy, cache_line). A violated invariant aborts with the input; a
// missing or empty folder is an error. Built without -fsanitize=fuzzer, so the
// normal build and CI run the same checks on the corpora.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_checks.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: fuzz_corpus_regression CORPUS_DIR...\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    const fs::path dir = argv[i];
    const std::string kind = dir.filename().string();
    void (*check)(const uint8_t*, size_t) = kind == "problem" ? convlab::fuzz::check_problem_input
                                            : kind == "npy"   ? convlab::fuzz::check_npy_input
                                            : kind == "cache_line" ? convlab::fuzz::check_cache_line
                                                                   : nullptr;
    if (!check) {
      std::fprintf(stderr, "error: unknown corpus kind '%s' (problem, npy, cache_line)\n", kind.c_str());
      return 2;
    }
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_regular_file()) files.push_back(e.path());
    if (ec || files.empty()) {
      std::fprintf(stderr, "error: corpus '%s' is missing or empty\n", dir.c_str());
      return 2;
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      check(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    std::printf("%s: %zu inputs checked\n", kind.c_str(), files.size());
  }
  return 0;
}
