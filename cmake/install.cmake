# `cmake --install build [--prefix DIR]`: the convlab library for other projects.
#
#   DIR/include/convlab/convlab.hpp          the public API (include/convlab/convlab.hpp)
#   DIR/include/convlab/{core,kernels,algorithms,autotune}/...   the headers the public ones include, and
#                                            no others, their includes prefixed <convlab/...>
#                                            (cmake/install_headers.cmake); DIR/include is the consumer's
#                                            only include path
#   DIR/lib/libconvlab_*.a                   the static libraries, one per floor
#   DIR/include/convlab/testing.hpp          the tester (ConvTester and its sweeps)
#   DIR/lib/libconvlab_testing.a             its library (when the tests are built: GoogleTest)
#   DIR/lib/cmake/convlab/                   convlabConfig.cmake: find_package(convlab) -> convlab::convlab,
#                                            convlab::testing (the tester), convlab::plugin (the headers
#                                            only, for a plugin: algorithms/plugin.hpp)
#   DIR/bin/convlab                          the CLI (its symbols exported: plugins resolve against it)
#
# A consumer links convlab::convlab and includes <convlab/convlab.hpp>; its
# dependencies (OpenMP, OpenBLAS, FFTW, oneDNN, CUDA, cuDNN) are found again on
# the consumer's machine by the same cmake/dependencies.cmake the build used.
# examples/consumer is such a project; the ctest install.consumer_builds
# installs this build and builds and runs it. examples/my_algorithm is a
# researcher's own algorithm: tested with convlab::testing, loaded as a plugin
# by the installed CLI (the ctest install.my_algorithm).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CONVLAB_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/convlab)
set(_convlab_libs convlab_core convlab_kernels_cpu convlab_algorithms convlab_autotune convlab_net convlab_train
                  convlab_dist convlab_report convlab_lib)
if(TARGET convlab_kernels_cuda)
  list(APPEND _convlab_libs convlab_kernels_cuda)
endif()
set_target_properties(convlab_lib PROPERTIES EXPORT_NAME convlab)
# A plugin compiles against the headers and links none of the libraries: the
# executable that loads it (convlab, bench_conv: ENABLE_EXPORTS) supplies them.
add_library(convlab_plugin INTERFACE)
target_include_directories(convlab_plugin INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                                    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                                    $<INSTALL_INTERFACE:include>)
target_compile_features(convlab_plugin INTERFACE cxx_std_20)
set_target_properties(convlab_plugin PROPERTIES EXPORT_NAME plugin)
list(APPEND _convlab_libs convlab_plugin)
if(TARGET convlab_testing)
  list(APPEND _convlab_libs convlab_testing)
endif()
install(TARGETS ${_convlab_libs} EXPORT convlabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS convlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(CODE "set(CONVLAB_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")")
install(SCRIPT ${PROJECT_SOURCE_DIR}/cmake/install_headers.cmake)
install(EXPORT convlabTargets NAMESPACE convlab:: DESTINATION ${CONVLAB_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/convlabConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/convlabConfig.cmake INSTALL_DESTINATION ${CONVLAB_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/convlabConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/convlabConfig.cmake ${PROJECT_BINARY_DIR}/convlabConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/dependencies.cmake
        DESTINATION ${CONVLAB_INSTALL_CMAKEDIR})
