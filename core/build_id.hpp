// This build's identity: the git commit it was built from, "-dirty-<hash>"
// when the tree had uncommitted changes (a hash of the diff), or "unknown"
// when built without git (a source tarball). Generated at build time by
// cmake/build_id.cmake, so it changes with every build that changes the code
// while an unchanged tree recompiles nothing.
#pragma once
#include <string_view>

namespace convlab {

std::string_view build_id();

}  // namespace convlab
