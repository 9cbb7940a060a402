// The ISA levels of kernels/cpu/gemm's micro-kernel table, in a header of its
// own with no includes, so that ISA translation units of other families (which
// keep to plain headers, see sgemm_ukernel_avx512.cpp) can name the sgemm
// micro-kernel they pack for (kernels/cpu/winograd).
#pragma once

namespace convlab::cpu {

// auto_ = the widest the CPU supports (cpu_info(), capped by CONVLAB_ISA).
enum class GemmIsa { auto_, avx512, avx2, portable };

}  // namespace convlab::cpu
