#include "core/problem.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <optional>

#include "core/error.hpp"

namespace convlab {

std::string_view to_string(Direction d) {
  switch (d) {
    case Direction::fwd: return "fwd";
    case Direction::bwd_data: return "bwd-data";
    case Direction::bwd_filter: return "bwd-filter";
  }
  return "?";
}

Direction parse_direction(std::string_view text) {
  if (text == "fwd") return Direction::fwd;
  if (text == "bwd-data" || text == "bwd_data") return Direction::bwd_data;
  if (text == "bwd-filter" || text == "bwd_filter") return Direction::bwd_filter;
  fail("unknown direction '" + std::string(text) + "' (expected fwd, bwd-data or bwd-filter)");
}

std::vector<std::string_view> split_list(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  for (size_t at = 0;;) {
    const size_t comma = text.find(sep, at);
    out.push_back(text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at));
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
}

std::vector<Direction> parse_directions(std::string_view text, std::string* note) {
  if (note) note->clear();
  if (text == "all") return {std::begin(kAllDirections), std::end(kAllDirections)};
  std::vector<Direction> out;
  std::string repeated;
  for (std::string_view item : split_list(text)) {
    const Direction d = parse_direction(item);
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    else if (repeated.find(to_string(d)) == std::string::npos) repeated += (repeated.empty() ? "" : ", ") + std::string(to_string(d));
  }
  if (note && !repeated.empty()) *note = "--dir '" + printable(text) + "' names " + repeated + " more than once: each direction runs once";
  return out;
}

int64_t ConvProblem::reduction_length(Direction dir) const {
  switch (dir) {
    case Direction::fwd: return int64_t(c_per_group()) * r * s;
    case Direction::bwd_data: return int64_t(k_per_group()) * r * s;
    case Direction::bwd_filter: return int64_t(n) * p64() * q64();
  }
  return 0;
}

std::string ConvProblem::validate() const {
  auto positive = [](const char* what, int v) -> std::string {
    return v >= 1 ? std::string() : std::string(what) + " must be positive (got " + std::to_string(v) + ")";
  };
  for (auto [what, v] : {std::pair{"mb", n}, {"ic", c}, {"ih", h}, {"iw", w}, {"oc", k}, {"kh", r},
                         {"kw", s}, {"sh", stride_h}, {"sw", stride_w}, {"g", groups}}) {
    if (auto e = positive(what, v); !e.empty()) return e;
  }
  if (pad_h < 0 || pad_w < 0) return "padding must be non-negative (ph" + std::to_string(pad_h) + " pw" + std::to_string(pad_w) + ")";
  if (dil_h < 1 || dil_w < 1) return "dilation must be non-negative (benchdnn's dh/dw are 0-based)";
  if (c % groups != 0) return "groups g" + std::to_string(groups) + " does not divide ic" + std::to_string(c);
  if (k % groups != 0) return "groups g" + std::to_string(groups) + " does not divide oc" + std::to_string(k);
  // Every size below in 64 bits (fields are < 2^31, so none of these wraps).
  const int64_t lim = INT32_MAX;
  const int64_t hp = int64_t(h) + 2 * int64_t(pad_h), wp = int64_t(w) + 2 * int64_t(pad_w);
  const int64_t ext_h = int64_t(dil_h) * (int64_t(r) - 1) + 1, ext_w = int64_t(dil_w) * (int64_t(s) - 1) + 1;
  if (hp > lim || wp > lim)
    return "padded input " + std::to_string(hp) + "x" + std::to_string(wp) +
           " (ih+2*ph x iw+2*pw) does not fit in 32 bits";
  if (ext_h > hp || ext_w > wp)
    return "empty output: the dilated filter (" + std::to_string(ext_h) + "x" + std::to_string(ext_w) +
           ") is larger than the padded input (" + std::to_string(hp) + "x" + std::to_string(wp) + ")";
  // Kernels index with 32-bit ints: every tensor and every per-image column
  // matrix must stay below 2^31 elements. 128-bit products cannot wrap.
  using i128 = __int128;
  const i128 pq = i128(p64()) * q64();
  struct Check { const char* what; i128 v; };
  for (auto [what, v] : {Check{"src (mb*ic*ih*iw)", i128(n) * c * h * w},
                         Check{"dst (mb*oc*oh*ow)", i128(n) * k * pq},
                         Check{"wei (oc*ic/g*kh*kw)", i128(k) * (c / groups) * r * s},
                         Check{"column matrix (ic/g*kh*kw*oh*ow)", i128(c / groups) * r * s * pq},
                         Check{"padded input (mb*ic*(ih+2ph)*(iw+2pw))", i128(n) * c * hp * wp}}) {
    if (v > lim) return std::string(what) + " has more than 2^31-1 elements (32-bit index overflow)";
  }
  return {};
}

namespace {

// Appends "<h-key><h>" and "<w-key><w>" the way benchdnn prints them: the width
// only when it differs from the height, the height when it differs from the
// default or when the width is printed (a lone width would copy into height).
void put_pair(std::string& out, const char* hk, int64_t hv, const char* wk, int64_t wv, int64_t def, bool always) {
  const bool print_w = wv != hv;
  if (always || hv != def || print_w) out += hk + std::to_string(hv);
  if (print_w) out += wk + std::to_string(wv);
}

}  // namespace

std::string ConvProblem::key() const {
  std::string out;
  if (groups != 1) out += "g" + std::to_string(groups);
  out += "mb" + std::to_string(n);
  out += "ic" + std::to_string(c);
  put_pair(out, "ih", h, "iw", w, 0, true);
  out += "oc" + std::to_string(k);
  put_pair(out, "oh", p64(), "ow", q64(), 0, true);
  put_pair(out, "kh", r, "kw", s, 0, true);
  put_pair(out, "sh", stride_h, "sw", stride_w, 1, false);
  put_pair(out, "ph", pad_h, "pw", pad_w, 0, false);
  put_pair(out, "dh", int64_t(dil_h) - 1, "dw", int64_t(dil_w) - 1, 0, false);
  return out;
}

std::string ConvProblem::canonical() const {
  std::string out = key();
  if (!name.empty()) out += "n\"" + name + "\"";
  return out;
}

bool is_problem_key(std::string_view key) {
  static const char* const kKeys[] = {"g",  "mb", "ic", "id", "ih", "iw", "oc", "od", "oh", "ow", "kd",
                                      "kh", "kw", "sd", "sh", "sw", "pd", "ph", "pw", "dd", "dh", "dw"};
  for (const char* k : kKeys)
    if (key == k) return true;
  return false;
}

ConvProblem parse_problem(std::string_view text) {
  const std::string quoted = "'" + printable(text) + "'";
  if (text.empty()) fail("empty problem string (expected e.g. mb32ic96ih27oc256oh27kh5ph2)");
  std::map<std::string, int64_t> v;
  std::string name;
  size_t i = 0;
  while (i < text.size()) {
    const char ch = text[i];
    if (ch == '_') { ++i; continue; }
    if (ch == 'n') {  // the name: n"quoted" or the rest of the string
      ++i;
      if (i < text.size() && text[i] == '"') {
        const size_t end = text.find('"', i + 1);
        if (end == std::string_view::npos) fail("problem " + quoted + ": unterminated name quote");
        name = std::string(text.substr(i + 1, end - i - 1));
        i = end + 1;
        if (i != text.size()) fail("problem " + quoted + ": the name n\"...\" must come last");
      } else {
        name = std::string(text.substr(i));
        i = text.size();
        if (name.find('"') != std::string::npos)
          fail("problem " + quoted + ": a name with a quote must be written n\"...\" (and may not contain '\"')");
      }
      if (name.empty()) fail("problem " + quoted + ": empty name after 'n' (write n\"NAME\" or leave it out)");
      if (printable(name) != name)
        fail("problem " + quoted +
             ": the name may not contain control characters, bidirectional controls or invalid UTF-8");
      if (!has_visible_character(name))
        fail("problem " + quoted + ": the name has no visible character (only spaces or invisible characters)");
      break;
    }
    if (!std::isalpha(static_cast<unsigned char>(ch)))
      fail("problem " + quoted + ": unexpected character '" + printable(std::string_view(&text[i], 1)) + "' at position " +
           std::to_string(i));
    size_t j = i;
    while (j < text.size() && std::isalpha(static_cast<unsigned char>(text[j]))) ++j;
    const std::string key(text.substr(i, j - i));
    if (!is_problem_key(key)) fail("problem " + quoted + ": unknown key '" + key + "'");
    if (j >= text.size() || !std::isdigit(static_cast<unsigned char>(text[j])))
      fail("problem " + quoted + ": expected a non-negative number after '" + key + "'");
    int64_t num = 0;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      num = num * 10 + (text[j] - '0');
      if (num > INT32_MAX) fail("problem " + quoted + ": value of '" + key + "' does not fit in 32 bits");
      ++j;
    }
    if (v.count(key)) fail("problem " + quoted + ": '" + key + "' given twice");
    v[key] = num;
    i = j;
  }
  for (const char* k3 : {"id", "od", "kd", "sd", "pd", "dd"})
    if (v.count(k3)) fail("problem " + quoted + ": 3-D convolutions ('" + std::string(k3) + "') are not supported");

  auto get = [&](const char* key) -> std::optional<int64_t> {
    auto it = v.find(key);
    return it == v.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  // benchdnn's rule for 2-D pairs: a missing member copies the other one.
  auto pair = [&](const char* hk, const char* wk) -> std::pair<std::optional<int64_t>, std::optional<int64_t>> {
    auto hv = get(hk), wv = get(wk);
    if (!hv) hv = wv;
    if (!wv) wv = hv;
    return {hv, wv};
  };
  if (!get("ic")) fail("problem " + quoted + ": input channels 'ic' missing");
  if (!get("oc")) fail("problem " + quoted + ": output channels 'oc' missing");
  auto [ih, iw] = pair("ih", "iw");
  auto [oh, ow] = pair("oh", "ow");
  auto [kh, kw] = pair("kh", "kw");
  auto [sh, sw] = pair("sh", "sw");
  auto [ph, pw] = pair("ph", "pw");
  auto [dh, dw] = pair("dh", "dw");
  if (!ih) fail("problem " + quoted + ": input size 'ih'/'iw' missing");
  if (!kh) fail("problem " + quoted + ": filter size 'kh'/'kw' missing");

  ConvProblem p;
  p.name = name;
  p.groups = int(get("g").value_or(1));
  p.n = int(get("mb").value_or(2));
  p.c = int(*get("ic"));
  p.k = int(*get("oc"));
  p.h = int(*ih);
  p.w = int(*iw);
  p.r = int(*kh);
  p.s = int(*kw);
  p.stride_h = int(sh.value_or(1));
  p.stride_w = int(sw.value_or(1));
  if (dh.value_or(0) >= INT32_MAX || dw.value_or(0) >= INT32_MAX) fail("problem " + quoted + ": dilation too large");
  p.dil_h = int(dh.value_or(0)) + 1;
  p.dil_w = int(dw.value_or(0)) + 1;
  // Padding not given but output size given: deduce the symmetric padding.
  // In 128 bits: (oh-1)*sh + (kh-1)*dh can pass 2^63 for 31-bit fields.
  auto deduce_pad = [&](const char* what, int64_t in, int64_t out, int64_t kern, int64_t stride, int64_t dil) -> int {
    const __int128 need = __int128(out - 1) * stride + __int128(kern - 1) * dil + 1 - in;
    const __int128 pad = need <= 0 ? 0 : (need + 1) / 2;
    if (pad > INT32_MAX) fail("problem " + quoted + ": the padding that " + what + " needs does not fit in 32 bits");
    return int(pad);
  };
  p.pad_h = ph ? int(*ph) : oh ? deduce_pad("oh", p.h, *oh, p.r, p.stride_h, p.dil_h) : 0;
  p.pad_w = pw ? int(*pw) : ow ? deduce_pad("ow", p.w, *ow, p.s, p.stride_w, p.dil_w) : 0;
  if (auto e = p.validate(); !e.empty()) fail("problem " + quoted + ": " + e);
  if (oh && *oh != p.p64())
    fail("problem " + quoted + ": oh" + std::to_string(*oh) + " does not follow from ih, kh, sh, ph, dh (expected oh" +
         std::to_string(p.p64()) + ")");
  if (ow && *ow != p.q64())
    fail("problem " + quoted + ": ow" + std::to_string(*ow) + " does not follow from iw, kw, sw, pw, dw (expected ow" +
         std::to_string(p.q64()) + ")");
  return p;
}

}  // namespace convlab
