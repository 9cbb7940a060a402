// Looking up the generated code units (autotune/code_version.hpp).
#include "autotune/code_version.hpp"

#include <string>

namespace convlab {

const CodeUnit* find_code_unit(std::string_view name) {
  for (const CodeUnit& u : code_units())
    if (name == u.name) return &u;
  return nullptr;
}

const CodeUnit* code_unit_of(std::string_view source_file) {
  if (source_file.empty()) return nullptr;
  for (const CodeUnit& u : code_units()) {
    std::string_view members = u.members;
    while (!members.empty()) {
      const size_t sp = members.find(' ');
      const std::string_view m = members.substr(0, sp);
      members = sp == std::string_view::npos ? std::string_view() : members.substr(sp + 1);
      if (source_file == m) return &u;
      // Any prefix ending in '/' before the tree-relative path.
      if (source_file.size() > m.size() && source_file.ends_with(m) && source_file[source_file.size() - m.size() - 1] == '/')
        return &u;
    }
  }
  return nullptr;
}

}  // namespace convlab
