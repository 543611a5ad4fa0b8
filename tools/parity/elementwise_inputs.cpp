#include "tools/parity/elementwise_inputs.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/random/splitmix.h"

#if TLRT_HAVE_QUADMATH
#include <quadmath.h>
#endif

namespace tlrt::parity {
namespace {

// The oracle's format for transcendental stages: binary128, else long double. It is code of its
// own, separate from the reference functors; for float32 data it also differs in format (the
// reference uses binary64), for float64 data both use binary128 where libquadmath is there.
#if TLRT_HAVE_QUADMATH
using Wide = __float128;
Wide wide_exp(Wide x) {
  return expq(x);
}
Wide wide_log(Wide x) {
  return logq(x);
}
Wide wide_sin(Wide x) {
  return sinq(x);
}
Wide wide_cos(Wide x) {
  return cosq(x);
}
Wide wide_tanh(Wide x) {
  return tanhq(x);
}
#else
using Wide = long double;
Wide wide_exp(Wide x) {
  return expl(x);
}
Wide wide_log(Wide x) {
  return logl(x);
}
Wide wide_sin(Wide x) {
  return sinl(x);
}
Wide wide_cos(Wide x) {
  return cosl(x);
}
Wide wide_tanh(Wide x) {
  return tanhl(x);
}
#endif

using Op = ElementwiseOp;
using tlrt::random::splitmix64_finalize;

// Counter-based draws: the stream of element i of input k depends only on (key, k, i).
class Draws {
 public:
  Draws(uint64_t key, int input, uint64_t i)
      : state_(splitmix64_finalize(splitmix64_finalize(key + static_cast<uint64_t>(input)) + i)) {}
  uint64_t bits() { return splitmix64_finalize(state_ += 0x9E3779B97F4A7C15ull); }
  double unit() { return static_cast<double>(bits() >> 11) * 0x1p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
  int64_t integer(int64_t lo, int64_t hi) {  // [lo, hi]
    return lo + static_cast<int64_t>(bits() % static_cast<uint64_t>(hi - lo + 1));
  }
  double sign() { return (bits() & 1) ? -1.0 : 1.0; }
  // sign * m * 2^e with m uniform in [1, 2) and e uniform in [e_lo, e_hi].
  double log_uniform(int e_lo, int e_hi) {
    const double m = 1.0 + unit();
    return sign() * std::ldexp(m, static_cast<int>(integer(e_lo, e_hi)));
  }

 private:
  uint64_t state_;
};

template <class T>
T from_bits(uint64_t bits) {
  T v;
  if constexpr (sizeof(T) == 4) {
    const uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&v, &b, 4);
  } else {
    std::memcpy(&v, &bits, 8);
  }
  return v;
}

// Most values of moderate size (where add, mul and div round in the middle of the range), a third
// over the whole exponent range down to the subnormals (overflow, underflow, gradual underflow),
// some small integers and halves (exact results and ties), and raw bit patterns (NaN payloads,
// infinities, anything).
template <class T>
T wide(Draws& d) {
  using L = std::numeric_limits<T>;
  const double p = d.unit();
  if (p < 0.45) return static_cast<T>(d.log_uniform(-10, 10));
  if (p < 0.75)
    return static_cast<T>(d.log_uniform(L::min_exponent - L::digits, L::max_exponent - 1));
  if (p < 0.90) return static_cast<T>(0.5 * static_cast<double>(d.integer(-64, 64)));
  return from_bits<T>(d.bits());
}

// The argument range of exp that reaches both overflow and total underflow, through the subnormal
// results in between.
template <class T>
T exp_argument(Draws& d) {
  const bool f32 = sizeof(T) == 4;
  const double p = d.unit();
  if (p < 0.60) return static_cast<T>(f32 ? d.uniform(-110, 95) : d.uniform(-760, 720));
  if (p < 0.85) return static_cast<T>(d.log_uniform(-30, 2));
  return wide<T>(d);
}

enum class Dist {
  wide,
  positive,
  exp_argument,
  negated_exp_argument,
  tanh_argument,
  trig_argument,
  gelu_argument,
  floor_argument,
  mask,
  clamp_argument,
  adam_p,
  adam_g,
  adam_m,
  adam_v,
  product_exp_factor,
  bits
};

// The bounds clamp and clamp_bwd run with (scalar_sets), drawn as inputs too so that x meets
// them exactly and at their neighbours.
constexpr double kClampBounds[] = {-1.5, 2.25, 2.0, -1.0};

Dist dist_of(Op op, int input) {
  switch (op) {
    case Op::log:
    case Op::sqrt:
      return Dist::positive;
    case Op::sqrt_bwd:
      return input == 0 ? Dist::positive : Dist::wide;
    case Op::exp:
      return Dist::exp_argument;
    case Op::sigmoid:
      return Dist::negated_exp_argument;
    case Op::tanh:
      return Dist::tanh_argument;
    case Op::sin:
    case Op::cos:
      return Dist::trig_argument;
    case Op::gelu:
      return Dist::gelu_argument;
    case Op::gelu_bwd:
      return input == 0 ? Dist::gelu_argument : Dist::wide;
    case Op::floor:
      return Dist::floor_argument;
    case Op::mask:
      return input == 1 ? Dist::mask : Dist::wide;
    case Op::clamp:
      return Dist::clamp_argument;
    case Op::clamp_bwd:
      return input == 0 ? Dist::clamp_argument : Dist::wide;
    case Op::adam_step: {
      constexpr Dist kAdam[] = {Dist::adam_p, Dist::adam_g, Dist::adam_m, Dist::adam_v};
      return kAdam[input];
    }
    case Op::scaled_prod_exp:
      return Dist::product_exp_factor;
    case Op::copy_and_release:
      return Dist::bits;
    default:
      return Dist::wide;
  }
}

template <class T>
T draw(Dist dist, Draws& d) {
  const bool f32 = sizeof(T) == 4;
  const double p = d.unit();
  switch (dist) {
    case Dist::wide:
      return wide<T>(d);
    case Dist::positive:
      return p < 0.9 ? static_cast<T>(std::fabs(wide<T>(d))) : wide<T>(d);
    case Dist::exp_argument:
      return exp_argument<T>(d);
    case Dist::negated_exp_argument:
      return -exp_argument<T>(d);
    case Dist::tanh_argument:
      // tanh rounds to +-1 past about 9 (float32) and 19 (float64); tiny arguments return x.
      if (p < 0.50) return static_cast<T>(d.uniform(-20, 20));
      if (p < 0.85) return static_cast<T>(d.log_uniform(-40, 3));
      return wide<T>(d);
    case Dist::trig_argument:
      // Large arguments take the slow argument reduction paths of the math libraries.
      if (p < 0.50) return static_cast<T>(d.uniform(-4 * M_PI, 4 * M_PI));
      if (p < 0.75) return static_cast<T>(d.log_uniform(-30, 20));
      if (p < 0.90) return static_cast<T>(d.log_uniform(20, 100));
      return wide<T>(d);
    case Dist::gelu_argument:
      if (p < 0.60) return static_cast<T>(d.uniform(-10, 10));
      if (p < 0.85) return static_cast<T>(d.log_uniform(-30, 3));
      return wide<T>(d);
    case Dist::floor_argument: {
      if (p < 0.25) return static_cast<T>(d.integer(-(int64_t{1} << 30), int64_t{1} << 30));
      if (p < 0.50)
        return static_cast<T>(static_cast<double>(d.integer(-(1 << 20), 1 << 20)) + 0.5);
      if (p < 0.75) {
        const T k = static_cast<T>(d.integer(-1000, 1000));
        return std::nextafter(k, d.sign() * std::numeric_limits<T>::infinity());
      }
      return wide<T>(d);
    }
    case Dist::mask:
      if (p < 0.30) return T(0);
      if (p < 0.40) return -T(0);
      if (p < 0.70) return T(1);
      if (p < 0.80) return std::numeric_limits<T>::quiet_NaN();
      return wide<T>(d);
    case Dist::clamp_argument: {
      const T bound = static_cast<T>(kClampBounds[d.integer(0, 3)]);
      if (p < 0.60) return static_cast<T>(d.uniform(-4, 4));
      if (p < 0.75) return bound;
      if (p < 0.85) return std::nextafter(bound, d.sign() * std::numeric_limits<T>::infinity());
      return wide<T>(d);
    }
    case Dist::adam_p:
      return static_cast<T>(d.uniform(-1, 1));
    case Dist::adam_g:
      return static_cast<T>(d.log_uniform(-20, 0));
    case Dist::adam_m:
      return static_cast<T>(d.uniform(-0.1, 0.1));
    case Dist::adam_v:
      return static_cast<T>(std::fabs(d.log_uniform(-40, -4)));
    case Dist::product_exp_factor:
      // With the scalar sets' |c| <= 1.3 the product reaches exp's overflow and underflow.
      if (p < 0.9) return static_cast<T>(f32 ? d.uniform(-12, 12) : d.uniform(-30, 30));
      return wide<T>(d);
    case Dist::bits:
      return from_bits<T>(d.bits());
  }
  return T(0);
}

uint64_t special_count(bool f32) {
  return f32 ? special_values<float>().size() : special_values<double>().size();
}

}  // namespace

template <class T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  const T one = 1, zero = 0, inf = L::infinity();
  const T half_step = std::ldexp(T(1), L::digits - 2);  // spacing 0.5 from here up
  const T int_step = std::ldexp(T(1), L::digits - 1);   // spacing 1: every value an integer
  const T exp_max = std::log(L::max());                 // exp overflows just above
  const T exp_min = std::log(L::min());                 // exp leaves the normals just below
  const T exp_zero = std::log(L::denorm_min());         // exp underflows to 0 just below
  return {
      L::quiet_NaN(),
      -L::quiet_NaN(),
      L::signaling_NaN(),
      zero,
      -zero,
      inf,
      -inf,
      L::denorm_min(),
      -L::denorm_min(),
      L::min() - L::denorm_min(),
      L::min(),
      -L::min(),
      L::max(),
      -L::max(),
      one,
      -one,
      T(0.5),
      T(-0.5),
      T(1.5),
      T(-1.5),
      T(2),
      T(2.25),
      T(-2.5),
      T(3),
      std::nextafter(one, zero),
      std::nextafter(one, T(2)),
      std::nextafter(-one, zero),
      std::nextafter(T(0.5), zero),
      half_step + T(0.5),
      -(half_step + T(0.5)),
      int_step + one,
      T(0.1),
      T(-0.3),
      T(M_PI),
      T(1e20),
      T(-1e-20),
      exp_max,
      std::nextafter(exp_max, inf),
      -exp_max,
      exp_min,
      exp_zero,
      std::nextafter(exp_zero, -inf),
      std::ldexp(one, -L::digits),
  };
}

uint64_t special_block(ElementwiseOp op, bool f32) {
  const uint64_t s = special_count(f32);
  return kernels::elementwise_info(op).inputs == 1 ? s : s * s;
}

std::vector<std::vector<double>> scalar_sets(ElementwiseOp op) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case Op::scaled_prod_exp:
      return {{0.7}, {-1.3}};
    case Op::axpy:
      // 1 + 2^-24 rounds to 1 in float32: the coefficient must be rounded before the fma.
      return {{0.1}, {1 + 0x1p-24}, {-2.5e-3}};
    default:
      break;
  }
  switch (kernels::elementwise_info(op).signature) {
    case kernels::ElementwiseSignature::unary_s1:
    case kernels::ElementwiseSignature::binary_s1:
      return {{0.1}, {-1.75}, {0x1p-130}, {3e38}};
    case kernels::ElementwiseSignature::unary_s2:
    case kernels::ElementwiseSignature::binary_s2:
      // Ordinary, inverted (lo > hi), one NaN bound each, equal bounds, unbounded.
      return {{-1.5, 2.25}, {2.0, -1.0}, {nan, 1.0}, {-1.0, nan}, {0.1, 0.1}, {-inf, inf}};
    case kernels::ElementwiseSignature::adam: {
      // Adam at step 10 and AdamW at step 1 (decay = -(lr * weight decay)); the caller computes
      // 1 - beta and the bias corrections in binary64, each rounded on its own at the ABI.
      const double c1 = 1 / (1 - std::pow(0.9, 10)), c2 = 1 / (1 - std::pow(0.999, 10));
      return {{0.9, 0.1, 0.999, 1 - 0.999, c1, c2, 1e-8, 0.0, -1e-3},
              {0.9, 0.1, 0.999, 1 - 0.999, 10.0, 1000.0, 1e-8, -1e-5, -3e-4}};
    }
    default:
      return {{}};
  }
}

template <class T>
void fill_inputs(ElementwiseOp op, uint64_t key, const double* scalars, T* const* in,
                 uint64_t begin, uint64_t end) {
  const int inputs = kernels::elementwise_info(op).inputs;
  const std::vector<T> special = special_values<T>();
  const uint64_t s = special.size();
  const uint64_t block = special_block(op, sizeof(T) == 4);
  for (uint64_t i = begin; i < end; ++i) {
    if (i < block) {
      in[0][i] = special[inputs == 1 ? i : i / s];
      if (inputs > 1) in[1][i] = special[i % s];
      for (int k = 2; k < inputs; ++k) in[k][i] = special[(i * 7 + 13 * k) % s];
      continue;
    }
    for (int k = 0; k < inputs; ++k) {
      Draws d(key, k, i);
      in[k][i] = draw<T>(dist_of(op, k), d);
    }
    Draws d(key, -1, i);
    const double p = d.unit();
    switch (op) {
      case Op::max:
      case Op::min:
      case Op::max_bwd:
      case Op::min_bwd:
        // Ties decide between (g, 0), (0, g) and halves; -a meets a only at zero (the sign of a
        // +-0 tie).
        if (p < 0.30)
          in[1][i] = in[0][i];
        else if (p < 0.35)
          in[1][i] = -in[0][i];
        break;
      case Op::axpy:
        // a = -fl(c*b) leaves the fma only the rounding error of the product: a split
        // multiply-add gives 0 there.
        if (p < 0.25) in[0][i] = -(static_cast<T>(scalars[0]) * in[1][i]);
        break;
      case Op::relu_bwd:
      case Op::abs_bwd:
      case Op::sqrt_bwd:
        if (p < 0.10) in[0][i] = d.sign() * T(0);
        break;
      default:
        break;
    }
  }
}

bool has_oracle(ElementwiseOp op) {
  switch (op) {
    case Op::exp:
    case Op::log:
    case Op::sin:
    case Op::cos:
    case Op::tanh:
    case Op::sigmoid:
    case Op::gelu:
    case Op::gelu_bwd:
    case Op::scaled_prod_exp:
      return true;
    default:
      return false;
  }
}

const char* oracle_name() {
  return TLRT_HAVE_QUADMATH ? "binary128 (libquadmath)" : "long double (libm)";
}
const char* oracle_format() {
  return TLRT_HAVE_QUADMATH ? "binary128" : "long double";
}

template <class T>
void oracle(ElementwiseOp op, const T* in, const T* scalars, T* out) {
  const T x = in[0];
  auto wide = [](T v) { return static_cast<Wide>(v); };
  // GELU constants of SPEC-ops 6.1: host binary64 literals rounded to T; 3*c formed exactly.
  const T c = static_cast<T>(0.044715), k = static_cast<T>(0.79788456080286535588);
  const T c3 = static_cast<T>(3 * wide(c));
  const T one = 1, half = 0.5;
  auto gelu_t = [&] {
    const T q1 = x * c, q2 = q1 * x, q3 = q2 * x, u = x + q3, v = u * k;
    return static_cast<T>(wide_tanh(wide(v)));
  };
  switch (op) {
    case Op::exp:
      out[0] = static_cast<T>(wide_exp(wide(x)));
      return;
    case Op::log:
      out[0] = static_cast<T>(wide_log(wide(x)));
      return;
    case Op::sin:
      out[0] = static_cast<T>(wide_sin(wide(x)));
      return;
    case Op::cos:
      out[0] = static_cast<T>(wide_cos(wide(x)));
      return;
    case Op::tanh:
      out[0] = static_cast<T>(wide_tanh(wide(x)));
      return;
    case Op::sigmoid: {
      const T r = static_cast<T>(wide_exp(-wide(x)));
      const T d = one + r;
      out[0] = one / d;
      return;
    }
    case Op::gelu: {
      const T t = gelu_t();
      const T tp = t + one, xt = x * tp;
      out[0] = xt * half;
      return;
    }
    case Op::gelu_bwd: {
      const T g = in[1];
      const T t = gelu_t();
      const T tt = t * t, s = one - tt;
      const T w1 = x * c3, w2 = w1 * x, w3 = w2 + one, d = w3 * k;
      const T xs = x * s, e = xs * d;
      const T tp = t + one, sum = tp + e, h = sum * half;
      out[0] = h * g;
      return;
    }
    case Op::scaled_prod_exp: {
      const T p = in[0] * scalars[0], q = p * in[1];
      out[0] = static_cast<T>(wide_exp(wide(q)));
      return;
    }
    default:
      out[0] = std::numeric_limits<T>::quiet_NaN();
      return;
  }
}

template std::vector<float> special_values<float>();
template std::vector<double> special_values<double>();
template void fill_inputs<float>(ElementwiseOp, uint64_t, const double*, float* const*, uint64_t,
                                 uint64_t);
template void fill_inputs<double>(ElementwiseOp, uint64_t, const double*, double* const*, uint64_t,
                                  uint64_t);
template void oracle<float>(ElementwiseOp, const float*, const float*, float*);
template void oracle<double>(ElementwiseOp, const double*, const double*, double*);

}  // namespace tlrt::parity
