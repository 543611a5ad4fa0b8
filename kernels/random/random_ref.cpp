// Seeded random constructors, reference backend: rand_uniform, rand_normal and bernoulli_mask on
// contiguous float / double buffers, element i computed from (key, i) alone (SPEC-runtime 7).
// Uniform and Bernoulli are exact (bit-identical with the CUDA kernels). Normal follows the eight
// separately rounded stages of SPEC 7.4 in T, with the host libm's log/cos standing in for CUDA's,
// so it agrees with the device to a few ulps rather than bit for bit. Built with -ffp-contract=off
// so no stage is fused unless written as std::fma.
#include <cmath>
#include <cstdint>

#include "kernels/random/random.h"
#include "kernels/random/splitmix.h"

namespace tlrt::kernels {
namespace {

// Converting the draw first and scaling by a power of two afterwards rounds exactly once, so this
// equals RN_T(r / 2^32) for both types (no underflow is possible for r >= 1).
inline float uniform_from_draw(uint32_t r, float) {
  return static_cast<float>(r) * 0x1p-32f;
}
inline double uniform_from_draw(uint32_t r, double) {
  return static_cast<double>(r) * 0x1p-32;
}

// c = RN_T(2*pi); the float literal rounds the decimal directly to binary32 (0x40C90FDB).
inline float two_pi(float) {
  return 6.2831853071795864769f;
}
inline double two_pi(double) {
  return 6.2831853071795864769;
}

template <class T>
T normal_from_draws(uint32_t r1, uint32_t r2, T mean, T deviation, T k) {
  const T a = static_cast<T>(r1);
  const T s = a + T(1);
  const T u1 = s * k;  // in (0, 1]: the +1 keeps log finite.
  const T u2 = uniform_from_draw(r2, T());
  const T t = std::log(u1) * T(-2);
  const T radius = std::sqrt(t);
  const T theta = u2 * two_pi(T());
  const T angle = std::cos(theta);
  const T z = radius * angle;
  return std::fma(deviation, z, mean);
}

}  // namespace

template <class T>
void rand_uniform_ref(T* out, uint64_t n, uint64_t key) {
  for (uint64_t i = 0; i < n; ++i) out[i] = uniform_from_draw(random::draw(key, i), T());
}

template <class T>
void rand_normal_ref(T* out, uint64_t n, T mean, T deviation, uint64_t key) {
  // The reference SDK divides by 4294967297 as a multiplication by its rounded reciprocal; in
  // binary32 the divisor itself rounds to 2^32, which makes k exactly 2^-32.
  const T k = T(1) / static_cast<T>(4294967297.0);
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t r1 = random::draw(key, 2 * i);
    const uint32_t r2 = random::draw(key, 2 * i + 1);
    out[i] = normal_from_draws(r1, r2, mean, deviation, k);
  }
}

template <class T>
void bernoulli_mask_ref(T* out, uint64_t n, T p, uint64_t key) {
  // Endpoints first: NaN and p <= 0 give all zeros, p >= 1 all ones even where a binary32 draw
  // rounds up to 1.0.
  if (!(p > T(0))) {
    for (uint64_t i = 0; i < n; ++i) out[i] = T(0);
    return;
  }
  if (!(p < T(1))) {
    for (uint64_t i = 0; i < n; ++i) out[i] = T(1);
    return;
  }
  for (uint64_t i = 0; i < n; ++i) {
    out[i] = uniform_from_draw(random::draw(key, i), T()) < p ? T(1) : T(0);
  }
}

template void rand_uniform_ref<float>(float*, uint64_t, uint64_t);
template void rand_uniform_ref<double>(double*, uint64_t, uint64_t);
template void rand_normal_ref<float>(float*, uint64_t, float, float, uint64_t);
template void rand_normal_ref<double>(double*, uint64_t, double, double, uint64_t);
template void bernoulli_mask_ref<float>(float*, uint64_t, float, uint64_t);
template void bernoulli_mask_ref<double>(double*, uint64_t, double, uint64_t);

}  // namespace tlrt::kernels
