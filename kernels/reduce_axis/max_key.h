// The total order of reduce_max_by_row / reduce_max_by_column as unsigned integer keys, shared by
// both backends: NaN takes the key of -inf, and otherwise key(a) < key(b) exactly when a comes
// before b in -inf < ... < -0 < +0 < ... < +inf. Equal keys of non-NaN values are equal bits, so a
// maximum taken over keys is one value whatever the order of the comparisons.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/host_device.h"

namespace tlrt::kernels {

template <class T>
struct MaxKeyTraits;
template <>
struct MaxKeyTraits<float> {
  using Key = uint32_t;
  static constexpr Key kSign = 0x80000000u;
  static constexpr Key kInf = 0x7F800000u;  // +inf without its sign
};
template <>
struct MaxKeyTraits<double> {
  using Key = uint64_t;
  static constexpr Key kSign = 0x8000000000000000ull;
  static constexpr Key kInf = 0x7FF0000000000000ull;
};

template <class T>
TLRT_HOST_DEVICE typename MaxKeyTraits<T>::Key max_key(T v) {
  using M = MaxKeyTraits<T>;
  typename M::Key bits;
  memcpy(&bits, &v, sizeof bits);
  if ((bits & ~M::kSign) > M::kInf) bits = M::kInf | M::kSign;  // NaN -> -inf
  return (bits & M::kSign) ? ~bits : (bits | M::kSign);
}

template <class T>
TLRT_HOST_DEVICE T max_value(typename MaxKeyTraits<T>::Key key) {
  using M = MaxKeyTraits<T>;
  const typename M::Key bits = (key & M::kSign) ? (key & ~M::kSign) : ~key;
  T v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace tlrt::kernels
