// Operations on the float and double values of the kernels, kept once.
// - Explicitly rounded arithmetic (add_rn, sub_rn, mul_rn, div_rn, sqrt_rn, fma_rn, overloaded on
//   the operand type): each is one round-to-nearest intrinsic, so nothing is contracted into an
//   FMA whatever the compiler's flags, and fma_rn is the only fused operation.
// - Vec16<T>: the 16-byte vector of T (float4 of 4 lanes, double2 of 2); Pair<T>: two values of T
//   (float2, double2); Word<T>: the unsigned word of T's width (uint32_t, uint64_t), for kernels
//   that move values as their bits.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/host_device.h"

namespace tlrt::kernels {

TLRT_DEVICE_INLINE float add_rn(float a, float b) {
  return __fadd_rn(a, b);
}
TLRT_DEVICE_INLINE double add_rn(double a, double b) {
  return __dadd_rn(a, b);
}
TLRT_DEVICE_INLINE float sub_rn(float a, float b) {
  return __fsub_rn(a, b);
}
TLRT_DEVICE_INLINE double sub_rn(double a, double b) {
  return __dsub_rn(a, b);
}
TLRT_DEVICE_INLINE float mul_rn(float a, float b) {
  return __fmul_rn(a, b);
}
TLRT_DEVICE_INLINE double mul_rn(double a, double b) {
  return __dmul_rn(a, b);
}
TLRT_DEVICE_INLINE float div_rn(float a, float b) {
  return __fdiv_rn(a, b);
}
TLRT_DEVICE_INLINE double div_rn(double a, double b) {
  return __ddiv_rn(a, b);
}
TLRT_DEVICE_INLINE float sqrt_rn(float a) {
  return __fsqrt_rn(a);
}
TLRT_DEVICE_INLINE double sqrt_rn(double a) {
  return __dsqrt_rn(a);
}
TLRT_DEVICE_INLINE float fma_rn(float a, float b, float c) {
  return __fmaf_rn(a, b, c);
}
TLRT_DEVICE_INLINE double fma_rn(double a, double b, double c) {
  return __fma_rn(a, b, c);
}

template <class T>
struct Vec16;
template <>
struct Vec16<float> {
  using type = float4;
  static constexpr int kLanes = 4;
};
template <>
struct Vec16<double> {
  using type = double2;
  static constexpr int kLanes = 2;
};

template <class T>
struct Pair;
template <>
struct Pair<float> {
  using type = float2;
};
template <>
struct Pair<double> {
  using type = double2;
};

template <class T>
struct Word;
template <>
struct Word<float> {
  using type = uint32_t;
};
template <>
struct Word<double> {
  using type = uint64_t;
};

}  // namespace tlrt::kernels
