#include "core/error.hpp"

#include <cstdio>

namespace convlab {

std::string format_bytes(size_t bytes) {
  char b[48];
  const double v = double(bytes);
  if (bytes >= (size_t(1) << 30))
    std::snprintf(b, sizeof b, "%.2f GiB", v / double(size_t(1) << 30));
  else if (bytes >= (size_t(1) << 20))
    std::snprintf(b, sizeof b, "%.1f MiB", v / double(size_t(1) << 20));
  else if (bytes >= 1024)
    std::snprintf(b, sizeof b, "%.1f KiB", v / 1024);
  else
    std::snprintf(b, sizeof b, "%zu bytes", bytes);
  return b;
}

namespace {
// Length of the valid UTF-8 sequence starting at s[i] (0 when invalid).
size_t utf8_len(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t n = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  if (n == 2 && b == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) return 0;  // C1 controls U+0080..U+009F
  return n;
}
}  // namespace

std::string printable(std::string_view text) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b >= 0x20 && b < 0x7F) {
      out += char(b);
      ++i;
      continue;
    }
    if (b >= 0x80) {
      if (size_t n = utf8_len(text, i)) {
        out.append(text.substr(i, n));
        i += n;
        continue;
      }
    }
    out += "\\x";
    out += hex[b >> 4];
    out += hex[b & 15];
    ++i;
  }
  return out;
}

}  // namespace convlab
