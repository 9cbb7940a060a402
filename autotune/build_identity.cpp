#include "autotune/build_identity.hpp"

#include <cblas.h>
#include <fftw3.h>

#ifdef CONVLAB_HAS_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

#include "core/build_id.hpp"

namespace convlab {

namespace {

std::string compute(DeviceKind d) {
  std::string s = std::string("convlab ") + CONVLAB_VERSION + " " + std::string(build_id());
  if (d == DeviceKind::cuda) {
    const CudaInfo& g = cuda_info();
    s += " | CUDA runtime " + std::to_string(g.runtime_version) + " | cuDNN " + std::to_string(g.cudnn_version);
    return s;
  }
#ifdef CONVLAB_HAS_ONEDNN
  if (const dnnl_version_t* v = dnnl_version())
    s += " | oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         (v->hash && *v->hash && std::string_view(v->hash) != "N/A" ? std::string(" (") + v->hash + ")" : std::string());
#endif
  if (const char* cfg = openblas_get_config(); cfg && *cfg) {
    std::string c = cfg;
    while (!c.empty() && (c.back() == ' ' || c.back() == '\n')) c.pop_back();
    s += " | " + c;
  }
  s += std::string(" | FFTW ") + fftwf_version;
  return s;
}

}  // namespace

const std::string& build_identity(DeviceKind d) {
  static const std::string cpu = compute(DeviceKind::cpu);
  if (d == DeviceKind::cpu) return cpu;
  static const std::string cuda = compute(DeviceKind::cuda);
  return cuda;
}

}  // namespace convlab
