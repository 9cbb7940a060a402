# Run at build time (cmake -P) by the convlab_code_versions command: writes
# OUT, a .cpp holding every code unit's version -- a hash of the source files
# its code compiles from -- and the libraries it calls. The autotune cache keys
# each measurement on its algorithm's unit (autotune/code_version.hpp), so a
# rebuild re-tunes only what changed.
#
#   cmake -DSRC=<source tree> -DOUT=<file.cpp> -P cmake/code_versions.cmake
#
# The rule (also in autotune/code_version.hpp):
#   units    every header algorithms/<device>/<name>.hpp that includes
#            "algorithms/algorithm.hpp" is the unit <device>/<name> (the
#            algorithm classes it declares); its members are the header and
#            every algorithms/<device>/*.cpp|*.cu that includes it (the drivers,
#            vendor-library parts such as fft_cufft.cu). One more unit,
#            "probe", is the machine probe: autotune/probe.*, core/peak*.*,
#            algorithms/execute.*.
#   files    the members, then every file they include by a quoted path under
#            algorithms/ or kernels/, transitively, and with each included
#            header the sources it compiles from: a header in
#            kernels/<device>/<family>/ brings that whole folder (the family's
#            kernels, every ISA variant); any other header brings the .cpp /
#            .cu / .inc of the same name beside it (algorithms/cuda/cublas.hpp
#            brings cublas.cpp). algorithms/registry.hpp brings nothing more
#            (the list is nobody's code). core/ is not followed: the problem
#            descriptor, errors and tensors are not an algorithm's timing.
#   hash     SHA-256 over "<path> <SHA-256 of its content>" lines of the
#            files, sorted by path; the first 12 hex digits.
#   libs     the libraries whose headers those files include with <...>:
#            cblas.h -> openblas, fftw3.h -> fftw, oneapi/dnnl -> onednn,
#            cublas* -> cublas, cufft* -> cufft, cudnn* -> cudnn,
#            cuda_runtime* -> cuda_runtime.
#
# OUT is rewritten only when a hash, a library set or a file set changes.
cmake_minimum_required(VERSION 3.25)
if(NOT SRC OR NOT OUT)
  message(FATAL_ERROR "code_versions.cmake: -DSRC=<tree> -DOUT=<file> are required")
endif()

set(_source_ext_re "\\.(cpp|cu|hpp|h|cuh|inc)$")

# The includes of one file (relative to SRC): quoted ones and angle-bracket ones.
function(_includes rel out_quoted out_angle)
  file(STRINGS "${SRC}/${rel}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  set(q)
  set(a)
  foreach(line IN LISTS lines)
    if(line MATCHES "include[ \t]*\"([^\"]+)\"")
      list(APPEND q "${CMAKE_MATCH_1}")
    elseif(line MATCHES "include[ \t]*<([^>]+)>")
      list(APPEND a "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(${out_quoted} "${q}" PARENT_SCOPE)
  set(${out_angle} "${a}" PARENT_SCOPE)
endfunction()

# The sources an included header compiles from (see the rule above).
function(_companions rel out)
  set(found)
  if(rel STREQUAL "algorithms/registry.hpp")
    # nothing more
  elseif(rel MATCHES "^(kernels/[^/]+/[^/]+/)")
    file(GLOB_RECURSE found RELATIVE "${SRC}" "${SRC}/${CMAKE_MATCH_1}*")
    list(FILTER found INCLUDE REGEX "${_source_ext_re}")
  elseif(rel MATCHES "^(.*)\\.(hpp|h|cuh)$")
    foreach(ext cpp cu inc)
      if(EXISTS "${SRC}/${CMAKE_MATCH_1}.${ext}")
        list(APPEND found "${CMAKE_MATCH_1}.${ext}")
      endif()
    endforeach()
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# closure(<members...>) -> _files (sorted), _libs (sorted, unique)
function(_closure out_files out_libs)
  set(todo ${ARGN})
  set(done)
  set(libs)
  while(todo)
    list(POP_FRONT todo f)
    if(f IN_LIST done OR NOT EXISTS "${SRC}/${f}")
      continue()
    endif()
    list(APPEND done "${f}")
    if(f MATCHES "\\.cu$")
      list(APPEND libs cuda_runtime)
    endif()
    _includes("${f}" quoted angle)
    foreach(i IN LISTS quoted)
      if(i MATCHES "^(algorithms|kernels)/" AND EXISTS "${SRC}/${i}")
        list(APPEND todo "${i}")
        _companions("${i}" comp)
        list(APPEND todo ${comp})
      endif()
    endforeach()
    foreach(i IN LISTS angle)
      if(i MATCHES "^cblas\\.h$|^openblas")
        list(APPEND libs openblas)
      elseif(i MATCHES "^fftw3")
        list(APPEND libs fftw)
      elseif(i MATCHES "^oneapi/dnnl/|^dnnl")
        list(APPEND libs onednn)
      elseif(i MATCHES "^cublas")
        list(APPEND libs cublas)
      elseif(i MATCHES "^cufft")
        list(APPEND libs cufft)
      elseif(i MATCHES "^cudnn")
        list(APPEND libs cudnn)
      elseif(i MATCHES "^cuda_runtime")
        list(APPEND libs cuda_runtime)
      endif()
    endforeach()
  endwhile()
  list(SORT done)
  list(REMOVE_DUPLICATES libs)
  list(SORT libs)
  set(${out_files} "${done}" PARENT_SCOPE)
  set(${out_libs} "${libs}" PARENT_SCOPE)
endfunction()

function(_hash files out)
  set(text "")
  foreach(f IN LISTS files)
    file(SHA256 "${SRC}/${f}" h)
    string(APPEND text "${f} ${h}\n")
  endforeach()
  string(SHA256 h "${text}")
  string(SUBSTRING "${h}" 0 12 h)
  set(${out} "${h}" PARENT_SCOPE)
endfunction()

# ---- the units -------------------------------------------------------------
file(GLOB headers RELATIVE "${SRC}" "${SRC}/algorithms/*/*.hpp")
list(SORT headers)
file(GLOB drivers RELATIVE "${SRC}" "${SRC}/algorithms/*/*.cpp" "${SRC}/algorithms/*/*.cu")
list(SORT drivers)
set(rows "")
foreach(h IN LISTS headers)
  _includes("${h}" quoted angle)
  if(NOT "algorithms/algorithm.hpp" IN_LIST quoted)
    continue()
  endif()
  string(REGEX REPLACE "^algorithms/(.*)\\.hpp$" "\\1" name "${h}")
  get_filename_component(folder "${h}" DIRECTORY)
  set(members "${h}")
  foreach(d IN LISTS drivers)
    get_filename_component(dfolder "${d}" DIRECTORY)
    if(dfolder STREQUAL folder)
      _includes("${d}" dq da)
      if(h IN_LIST dq)
        list(APPEND members "${d}")
      endif()
    endif()
  endforeach()
  list(APPEND units "${name}")
  set(members_${name} "${members}")
endforeach()
file(GLOB probe_members RELATIVE "${SRC}" "${SRC}/autotune/probe.*" "${SRC}/core/peak*.*" "${SRC}/algorithms/execute.*")
list(FILTER probe_members INCLUDE REGEX "${_source_ext_re}")
list(SORT probe_members)
list(APPEND units probe)
set(members_probe "${probe_members}")

foreach(name IN LISTS units)
  _closure(files libs ${members_${name}})
  _hash("${files}" hash)
  list(JOIN libs "," libs_text)
  list(JOIN members_${name} " " members_text)
  list(JOIN files " " files_text)
  string(APPEND rows "    {\"${name}\", \"${hash}\", \"${libs_text}\",\n     \"${members_text}\",\n     \"${files_text}\"},\n")
endforeach()

set(text "// Generated by cmake/code_versions.cmake at build time; do not edit.\n#include \"autotune/code_version.hpp\"\n\nnamespace convlab {\n\nstd::span<const CodeUnit> code_units() {\n  static constexpr CodeUnit units[] = {\n${rows}  };\n  return units;\n}\n\n}  // namespace convlab\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL text)
    return()  # unchanged: nothing recompiles (the command runs again on the next build, a fraction of a second)
  endif()
endif()
file(WRITE "${OUT}" "${text}")
