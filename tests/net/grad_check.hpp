// Finite-difference gradient checks for the training layers.
//
// For a layer y = f(x; params) we take the scalar L = sum_i r_i * y_i with a
// fixed random r (so dL/dy = r), run the layer's backward with dy = r, and
// compare chosen coordinates of dL/dx and dL/dparam with central differences
// (L(v + h) - L(v - h)) / 2h, L summed in double.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "core/tensor.hpp"
#include "net/layers.hpp"

namespace convlab::train::testing {

inline std::vector<float> random_vec(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  std::vector<float> v(n);
  fill_uniform(v.data(), n, seed, lo, hi);
  return v;
}

inline double dot(const float* y, const std::vector<float>& r) {
  double s = 0;
  for (size_t i = 0; i < r.size(); ++i) s += double(y[i]) * r[i];
  return s;
}

struct GradCheck {
  double h = 1e-2;
  double rtol = 2e-3;  // relative to the largest analytic gradient entry checked
  int samples = 40;    // coordinates checked per tensor (all when the tensor is smaller)
};

// Checks `analytic` (the gradient of L w.r.t. `v`) by perturbing v in place.
// `loss` recomputes L from the current contents of v.
inline void check_tensor(const char* what, float* v, size_t n, const float* analytic, const std::function<double()>& loss,
                         const GradCheck& opt = {}) {
  double scale = 0;
  for (size_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(double(analytic[i])));
  scale = std::max(scale, 1e-3);
  const size_t step = n <= size_t(opt.samples) ? 1 : n / size_t(opt.samples);
  int bad = 0;
  for (size_t i = 0; i < n; i += step) {
    const float saved = v[i];
    v[i] = float(saved + opt.h);
    const double lp = loss();
    v[i] = float(saved - opt.h);
    const double lm = loss();
    v[i] = saved;
    const double fd = (lp - lm) / (2 * opt.h);
    const double err = std::fabs(fd - analytic[i]);
    if (err > opt.rtol * scale && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: analytic " << analytic[i] << " vs finite difference " << fd
                    << " (|err| " << err << " > " << opt.rtol * scale << ")";
  }
}

}  // namespace convlab::train::testing
