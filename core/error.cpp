#include "core/error.hpp"

#include <cstdint>
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

// The code point of the valid n-byte UTF-8 sequence at s[i].
uint32_t code_point(std::string_view s, size_t i, size_t n) {
  const auto b = [&](size_t k) { return uint32_t(static_cast<unsigned char>(s[i + k])); };
  if (n == 2) return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
  if (n == 3) return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
}

// Characters that change how the rest of a line reads (bidirectional controls) or end it (separators).
bool reorders_or_breaks(uint32_t c) {
  return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||
         c == 0x2028 || c == 0x2029;
}

// Characters that draw nothing: spaces, zero-width and format characters, fillers, variation selectors.
bool invisible(uint32_t c) {
  return c <= 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD || c == 0x034F || c == 0x061C || c == 0x115F ||
         c == 0x1160 || c == 0x1680 || c == 0x180E || (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) ||
         (c >= 0x205F && c <= 0x206F) || c == 0x3000 || c == 0x3164 || (c >= 0xFE00 && c <= 0xFE0F) ||
         c == 0xFEFF || c == 0xFFA0 || (c >= 0xFFF0 && c <= 0xFFF8) || (c >= 0xE0000 && c <= 0xE0FFF);
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
        if (const uint32_t c = code_point(text, i, n); reorders_or_breaks(c)) {
          out += "\\u";
          for (int shift = 12; shift >= 0; shift -= 4) out += hex[(c >> shift) & 15];
        } else {
          out.append(text.substr(i, n));
        }
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

namespace convlab {

bool has_visible_character(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      if (b > 0x20 && b < 0x7F) return true;
      ++i;
      continue;
    }
    const size_t n = utf8_len(text, i);
    if (n == 0) return true;  // not UTF-8: printable() shows it as \xHH, which is visible
    if (!invisible(code_point(text, i, n))) return true;
    i += n;
  }
  return false;
}

}  // namespace convlab
