// Convolution symbols (SPEC-ops 14.1, 14.2, 14.6; symbols-ops.tsv group conv-pool). The four
// fixed-layout symbols are pure: every failure panics, checked in TorchLean's order: the four
// arrays are arrays ("torchlean conv/pool: expected shape arrays"), their entries scalar naturals
// <= 2^32-1 ("... bad input dimension", "... bad kernel dimension", "... bad stride",
// "... bad padding"), the geometry (runtime/conv_geometry.h), then the buffers against it and
// their dtypes (runtime/conv_dispatch.h). conv_io is IO: every failure, malformed metadata
// included, is an IO error carrying TorchLean's message ("LibTorch: expected dimension array",
// "LibTorch: dimension exceeds UInt32 ABI", then runtime/conv_geometry.h's conv_io checks and the
// buffer sizes). Every argument is borrowed; every result is fresh and owned (an empty result has
// no payload); the backward symbols return (dKernel, dBias, dInput) as Lean's right-nested triple.
#include <string>

#include "abi/boundary.h"
#include "runtime/conv_dispatch.h"
#include "runtime/conv_geometry.h"

using namespace tlrt::abi;

namespace {

// One spatial array of a fixed-layout symbol: nat_array's decoding with TorchLean's message.
tlrt::Dims spatial_array(b_lean_obj_arg array, const char* op, const char* what,
                         const char* message) {
  try {
    return nat_array(array, op, what);
  } catch (const tlrt::Error& e) {
    if (e.kind() != tlrt::ErrorKind::invalid_argument) throw;
    std::string detail = e.what();
    const std::string prefix = std::string("tlrt: ") + op + ": ";
    if (detail.compare(0, prefix.size(), prefix) == 0) detail.erase(0, prefix.size());
    tlrt::fail(tlrt::ErrorKind::invalid_argument, op, std::string(message) + " (" + detail + ")");
  }
}

tlrt::ConvGeometry fixed_geometry(b_lean_obj_arg in_spatial, b_lean_obj_arg kernel_spatial,
                                  b_lean_obj_arg stride, b_lean_obj_arg padding,
                                  tlrt::ConvKind kind, const char* op) {
  for (b_lean_obj_arg array : {in_spatial, kernel_spatial, stride, padding}) {
    if (lean_is_scalar(array) || !lean_is_array(array)) {
      tlrt::fail(tlrt::ErrorKind::invalid_argument, op,
                 "torchlean conv/pool: expected shape arrays");
    }
  }
  const tlrt::Dims in =
      spatial_array(in_spatial, op, "inSpatial", "torchlean conv/pool: bad input dimension");
  const tlrt::Dims k = spatial_array(kernel_spatial, op, "kernelSpatial",
                                     "torchlean conv/pool: bad kernel dimension");
  const tlrt::Dims s = spatial_array(stride, op, "stride", "torchlean conv/pool: bad stride");
  const tlrt::Dims p = spatial_array(padding, op, "padding", "torchlean conv/pool: bad padding");
  return tlrt::conv_geometry(in, k, s, p, kind, op);
}

lean_obj_res forward(b_lean_obj_arg input, b_lean_obj_arg kernel, b_lean_obj_arg bias,
                     b_lean_obj_arg in_spatial, b_lean_obj_arg kernel_spatial,
                     b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t in_c, uint32_t out_c,
                     bool transposed, const char* op) {
  return pure_call(
      [&] {
        const tlrt::ConvGeometry g = fixed_geometry(
            in_spatial, kernel_spatial, stride, padding,
            transposed ? tlrt::ConvKind::transposed : tlrt::ConvKind::convolution, op);
        tlrt::Buffer& x = buffer_object(input, op);
        tlrt::Buffer& w = buffer_object(kernel, op);
        tlrt::Buffer& b = buffer_object(bias, op);
        return box(tlrt::conv_forward(x, w, b, g, in_c, out_c, transposed, op));
      },
      op);
}

lean_obj_res backward(b_lean_obj_arg input, b_lean_obj_arg kernel, b_lean_obj_arg gradient,
                      b_lean_obj_arg in_spatial, b_lean_obj_arg kernel_spatial,
                      b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t in_c, uint32_t out_c,
                      bool transposed, const char* op) {
  return pure_call(
      [&] {
        const tlrt::ConvGeometry g = fixed_geometry(
            in_spatial, kernel_spatial, stride, padding,
            transposed ? tlrt::ConvKind::transposed : tlrt::ConvKind::convolution, op);
        tlrt::Buffer& x = buffer_object(input, op);
        tlrt::Buffer& w = buffer_object(kernel, op);
        tlrt::Buffer& dy = buffer_object(gradient, op);
        tlrt::ConvGradients r = tlrt::conv_backward(x, w, dy, g, in_c, out_c, transposed, op);
        return box_tuple(std::move(r.kernel), std::move(r.bias), std::move(r.input));
      },
      op);
}

// One array of conv_io: nat_array's decoding with TorchLean's IO messages.
tlrt::Dims io_array(b_lean_obj_arg array, const char* op, const char* what) {
  if (lean_is_scalar(array) || !lean_is_array(array)) {
    tlrt::fail(tlrt::ErrorKind::invalid_argument, op, "LibTorch: expected dimension array");
  }
  return spatial_array(array, op, what, "LibTorch: dimension exceeds UInt32 ABI");
}

}  // namespace

extern "C" {

// input (inC, inSpatial...), kernel (outC, inC, kernelSpatial...), bias (outC), arrays borrowed;
// result owned: y (outC, out...) with y[o,q] = bias[o] + sum_c sum_kappa W[o,c,kappa] *
// x[c, q*s + kappa - p]; empty when outC or the output volume is 0; bias broadcast when the input
// is empty.
lean_obj_res torchlean_cuda_conv_fwd(b_lean_obj_arg input, b_lean_obj_arg kernel,
                                     b_lean_obj_arg bias, b_lean_obj_arg inSpatial,
                                     b_lean_obj_arg kernelSpatial, b_lean_obj_arg stride,
                                     b_lean_obj_arg padding, uint32_t inC, uint32_t outC) {
  return forward(input, kernel, bias, inSpatial, kernelSpatial, stride, padding, inC, outC, false,
                 "conv_fwd");
}

// input, kernel, gradOutput (outC, out...) and the arrays borrowed; result owned: the triple
// (dKernel (outC, inC, k...), dBias (outC), dInput (inC, in...)), each fresh.
lean_obj_res torchlean_cuda_conv_bwd(b_lean_obj_arg input, b_lean_obj_arg kernel,
                                     b_lean_obj_arg gradOutput, b_lean_obj_arg inSpatial,
                                     b_lean_obj_arg kernelSpatial, b_lean_obj_arg stride,
                                     b_lean_obj_arg padding, uint32_t inC, uint32_t outC) {
  return backward(input, kernel, gradOutput, inSpatial, kernelSpatial, stride, padding, inC, outC,
                  false, "conv_bwd");
}

// input (inC, in...), kernel (inC, outC, k...), bias (outC), arrays borrowed; result owned:
// y (outC, outT...), the input-adjoint of conv_fwd's geometry plus the bias.
lean_obj_res torchlean_cuda_convtranspose_fwd(b_lean_obj_arg input, b_lean_obj_arg kernel,
                                              b_lean_obj_arg bias, b_lean_obj_arg inSpatial,
                                              b_lean_obj_arg kernelSpatial, b_lean_obj_arg stride,
                                              b_lean_obj_arg padding, uint32_t inC, uint32_t outC) {
  return forward(input, kernel, bias, inSpatial, kernelSpatial, stride, padding, inC, outC, true,
                 "convtranspose_fwd");
}

// As conv_bwd for convtranspose_fwd: (dKernel (inC, outC, k...), dBias (outC), dInput).
lean_obj_res torchlean_cuda_convtranspose_bwd(b_lean_obj_arg input, b_lean_obj_arg kernel,
                                              b_lean_obj_arg gradOutput, b_lean_obj_arg inSpatial,
                                              b_lean_obj_arg kernelSpatial, b_lean_obj_arg stride,
                                              b_lean_obj_arg padding, uint32_t inC, uint32_t outC) {
  return backward(input, kernel, gradOutput, inSpatial, kernelSpatial, stride, padding, inC, outC,
                  true, "convtranspose_bwd");
}

// All arguments borrowed; IO result owned: (batch, Cout, extents...) of the grouped, dilated,
// asymmetrically padded convolution over the last size(stride) axes (SPEC-ops 14.6).
lean_obj_res torchlean_cuda_buffer_conv_io(b_lean_obj_arg input, b_lean_obj_arg kernel,
                                           b_lean_obj_arg bias, b_lean_obj_arg inputDims,
                                           b_lean_obj_arg kernelDims, b_lean_obj_arg stride,
                                           b_lean_obj_arg paddingBefore,
                                           b_lean_obj_arg paddingAfter, b_lean_obj_arg dilation,
                                           uint32_t groups) {
  return io_call([&] {
    const char* op = "conv_io";
    const tlrt::Dims shape = io_array(inputDims, op, "inputDims");
    const tlrt::Dims weight_shape = io_array(kernelDims, op, "kernelDims");
    const tlrt::Dims strides = io_array(stride, op, "stride");
    const tlrt::Dims before = io_array(paddingBefore, op, "paddingBefore");
    const tlrt::Dims after = io_array(paddingAfter, op, "paddingAfter");
    const tlrt::Dims dilations = io_array(dilation, op, "dilation");
    const tlrt::ConvIoGeometry g =
        tlrt::conv_io_geometry(shape, weight_shape, strides, before, after, dilations, groups, op);
    tlrt::Buffer& x = buffer_object(input, op);
    tlrt::Buffer& w = buffer_object(kernel, op);
    tlrt::Buffer& b = buffer_object(bias, op);
    return box(tlrt::conv_io(x, w, b, g, op));
  });
}

}  // extern "C"
