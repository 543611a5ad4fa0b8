// Reference functors of the elementwise family: the contract of SPEC-ops sections 2, 5 and 6
// written as plain host C++ (the build compiles host code with -ffp-contract=off, so every
// operator is one IEEE rounding and fma is std::fma). Bit-exact operations reproduce the staged
// roundings; operations the contract only bounds (exp, log, sin, cos, tanh and the composites
// that call them) evaluate the transcendental in a wider format and round once, so the reference
// is at least as accurate as the device library it is compared with. Independent of the CUDA
// functors in elementwise_device.cuh.
#pragma once

#include <cmath>
#include <limits>

namespace tlrt::kernels::ref_ops {

// Transcendentals evaluated in a wider format and rounded once: binary64 for float32 (a double
// rounding through binary64 is out of reach: 29 extra bits), binary128 for float64 where the
// compiler has it (elementwise_ref.cpp), else x87 extended.
inline float wide_exp(float x) {
  return static_cast<float>(std::exp(static_cast<double>(x)));
}
inline float wide_log(float x) {
  return static_cast<float>(std::log(static_cast<double>(x)));
}
inline float wide_sin(float x) {
  return static_cast<float>(std::sin(static_cast<double>(x)));
}
inline float wide_cos(float x) {
  return static_cast<float>(std::cos(static_cast<double>(x)));
}
inline float wide_tanh(float x) {
  return static_cast<float>(std::tanh(static_cast<double>(x)));
}
double wide_exp(double x);
double wide_log(double x);
double wide_sin(double x);
double wide_cos(double x);
double wide_tanh(double x);

// The exact product 3 * c before its one rounding to T.
inline float gelu_c3_exact_round(float c) {
  return static_cast<float>(3.0 * static_cast<double>(c));
}
inline double gelu_c3_exact_round(double c) {
  return static_cast<double>(3.0L * static_cast<long double>(c));
}

// C fmax/fmin with the ±0 tie made explicit (+0 wins max, -0 wins min), so both backends select
// the same zero; NaN operands are ignored unless both are NaN.
template <class T>
inline T select_max(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <class T>
inline T select_min(T a, T b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// GELU constants of SPEC-ops 6.1, rounded once to T (3*c is exact before its rounding).
template <class T>
inline T gelu_c() {
  return static_cast<T>(0.044715);
}
template <class T>
inline T gelu_k() {
  return static_cast<T>(0.79788456080286535588);
}
template <class T>
inline T gelu_c3() {
  return gelu_c3_exact_round(gelu_c<T>());
}

// Arity and the default error scale of a functor: ULPs of the result itself.
template <int In, int Out, int Scalars>
struct Shape {
  static constexpr int kInputs = In;
  static constexpr int kOutputs = Out;
  static constexpr int kScalars = Scalars;
  template <class T>
  static double error_scale(const T*, const T*, const T* y) {
    return std::fabs(static_cast<double>(y[0]));
  }
};

// ---- unary --------------------------------------------------------------------------------------
struct Abs : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = std::fabs(x[0]);
  }
};
struct Floor : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = std::floor(x[0]);
  }
};
struct Neg : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = -x[0];
  }
};
struct Sqrt : Shape<1, 1, 0> {
  // x <= 0 is an ordered compare: NaN falls through to sqrt(NaN).
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = x[0] <= T(0) ? T(0) : std::sqrt(x[0]);
  }
};
struct Exp : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = wide_exp(x[0]);
  }
};
struct Sin : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = wide_sin(x[0]);
  }
};
struct Cos : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = wide_cos(x[0]);
  }
};
struct Log : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = wide_log(x[0]);
  }
};
struct Inv : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = T(1) / x[0];
  }
};
struct Relu : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = x[0] > T(0) ? x[0] : T(0);
  }
};
struct Sigmoid : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    const T r = wide_exp(-x[0]);
    const T d = T(1) + r;
    y[0] = T(1) / d;
  }
};
struct Tanh : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = wide_tanh(x[0]);
  }
};

// tanh-approximation GELU staged as TorchLean's activation spec: every line one rounding.
template <class T>
inline T gelu_t(T x) {
  const T q1 = x * gelu_c<T>();
  const T q2 = q1 * x;
  const T q3 = q2 * x;
  const T u = x + q3;
  const T v = u * gelu_k<T>();
  return wide_tanh(v);
}
struct Gelu : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    const T t = gelu_t(x[0]);
    const T tp1 = t + T(1);
    const T p = x[0] * tp1;
    y[0] = p * T(0.5);
  }
  // y = x (t + 1) / 2 cancels where t is near -1: a difference in t of a few ULPs moves y by a
  // few ULPs of |x| / 2, however small y is.
  template <class T>
  static double error_scale(const T* x, const T*, const T* y) {
    return std::fmax(std::fabs(static_cast<double>(y[0])),
                     0.5 * std::fabs(static_cast<double>(x[0])));
  }
};

// ---- binary -------------------------------------------------------------------------------------
struct Max : Shape<2, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = select_max(x[0], x[1]);
  }
};
struct Min : Shape<2, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = select_min(x[0], x[1]);
  }
};
struct Div : Shape<2, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = x[0] / x[1];
  }
};
struct Add : Shape<2, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = x[0] + x[1];
  }
};
struct Sub : Shape<2, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = x[0] - x[1];
  }
};
struct Mul : Shape<2, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = x[0] * x[1];
  }
};
// mask(values, allowed): NaN is a nonzero mask, -0 a zero one.
struct Mask : Shape<2, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = x[1] != T(0) ? x[0] : T(0);
  }
};

// ---- host scalars (already rounded to T) --------------------------------------------------------
struct Scale : Shape<1, 1, 1> {
  template <class T>
  static void apply(const T* x, T* y, const T* s) {
    y[0] = x[0] * s[0];
  }
};
// axpy(a, b, c) = fma(c, b, a): one rounding.
struct Axpy : Shape<2, 1, 1> {
  template <class T>
  static void apply(const T* x, T* y, const T* s) {
    y[0] = std::fma(s[0], x[1], x[0]);
  }
};
// exp(fl(fl(a * c) * b)), the same exp as Exp.
struct ScaledProdExp : Shape<2, 1, 1> {
  template <class T>
  static void apply(const T* x, T* y, const T* s) {
    const T ac = x[0] * s[0];
    const T acb = ac * x[1];
    y[0] = wide_exp(acb);
  }
};
// fmin(fmax(x, lo), hi): NaN x gives lo (then capped by hi), lo > hi gives hi, NaN bounds ignored.
struct Clamp : Shape<1, 1, 2> {
  template <class T>
  static void apply(const T* x, T* y, const T* s) {
    y[0] = select_min(select_max(x[0], s[0]), s[1]);
  }
};

// ---- vector-Jacobian products -------------------------------------------------------------------
struct ReluBwd : Shape<2, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    y[0] = x[0] > T(0) ? x[1] : T(0);
  }
};
struct GeluBwd : Shape<2, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    const T xv = x[0], g = x[1];
    const T t = gelu_t(xv);
    const T tt = t * t;
    const T s = T(1) - tt;
    const T w1 = xv * gelu_c3<T>();
    const T w2 = w1 * xv;
    const T w3 = w2 + T(1);
    const T d = w3 * gelu_k<T>();
    const T xs = xv * s;
    const T e = xs * d;
    const T tp1 = t + T(1);
    const T h = tp1 + e;
    const T half = h * T(0.5);
    y[0] = half * g;
  }
  // dx = ((t + 1 + x s d) / 2) g: s = 1 - t^2 cancels where |t| is near 1, so a few ULPs of t
  // move dx by a few ULPs of the terms' size, (|t + 1| + |x d|) |g| / 2.
  template <class T>
  static double error_scale(const T* x, const T*, const T* y) {
    // In long double and capped at the largest double, so huge g or x still give a finite scale.
    const long double xv = static_cast<long double>(x[0]), g = static_cast<long double>(x[1]);
    const long double d = (3 * 0.044715L * xv * xv + 1) * 0.7978845608028654L;
    const long double terms = 0.5L * std::fabs(g) * (2 + std::fabs(xv * d));
    const double capped = terms < static_cast<long double>(std::numeric_limits<double>::max())
                              ? static_cast<double>(terms)
                              : std::numeric_limits<double>::max();
    return std::fmax(std::fabs(static_cast<double>(y[0])), capped);
  }
};
// fl(sgn(x) * g), sgn = +1, -1, or +0 for zeros and NaN: a true product (0 * inf = NaN).
struct AbsBwd : Shape<2, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    const T sgn = x[0] > T(0) ? T(1) : x[0] < T(0) ? T(-1) : T(0);
    y[0] = sgn * x[1];
  }
};
// x > 0: r = sqrt(x), r2 = fl(r * 2), f = fl(1 / r2), dx = fl(g * f); otherwise +0 by selection.
struct SqrtBwd : Shape<2, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    if (!(x[0] > T(0))) {
      y[0] = T(0);
      return;
    }
    const T r = std::sqrt(x[0]);
    const T r2 = r * T(2);
    const T f = T(1) / r2;
    y[0] = x[1] * f;
  }
};
// Open interval: (x > lo && x < hi) ? g : +0.
struct ClampBwd : Shape<2, 1, 2> {
  template <class T>
  static void apply(const T* x, T* y, const T* s) {
    y[0] = (x[0] > s[0] && x[0] < s[1]) ? x[1] : T(0);
  }
};
// (da, db): the larger operand takes g; ties and NaN split it as fl(g * 0.5) each.
struct MaxBwd : Shape<3, 2, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    const T a = x[0], b = x[1], g = x[2];
    if (a > b) {
      y[0] = g;
      y[1] = T(0);
    } else if (b > a) {
      y[0] = T(0);
      y[1] = g;
    } else {
      y[0] = y[1] = g * T(0.5);
    }
  }
};
struct MinBwd : Shape<3, 2, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    const T a = x[0], b = x[1], g = x[2];
    if (a < b) {
      y[0] = g;
      y[1] = T(0);
    } else if (b < a) {
      y[0] = T(0);
      y[1] = g;
    } else {
      y[0] = y[1] = g * T(0.5);
    }
  }
};

// ---- copy and optimizer -------------------------------------------------------------------------
struct MultiplyByOne : Shape<1, 1, 0> {
  template <class T>
  static void apply(const T* x, T* y, const T*) {
    volatile T one = T(1);  // keeps the product (which quiets signalling NaNs) from being folded
    y[0] = x[0] * one;
  }
};
// inputs (p, g, m, v); scalars (b1, 1-b1, b2, 1-b2, c1, c2, eps, decay, update scale);
// outputs (p', m', v'). SPEC-ops 6.3: three true FMAs, pre-rounded products, raw sqrt, true
// division.
struct AdamStep : Shape<4, 3, 9> {
  template <class T>
  static void apply(const T* x, T* y, const T* s) {
    const T p = x[0], g = x[1], m = x[2], v = x[3];
    const T mb1 = m * s[0];
    const T m1 = std::fma(s[1], g, mb1);
    const T gg = g * g;
    const T vb2 = v * s[2];
    const T v1 = std::fma(s[3], gg, vb2);
    const T vc2 = v1 * s[5];
    const T root = std::sqrt(vc2);
    const T den = root + s[6];
    const T mc1 = m1 * s[4];
    const T u = mc1 / den;
    const T decayed = std::fma(s[7], p, p);
    y[0] = std::fma(s[8], u, decayed);
    y[1] = m1;
    y[2] = v1;
  }
};

}  // namespace tlrt::kernels::ref_ops
