// Distances in units in the last place, the measure every parity comparison reports. Header-only:
// tlrt-parity and the GPU parity tests use the same definitions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tlrt::parity {

// Distance between a and b in units in the last place of T, counted on the ordered integer line
// (so +0 and -0 are one step apart and inf is one step past the largest finite). NaN against NaN
// is 0, NaN against a number is infinite.
template <class T>
double ulp_distance(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return INFINITY;
  __int128 oa, ob;
  if constexpr (sizeof(T) == 4) {
    int32_t x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    oa = x < 0 ? __int128{INT32_MIN} - x : x;
    ob = y < 0 ? __int128{INT32_MIN} - y : y;
  } else {
    int64_t x, y;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    oa = x < 0 ? __int128{INT64_MIN} - x : x;
    ob = y < 0 ? __int128{INT64_MIN} - y : y;
  }
  const __int128 d = oa > ob ? oa - ob : ob - oa;
  return static_cast<double>(d);
}

// One unit in the last place of T at magnitude |x| (subnormal spacing below the normal range).
template <class T>
double ulp_at(double x) {
  using L = std::numeric_limits<T>;
  int e = 0;
  std::frexp(std::fabs(x), &e);
  return std::ldexp(1.0, std::max(e - 1, L::min_exponent - 1) - (L::digits - 1));
}

// Equal bits, or both NaN (NaN payloads are free in every contract; signed zeros are not).
template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (std::isnan(a) && std::isnan(b));
}

}  // namespace tlrt::parity
