#include "core/lazy_library.hpp"

#include <dlfcn.h>

#include <utility>

#include "core/error.hpp"

namespace convlab {

LazyLibrary::LazyLibrary(std::string label, std::vector<std::string> names)
    : label_(std::move(label)), names_(std::move(names)) {}

// The first name's error, unless that name was simply not found and a later
// one was (then the later one's error says more: a file that exists but cannot
// be mapped, has the wrong class, ...).
void LazyLibrary::open() const {
  std::string first, found;
  for (const std::string& name : names_) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      handle_ = h;
      return;
    }
    const char* e = dlerror();
    const std::string why = e ? e : name + ": cannot be opened";
    if (first.empty()) first = why;
    if (found.empty() && why.find("No such file or directory") == std::string::npos) found = why;
  }
  if (names_.empty()) first = "no file name configured for it in this build";
  reason_ = label_ + " not loaded: " + printable(found.empty() ? first : found);
}

const std::string& LazyLibrary::unavailable_reason() const {
  std::call_once(once_, [this] { open(); });
  return reason_;
}

void* LazyLibrary::address(const char* symbol) const {
  if (!available()) fail(reason_);
  dlerror();
  void* p = dlsym(handle_, symbol);
  if (!p) {
    const char* e = dlerror();
    fail(label_ + " not loaded: " + printable(e ? e : std::string("no symbol ") + symbol));
  }
  return p;
}

}  // namespace convlab
