// The sgemm micro-kernel table and the ISA choice (see sgemm.hpp): one entry per
// ISA, each with its optional packing routines and packing / two-destination variants.
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"
#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

namespace {

const SgemmUkernel kAvx512{12, 32, sgemm_ukernel_12x32_avx512, "sgemm_ukernel_12x32_avx512",
                           sgemm_pack_transpose_avx512, sgemm_pack_rows_avx512, 16,
                           sgemm_ukernel_12x32_avx512_pack, 4, sgemm_ukernel_12x32_avx512_pack2,
                           sgemm_ukernel_12x32_avx512_c2};
const SgemmUkernel kAvx2{6, 16, sgemm_ukernel_6x16_avx2, "sgemm_ukernel_6x16_avx2", sgemm_pack_transpose_avx2,
                         sgemm_pack_rows_avx2, 8, nullptr, 0};
const SgemmUkernel kPortable{4, 16, sgemm_ukernel_4x16_portable, "sgemm_ukernel_4x16_portable"};

}  // namespace

std::string_view to_string(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::auto_: return "auto";
    case GemmIsa::avx512: return "avx512";
    case GemmIsa::avx2: return "avx2";
    case GemmIsa::portable: return "portable";
  }
  return "?";
}

bool sgemm_isa_supported(GemmIsa isa) {
  const CpuInfo& ci = cpu_info();
  switch (isa) {
    // The *_avx512.cpp files are compiled with F/VL/BW/DQ (cmake/convlab.cmake).
    case GemmIsa::avx512: return ci.avx512f && ci.avx512vl && ci.avx512bw && ci.avx512dq && ci.avx2 && ci.fma;
    case GemmIsa::avx2: return ci.avx2 && ci.fma;
    default: return true;
  }
}

GemmIsa sgemm_resolve_isa(GemmIsa isa) {
  if (isa == GemmIsa::auto_) {
    if (sgemm_isa_supported(GemmIsa::avx512)) return GemmIsa::avx512;
    if (sgemm_isa_supported(GemmIsa::avx2)) return GemmIsa::avx2;
    return GemmIsa::portable;
  }
  if (!sgemm_isa_supported(isa)) fail("sgemm: this CPU does not support " + std::string(to_string(isa)));
  return isa;
}

const SgemmUkernel& sgemm_ukernel(GemmIsa isa) {
  switch (sgemm_resolve_isa(isa)) {
    case GemmIsa::avx512: return kAvx512;
    case GemmIsa::avx2: return kAvx2;
    default: return kPortable;
  }
}

}  // namespace convlab::cpu
