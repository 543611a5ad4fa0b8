// Constant fill of a contiguous buffer, the kernel behind full (SPEC-runtime 6).
#pragma once

#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

template <class T>
void fill_ref(T* out, uint64_t n, T value);

template <class T>
void fill_cuda(T* out, uint64_t n, T value, CUstream_st* stream);

}  // namespace tlrt::kernels
