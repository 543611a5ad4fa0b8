// One-dimensional shape ops (SPEC-ops 8; symbols-ops.tsv group shape). Pure symbols: every failure
// (released buffer, non-buffer argument, sizes that disagree with the arguments, an extent out of
// bounds, mixed dtypes, out of memory, device error) panics. The contract also accepts encoded
// buffers here (a byte copy of their words); encoded buffers are not provided yet, so an encoded
// operand panics with the spec's message and says so.
#include <initializer_list>
#include <string>

#include "abi/boundary.h"
#include "runtime/shape_dispatch.h"

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

lean_obj_res torchlean_cuda_buffer_broadcast_vec_to_cols(b_lean_obj_arg v, uint32_t rows,
                                                         uint32_t cols) {
  (void)v;
  (void)rows;
  (void)cols;
  return pure_call([&]() -> lean_obj_res {
    not_supported_yet("broadcast_vec_to_cols", "broadcast_vec_to_cols");
  });
}

lean_obj_res torchlean_cuda_buffer_broadcast_to(b_lean_obj_arg x, b_lean_obj_arg inDims,
                                                b_lean_obj_arg outDims, b_lean_obj_arg axisMap) {
  (void)x;
  (void)inDims;
  (void)outDims;
  (void)axisMap;
  return pure_call([&]() -> lean_obj_res { not_supported_yet("broadcast_to", "broadcast_to"); });
}

lean_obj_res torchlean_cuda_buffer_swap_adjacent_at_depth(b_lean_obj_arg x, b_lean_obj_arg dims,
                                                          uint32_t depth) {
  (void)x;
  (void)dims;
  (void)depth;
  return pure_call([&]() -> lean_obj_res {
    not_supported_yet("swap_adjacent_at_depth", "swap_adjacent_at_depth");
  });
}

}  // extern "C"
