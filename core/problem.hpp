// ConvProblem: the one description of a 2-D convolution used everywhere in
// convlab (kernels take plain ints extracted from it; algorithms, the autotuner,
// the cache, tests, benchmarks and reports take the struct). A 1-D convolution
// is the 2-D one with H = 1 and a 1-row filter (benchdnn's "iw100ow98kw3").
//
// Tensors are NCHW fp32; weights are KCRS with C = channels per group, i.e.
// the weight tensor is (K, C/groups, R, S). Output channel k belongs to group
// k / (K/groups) and reads input channels [g*C/groups, (g+1)*C/groups).
//
// Text form: oneDNN benchdnn's conv descriptor, e.g.
//   g2mb32ic96ih27oc256oh27kh5ph2n"alexnet:conv2"
// Dilation in the text is 0-based as in benchdnn (dh0 = dense); in the struct it
// is 1-based (dil_h == 1 means dense), the convention of cuDNN and PyTorch.
// Padding: `ph`/`pw` are the top/left padding; the bottom/right padding follows
// from the output size as benchdnn derives it,
//   pad_h_end = (oh - 1) * sh - ih + (kh - 1) * (dh + 1) + 1 - ph,
// so "ih5oh8kh3ph3" is 3 rows on top and 2 below. Without `oh` the output is
// benchdnn's (ih + 2ph - (kh-1)*(dh+1) - 1) / sh + 1 and the end padding `ph`
// (more only where that division, truncating toward zero, gives one output to
// a filter longer than the padded input).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/direction.hpp"
#include "core/error.hpp"

namespace convlab {

std::string_view to_string(Direction d);
// Accepts "fwd", "bwd-data", "bwd-filter" (and "bwd_data", "bwd_filter"); throws Error.
Direction parse_direction(std::string_view text);
// The items of a `sep`-separated list, empty ones included ("1,,2" -> "1", "",
// "2"): the one reading of every list option (--dir, --threads, --policy, ...).
std::vector<std::string_view> split_list(std::string_view text, char sep = ',');
// The --dir option of every command: "all" (the three, in kAllDirections'
// order) or a comma list of parse_direction()'s names ("fwd,bwd-data"), kept in
// the order given. An empty item ("fwd,") is an unknown direction; throws Error.
// A direction named twice ("fwd,fwd", "fwd,bwd_data,bwd-data") is kept once;
// `note`, when given, then says so ("" otherwise), for the command to print.
std::vector<Direction> parse_directions(std::string_view text, std::string* note = nullptr);

struct ConvProblem {
  int n = 2, c = 0, h = 0, w = 0;   // src: N, C, H, W
  int k = 0, r = 0, s = 0;          // wei: K output channels, R x S filter
  int pad_h = 0, pad_w = 0;         // zero padding before the image: top, left
  // Zero padding after it: bottom, right. Set both with pad_h / pad_w (a
  // problem built field by field is symmetric only when they are equal).
  // Negative means the last rows / columns are never read; validate() wants it
  // above -stride (oneDNN's rule: pad_end + stride > 0). One stored form: the
  // end paddings that give one output size compute the same values (a stride
  // that does not divide leaves the rows past the last window unread), and of
  // them pad_h is stored when it is one, else benchdnn's derived value (the
  // least), raised to 1 - stride when lower; so parse_problem() of any
  // spelling of a problem returns equal structs.
  int pad_h_end = 0, pad_w_end = 0;
  int stride_h = 1, stride_w = 1;
  int dil_h = 1, dil_w = 1;         // 1 = dense
  int groups = 1;
  std::string name;                 // optional label, e.g. "alexnet:conv2"

  // Output height and width in 64 bits: exact for any field values (validate()
  // uses these). Only meaningful when stride_h/stride_w > 0.
  int64_t p64() const { return (padded_h64() - int64_t(dil_h) * (int64_t(r) - 1) - 1) / stride_h + 1; }
  int64_t q64() const { return (padded_w64() - int64_t(dil_w) * (int64_t(s) - 1) - 1) / stride_w + 1; }
  // The input's extent with its padding, pad + ih + pad_end (less than ih when
  // the end padding is negative).
  int64_t padded_h64() const { return int64_t(h) + int64_t(pad_h) + int64_t(pad_h_end); }
  int64_t padded_w64() const { return int64_t(w) + int64_t(pad_w) + int64_t(pad_w_end); }
  // Equal padding on both sides of each axis (all cuDNN's descriptor takes);
  // false for benchdnn's asymmetric "ih5oh8kh3ph3".
  bool symmetric_padding() const { return pad_h_end == pad_h && pad_w_end == pad_w; }
  // H = 1 with a 1-row filter, no padding or stride along H: printed with the
  // w letters only, as benchdnn prints a 1-D problem.
  bool is_1d() const {
    return h == 1 && r == 1 && stride_h == 1 && dil_h == 1 && pad_h == 0 && pad_h_end == 0;
  }
  // Sets pad_h_end / pad_w_end to the stored form above, keeping the output
  // size (for a problem whose shape_error() is empty).
  void normalize_padding();
  // The same as int: only for a problem validate() accepted (it proves that
  // every derived size -- output, padded input, tensors, column matrices -- fits
  // in 32 bits, so kernels may index with int).
  int p() const { return int(p64()); }
  int q() const { return int(q64()); }
  int c_per_group() const { return c / groups; }
  int k_per_group() const { return k / groups; }

  int64_t src_elems() const { return int64_t(n) * c * h * w; }
  int64_t wei_elems() const { return int64_t(k) * c_per_group() * r * s; }
  int64_t dst_elems() const { return int64_t(n) * k * p64() * q64(); }

  // Multiply-adds of the direct convolution x 2. The same for all directions.
  double flops() const { return 2.0 * double(n) * k * double(p64()) * double(q64()) * c_per_group() * r * s; }
  // Compulsory traffic: each of the three tensors read or written once, fp32.
  double bytes() const { return 4.0 * double(src_elems() + wei_elems() + dst_elems()); }

  // Length of the sum behind one output element of `dir` (the K in K*eps).
  int64_t reduction_length(Direction dir) const;

  // Empty when the problem is valid, otherwise one line saying what is wrong:
  // every field in range (shape_error()), and every derived size (output and
  // padded extents, src / wei / dst elements, the per-image column matrix, the
  // padded input) below 2^31 (size_error()), all computed in 64 (or 128) bits
  // so nothing wraps first.
  std::string validate() const;
  std::string shape_error() const;
  std::string size_error() const;
  // benchdnn form that parse_problem() reads back to an equal problem.
  std::string canonical() const;
  // canonical() without the name: the key for caches and result files.
  std::string key() const;
  ConvProblem with_batch(int batch) const {
    ConvProblem p = *this;
    p.n = batch;
    return p;
  }

  bool operator==(const ConvProblem&) const = default;
};

// A well-formed descriptor of a convolution convlab cannot run: 3-D, or sizes
// past 32-bit indexing. Problem files note such a line and read on.
class UnsupportedProblem : public Error {
 public:
  using Error::Error;
};

// Parses a benchdnn conv descriptor as benchdnn does (a string with only w
// letters is 1-D; a given output size sets the end padding); throws Error with
// one line on any problem (unknown letter, missing number, impossible shape,
// an output size that leaves input rows unread, ...), UnsupportedProblem for
// the ones above, including the messages of validate().
ConvProblem parse_problem(std::string_view text);
// True for the keys of a benchdnn conv descriptor ("g", "mb", "ic", "ih", ...;
// the 3-D ones too, which parse_problem() rejects by name).
bool is_problem_key(std::string_view key);

}  // namespace convlab
