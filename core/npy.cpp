#include "core/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <sstream>

#include "core/error.hpp"
#include "core/paths.hpp"

namespace convlab {

namespace {

[[noreturn]] void npy_fail(const std::string& path, const std::string& what) {
  fail("npy file '" + printable(path) + "': " + what);
}

// The header's Python dict literal, {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, as
// key -> value text (a string's text without its quotes, a tuple with its parentheses, a bare word as is).
// NumPy reads it with ast.literal_eval, where a repeated key silently keeps its last value, and then
// accepts exactly these three keys: a repeated key is refused here (another reader would see another
// array), and so is any other key.
std::map<std::string, std::string> header_dict(const std::string& header, const std::string& path) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  const auto ws = [&] {
    while (i < header.size() && (header[i] == ' ' || header[i] == '\t' || header[i] == '\n')) ++i;
  };
  const auto malformed = [&](const std::string& what) { npy_fail(path, "malformed header: " + what); };
  ws();
  if (i >= header.size() || header[i] != '{') malformed("it is not a dict literal {...}");
  ++i;
  for (;;) {
    ws();
    if (i < header.size() && header[i] == '}') break;
    if (i >= header.size() || (header[i] != '\'' && header[i] != '"')) malformed("expected a quoted key");
    const size_t kend = header.find(header[i], i + 1);
    if (kend == std::string::npos) malformed("unterminated key");
    const std::string key = header.substr(i + 1, kend - i - 1);
    i = kend + 1;
    ws();
    if (i >= header.size() || header[i] != ':') malformed("expected ':' after '" + printable(key) + "'");
    ++i;
    ws();
    if (i >= header.size()) malformed("no value for '" + printable(key) + "'");
    std::string value;
    if (header[i] == '(') {
      const size_t end = header.find(')', i);
      if (end == std::string::npos) npy_fail(path, "unterminated shape tuple");
      value = header.substr(i, end - i + 1);
      i = end + 1;
    } else if (header[i] == '\'' || header[i] == '"') {
      const size_t end = header.find(header[i], i + 1);
      if (end == std::string::npos) npy_fail(path, "unterminated string in header");
      value = header.substr(i + 1, end - i - 1);
      i = end + 1;
    } else {
      const size_t end = header.find_first_of(",}", i);
      if (end == std::string::npos) malformed("no ',' or '}' after '" + printable(key) + "'");
      value = header.substr(i, end - i);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
      i = end;
    }
    if (key != "descr" && key != "fortran_order" && key != "shape")
      npy_fail(path, "header has an unexpected key '" + printable(key) + "' (a .npy header holds descr, fortran_order and shape)");
    if (!out.emplace(key, value).second)
      npy_fail(path, "header names '" + key + "' twice (NumPy would use the last one): refused as ambiguous");
    ws();
    if (i < header.size() && header[i] == ',') {
      ++i;
      continue;
    }
    if (i < header.size() && header[i] == '}') break;
    malformed("expected ',' or '}' after '" + printable(key) + "'");
  }
  ++i;
  ws();
  if (i != header.size()) malformed("characters after the closing '}'");
  for (const char* key : {"descr", "fortran_order", "shape"})
    if (!out.count(key)) npy_fail(path, std::string("header has no '") + key + "' entry");
  return out;
}

}  // namespace

Tensor read_npy(const std::string& path) {
  // Only a regular file has a size to check the header against; a folder, a FIFO or /dev/zero would
  // read as "truncated" or never end (InputFile refuses them before opening).
  const InputFile in(path, "npy file");
  const auto read_exact = [&](void* buf, size_t n) {
    size_t done = 0;
    while (done < n) {
      const size_t got = in.read(static_cast<char*>(buf) + done, n - done);
      if (got == 0) return false;
      done += got;
    }
    return true;
  };
  const std::streamoff file_size = std::streamoff(in.size());
  char magic[8];
  if (!read_exact(magic, 8)) npy_fail(path, "truncated (shorter than the 8-byte preamble)");
  if (std::memcmp(magic, "\x93NUMPY", 6) != 0) npy_fail(path, "not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  std::streamoff prefix = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!read_exact(b, 2)) npy_fail(path, "truncated header length");
    header_len = b[0] | (uint32_t(b[1]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!read_exact(b, 4)) npy_fail(path, "truncated header length");
    header_len = b[0] | (uint32_t(b[1]) << 8) | (uint32_t(b[2]) << 16) | (uint32_t(b[3]) << 24);
    prefix = 12;
  } else {
    npy_fail(path, "unsupported format version " + std::to_string(major));
  }
  if (prefix + std::streamoff(header_len) > file_size) npy_fail(path, "truncated header");
  std::string header(header_len, '\0');
  if (!read_exact(header.data(), header_len)) npy_fail(path, "truncated header");
  const std::map<std::string, std::string> dict = header_dict(header, path);

  const std::string& descr = dict.at("descr");
  if (descr != "<f4" && descr != "=f4")
    npy_fail(path, "dtype '" + printable(descr) + "' is not supported (convlab reads float32, '<f4')");
  const std::string& fortran = dict.at("fortran_order");
  if (fortran == "True") npy_fail(path, "Fortran-ordered arrays are not supported (save with C order)");
  if (fortran != "False") npy_fail(path, "bad fortran_order value '" + printable(fortran) + "'");
  const std::string& shape_text = dict.at("shape");
  std::vector<int64_t> shape;
  {
    // "(a, b, c)" or "(a,)" or "()"
    if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')')
      npy_fail(path, "shape '" + printable(shape_text) + "' is not a tuple");
    std::string body = shape_text.substr(1, shape_text.size() - 2);
    std::stringstream ss(body);
    std::string item;
    while (std::getline(ss, item, ',')) {
      size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
      if (b == std::string::npos) continue;  // trailing comma
      item = item.substr(b, e - b + 1);
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 12)
        npy_fail(path, "bad shape entry '" + printable(item) + "'");
      shape.push_back(std::stoll(item));
    }
  }
  if (shape.size() > 8) npy_fail(path, "too many dimensions (" + std::to_string(shape.size()) + ")");
  // Each factor is < 10^12, but 8 of them overflow even 128 bits: bound the
  // product of the non-zero dimensions (Tensor::count multiplies in int64).
  __int128 count = 1, nonzero = 1;
  for (auto d : shape) {
    if (d != 0) nonzero *= d;
    if (nonzero > (__int128(1) << 62)) npy_fail(path, "shape has too many elements");
    count *= d;
  }
  const __int128 data_bytes = count * 4;
  const __int128 have = __int128(file_size) - prefix - header_len;
  if (have < data_bytes)
    npy_fail(path, "truncated: header promises " + std::to_string(int64_t(data_bytes)) + " data bytes, file has " +
                       std::to_string(int64_t(have)));
  if (have > data_bytes)
    npy_fail(path, "header shape disagrees with the file size (" + std::to_string(int64_t(have - data_bytes)) +
                       " extra bytes)");
  Tensor t(shape);
  if (t.size() > 0 && !read_exact(t.data(), size_t(data_bytes))) npy_fail(path, "truncated while read (the file shrank)");
  return t;
}

void write_file_atomic(const std::string& path, const std::string& contents) {
  // A failure here comes after the work that produced `contents`: a WriteError (exit 1), naming the file.
  const auto failed = [&](const std::string& why) {
    throw WriteError("cannot write '" + printable(path) + "': " + why);
  };
  std::random_device rd;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) failed(std::strerror(errno));
  if (const int err = write_sync_close(fd, contents)) {
    ::unlink(tmp.c_str());
    failed(std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    failed(err);
  }
}

void write_npy(const std::string& path, const Tensor& t) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape.size(); ++i) header += std::to_string(t.shape[i]) + ", ";
  if (t.shape.size() > 1) header.resize(header.size() - 2);
  else if (t.shape.size() == 1) header.pop_back();  // "(n,)"
  header += "), }";
  // Pad so that magic(6)+version(2)+len(2)+header is a multiple of 64, ending in '\n'.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(t.data()), size_t(t.size()) * 4);
  write_file_atomic(path, out);
}

}  // namespace convlab
