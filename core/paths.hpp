// Output paths, checked before any long work starts: a typo in --json must not
// throw away an hour of tuning. Nothing here creates or writes anything.
#pragma once
#include <string>

namespace convlab {

// "" when `path` can be written as a regular file (it exists as a writable file,
// or its parent folder exists and is writable); otherwise one line saying why
// ("'x/y.json': folder 'x' does not exist", "'results': is a folder", ...).
// A file without any write permission bit is read-only even for root. Parent
// folders are never created: a missing folder is reported.
std::string check_output_path(const std::string& path);

// Throws Error("<what> <reason>") when check_output_path() finds a problem.
void require_output_path(const std::string& path, const std::string& what);

}  // namespace convlab
