// The portable build of the FFT and complex-GEMM kernels (see fft_impl.inc; the
// compile flags come from the file name, cmake/convlab.cmake).
#define CONVLAB_FFT_ISA portable
#include "kernels/cpu/fft/fft_impl.inc"
