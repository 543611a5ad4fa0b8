// One-dimensional shape ops on contiguous float / double buffers (SPEC-ops 8): concat1d writes
// [a; b] and slice1d writes x[start, start + len). Both are byte copies of whole elements, so both
// backends give the input bits unchanged (signalling NaNs, NaN payloads and -0 included) and a
// result that is bit-exact by construction; no arithmetic is done on the values.
//
// The launchers take validated extents: the callers (runtime/shape_dispatch.cpp) have checked the
// sizes against the buffers and allocated `out` with room for every element written.
#pragma once

#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

// Reference backend (kernels/shape/shape_ref.cpp): host memory.
// out[0, n) = a[0, n), out[n, n + m) = b[0, m).
template <class T>
void concat1d_ref(const T* a, uint64_t n, const T* b, uint64_t m, T* out);
// out[0, len) = x[start, start + len).
template <class T>
void slice1d_ref(const T* x, uint64_t start, uint64_t len, T* out);

// CUDA backend (kernels/shape/shape.cu): device memory, asynchronous on `stream` (copy-engine
// copies queued in order, nothing is waited for). Empty parts queue nothing.
template <class T>
void concat1d_cuda(const T* a, uint64_t n, const T* b, uint64_t m, T* out, CUstream_st* stream);
template <class T>
void slice1d_cuda(const T* x, uint64_t start, uint64_t len, T* out, CUstream_st* stream);

}  // namespace tlrt::kernels
