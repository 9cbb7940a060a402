# The libraries convlab links beside its own, found ONE way: by the build
# (CMakeLists.txt) and by projects that link the installed library
# (convlabConfig.cmake includes this file, installed beside it). Every
# dependency ends up as an imported target, so no raw path is exported.
#
# Inputs:  CONVLAB_CUDA, CONVLAB_ONEDNN (ON/OFF).
# Targets: OpenMP::OpenMP_CXX, convlab::openblas (cpu.im2col_openblas, the GEMM
#          benchmark's peer: Debian's OpenMP build), convlab::fftw3f (cpu.fft_fftw), DNNL::dnnl (onednn.*),
#          CUDA::cudart_static and CUDA::toolkit (CUDAToolkit), convlab::cudnn (cudnn.*).
# cuDNN, cuBLAS, cuFFT and NCCL are not linked: convlab opens them on first use
# (core/cuda_libraries.hpp) by the names of the files found here, so their
# targets carry only headers (CUDA::toolkit: cuBLAS's and cuFFT's).
# Each is found with REQUIRED: a missing one stops the configure with CMake's
# line naming it (scripts/install-deps.sh installs them on Debian).
find_package(OpenMP REQUIRED COMPONENTS CXX)

# OpenBLAS: Debian's OpenMP build (libopenblas0-openmp), linked by its path, so
# OpenBLAS's threads are libgomp's -- the one runtime every CPU parallel region
# uses -- whatever the libopenblas.so.0 alternative points at. Debian's pthread
# build keeps its own pool spinning after each call, on the cores our kernels
# and oneDNN need next. The headers are the -dev package's (the
# OpenMP and pthread builds share the cblas interface).
if(NOT TARGET convlab::openblas)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(OPENBLAS REQUIRED openblas)
  find_library(CONVLAB_OPENBLAS_OPENMP NAMES libopenblas.so.0 openblas
               PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp NO_DEFAULT_PATH REQUIRED)
  add_library(convlab::openblas SHARED IMPORTED GLOBAL)
  set_target_properties(convlab::openblas PROPERTIES IMPORTED_LOCATION "${CONVLAB_OPENBLAS_OPENMP}"
                                                     INTERFACE_INCLUDE_DIRECTORIES "${OPENBLAS_INCLUDE_DIRS}")
endif()

if(NOT TARGET convlab::fftw3f)
  find_path(CONVLAB_FFTW3_INCLUDE fftw3.h REQUIRED)
  find_library(CONVLAB_FFTW3F_LIBRARY fftw3f REQUIRED)
  add_library(convlab::fftw3f UNKNOWN IMPORTED GLOBAL)
  set_target_properties(convlab::fftw3f PROPERTIES IMPORTED_LOCATION "${CONVLAB_FFTW3F_LIBRARY}"
                                                   INTERFACE_INCLUDE_DIRECTORIES "${CONVLAB_FFTW3_INCLUDE}")
endif()

if(CONVLAB_ONEDNN)
  find_package(dnnl CONFIG REQUIRED)
endif()

# MPI (data-parallel training, dist/comm.hpp): Debian's Open MPI through its C++
# compiler wrapper, without the deprecated C++ bindings (only the C API is used;
# MPI::MPI_CXX then carries OMPI_SKIP_MPICXX), so a consumer needs no C language.
if(CONVLAB_MPI)
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI REQUIRED COMPONENTS CXX)
endif()

if(CONVLAB_CUDA)
  find_package(CUDAToolkit REQUIRED)
  if(NOT TARGET convlab::cudnn)
    # cuDNN: the toolkit or system folders, CUDNN_ROOT, or the Python wheel
    # nvidia-cudnn-cu13 (where PyTorch keeps it on machines without a system
    # cuDNN; the wheel ships libcudnn.so.9 without the unversioned link).
    set(_cudnn_hints ${CUDNN_ROOT} $ENV{CUDNN_ROOT})
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_Interpreter_FOUND)
      execute_process(
        COMMAND ${Python3_EXECUTABLE} -c "import nvidia.cudnn as m; print(list(m.__path__)[0])"
        OUTPUT_VARIABLE _cudnn_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _cudnn_wheel_rc)
      if(_cudnn_wheel_rc EQUAL 0 AND IS_DIRECTORY "${_cudnn_wheel}")
        list(APPEND _cudnn_hints "${_cudnn_wheel}")
      endif()
    endif()
    find_library(CONVLAB_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
                 HINTS ${CUDAToolkit_LIBRARY_DIR} ${_cudnn_hints} PATH_SUFFIXES lib lib64 REQUIRED)
    find_path(CONVLAB_CUDNN_INCLUDE_DIR cudnn.h
              HINTS ${CUDAToolkit_INCLUDE_DIRS} ${_cudnn_hints} PATH_SUFFIXES include REQUIRED)
    add_library(convlab::cudnn INTERFACE IMPORTED GLOBAL)
    set_target_properties(convlab::cudnn PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${CONVLAB_CUDNN_INCLUDE_DIR}")
  endif()
endif()

# NCCL (GPU all-reduce of data-parallel training): shipped with the CUDA
# toolkit here (include/nccl.h, lib/libnccl.so). Optional: without it, or
# without MPI to bootstrap it, the CUDA data-parallel path says why.
if(CONVLAB_CUDA AND CONVLAB_MPI AND NOT TARGET convlab::nccl)
  find_path(CONVLAB_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/include)
  find_library(CONVLAB_NCCL_LIBRARY NAMES nccl libnccl.so.2
               HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT} PATH_SUFFIXES lib lib64)
  if(CONVLAB_NCCL_INCLUDE_DIR AND CONVLAB_NCCL_LIBRARY)
    add_library(convlab::nccl INTERFACE IMPORTED GLOBAL)
    set_target_properties(convlab::nccl PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${CONVLAB_NCCL_INCLUDE_DIR}")
  endif()
endif()
