// The autotune cache file read line by line: shared by the cache (autotune/cache.cpp) and its check
// (autotune/cache_check.cpp). Internal to autotune/.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "autotune/cache.hpp"
#include "core/error.hpp"
#include "core/paths.hpp"

namespace convlab::cache_file {

inline std::string qpath(const std::string& path) { return "'" + printable(path) + "'"; }

// Reads a cache file line by line, bounded: `on_line(line_no, text, too_long, offset, length)`
// for every line (text cut at kCacheMaxLineBytes when too_long; a trailing '\r' dropped; offset and
// length: where the whole line, without its '\n', lies in the file). Returns false when the file does
// not exist (nor its folder). Throws Error, one line, for a folder, anything that is not a regular
// file (/dev/zero, a FIFO, a socket: never opened, so never read or waited on; InputFile), a file
// over kCacheMaxFileBytes (also one that grows past it while read), a read error.
// `at_end(file)` runs once the whole file is read, before it is closed (the lines' bytes can be read
// again from the same open file, whatever has replaced the path since).
template <class OnLine, class AtEnd>
bool read_cache_lines(const std::string& path, const OnLine& on_line, const AtEnd& at_end) {
  const InputFile in(path, "autotune cache", true);
  if (!in.exists()) return false;
  if (in.size() > kCacheMaxFileBytes)
    fail(in.name() + " is " + std::to_string(in.size() >> 20) + " MiB, over the " +
         std::to_string(kCacheMaxFileBytes >> 20) + " MiB limit of a cache file");
  std::string buf(size_t(1) << 16, '\0'), line;
  size_t total = 0;
  uint64_t line_start = 0, line_bytes = 0;
  int line_no = 0;
  bool too_long = false;
  auto emit = [&] {
    ++line_no;
    if (!too_long && !line.empty() && line.back() == '\r') line.pop_back();
    on_line(line_no, std::string_view(line), too_long, line_start, line_bytes);
    line.clear();
    too_long = false;
    line_start += line_bytes + 1;
    line_bytes = 0;
  };
  for (;;) {
    const size_t n = in.read(buf.data(), buf.size());
    if (n == 0) break;
    total += n;
    if (total > kCacheMaxFileBytes)
      fail(in.name() + " grew past the " + std::to_string(kCacheMaxFileBytes >> 20) + " MiB limit of a cache file while read");
    for (size_t at = 0; at < n;) {
      const char* nl = static_cast<const char*>(std::memchr(buf.data() + at, '\n', n - at));
      const size_t end = nl ? size_t(nl - buf.data()) : n;
      line_bytes += end - at;
      if (!too_long) {
        line.append(buf.data() + at, end - at);
        if (line.size() > kCacheMaxLineBytes) {
          too_long = true;
          line.resize(64);  // enough to say what it started with; the rest is skipped
        }
      }
      if (!nl) break;
      emit();
      at = end + 1;
    }
  }
  if (!line.empty() || too_long) emit();
  at_end(in);
  return true;
}

template <class OnLine>
bool read_cache_lines(const std::string& path, const OnLine& on_line) {
  return read_cache_lines(path, on_line, [](const InputFile&) {});
}

inline bool blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace convlab::cache_file
