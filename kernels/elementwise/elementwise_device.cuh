// CUDA functors of the elementwise family (SPEC-ops sections 2, 5, 6). Every arithmetic step is
// an explicit round-to-nearest intrinsic, so nothing is contracted into an FMA except where the
// contract names one (axpy, adam_step: __fmaf_rn / __fma_rn). Transcendentals are the CUDA math
// library's full-precision functions (expf, logf, ..., never the __expf family); exp and
// scaled_prod_exp share one exp. Selections (sqrt, relu, mask, max/min, clamp and the VJPs) copy
// an operand or write +0 without arithmetic, so they are bit-exact with the reference.
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "kernels/common/float_ops.cuh"

#define TLRT_DEV TLRT_DEVICE_INLINE

namespace tlrt::kernels::device_ops {

TLRT_DEV float lib_exp(float x) {
  return expf(x);
}
TLRT_DEV double lib_exp(double x) {
  return exp(x);
}
TLRT_DEV float lib_log(float x) {
  return logf(x);
}
TLRT_DEV double lib_log(double x) {
  return log(x);
}
TLRT_DEV float lib_sin(float x) {
  return sinf(x);
}
TLRT_DEV double lib_sin(double x) {
  return sin(x);
}
TLRT_DEV float lib_cos(float x) {
  return cosf(x);
}
TLRT_DEV double lib_cos(double x) {
  return cos(x);
}
TLRT_DEV float lib_tanh(float x) {
  return tanhf(x);
}
TLRT_DEV double lib_tanh(double x) {
  return tanh(x);
}
TLRT_DEV float lib_floor(float x) {
  return floorf(x);
}
TLRT_DEV double lib_floor(double x) {
  return floor(x);
}

TLRT_DEV float clear_sign(float x) {
  return __int_as_float(__float_as_int(x) & 0x7fffffff);
}
TLRT_DEV double clear_sign(double x) {
  return __longlong_as_double(__double_as_longlong(x) & 0x7fffffffffffffffll);
}
TLRT_DEV float flip_sign(float x) {
  return __int_as_float(__float_as_int(x) ^ 0x80000000);
}
TLRT_DEV double flip_sign(double x) {
  return __longlong_as_double(__double_as_longlong(x) ^
                              static_cast<long long>(0x8000000000000000ull));
}
TLRT_DEV bool is_nan(float x) {
  return x != x;
}
TLRT_DEV bool is_nan(double x) {
  return x != x;
}
TLRT_DEV bool sign_bit(float x) {
  return __float_as_int(x) < 0;
}
TLRT_DEV bool sign_bit(double x) {
  return __double_as_longlong(x) < 0;
}

// C fmax/fmin as selections, with the ±0 tie fixed (+0 wins max, -0 wins min) so that the
// result never depends on the hardware instruction's choice.
template <class T>
TLRT_DEV T select_max(T a, T b) {
  if (is_nan(a)) return b;
  if (is_nan(b)) return a;
  if (a == b) return sign_bit(a) ? b : a;
  return a > b ? a : b;
}
template <class T>
TLRT_DEV T select_min(T a, T b) {
  if (is_nan(a)) return b;
  if (is_nan(b)) return a;
  if (a == b) return sign_bit(a) ? a : b;
  return a < b ? a : b;
}

// GELU constants (SPEC-ops 6.1), rounded once to T; 3*c is exact in the wider format.
template <class T>
TLRT_DEV T gelu_c() {
  return static_cast<T>(0.044715);
}
template <class T>
TLRT_DEV T gelu_k() {
  return static_cast<T>(0.79788456080286535588);
}
template <class T>
TLRT_DEV T gelu_c3();
template <>
TLRT_DEV float gelu_c3<float>() {
  return static_cast<float>(3.0 * static_cast<double>(static_cast<float>(0.044715)));
}
template <>
TLRT_DEV double gelu_c3<double>() {
  // 3*c needs 55 significant bits; an FMA forms 3*c exactly and rounds once.
  return __fma_rn(3.0, 0.044715, 0.0);
}

template <int In, int Out, int Scalars>
struct Shape {
  static constexpr int kInputs = In;
  static constexpr int kOutputs = Out;
  static constexpr int kScalars = Scalars;
};

// ---- unary --------------------------------------------------------------------------------------
struct Abs : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = clear_sign(x[0]);
  }
};
struct Floor : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = lib_floor(x[0]);
  }
};
struct Neg : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = flip_sign(x[0]);
  }
};
struct Sqrt : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = x[0] <= T(0) ? T(0) : sqrt_rn(x[0]);
  }
};
struct Exp : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = lib_exp(x[0]);
  }
};
struct Sin : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = lib_sin(x[0]);
  }
};
struct Cos : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = lib_cos(x[0]);
  }
};
struct Log : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = lib_log(x[0]);
  }
};
struct Inv : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = div_rn(T(1), x[0]);
  }
};
struct Relu : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = x[0] > T(0) ? x[0] : T(0);
  }
};
struct Sigmoid : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    const T r = lib_exp(flip_sign(x[0]));
    const T d = add_rn(T(1), r);
    y[0] = div_rn(T(1), d);
  }
};
struct Tanh : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = lib_tanh(x[0]);
  }
};

template <class T>
TLRT_DEV T gelu_t(T x) {
  const T q1 = mul_rn(x, gelu_c<T>());
  const T q2 = mul_rn(q1, x);
  const T q3 = mul_rn(q2, x);
  const T u = add_rn(x, q3);
  const T v = mul_rn(u, gelu_k<T>());
  return lib_tanh(v);
}
struct Gelu : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    const T t = gelu_t(x[0]);
    const T tp1 = add_rn(t, T(1));
    const T p = mul_rn(x[0], tp1);
    y[0] = mul_rn(p, T(0.5));
  }
};

// ---- binary -------------------------------------------------------------------------------------
struct Max : Shape<2, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = select_max(x[0], x[1]);
  }
};
struct Min : Shape<2, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = select_min(x[0], x[1]);
  }
};
struct Div : Shape<2, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = div_rn(x[0], x[1]);
  }
};
struct Add : Shape<2, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = add_rn(x[0], x[1]);
  }
};
struct Sub : Shape<2, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = sub_rn(x[0], x[1]);
  }
};
struct Mul : Shape<2, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = mul_rn(x[0], x[1]);
  }
};
struct Mask : Shape<2, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = x[1] != T(0) ? x[0] : T(0);
  }
};

// ---- host scalars -------------------------------------------------------------------------------
struct Scale : Shape<1, 1, 1> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T* s) {
    y[0] = mul_rn(x[0], s[0]);
  }
};
struct Axpy : Shape<2, 1, 1> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T* s) {
    y[0] = fma_rn(s[0], x[1], x[0]);
  }
};
struct ScaledProdExp : Shape<2, 1, 1> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T* s) {
    const T ac = mul_rn(x[0], s[0]);
    const T acb = mul_rn(ac, x[1]);
    y[0] = lib_exp(acb);
  }
};
struct Clamp : Shape<1, 1, 2> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T* s) {
    y[0] = select_min(select_max(x[0], s[0]), s[1]);
  }
};

// ---- vector-Jacobian products -------------------------------------------------------------------
struct ReluBwd : Shape<2, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = x[0] > T(0) ? x[1] : T(0);
  }
};
struct GeluBwd : Shape<2, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    const T xv = x[0], g = x[1];
    const T t = gelu_t(xv);
    const T s = sub_rn(T(1), mul_rn(t, t));
    const T w2 = mul_rn(mul_rn(xv, gelu_c3<T>()), xv);
    const T d = mul_rn(add_rn(w2, T(1)), gelu_k<T>());
    const T e = mul_rn(mul_rn(xv, s), d);
    const T h = add_rn(add_rn(t, T(1)), e);
    y[0] = mul_rn(mul_rn(h, T(0.5)), g);
  }
};
struct AbsBwd : Shape<2, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    const T sgn = x[0] > T(0) ? T(1) : x[0] < T(0) ? T(-1) : T(0);
    y[0] = mul_rn(sgn, x[1]);
  }
};
struct SqrtBwd : Shape<2, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    if (!(x[0] > T(0))) {
      y[0] = T(0);
      return;
    }
    const T r2 = mul_rn(sqrt_rn(x[0]), T(2));
    y[0] = mul_rn(x[1], div_rn(T(1), r2));
  }
};
struct ClampBwd : Shape<2, 1, 2> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T* s) {
    y[0] = (x[0] > s[0] && x[0] < s[1]) ? x[1] : T(0);
  }
};
struct MaxBwd : Shape<3, 2, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    const T a = x[0], b = x[1], g = x[2];
    const T half = mul_rn(g, T(0.5));
    y[0] = a > b ? g : b > a ? T(0) : half;
    y[1] = a > b ? T(0) : b > a ? g : half;
  }
};
struct MinBwd : Shape<3, 2, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    const T a = x[0], b = x[1], g = x[2];
    const T half = mul_rn(g, T(0.5));
    y[0] = a < b ? g : b < a ? T(0) : half;
    y[1] = a < b ? T(0) : b < a ? g : half;
  }
};

// ---- copy and optimizer -------------------------------------------------------------------------
struct MultiplyByOne : Shape<1, 1, 0> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T*) {
    y[0] = mul_rn(x[0], T(1));
  }
};
struct AdamStep : Shape<4, 3, 9> {
  template <class T>
  TLRT_DEV static void apply(const T* x, T* y, const T* s) {
    const T p = x[0], g = x[1], m = x[2], v = x[3];
    const T m1 = fma_rn(s[1], g, mul_rn(m, s[0]));
    const T v1 = fma_rn(s[3], mul_rn(g, g), mul_rn(v, s[2]));
    const T den = add_rn(sqrt_rn(mul_rn(v1, s[5])), s[6]);
    const T u = div_rn(mul_rn(m1, s[4]), den);
    y[0] = fma_rn(s[8], u, fma_rn(s[7], p, p));
    y[1] = m1;
    y[2] = v1;
  }
};

#undef TLRT_DEV

}  // namespace tlrt::kernels::device_ops
