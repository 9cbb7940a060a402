# The counting build of the SIMT-emulated kernels (kernels/cuda/simt/counters.hpp),
# included by emulated_cuda.cmake after it has listed the emulated sources:
#   convlab_emulated_count   the kernels and the cuda.* drivers compiled with
#                            ThreadSanitizer's instrumentation only
#                            (-fsanitize=thread when compiling, never when
#                            linking: no libtsan), the emulator and the
#                            counting runtime (counters*.cpp, which receive the
#                            __tsan_* calls) compiled plainly.
# Code generation stays close to what nvcc issues per thread: no
# auto-vectorisation and no merging of adjacent stores (a GPU thread issues
# its own scalar accesses), no scalar replacement of aggregates (a float4 copy
# stays one 16-byte access, as LDS.128 / LDG.128), no loops turned into
# memset / memcpy calls (which would escape the instrumentation).
# convlab_emulated_count_sources(<target> <sources...>): compiles those sources
# (a test's own kernels) the same way.
include_guard(GLOBAL)

set(CONVLAB_EMULATED_COUNT OFF CACHE INTERNAL "")
if(CONVLAB_SANITIZE OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  message(STATUS "convlab: the emulator's counting build needs GCC and no CONVLAB_SANITIZE; skipped")
  return()
endif()
set(CONVLAB_EMULATED_COUNT ON CACHE INTERNAL "")

set(CONVLAB_COUNT_FLAGS -fsanitize=thread -O2 -fno-tree-sra -fno-tree-vectorize -fno-store-merging
    -fno-tree-loop-distribute-patterns CACHE INTERNAL "")

function(convlab_emulated_count_sources target)
  set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS "${CONVLAB_COUNT_FLAGS}")
endfunction()

add_library(convlab_emulated_count_kernels OBJECT ${_emu_wrappers})
target_include_directories(convlab_emulated_count_kernels PRIVATE ${PROJECT_SOURCE_DIR}
                           ${PROJECT_SOURCE_DIR}/include ${CONVLAB_CUDA_VECTOR_TYPES_DIR})
target_compile_options(convlab_emulated_count_kernels PRIVATE ${CONVLAB_COUNT_FLAGS} -Wno-unknown-pragmas)

set(_count_runtime ${_emu_sources})
list(REMOVE_ITEM _count_runtime ${_emu_wrappers})
add_library(convlab_emulated_count STATIC ${_count_runtime} $<TARGET_OBJECTS:convlab_emulated_count_kernels>
  ${PROJECT_SOURCE_DIR}/kernels/cuda/simt/counters.cpp ${PROJECT_SOURCE_DIR}/kernels/cuda/simt/counters_tsan.cpp
  ${PROJECT_SOURCE_DIR}/kernels/cuda/simt/counters_format.cpp ${PROJECT_SOURCE_DIR}/kernels/cuda/simt/counters_symbols.cpp)
target_include_directories(convlab_emulated_count PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include
                                                     ${CONVLAB_CUDA_VECTOR_TYPES_DIR})
target_link_libraries(convlab_emulated_count PUBLIC Threads::Threads)
target_compile_options(convlab_emulated_count PUBLIC -Wno-unknown-pragmas)
