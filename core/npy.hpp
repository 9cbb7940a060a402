// .npy read/write for fp32 C-ordered arrays (NumPy format versions 1.0, 2.0 and
// 3.0 read; 1.0 written). Anything else -- another dtype, big-endian data,
// Fortran order, a truncated file, a header whose shape disagrees with the
// file's size, a header naming a key twice or a key NumPy does not write, a
// path that is not a regular file -- throws Error with one line naming the file
// and the problem.
#pragma once
#include <string>

#include "core/tensor.hpp"

namespace convlab {

Tensor read_npy(const std::string& path);

// Written to a temporary file beside `path`, then renamed over it, so a reader
// never sees a half-written file and a failed write leaves the old one intact.
void write_npy(const std::string& path, const Tensor& t);

// Writes `contents` to `path` atomically (temp file + fsync + rename). A failure
// (a full disk, a file-size limit, ...) throws WriteError naming `path` and the
// system's reason, and leaves no temp file and the old file intact.
void write_file_atomic(const std::string& path, const std::string& contents);

}  // namespace convlab
