// Softmax of contiguous float / double buffers (SPEC-ops 7):
//   * softmax_rows: the rows of a row-major (rows, cols) view, each with an optional mask of the
//     same shape (hard_masked_softmax_by_row; a null mask allows every entry, which is the
//     last-axis case of softmax_io). allowed[i, j] = mask[i, j] != 0 (NaN allowed). Per row: no
//     allowed entry -> all +0; else m = max of the allowed scores (a NaN among them makes m NaN),
//     e_j = exp(s_j - m), y_j = e_j / sum of the allowed e (a true division), and every blocked
//     entry exactly +0, written after the arithmetic (so also in a NaN row). Allowed +-inf and
//     NaN scores keep their arithmetic: +inf gives inf - inf = NaN, a row of allowed -inf only
//     gives -inf - -inf = NaN.
//   * softmax_axis: x viewed as (outer, len, inner) row-major, the softmax along the middle axis
//     for each (outer, inner) column, with the same rules and no mask.
// Tolerance ops: the order of the sum is unspecified; exp is the full-precision libm of the
// dtype (expf / exp on the device, never __expf).
//
// The launchers take validated extents (runtime/softmax_dispatch.cpp has checked the sizes
// against the buffers and allocated `out` with room for every element written). An empty
// output queues nothing (its pointer may be null).
#pragma once

#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

// Reference backend (kernels/softmax/softmax_ref.cpp): plain loops over host memory in a wider
// format (double for float, long double for double), each result rounded once to T.
template <class T>
void softmax_rows_ref(const T* scores, const T* mask, uint64_t rows, uint64_t cols, T* out);
template <class T>
void softmax_axis_ref(const T* x, uint64_t outer, uint64_t len, uint64_t inner, T* out);

// CUDA backend (kernels/softmax/softmax.cu): device memory, asynchronous on `stream`. Every
// path reads the inputs of a row once and writes its output once, except rows too long to hold
// on chip (past the shared memory of one block), which are read twice (an online max / sum pass,
// then the pass that writes); no temporary of the row's size is ever allocated.
template <class T>
void softmax_rows_cuda(const T* scores, const T* mask, uint64_t rows, uint64_t cols, T* out,
                       CUstream_st* stream);
// inner >= 2 (inner = 1 is softmax_rows without a mask).
template <class T>
void softmax_axis_cuda(const T* x, uint64_t outer, uint64_t len, uint64_t inner, T* out,
                       CUstream_st* stream);

}  // namespace tlrt::kernels
