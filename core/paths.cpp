#include "core/paths.hpp"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

namespace convlab {

namespace {
std::string in_quotes(const std::string& path) { return "'" + printable(path) + "'"; }
}  // namespace

// ---- inputs ------------------------------------------------------------------

std::string why_not_regular_file(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return {};
  if (S_ISDIR(st.st_mode)) return "is a folder";
  if (S_ISFIFO(st.st_mode)) return "is a FIFO (named pipe), not a regular file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "is a device, not a regular file";
  return "is not a regular file";
}

InputFile::InputFile(const std::string& path, const std::string& what, bool missing_ok)
    : path_(path), name_(what + " " + in_quotes(path)) {
  if (path.empty()) fail(what + ": empty file name");
  if (::stat(path.c_str(), &st_) != 0) {
    if (missing_ok && (errno == ENOENT || errno == ENOTDIR)) return;
    fail(name_ + ": cannot open: " + std::strerror(errno));
  }
  if (std::string why = why_not_regular_file(st_); !why.empty()) fail(name_ + " " + why);
  // O_NONBLOCK: should the path have become a FIFO since stat(), open() must not wait for a writer.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd_ < 0) fail(name_ + ": cannot open: " + std::strerror(errno));
  const auto refuse = [this](const std::string& why) {
    ::close(fd_);
    fd_ = -1;
    fail(name_ + " " + why);
  };
  if (::fstat(fd_, &st_) != 0) refuse(std::string(": cannot open: ") + std::strerror(errno));
  if (std::string why = why_not_regular_file(st_); !why.empty()) refuse(why);
  // A regular file: blocking reads again (O_NONBLOCK means nothing for it, but say what we mean).
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

size_t InputFile::read(void* buf, size_t n) const {
  for (;;) {
    const ssize_t got = ::read(fd_, buf, n);
    if (got >= 0) return size_t(got);
    if (errno != EINTR) fail(name_ + ": read error: " + std::strerror(errno));
  }
}

std::string InputFile::read_all(uint64_t max_bytes) const {
  const auto too_big = [&] {
    fail(name_ + " is larger than " +
         (max_bytes >= (uint64_t(1) << 20) ? std::to_string(max_bytes >> 20) + " MiB"
                                           : std::to_string(max_bytes) + " bytes"));
  };
  if (size() > max_bytes) too_big();
  std::string out;
  out.reserve(size_t(size()));
  char buf[1 << 16];
  while (const size_t got = read(buf, sizeof buf)) {
    if (out.size() + got > max_bytes) too_big();
    out.append(buf, got);
  }
  return out;
}

// ---- outputs -----------------------------------------------------------------

std::string check_output_path(const std::string& path) {
  const std::string q = in_quotes(path);
  if (path.empty()) return "empty path";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return q + " is a folder";
    if (!S_ISREG(st.st_mode)) return q + " is not a regular file";
    // Read-only means read-only for root too: a file with no write bit is the
    // user saying "do not replace this", which access() alone would not tell root.
    if ((st.st_mode & 0222) == 0 || ::access(path.c_str(), W_OK) != 0) return q + " is read-only";
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (slash != std::string::npos && slash + 1 == path.size()) return q + " names a folder, not a file";
  if (::stat(dir.c_str(), &st) != 0) return q + ": folder " + in_quotes(dir) + " does not exist";
  if (!S_ISDIR(st.st_mode)) return q + ": " + in_quotes(dir) + " is not a folder";
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return q + ": folder " + in_quotes(dir) + " is not writable";
  return {};
}

void require_output_path(const std::string& path, const std::string& what) {
  if (std::string why = check_output_path(path); !why.empty()) fail(what + ": " + why);
}

int write_sync_close(int fd, std::string_view contents) {
  int err = 0;
  for (size_t done = 0; done < contents.size();) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    done += size_t(n);
  }
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  return err;
}

namespace {
// realpath(parent) + "/" + file name; the text itself when the parent cannot be resolved.
std::string canonical_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  char resolved[PATH_MAX];
  if (!::realpath(dir.c_str(), resolved)) return path;
  return std::string(resolved) + "/" + base;
}
}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)
    return true;
  return canonical_name(a) == canonical_name(b);
}

void require_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                              const std::string& command) {
  for (size_t i = 0; i < outputs.size(); ++i)
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (same_file(outputs[i].second, outputs[j].second))
        fail(command + ": " + outputs[i].first + " " + in_quotes(outputs[i].second) + " and " + outputs[j].first + " " +
             in_quotes(outputs[j].second) + " name the same file (one would replace the other): give each its own file");
}

}  // namespace convlab
