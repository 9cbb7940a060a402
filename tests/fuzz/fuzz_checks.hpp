// The invariants the fuzz targets check, shared by the libFuzzer targets
// (problem_fuzz, npy_fuzz, cache_line_fuzz) and by fuzz_corpus_regression,
// which runs the seed corpora through them in the normal build.
//
// Beyond "no crash, no sanitizer report":
//   problem strings  a parsed problem validates, fits 32-bit indexing, and its
//                    canonical() and key() parse back to an equal problem;
//                    problem files / verbose logs give only such problems,
//                    and printable notes (a log's summary, a list's skipped
//                    lines);
//   .npy             a read tensor's shape product equals its size and its data
//                    are the file's last size*4 bytes;
//   cache lines      deserialize(serialize(e)) serializes to the same line;
//   errors           every rejection is one convlab::Error whose message is a
//                    single printable line (no raw control characters), and so
//                    is every warning and note a reader gives: each input also
//                    goes through the file readers (read_problem_file, the
//                    cache's load() and check_cache_file()) from an in-memory
//                    file, since they quote its content in their messages.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "autotune/cache.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/problem.hpp"
#include "core/problem_list.hpp"

namespace convlab::fuzz {

[[noreturn]] inline void violated(const char* what, std::string_view input, const std::string& detail) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n  input: %s\n  detail: %s\n", what,
               printable(input.substr(0, 2000)).c_str(), printable(detail).c_str());
  std::fflush(stderr);
  std::abort();
}

#define CONVLAB_FUZZ_CHECK(cond, input, detail)                                  \
  do {                                                                          \
    if (!(cond)) ::convlab::fuzz::violated(#cond, (input), (detail));           \
  } while (0)

// A rejection: one non-empty, printable line.
inline void check_message(const std::exception& e, std::string_view input) {
  const std::string m = e.what();
  CONVLAB_FUZZ_CHECK(!m.empty(), input, "empty error message");
  CONVLAB_FUZZ_CHECK(printable(m) == m, input, m);
}

inline void check_valid_problem(const ConvProblem& p, std::string_view input) {
  const std::string v = p.validate();
  CONVLAB_FUZZ_CHECK(v.empty(), input, v);
  CONVLAB_FUZZ_CHECK(p.p64() == p.p() && p.q64() == p.q() && p.p() >= 1 && p.q() >= 1, input, p.canonical());
  CONVLAB_FUZZ_CHECK(p.src_elems() <= INT32_MAX && p.wei_elems() <= INT32_MAX && p.dst_elems() <= INT32_MAX, input,
                     p.canonical());
  CONVLAB_FUZZ_CHECK(printable(p.name) == p.name && !p.canonical().empty(), input, p.canonical());
  ConvProblem back, back_key;
  try {
    back = parse_problem(p.canonical());
    back_key = parse_problem(p.key());
  } catch (const Error& e) {
    violated("canonical() / key() parse back", input, p.canonical() + " -> " + e.what());
  }
  CONVLAB_FUZZ_CHECK(back == p, input, p.canonical() + " re-parsed as " + back.canonical());
  ConvProblem unnamed = p;
  unnamed.name.clear();
  CONVLAB_FUZZ_CHECK(back_key == unnamed, input, p.key() + " re-parsed as " + back_key.canonical());
}

// `size` bytes as a file: an anonymous in-memory file, named by its /proc/self/fd path (a regular
// file to every reader). Closed by the caller.
inline int memory_file(const uint8_t* data, size_t size, std::string& path) {
  const int fd = ::memfd_create("convlab_fuzz", MFD_CLOEXEC);
  if (fd < 0) violated("memfd_create", "", std::strerror(errno));
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) violated("write to memfd", "", std::strerror(errno));
    done += size_t(n);
  }
  path = "/proc/self/fd/" + std::to_string(fd);
  return fd;
}

// Problem strings, NET|LAYER|PROBLEM texts, problem files and verbose logs.
inline void check_problem_input(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check_valid_problem(parse_problem(text), text);
  } catch (const Error& e) {
    check_message(e, text);
  }
  for (int batch : {0, 3}) {
    try {
      const ConvProblem p = problem_from_text(text, batch);
      check_valid_problem(p, text);
      if (batch) CONVLAB_FUZZ_CHECK(p.n == batch, text, p.canonical());
    } catch (const Error& e) {
      check_message(e, text);
    }
  }
  try {
    std::vector<std::string> notes;
    const auto items = parse_problem_file(text, "fuzz.txt", 0, 32, &notes);
    CONVLAB_FUZZ_CHECK(!items.empty(), text, "a file without problems was accepted");
    bool log = false;
    for (const std::string& note : notes) {
      CONVLAB_FUZZ_CHECK(printable(note) == note && !note.empty(), text, note);
      log = log || note.rfind("fuzz.txt: oneDNN verbose log: ", 0) == 0;
    }
    CONVLAB_FUZZ_CHECK(notes.size() <= kMaxSkippedLineNotes + 1, text, std::to_string(notes.size()) + " notes");
    for (const ProblemItem& it : items) {
      check_valid_problem(it.problem, text);
      CONVLAB_FUZZ_CHECK(it.count >= 1 && !it.label.empty() && printable(it.label) == it.label, text, it.label);
      CONVLAB_FUZZ_CHECK(it.dir.has_value() == log, text, "directions come only from verbose logs");
    }
  } catch (const Error& e) {
    check_message(e, text);
  }
  // The same bytes through the file reader (streamed in chunks, its own line splitting): the same
  // verdict, and its messages one printable line.
  {
    std::string path;
    const int fd = memory_file(data, size, path);
    std::vector<std::string> notes;
    try {
      const auto items = read_problem_file(path, 0, 32, &notes);
      CONVLAB_FUZZ_CHECK(!items.empty(), text, "a file read without error holds a problem");
      for (const std::string& note : notes) CONVLAB_FUZZ_CHECK(printable(note) == note, text, note);
      for (const ProblemItem& it : items) check_valid_problem(it.problem, text);
    } catch (const Error& e) {
      check_message(e, text);
    }
    ::close(fd);
  }
  // Every line as a oneDNN verbose line.
  for (size_t at = 0; at <= size;) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = size;
    const std::string_view line = text.substr(at, nl - at);
    try {
      if (const auto v = parse_onednn_verbose_line(line)) {
        CONVLAB_FUZZ_CHECK(is_onednn_verbose_line(line) && !v->descriptor.empty(), line, v->descriptor);
      }
    } catch (const Error& e) {
      check_message(e, line);
    }
    at = nl + 1;
  }
}

// A .npy file's bytes, read through core/npy's reader from an in-memory file.
inline void check_npy_input(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string path;
  const int fd = memory_file(data, size, path);
  try {
    const Tensor t = read_npy(path);
    __int128 prod = 1;
    bool zero = false;
    for (int64_t d : t.shape) {
      CONVLAB_FUZZ_CHECK(d >= 0, bytes, t.shape_string());
      zero = zero || d == 0;
      if (d) prod *= d;
      CONVLAB_FUZZ_CHECK(prod <= (__int128(1) << 62), bytes, t.shape_string());
    }
    if (zero) prod = 0;
    CONVLAB_FUZZ_CHECK(prod == t.size(), bytes, t.shape_string());
    const size_t data_bytes = size_t(t.size()) * 4;
    CONVLAB_FUZZ_CHECK(data_bytes + 10 <= size, bytes, "tensor larger than the file");
    CONVLAB_FUZZ_CHECK(data_bytes == 0 || std::memcmp(t.data(), data + size - data_bytes, data_bytes) == 0, bytes,
                       "data are not the file's last bytes");
  } catch (const Error& e) {
    check_message(e, bytes);
  }
  ::close(fd);
}

// One autotune cache line, through the public deserialize() / serialize().
inline void check_cache_line(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  // The readers of a cache file quote a line's content in their warnings: each warning one printable line.
  {
    std::string path;
    const int fd = memory_file(data, size, path);
    try {
      TuneCache cache(path, false);
      cache.load();
      for (const std::string& w : cache.warnings()) CONVLAB_FUZZ_CHECK(printable(w) == w, line, w);
      const CacheCheck check = check_cache_file(path);
      for (const std::string& w : check.warnings) CONVLAB_FUZZ_CHECK(printable(w) == w, line, w);
    } catch (const Error& e) {
      check_message(e, line);
    }
    ::close(fd);
  }
  const CacheLine cl = parse_cache_line(line);
  CONVLAB_FUZZ_CHECK(printable(cl.error) == cl.error, line, cl.error);
  std::string why;
  const auto e = deserialize(line, &why);
  if (!e) {
    CONVLAB_FUZZ_CHECK(!why.empty(), line, "rejected without a reason");
    CONVLAB_FUZZ_CHECK(printable(why) == why, line, why);
    return;
  }
  const std::string once = serialize(*e);
  CONVLAB_FUZZ_CHECK(once.find('\n') == std::string::npos, line, once);
  const auto again = deserialize(once, &why);
  CONVLAB_FUZZ_CHECK(again.has_value(), line, once + " -> " + why);
  CONVLAB_FUZZ_CHECK(serialize(*again) == once, line, once + " vs " + serialize(*again));
}

}  // namespace convlab::fuzz
