// ATen side of the layer-normalization rows of tlrt-bench: what TorchLean's LibTorch backend runs,
// registered under the ops' names (aten_bench.cpp times them). Every input arrives as one flat
// tensor of the row's element count; the host scalars give the view.
//   * layer_norm_fwd (rows, cols, invCols, epsilon): x widened to binary64, centered by a device
//     divisor, the variance of the centered values, sd = sqrt(var + eps), xhat and invStd rounded
//     back to float32, y = xhat * gamma + beta: 16 kernels with binary64 temporaries;
//   * layer_norm_bwd (rows, cols, colsScale, invCols): the 13 kernels of the explicit VJP
//     (dxhat = dy * gamma, its scaled copy minus its row sum, minus xhat times the row sum of
//     dxhat * xhat, times invStd, times invCols; the column sums of dy * xhat and dy);
//   * layer_norm_fwd_aten_native (rows, cols, invCols, epsilon): ATen's own fused at::layer_norm
//     forward on the same shape, for reference (its statistics are not the contract's).
#include <ATen/ATen.h>

#include <cstdint>

#include "aten_registry.h"

namespace bench::aten {
namespace {

int64_t dim(S s, int i) {
  return static_cast<int64_t>(s[i]);
}

double rounded_to(const at::Tensor& like, double v) {
  return like.scalar_type() == at::kFloat ? static_cast<double>(static_cast<float>(v)) : v;
}

Tensors forward(X x, S s) {
  const int64_t rows = dim(s, 0), cols = dim(s, 1);
  const double epsilon = s[3];
  const at::Tensor input = x[0].narrow(0, 0, rows * cols).view({rows, cols}).to(at::kDouble);
  const at::Tensor weight = x[1].narrow(0, 0, cols);
  const at::Tensor bias = x[2].narrow(0, 0, cols);
  const at::Tensor divisor = at::full({1, 1}, static_cast<double>(cols), input.options());
  const at::Tensor centered = input - input.sum({1}, true) / divisor;
  const at::Tensor sd = (centered.square().sum({1}, true) / divisor + epsilon).sqrt();
  const at::Tensor normalized = (centered / sd).to(weight.scalar_type());
  const at::Tensor inverse = sd.reciprocal().to(weight.scalar_type());
  return {normalized * weight + bias, normalized, inverse};
}

Tensors backward(X x, S s) {
  const int64_t rows = dim(s, 0), cols = dim(s, 1);
  const at::Tensor dy = x[0].narrow(0, 0, rows * cols).view({rows, cols});
  const at::Tensor xhat = x[1].narrow(0, 0, rows * cols).view({rows, cols});
  const at::Tensor inverse = x[2].narrow(0, 0, rows).view({rows, 1});
  const at::Tensor weight = x[3].narrow(0, 0, cols);
  const at::Tensor dxhat = dy * weight;
  const at::Tensor centered = dxhat * rounded_to(dxhat, s[2]) - dxhat.sum({1}, true);
  const at::Tensor term = centered - xhat * (dxhat * xhat).sum({1}, true);
  const at::Tensor dx = (term * inverse) * rounded_to(dxhat, s[3]);
  return {dx, (dy * xhat).sum(0), dy.sum(0)};
}

Tensors native_forward(X x, S s) {
  const int64_t rows = dim(s, 0), cols = dim(s, 1);
  const at::Tensor input = x[0].narrow(0, 0, rows * cols).view({rows, cols});
  return {at::layer_norm(input, {cols}, x[1].narrow(0, 0, cols), x[2].narrow(0, 0, cols), s[3])};
}

const AtenOpRegistration kLayerNormOps({
    {"layer_norm_fwd", 3, false,
     "to(double), full, sum, div, sub, square, sum, div, add, sqrt, div, to, reciprocal, to, mul, "
     "add (16 kernels)",
     forward},
    {"layer_norm_bwd", 4, false,
     "mul, mul, sum, sub, mul, sum, mul, sub, mul, mul, mul, sum, sum (13 kernels)", backward},
    {"layer_norm_fwd_aten_native", 3, false, "at::layer_norm (ATen's fused forward)",
     native_forward},
});

}  // namespace
}  // namespace bench::aten
