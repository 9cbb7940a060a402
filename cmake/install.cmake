# `cmake --install build [--prefix DIR]`: the convlab library for other projects.
#
#   DIR/include/convlab/convlab.hpp          the public API (include/convlab/convlab.hpp)
#   DIR/include/convlab/{core,kernels,algorithms,autotune,net,train,dist,report}/...   the headers it builds on
#   DIR/lib/libconvlab_*.a                   the static libraries, one per floor
#   DIR/lib/cmake/convlab/                   convlabConfig.cmake: find_package(convlab) -> convlab::convlab
#   DIR/bin/convlab                          the CLI
#
# A consumer links convlab::convlab and includes <convlab/convlab.hpp>; its
# dependencies (OpenMP, OpenBLAS, FFTW, oneDNN, CUDA, cuDNN) are found again on
# the consumer's machine by the same cmake/dependencies.cmake the build used.
# examples/consumer is such a project; the ctest install.consumer_builds
# installs this build and builds and runs it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CONVLAB_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/convlab)
set(_convlab_libs convlab_core convlab_kernels_cpu convlab_algorithms convlab_autotune convlab_net convlab_train
                  convlab_dist convlab_report convlab_lib)
if(TARGET convlab_kernels_cuda)
  list(APPEND _convlab_libs convlab_kernels_cuda)
endif()
set_target_properties(convlab_lib PROPERTIES EXPORT_NAME convlab)
install(TARGETS ${_convlab_libs} EXPORT convlabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS convlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/convlab DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(floor core kernels algorithms autotune net train dist report)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${floor} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/convlab
          FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
endforeach()
install(EXPORT convlabTargets NAMESPACE convlab:: DESTINATION ${CONVLAB_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/convlabConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/convlabConfig.cmake INSTALL_DESTINATION ${CONVLAB_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/convlabConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/convlabConfig.cmake ${PROJECT_BINARY_DIR}/convlabConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/dependencies.cmake
        DESTINATION ${CONVLAB_INSTALL_CMAKEDIR})
