// ATen side of the pooling rows of tlrt-bench: what TorchLean's LibTorch backend runs for the six
// pooling symbols on a 2-D geometry, registered under the ops' names (aten_bench.cpp times them).
// Inputs arrive in the ABI's order as flat tensors of at least the needed size (input, or dY for
// avgpool_bwd, or input then dY); the host scalars are the ABI's in its order with the geometry
// arrays spelled out: (beta for smooth max,) H, W, kernel h, kernel w, stride h, stride w,
// padding h, padding w, channels.
//
// The compositions, call for call: the flat buffer reshaped to (C, H, W) and unsqueezed to a batch
// of one; max_pool2d_with_indices (values, squeezed) for the forward; the backward recomputes the
// indices with max_pool2d_with_indices and calls max_pool2d_with_indices_backward; avg_pool2d and
// avg_pool2d_backward with count_include_pad (the backward on an empty tensor of the input's
// shape). Smooth max pooling: a pivot filled with -inf (+inf for beta < 0) and a zero tensor of the
// output's shape; per kernel offset the zero tensor is cleared, the offset's strided input view is
// copied into its window view and the pivot becomes fmax (fmin) of both; then per offset the same
// copy and denominator.add_(exp((values - pivot) * beta)); the forward returns
// pivot + log(denominator) / beta; the backward recomputes both statistics and adds, per offset,
// dY * exp((x - pivot) * beta) / denominator into the strided view of a zero dX.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "aten_registry.h"

namespace bench::aten {
namespace {

struct Geometry {
  double beta = 1;
  int64_t h = 0, w = 0, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, c = 0;
  int64_t oh = 0, ow = 0;
};

Geometry geometry(S s, bool smooth) {
  Geometry g;
  int i = 0;
  if (smooth) g.beta = s[i++];
  int64_t* fields[] = {&g.h, &g.w, &g.kh, &g.kw, &g.sh, &g.sw, &g.ph, &g.pw, &g.c};
  for (int64_t* f : fields) *f = static_cast<int64_t>(s[i++]);
  g.oh = (g.h + 2 * g.ph - g.kh) / g.sh + 1;
  g.ow = (g.w + 2 * g.pw - g.kw) / g.sw + 1;
  return g;
}

at::Tensor input_of(const at::Tensor& flat, const Geometry& g) {
  return flat.narrow(0, 0, g.c * g.h * g.w).reshape({g.c, g.h, g.w});
}

at::Tensor output_of(const at::Tensor& flat, const Geometry& g) {
  return flat.narrow(0, 0, g.c * g.oh * g.ow).reshape({g.c, g.oh, g.ow});
}

std::vector<int64_t> kernel(const Geometry& g) {
  return {g.kh, g.kw};
}
std::vector<int64_t> stride(const Geometry& g) {
  return {g.sh, g.sw};
}
std::vector<int64_t> padding(const Geometry& g) {
  return {g.ph, g.pw};
}
std::vector<int64_t> dilation() {
  return {1, 1};
}

Tensors max_forward(X x, S s) {
  const Geometry g = geometry(s, false);
  const at::Tensor batched = input_of(x[0], g).unsqueeze(0);
  const auto result =
      at::max_pool2d_with_indices(batched, kernel(g), stride(g), padding(g), dilation(), false);
  return {std::get<0>(result).squeeze(0)};
}

Tensors max_backward(X x, S s) {
  const Geometry g = geometry(s, false);
  const at::Tensor source = input_of(x[0], g).unsqueeze(0);
  const at::Tensor dy = output_of(x[1], g).unsqueeze(0);
  const auto indices = std::get<1>(
      at::max_pool2d_with_indices(source, kernel(g), stride(g), padding(g), dilation(), false));
  return {at::max_pool2d_with_indices_backward(dy, source, kernel(g), stride(g), padding(g),
                                               dilation(), false, indices)
              .squeeze(0)};
}

Tensors avg_forward(X x, S s) {
  const Geometry g = geometry(s, false);
  const at::Tensor batched = input_of(x[0], g).unsqueeze(0);
  return {at::avg_pool2d(batched, kernel(g), stride(g), padding(g), false, true, std::nullopt)
              .squeeze(0)};
}

Tensors avg_backward(X x, S s) {
  const Geometry g = geometry(s, false);
  const at::Tensor dy = output_of(x[0], g).unsqueeze(0);
  const at::Tensor shape_only = at::empty({1, g.c, g.h, g.w}, dy.options());
  return {at::avg_pool2d_backward(dy, shape_only, kernel(g), stride(g), padding(g), false, true,
                                  std::nullopt)
              .squeeze(0)};
}

// Floor division for a positive divisor.
int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// For one kernel offset, the outputs whose window position is inside the input, per axis as a
// range of outputs and the strided range of inputs they read.
struct Offset {
  bool empty = false;
  int64_t out_lo[2] = {0, 0}, out_hi[2] = {0, 0}, in_lo[2] = {0, 0}, in_hi[2] = {0, 0};
  int64_t step[2] = {1, 1};

  Offset(const Geometry& g, int64_t kappa) {
    const int64_t k[2] = {kappa / g.kw, kappa % g.kw};
    const int64_t in[2] = {g.h, g.w}, out[2] = {g.oh, g.ow};
    const int64_t s[2] = {g.sh, g.sw}, p[2] = {g.ph, g.pw};
    for (int a = 0; a < 2; ++a) {
      const int64_t shift = k[a] - p[a];
      const int64_t lo = std::max<int64_t>(0, -floor_div(shift, s[a]));
      const int64_t hi = std::min<int64_t>(out[a], floor_div(in[a] - 1 - shift, s[a]) + 1);
      if (hi <= lo) {
        empty = true;
        return;
      }
      out_lo[a] = lo;
      out_hi[a] = hi;
      in_lo[a] = lo * s[a] + shift;
      in_hi[a] = (hi - 1) * s[a] + shift + 1;
      step[a] = s[a];
    }
  }
  at::Tensor outputs(const at::Tensor& t) const {
    return t.slice(1, out_lo[0], out_hi[0]).slice(2, out_lo[1], out_hi[1]);
  }
  at::Tensor inputs(const at::Tensor& t) const {
    return t.slice(1, in_lo[0], in_hi[0], step[0]).slice(2, in_lo[1], in_hi[1], step[1]);
  }
};

std::pair<at::Tensor, at::Tensor> smooth_statistics(const at::Tensor& x, const Geometry& g) {
  const std::vector<int64_t> shape = {g.c, g.oh, g.ow};
  const double start =
      g.beta > 0 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  at::Tensor pivot = at::full(shape, start, x.options());
  at::Tensor values = at::zeros(shape, x.options());
  const int64_t offsets = g.kh * g.kw;
  for (int64_t kappa = 0; kappa < offsets; ++kappa) {
    values.zero_();
    const Offset o(g, kappa);
    if (!o.empty) o.outputs(values).copy_(o.inputs(x));
    pivot = g.beta > 0 ? at::fmax(pivot, values) : at::fmin(pivot, values);
  }
  at::Tensor denominator = at::zeros_like(pivot);
  for (int64_t kappa = 0; kappa < offsets; ++kappa) {
    values.zero_();
    const Offset o(g, kappa);
    if (!o.empty) o.outputs(values).copy_(o.inputs(x));
    denominator.add_(((values - pivot) * g.beta).exp());
  }
  return {pivot, denominator};
}

Tensors smooth_forward(X x, S s) {
  const Geometry g = geometry(s, true);
  const auto stats = smooth_statistics(input_of(x[0], g), g);
  return {stats.first + stats.second.log() / g.beta};
}

Tensors smooth_backward(X x, S s) {
  const Geometry g = geometry(s, true);
  const at::Tensor input = input_of(x[0], g);
  const at::Tensor dy = output_of(x[1], g);
  const auto stats = smooth_statistics(input, g);
  at::Tensor dx = at::zeros_like(input);
  const int64_t offsets = g.kh * g.kw;
  for (int64_t kappa = 0; kappa < offsets; ++kappa) {
    const Offset o(g, kappa);
    if (o.empty) continue;
    const at::Tensor numerator = ((o.inputs(input) - o.outputs(stats.first)) * g.beta).exp();
    const at::Tensor weight = numerator / o.outputs(stats.second);
    o.inputs(dx).add_(o.outputs(dy) * weight);
  }
  return {dx};
}

const AtenOpRegistration kPoolOps({
    {"maxpool_fwd", 1, false, "reshape (C, H, W), unsqueeze; max_pool2d_with_indices; squeeze",
     &max_forward},
    {"maxpool_bwd", 2, false,
     "max_pool2d_with_indices (indices recomputed); max_pool2d_with_indices_backward; squeeze",
     &max_backward},
    {"avgpool_fwd", 1, false, "avg_pool2d (count_include_pad); squeeze", &avg_forward},
    {"avgpool_bwd", 1, false, "empty input-shaped tensor; avg_pool2d_backward; squeeze",
     &avg_backward},
    {"smooth_maxpool_fwd", 1, false,
     "per kernel offset: zero_, strided view copy_, fmax; per offset: zero_, copy_, sub, mul, "
     "exp, add_; log, div, add",
     &smooth_forward},
    {"smooth_maxpool_bwd", 2, false,
     "both statistics passes as the forward; per offset: sub, mul, exp, div, mul, add_ into a "
     "strided view of a zero dX",
     &smooth_backward},
});

}  // namespace
}  // namespace bench::aten
