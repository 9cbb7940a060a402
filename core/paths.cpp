#include "core/paths.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include "core/error.hpp"

namespace convlab {

std::string check_output_path(const std::string& path) {
  const std::string q = "'" + printable(path) + "'";
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
  if (::stat(dir.c_str(), &st) != 0) return q + ": folder '" + printable(dir) + "' does not exist";
  if (!S_ISDIR(st.st_mode)) return q + ": '" + printable(dir) + "' is not a folder";
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return q + ": folder '" + printable(dir) + "' is not writable";
  return {};
}

void require_output_path(const std::string& path, const std::string& what) {
  if (std::string why = check_output_path(path); !why.empty()) fail(what + ": " + why);
}

}  // namespace convlab
