// A minimal JSON reader for the autotune cache's lines and the results files
// (core/json.hpp writes). Objects, arrays, strings (with \uXXXX escapes for the BMP),
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

// Typed member reads for the results files' readers: every key is optional, and
// a missing key or one of another type (null included) reads as `otherwise`.
double number_or(const Value& v, const char* key, double otherwise);
std::string text_or(const Value& v, const char* key, const std::string& otherwise = "");
int bool_or(const Value& v, const char* key, int otherwise = -1);  // 0 / 1, else otherwise
const std::vector<Value>& array_or_empty(const Value& v, const char* key);

// A writer wrote number(x * scale) (a time in seconds as ms, say): every x near
// written / scale whose x * scale is `written` again, nearest first (NaN: {NaN};
// none found: {written / scale}). A reader picks the one that also gives back
// what the writer derived from x (GFLOP/s from a time), so a document read
// back writes the same text.
std::vector<double> unscaled(double written, double scale);
inline double unscale(double written, double scale) { return unscaled(written, scale).front(); }
// Two numbers a writer would write the same (NaN equals NaN: both null).
inline bool same_number(double a, double b) { return a == b || (a != a && b != b); }

}  // namespace convlab::json
