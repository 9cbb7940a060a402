// A minimal JSON reader for the autotune cache's own lines (json.hpp only
// writes). Objects, arrays, strings (with \uXXXX escapes for the BMP),
// numbers, true / false / null; depth-limited. Any malformed text -> nullopt
// with a one-line reason, never an exception or a crash: the cache reads
// files that may be truncated, garbled or written by something else.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace convlab::json {

struct Value {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Value> arr;
  std::map<std::string, Value> obj;

  bool is_object() const { return type == Type::object; }
  // Member lookup; nullptr when this is not an object or the key is absent.
  const Value* get(const std::string& key) const;
};

// Parses exactly one JSON value (surrounding whitespace allowed). On failure
// returns nullopt and, if `error` is given, a reason ("unexpected ',' at 17").
std::optional<Value> parse(std::string_view text, std::string* error = nullptr);

}  // namespace convlab::json
