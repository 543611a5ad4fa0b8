// Shape ops (SPEC-ops 8; symbols-ops.tsv group shape). Pure symbols: every failure (released
// buffer, non-buffer argument, sizes that disagree with the arguments or shapes, an extent out of
// bounds, a bad axis map or depth, mixed dtypes, out of memory, device error) panics. concat1d and
// slice1d also accept encoded buffers in the contract (a byte copy of their words); encoded
// buffers are not provided yet, so an encoded operand panics with the spec's message and says so.
// The other ops refuse encoded buffers (live_buffer: "expected a real buffer").
#include <initializer_list>
#include <string>
#include <vector>

#include "abi/boundary.h"
#include "runtime/shape_dispatch.h"
#include "runtime/shape_geometry.h"

using namespace tlrt::abi;

namespace {

// Throws not_supported naming op when any operand is an encoded buffer: "<spec_words> (encoded
// buffers are not supported yet by tlrt)". Non-buffer operands fail in record_of.
void reject_encoded(std::initializer_list<b_lean_obj_arg> operands, const char* op,
                    const char* spec_words) {
  for (b_lean_obj_arg object : operands) {
    if (record_of(object, op)->format != nullptr) {
      tlrt::fail(tlrt::ErrorKind::not_supported, op,
                 std::string(spec_words) + " (encoded buffers are not supported yet by tlrt)");
    }
  }
}

}  // namespace

extern "C" {

// a, b borrowed; result owned: a fresh buffer [a; b] of n + m elements of a's dtype (byte copy).
// Requires size(a) = n, size(b) = m and one dtype.
lean_obj_res torchlean_cuda_buffer_concat1d(b_lean_obj_arg a, b_lean_obj_arg b, uint32_t n,
                                            uint32_t m) {
  return pure_call([&] {
    reject_encoded({a, b}, "concat1d", "incompatible encoded buffers");
    tlrt::Buffer& first = live_buffer(a, "concat1d");
    tlrt::Buffer& second = live_buffer(b, "concat1d");
    return box(tlrt::concat1d(first, second, n, m, "concat1d"));
  });
}

// x borrowed; result owned: a fresh buffer x[start, start + len) of x's dtype (byte copy).
// Requires size(x) = n, start <= n and len <= n - start.
lean_obj_res torchlean_cuda_buffer_slice1d(b_lean_obj_arg x, uint32_t n, uint32_t start,
                                           uint32_t len) {
  return pure_call([&] {
    reject_encoded({x}, "slice1d", "invalid encoded buffer");
    return box(tlrt::slice1d(live_buffer(x, "slice1d"), n, start, len, "slice1d"));
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
    const tlrt::Dims in_dims = nat_array(inDims, op, "inDims");
    tlrt::shape_size(in_dims, "inDims", op);
    const tlrt::Dims out_dims = nat_array(outDims, op, "outDims");
    tlrt::shape_size(out_dims, "outDims", op);
    const std::vector<uint64_t> map = nat_array(axisMap, op, "axisMap");
    const tlrt::BroadcastGeometry g = tlrt::broadcast_geometry(in_dims, out_dims, map, op);
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
