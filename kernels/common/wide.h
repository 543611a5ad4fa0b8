// The reference backend's accumulation format for an operand type: wider than the operand, so a
// sum or product chain rounds once, at the end, to the operand's type.
#pragma once

namespace tlrt::kernels {

template <class T>
struct Wide;
template <>
struct Wide<float> {
  using type = double;
};
template <>
struct Wide<double> {
  using type = long double;
};

template <class T>
using wide_t = typename Wide<T>::type;

}  // namespace tlrt::kernels
