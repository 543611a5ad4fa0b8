// Shape ops on contiguous float / double buffers (SPEC-ops 8). Every op here is a selection: each
// output element is a copy of one input element, moved as bits (never loaded into a floating-point
// value on the host, never touched by an arithmetic instruction on the device), so both backends
// give the input bits unchanged (signalling NaNs, NaN payloads and -0 included) and results that
// are bit-exact by construction.
//   concat1d          out[0, n) = a, out[n, n + m) = b
//   slice1d           out[0, len) = x[start, start + len)
//   broadcast_vec_to_cols   out[i, j] = v[i] for an output of shape [rows, cols]
//   broadcast_to      out[o] = x[sum_j o_j * read_strides[j]] for the row-major coordinates o_j of
//                     an output of shape out_dims; read_strides[j] is the input stride output axis
//                     j walks (0 for inserted and broadcast axes; runtime/shape_geometry.h)
//   swap_adjacent     x viewed as [outer, a, b, inner] written as [outer, b, a, inner]
//
// The launchers take validated extents: the callers (runtime/shape_dispatch.cpp) have checked the
// sizes against the buffers and allocated `out` with room for every element written. Empty
// results write nothing (their pointers may be null).
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

// Reference backend (kernels/shape/shape_ref.cpp): host memory, plain loops.
template <class T>
void concat1d_ref(const T* a, uint64_t n, const T* b, uint64_t m, T* out);
template <class T>
void slice1d_ref(const T* x, uint64_t start, uint64_t len, T* out);
template <class T>
void broadcast_vec_to_cols_ref(const T* v, uint64_t rows, uint64_t cols, T* out);
template <class T>
void broadcast_to_ref(const T* x, const uint64_t* out_dims, const uint64_t* read_strides,
                      size_t rank, T* out);
template <class T>
void swap_adjacent_ref(const T* x, uint64_t outer, uint64_t a, uint64_t b, uint64_t inner, T* out);

// CUDA backend (kernels/shape/shape.cu): device memory, asynchronous on `stream`. concat1d is one
// kernel; slice1d is the same kernel up to 1 MiB and a copy-engine copy beyond; the other three
// share one strided-copy engine (kernels/shape/copy_plan.h collapses the geometry, then a row
// kernel or a tiled transpose through shared memory runs it).
template <class T>
void concat1d_cuda(const T* a, uint64_t n, const T* b, uint64_t m, T* out, CUstream_st* stream);
template <class T>
void slice1d_cuda(const T* x, uint64_t start, uint64_t len, T* out, CUstream_st* stream);
template <class T>
void broadcast_vec_to_cols_cuda(const T* v, uint64_t rows, uint64_t cols, T* out,
                                CUstream_st* stream);
template <class T>
void broadcast_to_cuda(const T* x, const uint64_t* out_dims, const uint64_t* read_strides,
                       size_t rank, T* out, CUstream_st* stream);
template <class T>
void swap_adjacent_cuda(const T* x, uint64_t outer, uint64_t a, uint64_t b, uint64_t inner, T* out,
                        CUstream_st* stream);

}  // namespace tlrt::kernels
