// ATen side of the convolution rows of tlrt-bench, registered under the ops' names: what
// TorchLean's LibTorch backend runs (its csrc/libtorch/torchlean.cpp), and ATen's bare
// convolution on the same data. TF32 for cuDNN is switched off in every composition
// (at::globalContext().setAllowTF32CuDNN(false)), as tlrt's default. Every input arrives as one
// flat tensor of the row's element count (input, kernel, bias or gradient, each narrowed); the host
// scalars are the geometry (N, Cin, Cout, H, W, k, padding, stride), square kernels and symmetric
// padding, 2-D.
//   * conv_fwd / convtranspose_fwd: reshape to (C, H, W) and (Cout, Cin, k, k) / (Cin, Cout, k, k),
//     at::convolution on x.unsqueeze(0) (transposed for the second), squeeze(0);
//   * conv_bwd / convtranspose_bwd: at::convolution_backward(dy.unsqueeze(0), x.unsqueeze(0), w,
//     bias sizes {Cout}, ..., output mask {true, true, true}), results reordered to (dW, dB, dX);
//   * conv_io: reshape to (N, Cin, H, W), at::constant_pad_nd by the before/after padding (the copy
//     TorchLean always makes), at::convolution with padding 0 (groups 1: no block extraction);
//   * conv_io_aten_cudnn: ATen's bare at::convolution with the padding given to cuDNN (no copy).
#include <ATen/ATen.h>

#include <array>
#include <cstdint>
#include <vector>

#include "aten_registry.h"

namespace bench::aten {
namespace {

struct Geo {
  int64_t n, cin, cout, h, w, k, p, s;
  int64_t ho() const { return (h + 2 * p - k) / s + 1; }
  int64_t wo() const { return (w + 2 * p - k) / s + 1; }
  int64_t hot() const { return (h - 1) * s + k - 2 * p; }
  int64_t wot() const { return (w - 1) * s + k - 2 * p; }
};

Geo geo(S s) {
  return Geo{static_cast<int64_t>(s[0]), static_cast<int64_t>(s[1]), static_cast<int64_t>(s[2]),
             static_cast<int64_t>(s[3]), static_cast<int64_t>(s[4]), static_cast<int64_t>(s[5]),
             static_cast<int64_t>(s[6]), static_cast<int64_t>(s[7])};
}

at::Tensor part(const at::Tensor& flat, std::vector<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return flat.narrow(0, 0, count).reshape(shape);
}

void no_tf32() {
  at::globalContext().setAllowTF32CuDNN(false);
}

Tensors forward(X x, S s, bool transposed) {
  no_tf32();
  const Geo g = geo(s);
  const at::Tensor input = part(x[0], {g.cin, g.h, g.w});
  const at::Tensor kernel =
      transposed ? part(x[1], {g.cin, g.cout, g.k, g.k}) : part(x[1], {g.cout, g.cin, g.k, g.k});
  const at::Tensor bias = part(x[2], {g.cout});
  return {at::convolution(input.unsqueeze(0), kernel, bias, {g.s, g.s}, {g.p, g.p}, {1, 1},
                          transposed, {0, 0}, 1)
              .squeeze(0)};
}

Tensors backward(X x, S s, bool transposed) {
  no_tf32();
  const Geo g = geo(s);
  const at::Tensor input = part(x[0], {g.cin, g.h, g.w});
  const at::Tensor kernel =
      transposed ? part(x[1], {g.cin, g.cout, g.k, g.k}) : part(x[1], {g.cout, g.cin, g.k, g.k});
  const at::Tensor grad =
      transposed ? part(x[2], {g.cout, g.hot(), g.wot()}) : part(x[2], {g.cout, g.ho(), g.wo()});
  const std::vector<int64_t> bias_shape{g.cout};
  const auto r = at::convolution_backward(
      grad.unsqueeze(0), input.unsqueeze(0), kernel, at::IntArrayRef(bias_shape), {g.s, g.s},
      {g.p, g.p}, {1, 1}, transposed, {0, 0}, 1, std::array<bool, 3>{true, true, true});
  return {std::get<1>(r), std::get<2>(r), std::get<0>(r).squeeze(0)};
}

Tensors conv_io_torchlean(X x, S s) {
  no_tf32();
  const Geo g = geo(s);
  const at::Tensor input = part(x[0], {g.n, g.cin, g.h, g.w});
  const at::Tensor kernel = part(x[1], {g.cout, g.cin, g.k, g.k});
  const at::Tensor bias = part(x[2], {g.cout});
  const at::Tensor padded = at::constant_pad_nd(input, {g.p, g.p, g.p, g.p}, 0);
  return {at::convolution(padded, kernel, bias, {g.s, g.s}, {0, 0}, {1, 1}, false, {0, 0}, 1)};
}

Tensors conv_io_cudnn(X x, S s) {
  no_tf32();
  const Geo g = geo(s);
  const at::Tensor input = part(x[0], {g.n, g.cin, g.h, g.w});
  const at::Tensor kernel = part(x[1], {g.cout, g.cin, g.k, g.k});
  const at::Tensor bias = part(x[2], {g.cout});
  return {at::convolution(input, kernel, bias, {g.s, g.s}, {g.p, g.p}, {1, 1}, false, {0, 0}, 1)};
}

const AtenOpRegistration kConvOps({
    {"conv_fwd", 3, false,
     "at::convolution(x.reshape(Cin,H,W).unsqueeze(0), w, b, stride, padding, 1, false, 0, "
     "1).squeeze(0)",
     [](X x, S s) { return forward(x, s, false); }},
    {"conv_bwd", 3, false,
     "at::convolution_backward(dy.unsqueeze(0), x.unsqueeze(0), w, {Cout}, ..., false, ..., "
     "{true,true,true}), reordered (dW, dB, dX.squeeze(0))",
     [](X x, S s) { return backward(x, s, false); }},
    {"convtranspose_fwd", 3, false,
     "at::convolution(x.unsqueeze(0), w (Cin,Cout,k,k), b, stride, padding, 1, true, 0, "
     "1).squeeze(0)",
     [](X x, S s) { return forward(x, s, true); }},
    {"convtranspose_bwd", 3, false,
     "at::convolution_backward(..., transposed = true, ..., {true,true,true}), reordered",
     [](X x, S s) { return backward(x, s, true); }},
    {"conv_io", 3, false,
     "at::constant_pad_nd(x.reshape(N,Cin,H,W), before/after, 0), at::convolution(padding 0)",
     conv_io_torchlean},
    {"conv_io_aten_cudnn", 3, false,
     "at::convolution(x.reshape(N,Cin,H,W), w, b, stride, padding, ...) without the padding copy, "
     "TF32 off",
     conv_io_cudnn},
});

}  // namespace
}  // namespace bench::aten
