#include "core/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "core/error.hpp"

namespace convlab {

namespace {

[[noreturn]] void npy_fail(const std::string& path, const std::string& what) {
  fail("npy file '" + printable(path) + "': " + what);
}

// Returns the text of the value after 'key': in a Python dict literal.
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  const std::string k1 = "'" + key + "'";
  size_t at = header.find(k1);
  if (at == std::string::npos) npy_fail(path, "header has no '" + key + "' entry");
  at = header.find(':', at + k1.size());
  if (at == std::string::npos) npy_fail(path, "malformed header near '" + key + "'");
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  if (at >= header.size()) npy_fail(path, "malformed header near '" + key + "'");
  size_t end;
  if (header[at] == '(') {
    end = header.find(')', at);
    if (end == std::string::npos) npy_fail(path, "unterminated shape tuple");
    return header.substr(at, end - at + 1);
  }
  if (header[at] == '\'' || header[at] == '"') {
    end = header.find(header[at], at + 1);
    if (end == std::string::npos) npy_fail(path, "unterminated string in header");
    return header.substr(at + 1, end - at - 1);
  }
  end = header.find_first_of(",}", at);
  if (end == std::string::npos) npy_fail(path, "malformed header near '" + key + "'");
  std::string v = header.substr(at, end - at);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

}  // namespace

Tensor read_npy(const std::string& path) {
  // Only a regular file has a size to check the header against; a folder, a FIFO or /dev/zero would
  // read as "truncated" or never end. stat() first: opening a FIFO would already block.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) npy_fail(path, std::string("cannot open: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) npy_fail(path, "is a folder, not a .npy file");
  if (!S_ISREG(st.st_mode)) npy_fail(path, "is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) npy_fail(path, std::string("cannot open: ") + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff file_size = in.tellg();
  in.seekg(0, std::ios::beg);
  char magic[8];
  if (!in.read(magic, 8)) npy_fail(path, "truncated (shorter than the 8-byte preamble)");
  if (std::memcmp(magic, "\x93NUMPY", 6) != 0) npy_fail(path, "not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  std::streamoff prefix = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) npy_fail(path, "truncated header length");
    header_len = b[0] | (uint32_t(b[1]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) npy_fail(path, "truncated header length");
    header_len = b[0] | (uint32_t(b[1]) << 8) | (uint32_t(b[2]) << 16) | (uint32_t(b[3]) << 24);
    prefix = 12;
  } else {
    npy_fail(path, "unsupported format version " + std::to_string(major));
  }
  if (prefix + std::streamoff(header_len) > file_size) npy_fail(path, "truncated header");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) npy_fail(path, "truncated header");

  const std::string descr = dict_value(header, "descr", path);
  if (descr != "<f4" && descr != "=f4")
    npy_fail(path, "dtype '" + printable(descr) + "' is not supported (convlab reads float32, '<f4')");
  const std::string fortran = dict_value(header, "fortran_order", path);
  if (fortran == "True") npy_fail(path, "Fortran-ordered arrays are not supported (save with C order)");
  if (fortran != "False") npy_fail(path, "bad fortran_order value '" + printable(fortran) + "'");
  const std::string shape_text = dict_value(header, "shape", path);
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
  if (t.size() > 0 && !in.read(reinterpret_cast<char*>(t.data()), std::streamsize(data_bytes)))
    npy_fail(path, "read error");
  return t;
}

void write_file_atomic(const std::string& path, const std::string& contents) {
  std::random_device rd;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) fail("cannot write '" + path + "': " + std::strerror(errno));
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      fail("cannot write '" + path + "': " + err);
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail("cannot write '" + path + "': " + err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail("cannot write '" + path + "': " + err);
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
