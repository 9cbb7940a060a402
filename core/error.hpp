// convlab's one exception type. Every bad input (problem string, shape, .npy
// file, cache file, CLI argument) is reported by throwing convlab::Error with a
// single human-readable line; the CLI prints it and exits non-zero.
#pragma once
#include <cstddef>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

namespace convlab {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device is in a state no later call can recover from: on a GPU a sticky
// error (illegal address, misaligned address, launch failure, ...) that every
// later CUDA call in this process returns; in the SIMT emulator the same after a
// modelled fault. Whoever runs several candidates (find, tune, train, the
// per-layer checks) stops at this error with its one line instead of marking
// every remaining candidate failed for a fault that was not theirs.
class DeviceFault : public Error {
 public:
  using Error::Error;
};

// The work ran but its results could not be written (a full disk, a file-size
// limit, an I/O error): one line naming the file and the system's reason. The
// CLI exits 1 for it, not 2: nothing was refused, the run's results are lost.
class WriteError : public Error {
 public:
  using Error::Error;
};

// Memory that could not be had: an allocation that failed (its message names the
// memory and the size), or a run refused before allocating because its total
// does not fit in what is available. Whoever allocates on behalf of something
// named (a layer's output, find's check data) catches it and throws it again
// with that name in front, so the one line says what failed and how big it was.
class OutOfMemory : public Error {
 public:
  using Error::Error;
};

[[noreturn]] inline void fail(const std::string& message) { throw Error(message); }

// f(), an OutOfMemory from it thrown again as "<what>: <its message>": how an
// allocation names the buffer it was for ("conv1's output: cannot allocate ...").
// A std::bad_alloc (a container's allocation, its size unknown) becomes one too.
template <class F>
decltype(auto) naming_memory(const std::string& what, F&& f) {
  try {
    return f();
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(what + ": " + e.what());
  } catch (const std::bad_alloc&) {
    throw OutOfMemory(what + ": an allocation failed (std::bad_alloc; its size is not known)");
  }
}

// "1.50 GiB", "12.0 MiB", "512 bytes": sizes in messages.
std::string format_bytes(size_t bytes);

// `text` safe to print on one line: C0/C1 control characters, DEL and bytes
// that are not valid UTF-8 are written as \xHH; the characters that reorder or
// break a line without being seen -- the bidirectional controls U+061C, U+200E,
// U+200F, U+202A..U+202E, U+2066..U+2069 and the separators U+2028, U+2029 -- as
// \uHHHH; printable ASCII and all other valid UTF-8 print unchanged. Use it for
// every piece of user-supplied text (names, paths, option values) and of file
// content (cache lines, problem files, headers) echoed in a message.
std::string printable(std::string_view text);

// True when `text` has at least one visible character: not only spaces and
// invisible characters (zero-width spaces and joiners, the word joiner, the
// byte-order mark, other Unicode spaces, fillers, variation selectors). A name
// that is false here prints as nothing.
bool has_visible_character(std::string_view text);

}  // namespace convlab
