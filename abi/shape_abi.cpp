// Shape ops (SPEC-ops 8; symbols-ops.tsv group shape). Pure symbols: every failure (released
// buffer, non-buffer argument, sizes that disagree with the arguments or shapes, an extent out of
// bounds, a bad axis map or depth, mixed dtypes, out of memory, device error) panics. concat1d and
// slice1d also accept encoded buffers (a byte copy of their words, runtime/encoded.h; the result
// retains the format of the first operand). The other ops refuse encoded buffers (live_buffer:
// "expected a real buffer").
#include <string>
#include <utility>
#include <vector>

#include "abi/boundary.h"
#include "runtime/encoded.h"
#include "runtime/shape_dispatch.h"
#include "runtime/shape_geometry.h"

using namespace tlrt::abi;

extern "C" {

// a, b borrowed; result owned: a fresh buffer [a; b] of n + m elements of a's dtype (byte copy).
// Requires size(a) = n, size(b) = m and one dtype. When either operand is encoded both must be
// live encoded buffers of one word width with sizes n and m ("incompatible encoded buffers"); the
// result holds their bytes one after the other and retains a's format.
lean_obj_res torchlean_cuda_buffer_concat1d(b_lean_obj_arg a, b_lean_obj_arg b, uint32_t n,
                                            uint32_t m) {
  return pure_call([&] {
    const char* op = "concat1d";
    torchlean_cuda_buffer* ra = record_of(a, op);
    torchlean_cuda_buffer* rb = record_of(b, op);
    if (ra->format != nullptr || rb->format != nullptr) {
      auto out = tlrt::concat_encoded(*ra->buffer, *rb->buffer, n, m, op);
      return wrap_encoded(std::move(out), ra->format);
    }
    tlrt::Buffer& first = live_buffer(a, op);
    tlrt::Buffer& second = live_buffer(b, op);
    return box(tlrt::concat1d(first, second, n, m, op));
  });
}

// x borrowed; result owned: a fresh buffer x[start, start + len) of x's dtype (byte copy).
// Requires size(x) = n, start <= n and len <= n - start. An encoded x gives the words
// [start, start + len) retaining its format ("invalid encoded buffer or extent").
lean_obj_res torchlean_cuda_buffer_slice1d(b_lean_obj_arg x, uint32_t n, uint32_t start,
                                           uint32_t len) {
  return pure_call([&] {
    const char* op = "slice1d";
    torchlean_cuda_buffer* rx = record_of(x, op);
    if (rx->format != nullptr) {
      return wrap_encoded(tlrt::slice_encoded(*rx->buffer, n, start, len, op), rx->format);
    }
    return box(tlrt::slice1d(live_buffer(x, op), n, start, len, op));
  });
}

// v borrowed; result owned: a fresh [rows, cols] buffer with out[i, j] = v[i] (byte copies).
// Checks prod([rows, cols]) for overflow first, then v, then size(v) = rows (TorchLean's order).
lean_obj_res torchlean_cuda_buffer_broadcast_vec_to_cols(b_lean_obj_arg v, uint32_t rows,
                                                         uint32_t cols) {
  return pure_call([&] {
    const char* op = "broadcast_vec_to_cols";
    tlrt::shape_size({rows, cols}, "[rows, cols]", op);
    tlrt::Buffer& vec = live_buffer(v, op);
    return box(tlrt::broadcast_vec_to_cols(vec, rows, cols, op));
  });
}

// x, inDims, outDims, axisMap borrowed; result owned: a fresh buffer of prod(outDims) elements,
// out[o] = x[i] with i_a = 0 where inDims[a] = 1, else o_j for the j with axisMap[j] = a + 1
// (byte copies). The arrays are decoded and the geometry checked before x is looked at, as
// TorchLean does: inDims and its product, outDims and its product, axisMap, then the map's rules
// (runtime/shape_geometry.h), then size(x) = prod(inDims).
lean_obj_res torchlean_cuda_buffer_broadcast_to(b_lean_obj_arg x, b_lean_obj_arg inDims,
                                                b_lean_obj_arg outDims, b_lean_obj_arg axisMap) {
  return pure_call([&] {
    const char* op = "broadcast_to";
    const tlrt::BroadcastGeometry g = broadcast_arguments(inDims, outDims, axisMap, op);
    tlrt::Buffer& input = live_buffer(x, op);
    return box(tlrt::broadcast_to(input, g, op));
  });
}

// x, dims borrowed; result owned: a fresh buffer of x's shape dims with axes depth and depth + 1
// exchanged, materialized row-major (byte copies). Checks, in TorchLean's order: dims decoded and
// its product, depth + 1 < rank ("swapAdjacentAtDepth: invalid depth"), then size(x) = prod(dims).
lean_obj_res torchlean_cuda_buffer_swap_adjacent_at_depth(b_lean_obj_arg x, b_lean_obj_arg dims,
                                                          uint32_t depth) {
  return pure_call([&] {
    const char* op = "swap_adjacent_at_depth";
    const tlrt::SwapGeometry g = tlrt::swap_geometry(nat_array(dims, op, "dims"), depth, op);
    tlrt::Buffer& input = live_buffer(x, op);
    return box(tlrt::swap_adjacent_at_depth(input, g, op));
  });
}

}  // extern "C"
