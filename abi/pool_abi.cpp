// Pooling (SPEC-ops 14.1, 14.3-14.5; symbols-ops.tsv group conv-pool, the six pooling symbols).
// Pure symbols: every failure (released buffer, non-buffer or encoded argument, a geometry array
// that is not an Array Nat of entries <= 2^32-1, invalid geometry, buffer sizes that disagree with
// the geometry, mixed dtypes, an invalid smooth-pool beta, out of memory, device error) panics.
// Every argument is borrowed; every result is a fresh owned buffer of the operands' dtype (an
// empty result has no payload). TorchLean's order: the geometry arrays and the geometry, then each
// buffer (gradOutput before input) live, real and of its size (runtime/pool_dispatch.h).
#include <string>

#include "abi/boundary.h"
#include "runtime/pool_dispatch.h"

using namespace tlrt::abi;

namespace {

// The detail of a tlrt::Error: its message without the "tlrt: <op>: " prefix.
std::string detail_of(const tlrt::Error& e, const char* op) {
  const std::string message = e.what();
  const std::string prefix = std::string("tlrt: ") + op + ": ";
  return message.compare(0, prefix.size(), prefix) == 0 ? message.substr(prefix.size()) : message;
}

tlrt::Dims geometry_array(b_lean_obj_arg array, const char* op, const char* name,
                          const char* what) {
  try {
    return nat_array(array, op, name);
  } catch (const tlrt::Error& e) {
    tlrt::fail(tlrt::ErrorKind::invalid_argument, op,
               std::string("torchlean conv/pool: ") + what + " (" + detail_of(e, op) + ")");
  }
}

// The four geometry arrays in the reference's order: all four must be arrays ("expected shape
// arrays"), then each is decoded ("bad input dimension", "bad kernel dimension", "bad stride",
// "bad padding").
tlrt::PoolArguments pool_arguments(b_lean_obj_arg inSpatial, b_lean_obj_arg kernel,
                                   b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t channels,
                                   const char* op) {
  for (b_lean_obj_arg array : {inSpatial, kernel, stride, padding}) {
    if (lean_is_scalar(array) || !lean_is_array(array)) {
      tlrt::fail(tlrt::ErrorKind::invalid_argument, op,
                 "torchlean conv/pool: expected shape arrays");
    }
  }
  tlrt::PoolArguments args;
  args.in = geometry_array(inSpatial, op, "inSpatial", "bad input dimension");
  args.kernel = geometry_array(kernel, op, "kernel", "bad kernel dimension");
  args.stride = geometry_array(stride, op, "stride", "bad stride");
  args.padding = geometry_array(padding, op, "padding", "bad padding");
  args.channels = channels;
  return args;
}

}  // namespace

extern "C" {

// input, the arrays borrowed; result owned: per channel and window the first maximum over the
// valid positions (a NaN replaces the choice: the last NaN is selected); empty when C or an output
// extent is 0.
lean_obj_res torchlean_cuda_maxpool_fwd(b_lean_obj_arg input, b_lean_obj_arg inSpatial,
                                        b_lean_obj_arg kernel, b_lean_obj_arg stride,
                                        b_lean_obj_arg padding, uint32_t channels) {
  return pure_call([&] {
    const char* op = "maxpool_fwd";
    const tlrt::PoolArguments args =
        pool_arguments(inSpatial, kernel, stride, padding, channels, op);
    tlrt::Buffer& x = buffer_object(input, op);
    return box(tlrt::maxpool_fwd(x, args, op));
  });
}

// input, gradOutput, the arrays borrowed; result owned (C x prod(in)): each window's cotangent
// added into its selection, recomputed from input; zeros when gradOutput is empty.
lean_obj_res torchlean_cuda_maxpool_bwd(b_lean_obj_arg input, b_lean_obj_arg gradOutput,
                                        b_lean_obj_arg inSpatial, b_lean_obj_arg kernel,
                                        b_lean_obj_arg stride, b_lean_obj_arg padding,
                                        uint32_t channels) {
  return pure_call([&] {
    const char* op = "maxpool_bwd";
    const tlrt::PoolArguments args =
        pool_arguments(inSpatial, kernel, stride, padding, channels, op);
    tlrt::Buffer& x = buffer_object(input, op);
    tlrt::Buffer& dy = buffer_object(gradOutput, op);
    return box(tlrt::maxpool_bwd(x, dy, args, op));
  });
}

// input, the arrays borrowed; result owned: fl(window sum / prod(kernel)) (count_include_pad).
lean_obj_res torchlean_cuda_avgpool_fwd(b_lean_obj_arg input, b_lean_obj_arg inSpatial,
                                        b_lean_obj_arg kernel, b_lean_obj_arg stride,
                                        b_lean_obj_arg padding, uint32_t channels) {
  return pure_call([&] {
    const char* op = "avgpool_fwd";
    const tlrt::PoolArguments args =
        pool_arguments(inSpatial, kernel, stride, padding, channels, op);
    tlrt::Buffer& x = buffer_object(input, op);
    return box(tlrt::avgpool_fwd(x, args, op));
  });
}

// gradOutput, the arrays borrowed; result owned (C x prod(in)): the sum of fl(dy / prod(kernel))
// over the windows containing each input; zeros when gradOutput is empty.
lean_obj_res torchlean_cuda_avgpool_bwd(b_lean_obj_arg gradOutput, b_lean_obj_arg inSpatial,
                                        b_lean_obj_arg kernel, b_lean_obj_arg stride,
                                        b_lean_obj_arg padding, uint32_t channels) {
  return pure_call([&] {
    const char* op = "avgpool_bwd";
    const tlrt::PoolArguments args =
        pool_arguments(inSpatial, kernel, stride, padding, channels, op);
    tlrt::Buffer& dy = buffer_object(gradOutput, op);
    return box(tlrt::avgpool_bwd(dy, args, op));
  });
}

// input, the arrays borrowed; result owned: the pivoted log-sum-exp of each window with padding
// as the literal 0; beta (rounded to the dtype) must be finite and nonzero unless the output is
// empty.
lean_obj_res torchlean_cuda_smooth_maxpool_fwd(b_lean_obj_arg input, double beta,
                                               b_lean_obj_arg inSpatial, b_lean_obj_arg kernel,
                                               b_lean_obj_arg stride, b_lean_obj_arg padding,
                                               uint32_t channels) {
  return pure_call([&] {
    const char* op = "smooth_maxpool_fwd";
    const tlrt::PoolArguments args =
        pool_arguments(inSpatial, kernel, stride, padding, channels, op);
    tlrt::Buffer& x = buffer_object(input, op);
    return box(tlrt::smooth_maxpool_fwd(x, beta, args, op));
  });
}

// input, gradOutput, the arrays borrowed; result owned (C x prod(in)): the VJP of
// smooth_maxpool_fwd, added into dx in increasing kernel offset; beta always checked.
lean_obj_res torchlean_cuda_smooth_maxpool_bwd(b_lean_obj_arg input, b_lean_obj_arg gradOutput,
                                               double beta, b_lean_obj_arg inSpatial,
                                               b_lean_obj_arg kernel, b_lean_obj_arg stride,
                                               b_lean_obj_arg padding, uint32_t channels) {
  return pure_call([&] {
    const char* op = "smooth_maxpool_bwd";
    const tlrt::PoolArguments args =
        pool_arguments(inSpatial, kernel, stride, padding, channels, op);
    tlrt::Buffer& x = buffer_object(input, op);
    tlrt::Buffer& dy = buffer_object(gradOutput, op);
    return box(tlrt::smooth_maxpool_bwd(x, dy, beta, args, op));
  });
}

}  // extern "C"
