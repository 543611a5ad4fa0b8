// The comparison for bit-defined results: equal bits, or both NaN. NaN payloads are free in every
// contract (SPEC-ops 2.4); signed zeros and every other encoding are not.
#pragma once

#include <cmath>
#include <cstring>

namespace test_bits {

template <class T>
bool same_bits_or_nan(T got, T want) {
  return std::memcmp(&got, &want, sizeof(T)) == 0 || (std::isnan(got) && std::isnan(want));
}

}  // namespace test_bits
