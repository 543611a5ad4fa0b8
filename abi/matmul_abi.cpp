// Matrix products (SPEC-ops 10; symbols-ops.tsv group matmul). Pure symbols: every failure (a
// transpose flag above 1, released buffer, non-buffer or encoded argument, sizes that disagree
// with the extents, mixed dtypes, out of memory, device or cuBLAS error) panics.
#include <string>

#include "abi/boundary.h"
#include "runtime/matmul_dispatch.h"

using namespace tlrt::abi;

namespace {

// The values of a borrowed FloatArray; anything else (a scalar, another object) throws
// invalid_argument naming op.
const double* float_array_values(b_lean_obj_arg array, const char* op, const char* name) {
  if (lean_is_scalar(array) || lean_ptr_tag(array) != LeanScalarArray ||
      lean_sarray_elem_size(array) != sizeof(double)) {
    tlrt::fail(tlrt::ErrorKind::invalid_argument, op,
               std::string("expected a FloatArray for ") + name);
  }
  return lean_float_array_cptr(const_cast<lean_object*>(array));
}

}  // namespace

extern "C" {

// A, B borrowed; result owned: a fresh buffer of batch*m*p elements of A's dtype,
// C[b, i, j] = sum_k A'[b, i, k] B'[b, k, j] (A' = A or its per-batch transpose when transposeA
// = 1, likewise B'). Flags are checked first, then A's and B's sizes, then the output's size and
// the dtypes. n = 0 gives zeros, batch, m or p = 0 an empty buffer.
lean_obj_res torchlean_cuda_buffer_bmm_with_transpose(b_lean_obj_arg A, b_lean_obj_arg B,
                                                      uint32_t batch, uint32_t m, uint32_t n,
                                                      uint32_t p, uint32_t transposeA,
                                                      uint32_t transposeB) {
  return pure_call([&] {
    tlrt::require_transpose_flags(transposeA, transposeB, "bmm");
    tlrt::Buffer& a = live_buffer(A, "bmm");
    tlrt::Buffer& b = live_buffer(B, "bmm");
    return box(tlrt::bmm(a, b, batch, m, n, p, transposeA == 1, transposeB == 1, "bmm"));
  });
}

// A, B (FloatArray) borrowed; result owned: a fresh FloatArray of m*p binary64 values,
// C = A (m x n) * B (n x p) row-major, computed on the selected device in fp64 (the reference
// backend computes on the host). size(A) = m*n and size(B) = n*p are required.
lean_obj_res torchlean_dgemm_cuda(b_lean_obj_arg A, b_lean_obj_arg B, uint32_t m, uint32_t n,
                                  uint32_t p) {
  return pure_call([&] {
    const double* a = float_array_values(A, "dgemm", "A");
    const double* b = float_array_values(B, "dgemm", "B");
    const uint64_t outputs =
        tlrt::dgemm_output_size(lean_sarray_size(A), lean_sarray_size(B), m, n, p, "dgemm");
    lean_object* out = lean_mk_empty_float_array(lean_box(outputs));
    lean_sarray_set_size(out, outputs);
    try {
      tlrt::dgemm(tlrt::default_backend(), a, b, lean_float_array_cptr(out), m, n, p, "dgemm");
    } catch (...) {
      lean_dec(out);
      throw;
    }
    return out;
  });
}

}  // extern "C"
