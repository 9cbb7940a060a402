#include "algorithms/plugin.hpp"

#include <cstdlib>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "core/lazy_library.hpp"
#include "core/paths.hpp"
#include "core/problem.hpp"

namespace convlab {

void load_plugin(const std::string& path) {
  if (path.empty()) fail("--plugin needs a path to a shared library");
  { InputFile check(path, "plugin"); }  // a missing file, a folder, no permission: one line
  // A bare file name would go through the loader's search path: a plugin is the file named.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  static std::vector<std::unique_ptr<LazyLibrary>> loaded;  // never closed: their algorithms stay registered
  loaded.push_back(std::make_unique<LazyLibrary>("plugin '" + printable(path) + "'", std::vector<std::string>{file}));
  if (auto why = loaded.back()->unavailable_reason(); !why.empty()) fail(why);
  void* entry = loaded.back()->address(kPluginEntry);
  reinterpret_cast<void (*)()>(entry)();
}

void load_plugins(int& argc, char** argv) {
  if (const char* env = std::getenv("CONVLAB_PLUGINS"))
    for (std::string_view p : split_list(env, ':'))
      if (!p.empty()) load_plugin(std::string(p));
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--plugin") {
      if (i + 1 >= argc) fail("--plugin needs a path to a shared library");
      load_plugin(argv[++i]);
    } else if (a.rfind("--plugin=", 0) == 0) {
      load_plugin(a.substr(9));
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  argv[argc] = nullptr;
}

}  // namespace convlab
