#include "core/json_value.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace convlab::json {

const Value* Value::get(const std::string& key) const {
  if (type != Type::object) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &it->second;
}

namespace {

constexpr int kMaxDepth = 32;

struct Parser {
  std::string_view s;
  size_t i = 0;
  std::string err;

  bool fail(const std::string& what) {
    if (err.empty()) err = what + " at offset " + std::to_string(i);
    return false;
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool literal(std::string_view word) {
    if (s.substr(i, word.size()) != word) return fail("bad literal");
    i += word.size();
    return true;
  }
  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool string(std::string& out) {
    if (i >= s.size() || s[i] != '"') return fail("expected string");
    ++i;
    while (true) {
      if (i >= s.size()) return fail("unterminated string");
      const char c = s[i++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i >= s.size()) return fail("unterminated escape");
      const char e = s[i++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i + 4 > s.size()) return fail("short \\u escape");
          unsigned cp = 0;
          for (int k = 0; k < 4; ++k) {
            const int h = hex(s[i + size_t(k)]);
            if (h < 0) return fail("bad \\u escape");
            cp = cp * 16 + unsigned(h);
          }
          i += 4;
          // BMP only; surrogates are kept as their (invalid) 3-byte form, good enough for labels.
          if (cp < 0x80) {
            out += char(cp);
          } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
          } else {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: return fail("bad escape");
      }
    }
  }
  bool number(double& out) {
    const size_t start = i;
    if (i < s.size() && s[i] == '-') ++i;
    if (i >= s.size() || !(s[i] >= '0' && s[i] <= '9')) return fail("bad number");
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == 'e' || s[i] == 'E' ||
                            s[i] == '+' || s[i] == '-'))
      ++i;
    const std::string text(s.substr(start, i - start));
    char* end = nullptr;
    errno = 0;
    out = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(out)) return fail("bad number");
    return true;
  }
  bool value(Value& v, int depth) {
    if (depth > kMaxDepth) return fail("nesting too deep");
    ws();
    if (i >= s.size()) return fail("unexpected end");
    const char c = s[i];
    if (c == '{') {
      v.type = Value::Type::object;
      ++i;
      ws();
      if (i < s.size() && s[i] == '}') return ++i, true;
      while (true) {
        ws();
        std::string key;
        if (!string(key)) return false;
        ws();
        if (i >= s.size() || s[i] != ':') return fail("expected ':'");
        ++i;
        Value member;
        if (!value(member, depth + 1)) return false;
        v.obj[key] = std::move(member);
        ws();
        if (i < s.size() && s[i] == ',') { ++i; continue; }
        if (i < s.size() && s[i] == '}') return ++i, true;
        return fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.type = Value::Type::array;
      ++i;
      ws();
      if (i < s.size() && s[i] == ']') return ++i, true;
      while (true) {
        Value item;
        if (!value(item, depth + 1)) return false;
        v.arr.push_back(std::move(item));
        ws();
        if (i < s.size() && s[i] == ',') { ++i; continue; }
        if (i < s.size() && s[i] == ']') return ++i, true;
        return fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.type = Value::Type::string;
      return string(v.str);
    }
    if (c == 't') { v.type = Value::Type::boolean; v.b = true; return literal("true"); }
    if (c == 'f') { v.type = Value::Type::boolean; v.b = false; return literal("false"); }
    if (c == 'n') { v.type = Value::Type::null; return literal("null"); }
    if (c != '-' && !(c >= '0' && c <= '9')) {
      if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f)
        return fail(std::string("unexpected '") + c + "'");
      return fail("unexpected byte");
    }
    v.type = Value::Type::number;
    return number(v.num);
  }
};

}  // namespace

std::optional<Value> parse(std::string_view text, std::string* error) {
  Parser p;
  p.s = text;
  Value v;
  bool ok = p.value(v, 0);
  if (ok) {
    p.ws();
    if (p.i != text.size()) ok = p.fail("trailing characters");
  }
  if (!ok) {
    if (error) *error = p.err;
    return std::nullopt;
  }
  return v;
}

double number_or(const Value& v, const char* key, double otherwise) {
  const Value* x = v.get(key);
  return x && x->type == Value::Type::number ? x->num : otherwise;
}

std::string text_or(const Value& v, const char* key, const std::string& otherwise) {
  const Value* x = v.get(key);
  return x && x->type == Value::Type::string ? x->str : otherwise;
}

int bool_or(const Value& v, const char* key, int otherwise) {
  const Value* x = v.get(key);
  return x && x->type == Value::Type::boolean ? int(x->b) : otherwise;
}

const std::vector<Value>& array_or_empty(const Value& v, const char* key) {
  static const std::vector<Value> none;
  const Value* x = v.get(key);
  return x && x->type == Value::Type::array ? x->arr : none;
}

std::vector<double> unscaled(double written, double scale) {
  if (!std::isfinite(written)) return {written};
  const double guess = written / scale;
  std::vector<double> out;
  // The writer's own x lies within an ulp or two of the guess; look a little further either way.
  double down = guess, up = std::nextafter(guess, INFINITY);
  for (int step = 0; step < 8; ++step) {
    for (double x : {down, up})
      if (x * scale == written) out.push_back(x);
    down = std::nextafter(down, -INFINITY);
    up = std::nextafter(up, INFINITY);
  }
  if (out.empty()) out.push_back(guess);
  return out;
}

}  // namespace convlab::json
