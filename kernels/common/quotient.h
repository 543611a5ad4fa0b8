// fl(a / d) for many numerators over one binary32 divisor (the smooth max backward's window sums,
// the softmax row sums): the same bits as IEEE division, from a two-part reciprocal of d computed
// once, with four rounded operations per quotient instead of a full division each.
//
// Per divisor: y = fl(1/d); rho = 1 - d * y, exact by an FMA (the residual of a correctly rounded
// reciprocal is a multiple of 2^-47 below 2^-23 in magnitude, so it fits 24 bits); y_lo =
// fl(rho * y). Then y + y_lo = (1/d)(1 + e) with |e| < 2^-46.
// Per quotient Q = a/d:
//   p  = fl(a * y_lo)
//   q0 = fl(a * y + p)    (FMA)   the exact a * y + p is Q (1 + O(2^-46)): q0 is a faithful
//                                 rounding of Q (one of the two floats around it)
//   r  = a - q0 * d       (FMA)   exact: the remainder of a faithful quotient is representable
//   q  = fl(q0 + r * y)   (FMA)   = fl(Q) by Markstein's theorem (y = fl(1/d), q0 faithful)
// The argument needs the quotient and the remainder clear of underflow: `Reciprocal::fast` admits
// divisors in [2^-16, 2^16], and `quotient` numerators with 2^-64 <= |a| <= 2^64; a zero numerator
// returns fl(a * y), the quotient's signed zero; every other case (NaN, infinities, tiny or huge
// numerators or divisors) takes IEEE division. tests/quotient_test.cpp compares the host
// form with IEEE division bit for bit.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/host_device.h"

namespace tlrt::kernels {

// The numerators the four operations are exact for, with a divisor in range (Reciprocal::fast):
// +0 and kQuotientLeast <= |a| <= kQuotientMost.
constexpr float kQuotientLeast = 0x1p-64f;
constexpr float kQuotientMost = 0x1p64f;

struct Reciprocal {
  float d;     // the divisor
  float y;     // fl(1 / d)
  float y_lo;  // fl((1 - d * y) * y)
  bool fast;   // d within the range the four-operation quotient is exact for
};

TLRT_HOST_DEVICE Reciprocal reciprocal_of(float d) {
  Reciprocal r;
  r.d = d;
#if defined(__CUDA_ARCH__)
  r.y = __frcp_rn(d);
  r.y_lo = __fmul_rn(__fmaf_rn(-d, r.y, 1.0f), r.y);
  r.fast = fabsf(d) >= 0x1p-16f && fabsf(d) <= 0x1p16f;
#else
  r.y = 1.0f / d;
  r.y_lo = std::fma(-d, r.y, 1.0f) * r.y;
  r.fast = std::fabs(d) >= 0x1p-16f && std::fabs(d) <= 0x1p16f;
#endif
  return r;
}

// The four operations alone, for callers that have checked the ranges: r.fast, and a = +0 or
// kQuotientLeast <= |a| <= kQuotientMost (a = -0 would come back as +0).
TLRT_HOST_DEVICE float quotient_unchecked(float a, const Reciprocal& r) {
#if defined(__CUDA_ARCH__)
  const float q0 = __fmaf_rn(a, r.y, __fmul_rn(a, r.y_lo));
  return __fmaf_rn(__fmaf_rn(-q0, r.d, a), r.y, q0);
#else
  const float q0 = std::fma(a, r.y, a * r.y_lo);
  return std::fma(std::fma(-q0, r.d, a), r.y, q0);
#endif
}

TLRT_HOST_DEVICE float quotient(float a, const Reciprocal& r) {
#if defined(__CUDA_ARCH__)
  const float m = fabsf(a);
  if (!(r.fast && ((m >= kQuotientLeast && m <= kQuotientMost) || m == 0.0f))) {
    return __fdiv_rn(a, r.d);
  }
  return m == 0.0f ? __fmul_rn(a, r.y) : quotient_unchecked(a, r);
#else
  const float m = std::fabs(a);
  if (!(r.fast && ((m >= kQuotientLeast && m <= kQuotientMost) || m == 0.0f))) return a / r.d;
  return m == 0.0f ? a * r.y : quotient_unchecked(a, r);
#endif
}

}  // namespace tlrt::kernels
