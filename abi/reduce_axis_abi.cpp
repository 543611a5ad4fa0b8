// Axis reductions (SPEC-ops 8; symbols-ops.tsv group reduction-axis, and reduce_from_broadcast of
// group shape). Pure symbols: every failure (released buffer, non-buffer argument, encoded buffer,
// sizes that disagree with the shape arguments, a shape product past int64, an invalid axis or
// axis map, a malformed Array Nat, out of memory, device error) panics. Every argument is
// borrowed; every result is a fresh owned buffer of the input's dtype (an empty result has no
// payload).
#include <utility>

#include "abi/boundary.h"
#include "runtime/reduce_axis_dispatch.h"
#include "runtime/shape_geometry.h"

using namespace tlrt::abi;

extern "C" {

// x borrowed; result owned: rows sums of the (rows, cols) view (order unspecified).
lean_obj_res torchlean_cuda_buffer_reduce_sum_by_row(b_lean_obj_arg x, uint32_t rows,
                                                     uint32_t cols) {
  return pure_call([&] {
    const char* op = "reduce_sum_by_row";
    return box(tlrt::reduce_sum_by_row(live_buffer(x, op), rows, cols, op));
  });
}

// x borrowed; result owned: rows maxima ignoring NaN (+0 above -0); zeros when rows or cols is 0.
lean_obj_res torchlean_cuda_buffer_reduce_max_by_row(b_lean_obj_arg x, uint32_t rows,
                                                     uint32_t cols) {
  return pure_call([&] {
    const char* op = "reduce_max_by_row";
    return box(tlrt::reduce_max_by_row(live_buffer(x, op), rows, cols, op));
  });
}

// x borrowed; result owned: cols maxima ignoring NaN (+0 above -0); zeros when rows or cols is 0.
lean_obj_res torchlean_cuda_buffer_reduce_max_by_column(b_lean_obj_arg x, uint32_t rows,
                                                        uint32_t cols) {
  return pure_call([&] {
    const char* op = "reduce_max_by_column";
    return box(tlrt::reduce_max_by_column(live_buffer(x, op), rows, cols, op));
  });
}

// x, dims borrowed; result owned: the ordered fold over `axis` (dims without axis), or a copy of
// the single element for dims = []. dims is decoded and its product checked before x is looked
// at, as TorchLean does (and as swap_adjacent_at_depth and broadcast_to check their shapes).
lean_obj_res torchlean_cuda_buffer_reduce_sum_axis(b_lean_obj_arg x, b_lean_obj_arg dims,
                                                   uint32_t axis) {
  return pure_call([&] {
    const char* op = "reduce_sum_axis";
    const tlrt::Dims shape = nat_array(dims, op, "dims");
    tlrt::shape_size(shape, "dims", op);
    tlrt::Buffer& input = live_buffer(x, op);
    return box(tlrt::reduce_sum_axis(input, shape, axis, op));
  });
}

// dOut, inDims, outDims, axisMap borrowed; result owned: the adjoint of broadcast_to, of shape
// inDims (the ordered column fold over the reduced output coordinates). The geometry is checked
// as broadcast_to checks it, before dOut is looked at.
lean_obj_res torchlean_cuda_buffer_reduce_from_broadcast(b_lean_obj_arg dOut, b_lean_obj_arg inDims,
                                                         b_lean_obj_arg outDims,
                                                         b_lean_obj_arg axisMap) {
  return pure_call([&] {
    const char* op = "reduce_from_broadcast";
    const tlrt::BroadcastGeometry g = broadcast_arguments(inDims, outDims, axisMap, op);
    tlrt::Buffer& d = live_buffer(dOut, op);
    return box(tlrt::reduce_from_broadcast(d, g, op));
  });
}

}  // extern "C"
