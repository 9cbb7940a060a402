// A shared library opened on its first use (dlopen) instead of being linked:
// a process that never uses it never maps it, and a machine without it runs
// everything else. The CUDA vendor libraries are opened this way
// (core/cuda_libraries.hpp); the code that calls one binds the entry points it
// uses into a typed table, declared from the library's own header so every
// call keeps its real signature:
//
//   #define CONVLAB_CUBLAS_FUNCTIONS(X) X(cublasCreate) X(cublasSgemm)
//   struct Api { CONVLAB_CUBLAS_FUNCTIONS(CONVLAB_LAZY_FUNCTION) };
//   const Api& api() {
//     return lazy_table<Api>(cuda_library(CudaLibrary::cublas),
//                            [](const LazyLibrary& lib, Api& table) { CONVLAB_CUBLAS_FUNCTIONS(CONVLAB_LAZY_BIND) });
//   }
//   ... api().cublasSgemm(h, ...);  lazy_reason(api): "" or why api() throws
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace convlab {

class LazyLibrary {
 public:
  // `label` names the library in messages ("cuDNN"). `names` are tried in
  // order: a bare file name goes through the dynamic loader's search
  // (LD_LIBRARY_PATH, the ld.so cache, the system folders), a path is opened
  // as it is.
  LazyLibrary(std::string label, std::vector<std::string> names);
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  // Opens the library on the first call (from any thread; never closed):
  // "" once it is open, else one line "<label> not loaded: <the loader's
  // error>", for example "cuDNN not loaded: libcudnn.so.9: cannot open shared
  // object file: No such file or directory".
  const std::string& unavailable_reason() const;
  bool available() const { return unavailable_reason().empty(); }
  // The address of `symbol` (opening the library first). Throws Error with
  // unavailable_reason() when the library cannot be opened, and Error
  // "<label> not loaded: <file>: undefined symbol: <symbol>" when it lacks it.
  void* address(const char* symbol) const;
  const std::string& label() const { return label_; }

 private:
  void open() const;
  std::string label_;
  std::vector<std::string> names_;
  mutable std::once_flag once_;
  mutable void* handle_ = nullptr;
  mutable std::string reason_;
};

// Binds one entry point of a table (see above): `fn = <symbol name> in lib`.
template <class F>
void lazy_bind(const LazyLibrary& lib, F& fn, const char* symbol) {
  fn = reinterpret_cast<F>(lib.address(symbol));
}

// The process's one table `Api` of `lib`, filled by `bind` on the first call
// that succeeds. Throws what lib.address throws (then, and on every call while
// the library cannot be opened: the failure itself is remembered by `lib`).
template <class Api>
const Api& lazy_table(const LazyLibrary& lib, void (*bind)(const LazyLibrary&, Api&)) {
  static const Api table = [&] {
    Api t;
    bind(lib, t);
    return t;
  }();
  return table;
}

// "" when `table()` (a lazy_table accessor) works, else the one line it throws.
template <class Table>
std::string lazy_reason(Table table) {
  try {
    (void)table();
    return {};
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace convlab

// A table member with the library function's own type and name. A name the
// library's header defines as a macro (cuBLAS's cublasCreate -> cublasCreate_v2)
// expands first, so member and symbol are the versioned function.
#define CONVLAB_LAZY_FUNCTION(f) decltype(&::f) f = nullptr;
// Binds member `f` of `table` from `lib` (both names in scope where it expands).
#define CONVLAB_LAZY_BIND(f) ::convlab::lazy_bind(lib, table.f, CONVLAB_LAZY_NAME(f));
#define CONVLAB_LAZY_NAME(f) CONVLAB_LAZY_NAME_(f)
#define CONVLAB_LAZY_NAME_(f) #f
