// Reference launcher of the elementwise family: a plain loop over elements calling the
// reference functor (elementwise_ref.h) of the operation. Element order does not matter for an
// elementwise map, so large buffers are cut into contiguous ranges run on several threads.
#include "kernels/elementwise/elementwise_ref.h"
#include "kernels/common/host_parallel.h"
#include "kernels/elementwise/elementwise.h"

#if TLRT_HAVE_QUADMATH
#include <quadmath.h>
#endif

namespace tlrt::kernels {

namespace ref_ops {

// binary128 rounds to binary64 once with 60 guard bits: correctly rounded but for inputs closer
// to a tie than 2^-60 ULP. x87 extended has 11 guard bits and double-rounds about 2 results in
// 10^4, which would eat the parity bound's half-ULP margin.
#if TLRT_HAVE_QUADMATH
double wide_exp(double x) {
  return static_cast<double>(expq(x));
}
double wide_log(double x) {
  return static_cast<double>(logq(x));
}
double wide_sin(double x) {
  return static_cast<double>(sinq(x));
}
double wide_cos(double x) {
  return static_cast<double>(cosq(x));
}
double wide_tanh(double x) {
  return static_cast<double>(tanhq(x));
}
#else
double wide_exp(double x) {
  return static_cast<double>(std::exp(static_cast<long double>(x)));
}
double wide_log(double x) {
  return static_cast<double>(std::log(static_cast<long double>(x)));
}
double wide_sin(double x) {
  return static_cast<double>(std::sin(static_cast<long double>(x)));
}
double wide_cos(double x) {
  return static_cast<double>(std::cos(static_cast<long double>(x)));
}
double wide_tanh(double x) {
  return static_cast<double>(std::tanh(static_cast<long double>(x)));
}
#endif

}  // namespace ref_ops

namespace {

template <class Op, class T>
void run_range(const T* const* in, T* const* out, const T* scalars, uint64_t begin, uint64_t end) {
  T x[Op::kInputs];
  T y[Op::kOutputs];
  for (uint64_t i = begin; i < end; ++i) {
    for (int k = 0; k < Op::kInputs; ++k) x[k] = in[k][i];
    Op::apply(x, y, scalars);
    for (int k = 0; k < Op::kOutputs; ++k) out[k][i] = y[k];
  }
}

template <class Op, class T>
void run(const T* const* in, T* const* out, const T* scalars, uint64_t n) {
  parallel_ranges(n, uint64_t{1} << 18, [&](uint64_t begin, uint64_t end) {
    run_range<Op>(in, out, scalars, begin, end);
  });
}

}  // namespace

template <class T>
void elementwise_ref(ElementwiseOp op, const T* const* in, T* const* out, const T* scalars,
                     uint64_t n) {
  if (n == 0) return;
  switch (op) {
#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64) \
  case ElementwiseOp::name:                                          \
    run<ref_ops::Functor>(in, out, scalars, n);                      \
    break;
#include "ops/elementwise_ops.def"
#undef TLRT_ELEMENTWISE
  }
}

template <class T>
double elementwise_error_scale(ElementwiseOp op, const T* inputs, const T* scalars, T result) {
  switch (op) {
#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64) \
  case ElementwiseOp::name:                                          \
    return ref_ops::Functor::error_scale(inputs, scalars, &result);
#include "ops/elementwise_ops.def"
#undef TLRT_ELEMENTWISE
  }
  return 0;
}

template void elementwise_ref<float>(ElementwiseOp, const float* const*, float* const*,
                                     const float*, uint64_t);
template void elementwise_ref<double>(ElementwiseOp, const double* const*, double* const*,
                                      const double*, uint64_t);
template double elementwise_error_scale<float>(ElementwiseOp, const float*, const float*, float);
template double elementwise_error_scale<double>(ElementwiseOp, const double*, const double*,
                                                double);

}  // namespace tlrt::kernels
