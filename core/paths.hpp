// Paths a command reads and writes, checked before any long work starts: a typo
// in --json must not throw away an hour of tuning, and an input that is not a
// plain file (a FIFO, a socket, a device, a folder) must not hang or flood a run.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace convlab {

// ---- inputs ------------------------------------------------------------------

// "" when `st` describes a regular file; else why not, as the end of a sentence
// about the path ("is a folder", "is a FIFO (named pipe), not a regular file",
// "is a socket, not a regular file", "is a device, not a regular file").
std::string why_not_regular_file(const struct stat& st);

// One input file, opened for reading only once it is known to be a regular
// file: the path is stat()ed first (opening a FIFO would block, reading
// /dev/zero would never end), then opened non-blocking and fstat()ed again, so a
// path replaced between the two checks is caught too. Every refusal is one
// line (Error): "<what> '<path>' is a folder", "<what> '<path>' is a FIFO (named
// pipe), not a regular file", "<what> '<path>': cannot open: <errno text>" (a
// missing file, a symlink loop, no read permission). The path is printable()d.
// Every reader of a user-named file goes through it: problem lists, .npy files,
// autotune caches, the results files `convlab html` reads.
class InputFile {
 public:
  // `missing_ok`: a path that does not exist (ENOENT, ENOTDIR) is not an error;
  // exists() is then false.
  InputFile(const std::string& path, const std::string& what, bool missing_ok = false);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  bool exists() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  uint64_t size() const { return uint64_t(st_.st_size); }
  const std::string& path() const { return path_; }
  // "<what> '<path>'", the start of every message about this file.
  const std::string& name() const { return name_; }
  // Up to `n` bytes from the current position (0 at the end); a read error throws.
  size_t read(void* buf, size_t n) const;
  // The whole file; a file over `max_bytes` (also one that grows past it while
  // read) is refused with one line naming the limit.
  std::string read_all(uint64_t max_bytes) const;

 private:
  std::string path_, name_;
  int fd_ = -1;
  struct stat st_ {};
};

// ---- outputs -----------------------------------------------------------------

// "" when `path` can be written as a regular file (it exists as a writable file,
// or its parent folder exists and is writable); otherwise one line saying why
// ("'x/y.json': folder 'x' does not exist", "'results': is a folder", ...).
// A file without any write permission bit is read-only even for root. Parent
// folders are never created: a missing folder is reported.
std::string check_output_path(const std::string& path);

// Throws Error("<what> <reason>") when check_output_path() finds a problem.
void require_output_path(const std::string& path, const std::string& what);

// Writes all of `contents` to `fd` (short writes and EINTR retried), fsyncs and closes it; returns
// 0, or the errno of the first failure (the fd is closed either way).
int write_sync_close(int fd, std::string_view contents);

// Two names of one run that would end up as the same file: the same canonical
// folder (realpath of the parent: ./x, a/../x and a symlinked folder agree) and
// file name, or two existing paths of the same file (a symlink or a hard link).
bool same_file(const std::string& a, const std::string& b);

// Refuses (Error, one line) the first pair of `outputs` ({what, path}, e.g.
// {"--json", "r.json"}) that names the same file (same_file): one of the two
// would silently replace the other.
void require_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                              const std::string& command);

}  // namespace convlab
