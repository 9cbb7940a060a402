# Installs the public headers, and only those: what <convlab/convlab.hpp>,
# <convlab/testing.hpp> and <convlab/algorithms/plugin.hpp> include, followed
# through the tree's own quoted includes. Each lands under
# PREFIX/include/convlab/ with its tree-relative includes rewritten to the
# prefixed form (#include "core/problem.hpp" -> #include <convlab/core/problem.hpp>),
# so a consumer's include path holds PREFIX/include alone and none of
# convlab's folder names (core/, kernels/, ...) can shadow its own.
#
# Run by `cmake --install` (install(SCRIPT), cmake/install.cmake) with
# CONVLAB_SOURCE_DIR set; honours DESTDIR and --prefix.
cmake_policy(PUSH)
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST)
set(_roots include/convlab/convlab.hpp include/convlab/testing.hpp algorithms/plugin.hpp)
set(_src "${CONVLAB_SOURCE_DIR}")
set(_dest "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/include/convlab")

# A quoted include names a tree header relative to the root (the build's
# include path) or to include/ (the public headers themselves).
function(_convlab_resolve name out)
  foreach(candidate "${name}" "include/${name}")
    if(EXISTS "${_src}/${candidate}" AND NOT IS_DIRECTORY "${_src}/${candidate}")
      set(${out} "${candidate}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

set(_todo ${_roots})
set(_done "")
while(_todo)
  list(POP_FRONT _todo rel)
  if(rel IN_LIST _done)
    continue()
  endif()
  list(APPEND _done "${rel}")
  file(READ "${_src}/${rel}" text)
  string(REGEX MATCHALL "#include \"[^\"]+\"" incs "${text}")
  foreach(inc IN LISTS incs)
    string(REGEX REPLACE "#include \"([^\"]+)\"" "\\1" name "${inc}")
    _convlab_resolve("${name}" found)
    if(NOT found)
      message(FATAL_ERROR "public header ${rel} includes \"${name}\", which is not a convlab header")
    endif()
    string(REGEX REPLACE "^include/convlab/" "" public "${found}")
    string(REPLACE "${inc}" "#include <convlab/${public}>" text "${text}")
    list(APPEND _todo "${found}")
  endforeach()
  string(REGEX REPLACE "^include/convlab/" "" public "${rel}")
  set(target "${_dest}/${public}")
  message(STATUS "Installing: ${target}")
  get_filename_component(dir "${target}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  file(WRITE "${target}" "${text}")
endwhile()
cmake_policy(POP)
