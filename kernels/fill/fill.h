// Buffer construction and conversion kernels: constant fill, float64 <-> float32 conversion
// (nearest-even narrowing, exact widening) and the value copy x*1 used by copy_and_release.
#pragma once

#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

template <class T> void fill_ref(T* out, uint64_t n, T value);
void narrow_f64_to_f32_ref(float* out, const double* in, uint64_t n);
void widen_f32_to_f64_ref(double* out, const float* in, uint64_t n);
template <class T> void multiply_by_one_ref(T* out, const T* in, uint64_t n);

template <class T> void fill_cuda(T* out, uint64_t n, T value, CUstream_st* stream);
void narrow_f64_to_f32_cuda(float* out, const double* in, uint64_t n, CUstream_st* stream);
void widen_f32_to_f64_cuda(double* out, const float* in, uint64_t n, CUstream_st* stream);
template <class T> void multiply_by_one_cuda(T* out, const T* in, uint64_t n, CUstream_st* stream);

}  // namespace tlrt::kernels
