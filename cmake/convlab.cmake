# Shared helpers for convlab's per-folder CMakeLists.

# ISA-specific translation units are named by their instruction set, BLIS-style
# (sgemm_ukernel_avx512.cpp, winograd_transforms_avx2.cpp): only those files get
# the ISA flags, so the rest of the binary runs on any x86-64 and dispatch is
# decided at run time from CPUID.
set(CONVLAB_AVX512_FLAGS -mavx512f -mavx512vl -mavx512bw -mavx512dq -mavx2 -mfma)
set(CONVLAB_AVX2_FLAGS -mavx2 -mfma)

function(convlab_isa_flags)
  foreach(src IN LISTS ARGN)
    if(src MATCHES "_avx512\\.(cpp|cc)$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${CONVLAB_AVX512_FLAGS}")
    elseif(src MATCHES "_avx2\\.(cpp|cc)$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${CONVLAB_AVX2_FLAGS}")
    endif()
  endforeach()
endfunction()

# convlab_glob(<var> <dir> <patterns...>): sources under <dir>, recursively,
# skipping any sub-folder that has its own CMakeLists.txt.
function(convlab_glob out dir)
  set(patterns)
  foreach(p IN LISTS ARGN)
    list(APPEND patterns "${dir}/${p}")
  endforeach()
  file(GLOB_RECURSE found CONFIGURE_DEPENDS ${patterns})
  file(GLOB_RECURSE own CONFIGURE_DEPENDS "${dir}/*/CMakeLists.txt")
  foreach(cm IN LISTS own)
    get_filename_component(sub "${cm}" DIRECTORY)
    list(FILTER found EXCLUDE REGEX "^${sub}/")
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# convlab_dlopen_names(<var> <library file>): how a library the build found is
# opened at run time (core/lazy_library.hpp), as a C++ initializer list: its
# SONAME through the dynamic loader's search, then that name in the folder the
# build found it in. Empty for an empty <library file>.
function(convlab_dlopen_names out lib)
  set(names "")
  if(lib)
    get_filename_component(dir "${lib}" DIRECTORY)
    get_filename_component(soname "${lib}" NAME)
    get_filename_component(real "${lib}" REALPATH)
    execute_process(COMMAND ${CMAKE_OBJDUMP} -p "${real}" OUTPUT_VARIABLE dump RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND dump MATCHES "SONAME +([^ \t\r\n]+)")
      set(soname "${CMAKE_MATCH_1}")
    endif()
    set(names "\"${soname}\", \"${dir}/${soname}\"")
  endif()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()
