# The SIMT-emulated CUDA builds (kernels/cuda/simt/simt.hpp's EMULATE path),
# shared by tests/kernels/cuda (kernels and their launchers) and
# tests/algorithms/cuda (the cuda.* algorithms: their compositions, supports,
# workspaces). Per variant one static library holds every kernels/cuda/**/*.cu
# and every algorithms/cuda/*.cu driver compiled as C++20 (no nvcc), except
# those that call a vendor library (*_cublas.cu, *_cufft.cu: cuBLAS and cuFFT
# exist only on the device), with the SIMT emulator, the fp64 reference,
# algorithms/algorithm.cpp, the shared tester (tests/support/conv_tester.cpp with
# algorithms/execute.cpp's ConvRunner) and the part of core they need, the
# emulator's memory standing in for the CUDA runtime
# (kernels/cuda/simt/device_emulated.cpp: a cuda.* algorithm is available and
# runs on "device" buffers as on a GPU):
#   plain   convlab_emulated        tests test_<folder>          names as discovered
#   asan    convlab_emulated_asan   tests test_<folder>_asan     "asan." + name
#           (-fsanitize=address,undefined, no recovery: UB fails the test)
#   tsan    convlab_emulated_tsan   tests test_<folder>_tsan     "tsan." + name
#           (-fsanitize=thread: a missing __syncthreads is a race)
#   count   convlab_emulated_count  (emulated_cuda_count.cmake) kernels instrumented
#           for the counting runtime, kernels/cuda/simt/counters.hpp
# Nothing else of the project is linked in (no OpenMP: TSan does not understand
# libgomp), so these build quickly and run on any machine.
include_guard(GLOBAL)

# convlab_emulated_tests(<name> <sources...>): one test binary per variant
# (<name>, <name>_asan, <name>_tsan), linked with that variant's library, its
# tests discovered with the variant's prefix.
function(convlab_emulated_tests name)
  foreach(v IN LISTS CONVLAB_EMULATED_VARIANTS)
    set(target ${name})
    set(lib convlab_emulated)
    set(prefix "")
    if(NOT v STREQUAL "plain")
      set(target ${name}_${v})
      set(lib convlab_emulated_${v})
      set(prefix "${v}.")
    endif()
    add_executable(${target} ${ARGN})
    target_link_libraries(${target} PRIVATE ${lib} GTest::gtest_main)
    gtest_discover_tests(${target} TEST_PREFIX "${prefix}" DISCOVERY_TIMEOUT 60
      PROPERTIES TIMEOUT 600 ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1")
  endforeach()
endfunction()

find_package(Threads REQUIRED)
find_path(CONVLAB_CUDA_VECTOR_TYPES_DIR vector_types.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include /usr/include)
set(CONVLAB_EMULATED_VARIANTS "" CACHE INTERNAL "")
set(CONVLAB_EMULATED_COUNT OFF CACHE INTERNAL "")
if(NOT CONVLAB_CUDA_VECTOR_TYPES_DIR)
  message(STATUS "convlab: CUDA's vector_types.h not found; emulated CUDA tests skipped")
  return()
endif()

# A sanitized whole build already instruments the plain variant; the GPU
# machine's build (preset gpu) leaves them to CI.
if(NOT CONVLAB_SANITIZE AND CONVLAB_EMULATED_SANITIZERS)
  set(CONVLAB_EMULATED_VARIANTS plain asan tsan CACHE INTERNAL "")
else()
  set(CONVLAB_EMULATED_VARIANTS plain CACHE INTERNAL "")
endif()

file(GLOB_RECURSE _emu_cu CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/cuda/*.cu
     ${PROJECT_SOURCE_DIR}/algorithms/cuda/*.cu)
list(FILTER _emu_cu EXCLUDE REGEX "_(cublas|cufft)\\.cu$")
set(_emu_wrappers)
foreach(cu IN LISTS _emu_cu)
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${cu})
  string(REPLACE "/" "_" flat ${rel})
  set(wrapper ${PROJECT_BINARY_DIR}/tests/emulated/${flat}.cpp)
  file(CONFIGURE OUTPUT ${wrapper} CONTENT "// generated: ${rel} compiled as C++ for the SIMT emulator\n#include \"${rel}\"\n")
  list(APPEND _emu_wrappers ${wrapper})
endforeach()
set(_emu_sources ${_emu_wrappers}
  ${PROJECT_SOURCE_DIR}/kernels/cuda/simt/emulator.cpp ${PROJECT_SOURCE_DIR}/kernels/cuda/simt/emulator_threads.cpp
  ${PROJECT_SOURCE_DIR}/kernels/ref/conv_ref.cpp ${PROJECT_SOURCE_DIR}/algorithms/algorithm.cpp
  ${PROJECT_SOURCE_DIR}/algorithms/nominal_cost.cpp
  ${PROJECT_SOURCE_DIR}/algorithms/execute.cpp ${PROJECT_SOURCE_DIR}/tests/support/conv_tester.cpp
  ${PROJECT_SOURCE_DIR}/core/layers.cpp ${PROJECT_SOURCE_DIR}/core/problem.cpp ${PROJECT_SOURCE_DIR}/core/error.cpp
  ${PROJECT_SOURCE_DIR}/core/tensor.cpp ${PROJECT_SOURCE_DIR}/core/timing.cpp ${PROJECT_SOURCE_DIR}/core/cuda_stream.cpp
  ${PROJECT_SOURCE_DIR}/core/stage_profile.cpp
  ${PROJECT_SOURCE_DIR}/core/device.cpp ${PROJECT_SOURCE_DIR}/kernels/cuda/simt/device_emulated.cpp)

foreach(v IN LISTS CONVLAB_EMULATED_VARIANTS)
  set(lib convlab_emulated)
  if(NOT v STREQUAL "plain")
    set(lib convlab_emulated_${v})
  endif()
  add_library(${lib} STATIC ${_emu_sources})
  target_include_directories(${lib} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include
                                           ${CONVLAB_CUDA_VECTOR_TYPES_DIR})
  target_link_libraries(${lib} PUBLIC Threads::Threads GTest::gtest)
  # conv_ref.cpp's `#pragma omp` and the kernels' `#pragma unroll` are ignored here on purpose.
  target_compile_options(${lib} PUBLIC -Wno-unknown-pragmas)
  if(v STREQUAL "asan")
    target_compile_options(${lib} PUBLIC -fsanitize=address,undefined -fno-sanitize-recover=all
                           -fno-omit-frame-pointer -O1 -g)
    target_link_options(${lib} PUBLIC -fsanitize=address,undefined)
  elseif(v STREQUAL "tsan")
    target_compile_options(${lib} PUBLIC -fsanitize=thread -O1 -g)
    target_link_options(${lib} PUBLIC -fsanitize=thread)
  endif()
endforeach()


include(${CMAKE_CURRENT_LIST_DIR}/emulated_cuda_count.cmake)
