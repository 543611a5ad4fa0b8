// The elementwise family through the ABI and the Lean runtime double, on the backend TLRT_DEVICE
// selects (ctest runs it once with cpu and once with cuda). Hand-computed fixtures of SPEC-ops
// sections 2, 5 and 6 for every op: the selection rules, the staged roundings, the fused
// multiply-adds of axpy and adam_step, host-scalar rounding; special values of the
// transcendentals; empty buffers; ownership counters; and each bad input's panic per signature
// class. The ops generic tests iterate come from elementwise_ops.def, so a new row is covered.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "abi_test_support.h"

using namespace abi_test;

namespace {

constexpr uint8_t kF32 = 0;
constexpr uint8_t kF64 = 1;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kF32Max = std::numeric_limits<float>::max();
constexpr double kF32Tiny = std::numeric_limits<float>::denorm_min();
constexpr double kF64Tiny = std::numeric_limits<double>::denorm_min();

using Values = std::vector<double>;

// ---------------------------------------------------------------------------------------------
// The op list, with a uniform way to call each symbol.

enum class Sig {
  unary,
  binary,
  unary_s1,
  binary_s1,
  unary_s2,
  binary_s2,
  ternary_pair,
  adam,
  copy_release
};

using Caller = lean_obj_res (*)(lean_object* const* b, const double* s);

struct AbiOp {
  const char* name;
  Sig sig;
  Caller call;
};

#define TLRT_CALL_unary(name) \
  [](lean_object* const* b, const double*) { return torchlean_cuda_buffer_##name(b[0]); }
#define TLRT_CALL_copy_release(name) TLRT_CALL_unary(name)
#define TLRT_CALL_binary(name) \
  [](lean_object* const* b, const double*) { return torchlean_cuda_buffer_##name(b[0], b[1]); }
#define TLRT_CALL_unary_s1(name) \
  [](lean_object* const* b, const double* s) { return torchlean_cuda_buffer_##name(b[0], s[0]); }
#define TLRT_CALL_binary_s1(name)                          \
  [](lean_object* const* b, const double* s) {             \
    return torchlean_cuda_buffer_##name(b[0], b[1], s[0]); \
  }
#define TLRT_CALL_unary_s2(name)                           \
  [](lean_object* const* b, const double* s) {             \
    return torchlean_cuda_buffer_##name(b[0], s[0], s[1]); \
  }
#define TLRT_CALL_binary_s2(name)                                \
  [](lean_object* const* b, const double* s) {                   \
    return torchlean_cuda_buffer_##name(b[0], b[1], s[0], s[1]); \
  }
#define TLRT_CALL_ternary_pair(name)                       \
  [](lean_object* const* b, const double*) {               \
    return torchlean_cuda_buffer_##name(b[0], b[1], b[2]); \
  }
#define TLRT_CALL_adam(name)                                                                  \
  [](lean_object* const* b, const double* s) {                                                \
    return torchlean_cuda_buffer_##name(b[0], b[1], b[2], b[3], s[0], s[1], s[2], s[3], s[4], \
                                        s[5], s[6], s[7], s[8]);                              \
  }

const AbiOp kOps[] = {
#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64) \
  {#name, Sig::signature, TLRT_CALL_##signature(name)},
#include "ops/elementwise_ops.def"
#undef TLRT_ELEMENTWISE
};

int inputs_of(Sig s) {
  switch (s) {
    case Sig::binary:
    case Sig::binary_s1:
    case Sig::binary_s2:
      return 2;
    case Sig::ternary_pair:
      return 3;
    case Sig::adam:
      return 4;
    default:
      return 1;
  }
}
int outputs_of(Sig s) {
  return s == Sig::ternary_pair ? 2 : s == Sig::adam ? 3 : 1;
}
// ---------------------------------------------------------------------------------------------
// Helpers

class Elementwise : public BackendSuite {};

using ElementwiseDeathTest = Elementwise;

Obj buffer(const Values& v, uint8_t dt) {
  return Obj(torchlean_cuda_buffer_of_float_array(float_array(v).get(), dt));
}

// Result fields of a 1-, 2- or 3-output op (tuples nest to the right), borrowed from `r`.
std::vector<lean_object*> fields(lean_object* r, int outputs) {
  if (outputs == 1) return {r};
  EXPECT_EQ(lean_obj_tag(r), 0u);
  EXPECT_EQ(lean_ctor_num_objs(r), 2u);
  if (outputs == 2) return {lean_ctor_get(r, 0), lean_ctor_get(r, 1)};
  lean_object* rest = lean_ctor_get(r, 1);
  EXPECT_EQ(lean_ctor_num_objs(rest), 2u);
  return {lean_ctor_get(r, 0), lean_ctor_get(rest, 0), lean_ctor_get(rest, 1)};
}

std::string hex(double v, uint8_t dt) {
  char s[64];
  std::snprintf(s, sizeof s, "%a", dt == kF32 ? static_cast<double>(static_cast<float>(v)) : v);
  return s;
}

bool same(double got, double want, uint8_t dt) {
  return dt == kF32 ? same_bits_or_nan(static_cast<float>(got), static_cast<float>(want))
                    : same_bits_or_nan(got, want);
}

// Equal bits in the dtype, or both NaN (SPEC-ops 2.4).
void expect_bits(const Values& got, const Values& want, uint8_t dt, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(same(got[i], want[i], dt))
        << what << " [" << i << "]: got " << hex(got[i], dt) << ", want " << hex(want[i], dt);
  }
}

// Distance on the dtype's ordered integer line.
double ulps(double a, double b, uint8_t dt) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : kInf;
  auto ordered = [&](double v) -> long double {
    if (dt == kF32) {
      const int32_t i = static_cast<int32_t>(f32_bits(v));
      return i < 0 ? static_cast<long double>(INT32_MIN) - i : i;
    }
    const int64_t i = static_cast<int64_t>(f64_bits(v));
    return i < 0 ? static_cast<long double>(INT64_MIN) - i : i;
  };
  return static_cast<double>(std::fabs(ordered(a) - ordered(b)));
}

void expect_ulps(const Values& got, const Values& want, uint8_t dt, double bound,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(ulps(got[i], want[i], dt), bound)
        << what << " [" << i << "]: got " << hex(got[i], dt) << ", want " << hex(want[i], dt);
  }
}

// One ULP of the dtype at magnitude |x|.
double ulp_at(double x, uint8_t dt) {
  const int digits = dt == kF32 ? 24 : 53, min_exp = dt == kF32 ? -126 : -1022;
  int e = 0;
  std::frexp(std::fabs(x), &e);
  return std::ldexp(1.0, std::max(e - 1, min_exp) - (digits - 1));
}

using Unary = lean_obj_res (*)(b_lean_obj_arg);
using Binary = lean_obj_res (*)(b_lean_obj_arg, b_lean_obj_arg);

Values unary(Unary f, const Values& x, uint8_t dt) {
  Obj b = buffer(x, dt);
  Obj r(f(b.get()));
  EXPECT_EQ(torchlean_cuda_buffer_dtype(r.get()), dt);
  return values_of(r.get());
}

Values binary(Binary f, const Values& a, const Values& b, uint8_t dt) {
  Obj x = buffer(a, dt), y = buffer(b, dt);
  Obj r(f(x.get(), y.get()));
  EXPECT_EQ(torchlean_cuda_buffer_dtype(r.get()), dt);
  return values_of(r.get());
}

Values scale(const Values& x, double c, uint8_t dt) {
  Obj b = buffer(x, dt);
  return values_of(Obj(torchlean_cuda_buffer_scale(b.get(), c)).get());
}
Values axpy(const Values& a, const Values& b, double c, uint8_t dt) {
  Obj x = buffer(a, dt), y = buffer(b, dt);
  return values_of(Obj(torchlean_cuda_buffer_axpy(x.get(), y.get(), c)).get());
}
Values clamp(const Values& x, double lo, double hi, uint8_t dt) {
  Obj b = buffer(x, dt);
  return values_of(Obj(torchlean_cuda_buffer_clamp(b.get(), lo, hi)).get());
}
Values clamp_bwd(const Values& x, const Values& g, double lo, double hi, uint8_t dt) {
  Obj a = buffer(x, dt), b = buffer(g, dt);
  return values_of(Obj(torchlean_cuda_buffer_clamp_bwd(a.get(), b.get(), lo, hi)).get());
}

struct Pair {
  Values da, db;
};
Pair pair_op(lean_obj_res (*f)(b_lean_obj_arg, b_lean_obj_arg, b_lean_obj_arg), const Values& a,
             const Values& b, const Values& g, uint8_t dt) {
  Obj x = buffer(a, dt), y = buffer(b, dt), z = buffer(g, dt);
  Obj r(f(x.get(), y.get(), z.get()));
  const auto f2 = fields(r.get(), 2);
  return {values_of(f2[0]), values_of(f2[1])};
}

struct Adam {
  Values p, m, v;
};
// Scalars in ABI order: b1, 1-b1, b2, 1-b2, c1, c2, eps, decay, update scale.
Adam adam(const Values& p, const Values& g, const Values& m, const Values& v,
          const std::vector<double>& s, uint8_t dt) {
  Obj bp = buffer(p, dt), bg = buffer(g, dt), bm = buffer(m, dt), bv = buffer(v, dt);
  Obj r(torchlean_cuda_buffer_adam_step(bp.get(), bg.get(), bm.get(), bv.get(), s[0], s[1], s[2],
                                        s[3], s[4], s[5], s[6], s[7], s[8]));
  const auto f3 = fields(r.get(), 3);
  return {values_of(f3[0]), values_of(f3[1]), values_of(f3[2])};
}

// SPEC-ops 6.3 in T with host fma: the expected value for fixtures not computed by hand.
template <class T>
void adam_staged(T p, T g, T m, T v, const std::vector<double>& sd, T* out) {
  T s[9];
  for (int k = 0; k < 9; ++k) s[k] = static_cast<T>(sd[k]);
  const T m1 = std::fma(s[1], g, m * s[0]);
  const T v1 = std::fma(s[3], g * g, v * s[2]);
  const T den = std::sqrt(v1 * s[5]) + s[6];
  const T u = (m1 * s[4]) / den;
  out[0] = std::fma(s[8], u, std::fma(s[7], p, p));
  out[1] = m1;
  out[2] = v1;
}

// ---------------------------------------------------------------------------------------------
// Unary selections and sign operations

TEST_F(Elementwise, SqrtSelectsPositiveZeroForNonPositiveInputs) {
  for (uint8_t dt : {kF32, kF64}) {
    const double tiny = dt == kF32 ? kF32Tiny : kF64Tiny;
    const Values got = unary(torchlean_cuda_buffer_sqrt,
                             {-0.0, -1.0, -kInf, kNaN, 0.0, 4.0, kInf, tiny, -tiny, 2.0}, dt);
    const double root2 = dt == kF32 ? std::sqrt(2.0f) : std::sqrt(2.0);
    const double root_tiny = dt == kF32 ? std::sqrt(static_cast<float>(tiny)) : std::sqrt(tiny);
    expect_bits(got, {0.0, 0.0, 0.0, kNaN, 0.0, 2.0, kInf, root_tiny, 0.0, root2}, dt, "sqrt");
  }
}

TEST_F(Elementwise, ReluSelectsXOrPositiveZero) {
  for (uint8_t dt : {kF32, kF64}) {
    const Values got = unary(torchlean_cuda_buffer_relu,
                             {kNaN, -kNaN, -0.0, 0.0, -1.0, 2.5, kInf, -kInf, kF32Tiny}, dt);
    expect_bits(got, {0.0, 0.0, 0.0, 0.0, 0.0, 2.5, kInf, 0.0, kF32Tiny}, dt, "relu");
    for (size_t i = 0; i < 5; ++i) EXPECT_FALSE(std::signbit(got[i])) << i;
  }
}

TEST_F(Elementwise, AbsClearsAndNegFlipsTheSignBit) {
  for (uint8_t dt : {kF32, kF64}) {
    const Values x = {-0.0, 0.0, -1.5, 2.0, -kInf, kInf, kNaN, -kNaN, -kF32Tiny};
    const Values a = unary(torchlean_cuda_buffer_abs, x, dt);
    expect_bits(a, {0.0, 0.0, 1.5, 2.0, kInf, kInf, kNaN, kNaN, kF32Tiny}, dt, "abs");
    EXPECT_FALSE(std::signbit(a[0]));
    EXPECT_FALSE(std::signbit(a[6]));
    EXPECT_FALSE(std::signbit(a[7]));
    const Values n = unary(torchlean_cuda_buffer_neg, x, dt);
    expect_bits(n, {0.0, -0.0, 1.5, -2.0, kInf, -kInf, kNaN, kNaN, kF32Tiny}, dt, "neg");
    EXPECT_TRUE(std::signbit(n[1]));
    EXPECT_TRUE(std::signbit(n[6])) << "neg flips the sign of NaN";
    EXPECT_FALSE(std::signbit(n[7])) << "neg flips the sign of NaN";
  }
}

TEST_F(Elementwise, FloorRoundsDownAndKeepsZerosInfinitiesAndNaN) {
  for (uint8_t dt : {kF32, kF64}) {
    const double below_one = dt == kF32 ? std::nextafter(1.0f, 0.0f) : std::nextafter(1.0, 0.0);
    const Values got = unary(torchlean_cuda_buffer_floor,
                             {-0.5, -0.0, 0.0, kInf, -kInf, kNaN, 2.5, -2.5, 8388607.5, 1e30,
                              -kF32Tiny, kF32Tiny, below_one, -1.0, -below_one, 4194304.5},
                             dt);
    expect_bits(
        got,
        {-1.0, -0.0, 0.0, kInf, -kInf, kNaN, 2.0, -3.0, 8388607.0,
         dt == kF32 ? static_cast<double>(1e30f) : 1e30, -1.0, 0.0, 0.0, -1.0, -1.0, 4194304.0},
        dt, "floor");
  }
}

TEST_F(Elementwise, InvIsOneIeeeDivision) {
  const Values x = {2.0, -0.0, 0.0, kInf, -kInf, 3.0, kF32Tiny, kF32Max, kNaN, -10.0};
  const Values got = unary(torchlean_cuda_buffer_inv, x, kF32);
  Values want;
  for (double v : x) want.push_back(1.0f / static_cast<float>(v));
  expect_bits(got, want, kF32, "inv f32");
  EXPECT_EQ(f32_bits(got[7]), f32_bits(1.0f / 3.40282347e38f));  // a subnormal quotient
  EXPECT_TRUE(std::signbit(got[1]) && std::isinf(got[1]));
  const Values x64 = {3.0, -0.0, 7.0, 1e308, kF64Tiny};
  Values want64;
  for (double v : x64) want64.push_back(1.0 / v);
  expect_bits(unary(torchlean_cuda_buffer_inv, x64, kF64), want64, kF64, "inv f64");
}

// ---------------------------------------------------------------------------------------------
// Binary selections

TEST_F(Elementwise, MaxAndMinIgnoreOneNaN) {
  for (uint8_t dt : {kF32, kF64}) {
    const Values a = {kNaN, 1.0, kNaN, -kInf, 3.0, -0.0, 2.0, kF32Tiny};
    const Values b = {1.0, kNaN, kNaN, 2.0, 2.0, -0.0, kInf, 0.0};
    expect_bits(binary(torchlean_cuda_buffer_max, a, b, dt),
                {1.0, 1.0, kNaN, 2.0, 3.0, -0.0, kInf, kF32Tiny}, dt, "max");
    expect_bits(binary(torchlean_cuda_buffer_min, a, b, dt),
                {1.0, 1.0, kNaN, -kInf, 2.0, -0.0, 2.0, 0.0}, dt, "min");
  }
}

TEST_F(Elementwise, MaskKeepsValuesWhereTheMaskIsNonzero) {
  for (uint8_t dt : {kF32, kF64}) {
    const Values values = {1.0, 2.0, 3.0, 4.0, 5.0, kNaN, -0.0, -7.0, kNaN};
    const Values allowed = {kNaN, -0.0, 0.0, 1.0, -kInf, 0.0, 1.0, kF32Tiny, 2.0};
    const Values got = binary(torchlean_cuda_buffer_mask, values, allowed, dt);
    expect_bits(got, {1.0, 0.0, 0.0, 4.0, 5.0, 0.0, -0.0, -7.0, kNaN}, dt, "mask");
    EXPECT_FALSE(std::signbit(got[1]));
    EXPECT_TRUE(std::signbit(got[6])) << "a kept value is a bit copy";
  }
}

TEST_F(Elementwise, ArithmeticIsOneRoundingPerOp) {
  const Values a = {1.0, 0x1p-149, 3.0, kF32Max, -0.0, 1.0, kInf, 0.1};
  const Values b = {0x1p-24, 0x1p-149, 7.0, kF32Max, 0.0, 3.0, kInf, 0.2};
  const Values add = binary(torchlean_cuda_buffer_add, a, b, kF32);
  const Values sub = binary(torchlean_cuda_buffer_sub, a, b, kF32);
  const Values mul = binary(torchlean_cuda_buffer_mul, a, b, kF32);
  const Values div = binary(torchlean_cuda_buffer_div, a, b, kF32);
  Values wa, ws, wm, wd;
  for (size_t i = 0; i < a.size(); ++i) {
    const float x = static_cast<float>(a[i]), y = static_cast<float>(b[i]);
    wa.push_back(x + y);
    ws.push_back(x - y);
    wm.push_back(x * y);
    wd.push_back(x / y);
  }
  expect_bits(add, wa, kF32, "add");
  expect_bits(sub, ws, kF32, "sub");
  expect_bits(mul, wm, kF32, "mul");
  expect_bits(div, wd, kF32, "div");
  // Ties to even: 1 + 2^-24 -> 1; -0 + +0 -> +0; max + max -> inf; inf - inf -> NaN.
  EXPECT_EQ(f32_bits(add[0]), 0x3f800000u);
  EXPECT_FALSE(std::signbit(add[4]));
  EXPECT_TRUE(std::isinf(add[3]));
  EXPECT_TRUE(std::isnan(sub[6]));
  EXPECT_EQ(f64_bits(binary(torchlean_cuda_buffer_add, {1.0}, {0x1p-53}, kF64)[0]), f64_bits(1.0));
}

// ---------------------------------------------------------------------------------------------
// Host scalars (SPEC-ops 2.5)

TEST_F(Elementwise, ScaleRoundsTheScalarFirst) {
  // fl(9 * fl(0.1)) = 0x3f666667, where fl(9 * 0.1) would be 0x3f666666.
  EXPECT_EQ(f32_bits(scale({9.0}, 0.1, kF32)[0]), 0x3f666667u);
  // A scalar below the float32 range rounds to 0 before the product; one above it to inf.
  expect_bits(scale({1e30, -2.0, 0.0}, 1e-50, kF32), {0.0, -0.0, 0.0}, kF32, "tiny scalar");
  expect_bits(scale({2.0, 0.0, -1.0}, 1e39, kF32), {kInf, kNaN, -kInf}, kF32, "huge scalar");
  expect_bits(scale({9.0, -0.0}, 0.1, kF64), {9.0 * 0.1, -0.0}, kF64, "scale f64");
}

TEST_F(Elementwise, AxpyIsOneFusedMultiplyAddWithTheCoefficientRoundedFirst) {
  const double e23 = 0x1p-23, e22 = 0x1p-22;
  // axpy(a, b, c) = fma(fl(c), b, a).
  struct Case {
    double a, b, c;
    uint32_t bits;
    const char* what;
  };
  const Case cases[] = {
      {-(1 + e22), 1 + e23, 1 + e23, 0x28800000u, "cancellation (1+2^-23)^2 - (1+2^-22)"},
      {-kF32Max, 2.0, kF32Max, 0x7f7fffffu, "overflow cancellation fma(MAX, 2, -MAX)"},
      {-0.0, -0.0, 1.0, 0x80000000u, "(-0)*1 + (-0)"},
      {0.0, -0.0, 1.0, 0x00000000u, "(-0)*1 + (+0)"},
      {-0.0, 1.0, -0.0, 0x80000000u, "1*(-0) + (-0)"},
      {1.0, kInf, 0.0, 0x7fc00000u, "0*inf + 1"},
      {0.0, 1.0, 1 + 0x1p-24, 0x3f800000u, "axpy(0, 1, 1+2^-24)"},
      {-1.0, 1.0, 1 + 0x1p-25, 0x00000000u, "c = 1+2^-25 rounds to 1 first"},
      {-0x1p-80, 1.5, 1 + e23, 0x3fc00001u, "double-rounding discriminator"},
      {0.0, 0x1p-75, 0x1p-75, 0x00000000u, "underflow tie to even (0)"},
      {0x1p-149, 0x1p-75, 0x1p-75, 0x00000002u, "underflow tie to even (2^-148)"},
      {0.0, 0x1p-75 * (1 + 0x1p-10), 0x1p-75, 0x00000001u, "just above the tie"},
      {0x1p-126, -0x1p-127, 1.0, 0x00400000u, "subnormal result"},
  };
  for (const Case& c : cases) {
    const Values got = axpy({c.a}, {c.b}, c.c, kF32);
    if ((c.bits & 0x7f800000u) == 0x7f800000u && (c.bits & 0x7fffffu) != 0) {
      EXPECT_TRUE(std::isnan(got[0])) << c.what;
    } else {
      EXPECT_EQ(f32_bits(got[0]), c.bits) << c.what << ": got " << hex(got[0], kF32);
    }
  }
  // float64: the same discriminator one format up, and the cancellation.
  EXPECT_EQ(f64_bits(axpy({-0x1p-200}, {1.5}, 1 + 0x1p-52, kF64)[0]), 0x3FF8000000000001ull);
  EXPECT_EQ(axpy({-(1 + 0x1p-51)}, {1 + 0x1p-52}, 1 + 0x1p-52, kF64)[0], 0x1p-104);
}

TEST_F(Elementwise, ClampRoundsBoundsAndFollowsFminOfFmax) {
  for (uint8_t dt : {kF32, kF64}) {
    expect_bits(clamp({-5.0, 0.5, 5.0, kNaN, -kInf, kInf, -0.0}, -1.0, 2.0, dt),
                {-1.0, 0.5, 2.0, -1.0, -1.0, 2.0, -0.0}, dt, "ordinary");
    // NaN x gives lo, then capped by hi.
    expect_bits(clamp({kNaN}, 3.0, 2.0, dt), {2.0}, dt, "NaN x, lo > hi");
    // lo > hi: always hi.
    expect_bits(clamp({-5.0, 0.0, 5.0}, 2.0, -1.0, dt), {-1.0, -1.0, -1.0}, dt, "lo > hi");
    // NaN bounds are ignored.
    expect_bits(clamp({-5.0, 0.5, 5.0}, kNaN, 1.0, dt), {-5.0, 0.5, 1.0}, dt, "NaN lo");
    expect_bits(clamp({-5.0, 0.5, 5.0}, -1.0, kNaN, dt), {-1.0, 0.5, 5.0}, dt, "NaN hi");
    expect_bits(clamp({-5.0, kNaN}, kNaN, kNaN, dt), {-5.0, kNaN}, dt, "NaN bounds");
  }
  // fl(lo) and fl(hi): float32 bounds are the rounded scalars.
  const Values got = clamp({0.0, 2.0}, 0.1, 1 + 0x1p-30, kF32);
  EXPECT_EQ(f32_bits(got[0]), 0x3dcccccdu);
  EXPECT_EQ(f32_bits(got[1]), 0x3f800000u);
}

TEST_F(Elementwise, ScaledProdExpIsTheComposedExpBitForBit) {
  for (uint8_t dt : {kF32, kF64}) {
    Values a, b;
    for (int i = 0; i < 4099; ++i) {
      a.push_back(std::sin(i * 0.37) * (dt == kF32 ? 12 : 30));
      b.push_back(std::cos(i * 1.91) * (dt == kF32 ? 12 : 30));
    }
    a.insert(a.end(), {kNaN, 0.0, -0.0, kInf, -kInf, 1e30});
    b.insert(b.end(), {1.0, kInf, 3.0, 0.0, 2.0, 1e30});
    for (double c : {0.7, -1.3, 0.1}) {
      Obj x = buffer(a, dt), y = buffer(b, dt);
      Obj fused(torchlean_cuda_buffer_scaled_prod_exp(x.get(), y.get(), c));
      Obj full(torchlean_cuda_buffer_full(static_cast<uint32_t>(a.size()), c, dt));
      Obj cx(torchlean_cuda_buffer_mul(full.get(), x.get()));
      Obj cxy(torchlean_cuda_buffer_mul(cx.get(), y.get()));
      Obj composed(torchlean_cuda_buffer_exp(cxy.get()));
      expect_bits(values_of(fused.get()), values_of(composed.get()), dt,
                  "scaled_prod_exp c = " + std::to_string(c));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Transcendentals: special values exactly, ordinary values within the device library's bound

TEST_F(Elementwise, TranscendentalSpecialValues) {
  for (uint8_t dt : {kF32, kF64}) {
    const double over = dt == kF32 ? 89.0 : 710.0, under = dt == kF32 ? -120.0 : -800.0;
    expect_bits(unary(torchlean_cuda_buffer_exp, {-kInf, kInf, 0.0, -0.0, kNaN, over, under}, dt),
                {0.0, kInf, 1.0, 1.0, kNaN, kInf, 0.0}, dt, "exp");
    const Values lg =
        unary(torchlean_cuda_buffer_log, {0.0, -0.0, -1.0, -kInf, kInf, 1.0, kNaN, -kF32Tiny}, dt);
    expect_bits(lg, {-kInf, -kInf, kNaN, kNaN, kInf, 0.0, kNaN, kNaN}, dt, "log");
    const Values s = unary(torchlean_cuda_buffer_sin, {0.0, -0.0, kInf, -kInf, kNaN}, dt);
    expect_bits(s, {0.0, -0.0, kNaN, kNaN, kNaN}, dt, "sin");
    expect_bits(unary(torchlean_cuda_buffer_cos, {0.0, -0.0, kInf, -kInf, kNaN}, dt),
                {1.0, 1.0, kNaN, kNaN, kNaN}, dt, "cos");
    const Values t =
        unary(torchlean_cuda_buffer_tanh, {-0.0, 0.0, kInf, -kInf, kNaN, 40.0, -40.0}, dt);
    expect_bits(t, {-0.0, 0.0, 1.0, -1.0, kNaN, 1.0, -1.0}, dt, "tanh");
    EXPECT_TRUE(std::signbit(t[0])) << "tanh keeps -0";
  }
}

TEST_F(Elementwise, TranscendentalsWithinTheLibraryBound) {
  // Against the x87 evaluation rounded once: the device library's published bound (2 ULP for
  // the float32 functions and double sin/cos) plus the half ULP of the rounding, in whole ULPs.
  const Values any = {1.0, -1.0, 0.5, 2.0, 10.0, -3.25, 1e-3, 100.0};
  const Values positive = {2.0, 10.0, 0.1, 1e-30, 7.5};
  struct Fn {
    Unary op;
    long double (*f)(long double);
    const Values& x;
    const char* name;
  };
  const Fn fns[] = {
      {torchlean_cuda_buffer_exp, [](long double v) { return std::exp(v); }, any, "exp"},
      {torchlean_cuda_buffer_sin, [](long double v) { return std::sin(v); }, any, "sin"},
      {torchlean_cuda_buffer_cos, [](long double v) { return std::cos(v); }, any, "cos"},
      {torchlean_cuda_buffer_tanh, [](long double v) { return std::tanh(v); }, any, "tanh"},
      {torchlean_cuda_buffer_log, [](long double v) { return std::log(v); }, positive, "log"}};
  for (uint8_t dt : {kF32, kF64}) {
    for (const Fn& fn : fns) {
      const Values& in = fn.x;
      Values want;
      for (double v : in) {
        const long double r = fn.f(dt == kF32 ? static_cast<float>(v) : v);
        want.push_back(dt == kF32 ? static_cast<float>(r) : static_cast<double>(r));
      }
      expect_ulps(unary(fn.op, in, dt), want, dt, 2, fn.name);
    }
  }
}

// The staged composites below use the transcendental the reference uses (binary64, rounded once),
// so the reference backend must match them bit for bit; the device library may differ within
// `device_bound` ULPs.
double library_ulps(double device_bound) {
  return cuda_requested() ? device_bound : 0;
}

float sigmoid_f32(float x) {
  const float r = static_cast<float>(std::exp(-static_cast<double>(x)));
  const float d = 1.0f + r;
  return 1.0f / d;
}

TEST_F(Elementwise, SigmoidIsStagedAndSaturates) {
  for (uint8_t dt : {kF32, kF64}) {
    const double huge = dt == kF32 ? -200.0 : -800.0, one = dt == kF32 ? 20.0 : 40.0;
    const Values got =
        unary(torchlean_cuda_buffer_sigmoid, {0.0, kInf, -kInf, huge, kNaN, one}, dt);
    expect_bits(got, {0.5, 1.0, 0.0, 0.0, kNaN, 1.0}, dt, "sigmoid exact");
    EXPECT_FALSE(std::signbit(got[3]));
  }
  const Values x = {1.0, -1.0, 3.5, -7.25, -88.0, 16.5, 0.001, -30.0};
  Values want;
  for (double v : x) want.push_back(sigmoid_f32(static_cast<float>(v)));
  // expf's 2 ULP become up to 4 ULPs of y where d's significand is near 1 (docs/NUMERICS.md).
  expect_ulps(unary(torchlean_cuda_buffer_sigmoid, x, kF32), want, kF32, library_ulps(4),
              "sigmoid staged");
}

// GELU constants and stages of SPEC-ops 6.1, each line one float rounding (host code is compiled
// with -ffp-contract=off); tanh from libm, so the device may differ within its bound.
struct GeluF32 {
  static float c() { return static_cast<float>(0.044715); }
  static float k() { return static_cast<float>(0.79788456080286535588); }
  static float c3() { return static_cast<float>(3.0 * static_cast<double>(c())); }
  static float t(float x) {
    const float q1 = x * c(), q2 = q1 * x, q3 = q2 * x, u = x + q3, v = u * k();
    return static_cast<float>(std::tanh(static_cast<double>(v)));
  }
  static float forward(float x) {
    const float tp1 = t(x) + 1.0f, p = x * tp1;
    return p * 0.5f;
  }
  static float backward(float x, float g) {
    const float tv = t(x);
    const float tt = tv * tv, s = 1.0f - tt;
    const float w1 = x * c3(), w2 = w1 * x, w3 = w2 + 1.0f, d = w3 * k();
    const float xs = x * s, e = xs * d;
    const float tp1 = tv + 1.0f, h = tp1 + e, half = h * 0.5f;
    return half * g;
  }
};

TEST_F(Elementwise, GeluForwardIsStagedAsTheActivationSpec) {
  EXPECT_EQ(f32_bits(GeluF32::c()), 0x3d372713u);
  EXPECT_EQ(f32_bits(GeluF32::k()), 0x3f4c422au);
  EXPECT_EQ(f32_bits(GeluF32::c3()), 0x3e095d4eu);
  Values x = {-3.0, -1.0, -0.5, 0.1, 0.5, 1.0, 2.0, 3.0, -2.75, 0.0137, 5.5, -4.0};
  for (int i = 0; i < 200; ++i) x.push_back(-7.0 + 0.0713 * i);
  const Values got = unary(torchlean_cuda_buffer_gelu, x, kF32);
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = GeluF32::forward(static_cast<float>(x[i]));
    // x (t + 1) / 2 cancels where t is near -1: a few ULPs of t are ULPs of |x| / 2.
    const double scale = std::fmax(std::fabs(want), 0.5 * std::fabs(x[i]));
    EXPECT_LE(std::fabs(got[i] - want), library_ulps(4) * ulp_at(scale, kF32))
        << "gelu(" << x[i] << "): got " << hex(got[i], kF32) << ", want " << hex(want, kF32);
  }
  // Consequences of the staging, exact on every backend: t = -1 makes x (t + 1) = -0, and
  // x = -inf gives -inf * 0 = NaN.
  for (uint8_t dt : {kF32, kF64}) {
    const Values e =
        unary(torchlean_cuda_buffer_gelu, {-10.0, 10.0, -kInf, kInf, 0.0, -0.0, kNaN, -1e20}, dt);
    expect_bits(e, {-0.0, 10.0, kNaN, kInf, 0.0, -0.0, kNaN, -0.0}, dt, "gelu exact");
    EXPECT_TRUE(std::signbit(e[0]));
  }
}

TEST_F(Elementwise, GeluBackwardIsStagedAsTheActivationSpec) {
  Values x = {-3.0, -1.0, -0.5, 0.1, 0.5, 1.0, 2.0, 3.0, -2.75, 0.0137, 5.5, -1.7};
  Values g = {1.0, -2.0, 0.5, 3.0, -1.25, 1.0, 7.0, -0.1, 2.0, 1.0, 1.0, -3.0};
  for (int i = 0; i < 200; ++i) {
    x.push_back(-7.0 + 0.0713 * i);
    g.push_back(1.0 + 0.37 * (i % 7));
  }
  const Values got = binary(torchlean_cuda_buffer_gelu_bwd, x, g, kF32);
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = GeluF32::backward(static_cast<float>(x[i]), static_cast<float>(g[i]));
    // s = 1 - t^2 cancels where |t| is near 1: measure at the size of the terms.
    const double d = (3 * 0.044715 * x[i] * x[i] + 1) * 0.7978845608028654;
    const double scale =
        std::fmax(std::fabs(want), 0.5 * std::fabs(g[i]) * (2 + std::fabs(x[i] * d)));
    EXPECT_LE(std::fabs(got[i] - want), library_ulps(8) * ulp_at(scale, kF32))
        << "gelu_bwd(" << x[i] << ", " << g[i] << "): got " << hex(got[i], kF32) << ", want "
        << hex(want, kF32);
  }
  for (uint8_t dt : {kF32, kF64}) {
    expect_bits(binary(torchlean_cuda_buffer_gelu_bwd, {0.0, -10.0, 10.0, kInf, 1.0, -0.0},
                       {3.0, 2.0, 2.0, 1.0, kNaN, -4.0}, dt),
                {1.5, 0.0, 2.0, kNaN, kNaN, -2.0}, dt, "gelu_bwd exact");
  }
}

// ---------------------------------------------------------------------------------------------
// Vector-Jacobian products (SPEC-ops 6.2)

TEST_F(Elementwise, ReluBwdPassesGOnlyWhereXIsPositive) {
  for (uint8_t dt : {kF32, kF64}) {
    expect_bits(
        binary(torchlean_cuda_buffer_relu_bwd, {1.0, 0.0, -0.0, -1.0, kNaN, kInf, kF32Tiny, 2.0},
               {5.0, 5.0, 5.0, 5.0, 5.0, kNaN, -2.0, -0.0}, dt),
        {5.0, 0.0, 0.0, 0.0, 0.0, kNaN, -2.0, -0.0}, dt, "relu_bwd");
  }
}

TEST_F(Elementwise, AbsBwdIsTheProductOfSignAndG) {
  for (uint8_t dt : {kF32, kF64}) {
    const Values got = binary(torchlean_cuda_buffer_abs_bwd,
                              {2.0, -3.0, 0.0, -0.0, kNaN, 0.0, 0.0, kInf, -kF32Tiny, -1.0},
                              {1.5, 1.5, 1.5, 1.5, 1.5, kInf, -2.0, -1.0, 4.0, kNaN}, dt);
    expect_bits(got, {1.5, -1.5, 0.0, 0.0, 0.0, kNaN, -0.0, -1.0, -4.0, kNaN}, dt, "abs_bwd");
    EXPECT_TRUE(std::signbit(got[6])) << "x = 0, g < 0 gives -0";
  }
}

TEST_F(Elementwise, SqrtBwdIsStagedAndSelectsZeroForNonPositiveX) {
  // r = sqrt(2), r2 = fl(2r), f = fl(1 / r2), dx = fl(3 f) = 0x1.0f876cp+0; g / (2 sqrt x) would
  // give 0x1.0f876ep+0.
  EXPECT_EQ(binary(torchlean_cuda_buffer_sqrt_bwd, {2.0}, {3.0}, kF32)[0], 0x1.0f876cp+0);
  for (uint8_t dt : {kF32, kF64}) {
    expect_bits(binary(torchlean_cuda_buffer_sqrt_bwd,
                       {4.0, 0.0, -0.0, -1.0, -kInf, kNaN, kInf, kInf, kInf, 0.25},
                       {1.0, kNaN, kInf, -kInf, kNaN, 1.0, 1.0, -1.0, kInf, -0.0}, dt),
                {0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.0, kNaN, -0.0}, dt, "sqrt_bwd");
  }
  Values x, g, want;
  for (int i = 1; i < 40; ++i) {
    const float xv = 0.37f * static_cast<float>(i * i), gv = 1.0f - 0.11f * static_cast<float>(i);
    const float r = std::sqrt(xv), r2 = r * 2.0f, f = 1.0f / r2;
    x.push_back(xv);
    g.push_back(gv);
    want.push_back(gv * f);
  }
  expect_bits(binary(torchlean_cuda_buffer_sqrt_bwd, x, g, kF32), want, kF32, "sqrt_bwd staged");
}

TEST_F(Elementwise, ClampBwdUsesTheOpenIntervalOfRoundedBounds) {
  for (uint8_t dt : {kF32, kF64}) {
    const Values x = {-1.0, -0.5, 0.0, 1.0, 2.0, kNaN, 0.5};
    const Values g = {7.0, 7.0, 7.0, 7.0, 7.0, 7.0, kNaN};
    expect_bits(clamp_bwd(x, g, -1.0, 1.0, dt), {0.0, 7.0, 7.0, 0.0, 0.0, 0.0, kNaN}, dt, "open");
    expect_bits(clamp_bwd(x, g, 1.0, -1.0, dt), Values(7, 0.0), dt, "lo > hi");
    expect_bits(clamp_bwd(x, g, kNaN, 1.0, dt), Values(7, 0.0), dt, "NaN lo");
    expect_bits(clamp_bwd(x, g, -1.0, kNaN, dt), Values(7, 0.0), dt, "NaN hi");
  }
  // fl32(0.1) is not above fl32(0.1); its successor is.
  const double lo = static_cast<float>(0.1), above = std::nextafter(static_cast<float>(0.1), 1.0f);
  expect_bits(clamp_bwd({lo, above}, {1.0, 1.0}, 0.1, 1.0, kF32), {0.0, 1.0}, kF32, "fl(lo)");
}

TEST_F(Elementwise, MaxMinBwdRouteGAndSplitTiesAndNaN) {
  const Values a = {3.0, 1.0, 2.0, kNaN, 1.0, kNaN, 0.0, 5.0, 5.0};
  const Values b = {1.0, 3.0, 2.0, 1.0, kNaN, kNaN, -0.0, 5.0, 5.0};
  for (uint8_t dt : {kF32, kF64}) {
    const double tiny = dt == kF32 ? kF32Tiny : kF64Tiny;
    // fl(g * 0.5) rounds the halves of subnormals to even: tiny/2 -> 0, 3 tiny / 2 -> 2 tiny.
    const Values g = {5.0, 5.0, 5.0, 5.0, 5.0, -kInf, 3.0, tiny, 3 * tiny};
    const Pair mx = pair_op(torchlean_cuda_buffer_max_bwd, a, b, g, dt);
    expect_bits(mx.da, {5.0, 0.0, 2.5, 2.5, 2.5, -kInf, 1.5, 0.0, 2 * tiny}, dt, "max_bwd da");
    expect_bits(mx.db, {0.0, 5.0, 2.5, 2.5, 2.5, -kInf, 1.5, 0.0, 2 * tiny}, dt, "max_bwd db");
    const Pair mn = pair_op(torchlean_cuda_buffer_min_bwd, a, b, g, dt);
    expect_bits(mn.da, {0.0, 5.0, 2.5, 2.5, 2.5, -kInf, 1.5, 0.0, 2 * tiny}, dt, "min_bwd da");
    expect_bits(mn.db, {5.0, 0.0, 2.5, 2.5, 2.5, -kInf, 1.5, 0.0, 2 * tiny}, dt, "min_bwd db");
  }
}

// ---------------------------------------------------------------------------------------------
// Adam (SPEC-ops 6.3)

TEST_F(Elementwise, AdamIsolatesEachFusedMultiplyAdd) {
  const double e23 = 0x1p-23, e22 = 0x1p-22;
  // m' = fma(1-b1, g, fl(m b1)): the cancellation fixture of axpy.
  Adam r = adam({0}, {1 + e23}, {-(1 + e22)}, {0}, {1, 1 + e23, 1, 0, 1, 1, 1, 0, 1}, kF32);
  EXPECT_EQ(f32_bits(r.m[0]), 0x28800000u);
  // m b1 is rounded before the fma: fl((1+2^-23)^2) - (1+2^-22) = 0, unrounded 2^-46.
  r = adam({0}, {-(1 + e22)}, {1 + e23}, {0}, {1 + e23, 1, 1, 0, 1, 1, 1, 0, 1}, kF32);
  EXPECT_EQ(f32_bits(r.m[0]), 0u);
  // g g is rounded before the fma: fl((1+2^-23)^2) = 1+2^-22, cancelled exactly by v b2.
  r = adam({0}, {1 + e23}, {0}, {-(1 + e22)}, {1, 0, 1, 1, 1, 1, 1, 0, 1}, kF32);
  EXPECT_EQ(f32_bits(r.v[0]), 0u);
  // v' = fma(1-b2, fl(g g), fl(v b2)): (1+2^-23)(4+2^-20) - (4+2^-20+2^-21) = 2^-43.
  r = adam({0}, {2 + e22}, {0}, {-(4 + 0x1p-20 + 0x1p-21)}, {1, 0, 1, 1 + e23, 1, 1, 1, 0, 1},
           kF32);
  EXPECT_EQ(r.v[0], 0x1p-43);
  // The raw sqrt of a negative v-hat is NaN (no selection), and so is p'.
  r = adam({1}, {3}, {0.5}, {-1}, {1, 0, 1, 0, 1, 1, 1e-8, 0, -1e-3}, kF32);
  EXPECT_EQ(r.v[0], -1.0);
  EXPECT_TRUE(std::isnan(r.p[0]));
  EXPECT_EQ(r.m[0], 0.5);
  // u = fl(fl(m' c1) / den) is a true division: 5 / 3 = 0x3fd55555, 5 * fl(1/3) = 0x3fd55556.
  r = adam({0}, {0}, {5}, {9}, {1, 0, 1, 0, 1, 1, 0, 0, 1}, kF32);
  EXPECT_EQ(f32_bits(r.p[0]), 0x3fd55555u);
  r = adam({0}, {0}, {5}, {9}, {1, 0, 1, 0, 1, 1, 0, 0, 1}, kF64);
  EXPECT_EQ(r.p[0], 0x1.aaaaaaaaaaaabp+0);
  // fma(decay, p, p): (1+2^-23)(2^-24) exactly, where fl(decay p) + p gives 2^-23.
  r = adam({1 + e23}, {0}, {0}, {0}, {1, 0, 1, 0, 1, 1, 1, -(1 - 0x1p-24), 1}, kF32);
  EXPECT_EQ(r.p[0], 0x1p-24 * (1 + e23));
  // p' = fma(us, u, decayed): u = 1+2^-23, us = 1+2^-23, decayed = -(1+2^-22) -> 2^-46.
  r = adam({-(1 + e22)}, {0}, {1 + e23}, {0}, {1, 0, 1, 0, 1, 1, 1, 0, 1 + e23}, kF32);
  EXPECT_EQ(f32_bits(r.p[0]), 0x28800000u);
}

TEST_F(Elementwise, AdamRoundsEveryScalarOnItsOwn) {
  // 1 - b1 arrives as 0.1 and rounds to 0x3dcccccd; 1 - fl(0.9) would be 0x3dccccd0.
  const Adam r = adam({0}, {1}, {0}, {0}, {0.9, 0.1, 0.999, 0.001, 1, 1, 1, 0, 0}, kF32);
  EXPECT_EQ(f32_bits(r.m[0]), 0x3dcccccdu);
  EXPECT_EQ(f32_bits(r.v[0]), f32_bits(0.001));
}

TEST_F(Elementwise, AdamStepMatchesTheStagedFormula) {
  const std::vector<double> adam_s = {
      0.9,  0.1, 0.999, 1 - 0.999, 1 / (1 - std::pow(0.9, 10)), 1 / (1 - std::pow(0.999, 10)),
      1e-8, 0,   -1e-3};
  const std::vector<double> adamw_s = {0.9, 0.1, 0.999, 1 - 0.999, 10, 1000, 1e-8, -1e-5, -3e-4};
  Values p, g, m, v;
  for (int i = 0; i < 257; ++i) {
    p.push_back(std::sin(i * 0.7));
    g.push_back(std::cos(i * 1.3) * std::ldexp(1.0, -(i % 20)));
    m.push_back(0.1 * std::sin(i * 2.1));
    v.push_back(std::ldexp(1.0 + std::fabs(std::sin(i * 0.3)), -(i % 37) - 4));
  }
  for (const auto& s : {adam_s, adamw_s}) {
    for (uint8_t dt : {kF32, kF64}) {
      const Adam r = adam(p, g, m, v, s, dt);
      Values wp, wm, wv;
      for (size_t i = 0; i < p.size(); ++i) {
        if (dt == kF32) {
          float out[3];
          adam_staged<float>(p[i], g[i], m[i], v[i], s, out);
          wp.push_back(out[0]), wm.push_back(out[1]), wv.push_back(out[2]);
        } else {
          double out[3];
          adam_staged<double>(p[i], g[i], m[i], v[i], s, out);
          wp.push_back(out[0]), wm.push_back(out[1]), wv.push_back(out[2]);
        }
      }
      expect_bits(r.p, wp, dt, "adam p'");
      expect_bits(r.m, wm, dt, "adam m'");
      expect_bits(r.v, wv, dt, "adam v'");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// copy_and_release, empty buffers and ownership counters

TEST_F(Elementwise, CopyAndReleaseCopiesValuesThenReleasesTheSource) {
  for (uint8_t dt : {kF32, kF64}) {
    const Values x = {-0.0, 1.5, kNaN, kF32Tiny, -kInf, 3.25};
    Obj src = buffer(x, dt);
    const Counters a = Counters::read();
    Obj out(torchlean_cuda_buffer_copy_and_release(src.get()));
    const Counters b = Counters::read();
    EXPECT_EQ(b.alloc_count - a.alloc_count, 1u);
    EXPECT_EQ(b.free_count - a.free_count, 1u);
    EXPECT_EQ(b.live_bytes, a.live_bytes);
    EXPECT_EQ(b.wrapper_alloc - a.wrapper_alloc, 1u);
    EXPECT_EQ(torchlean_cuda_buffer_size(src.get()), 0u);
    EXPECT_TRUE(values_of(src.get()).empty());
    expect_bits(values_of(out.get()), x, dt, "copy_and_release");
    EXPECT_TRUE(std::signbit(values_of(out.get())[0]));
    EXPECT_EQ(torchlean_cuda_buffer_dtype(out.get()), dt);
  }
}

std::vector<double> some_scalars(Sig s) {
  // Valid scalars for any signature: clamp's (lo, hi) and adam's nine realistic ones.
  if (s == Sig::adam) return {0.9, 0.1, 0.999, 0.001, 1.5, 100, 1e-8, 0, -1e-3};
  return {-2.0, 2.0};
}

TEST_F(Elementwise, EveryOpCountsOneFreshPayloadPerResultAndBorrowsItsInputs) {
  for (const AbiOp& op : kOps) {
    for (uint8_t dt : {kF32, kF64}) {
      const int inputs = inputs_of(op.sig), outputs = outputs_of(op.sig);
      std::vector<Obj> in;
      std::vector<lean_object*> raw;
      for (int k = 0; k < inputs; ++k) {
        in.push_back(buffer({0.5 + k, -1.0, 2.0, 0.25, 3.0}, dt));
        raw.push_back(in.back().get());
      }
      const std::vector<double> s = some_scalars(op.sig);
      const Counters a = Counters::read();
      Obj r(op.call(raw.data(), s.data()));
      const Counters b = Counters::read();
      const uint64_t width = dt == kF32 ? 4 : 8;
      const bool releases = op.sig == Sig::copy_release;
      EXPECT_EQ(b.alloc_count - a.alloc_count, static_cast<uint64_t>(outputs)) << op.name;
      EXPECT_EQ(b.wrapper_alloc - a.wrapper_alloc, static_cast<uint64_t>(outputs)) << op.name;
      EXPECT_EQ(b.free_count - a.free_count, releases ? 1u : 0u) << op.name;
      EXPECT_EQ(b.live_bytes - a.live_bytes, releases ? 0u : outputs * 5 * width) << op.name;
      for (lean_object* f : fields(r.get(), outputs)) {
        EXPECT_EQ(torchlean_cuda_buffer_size(f), 5u) << op.name;
        EXPECT_EQ(torchlean_cuda_buffer_dtype(f), dt) << op.name;
        for (lean_object* i : raw) EXPECT_NE(f, i) << op.name << ": a result aliases an input";
      }
      for (int k = 0; k < inputs; ++k) {
        EXPECT_TRUE(lean_is_exclusive(raw[k])) << op.name << ": an input was retained";
        if (!releases) {
          expect_bits(values_of(raw[k]), {0.5 + k, -1.0, 2.0, 0.25, 3.0}, dt,
                      std::string(op.name) + ": input changed");
        }
      }
      r.reset();
      const Counters c = Counters::read();
      EXPECT_EQ(c.wrapper_finalize - b.wrapper_finalize, static_cast<uint64_t>(outputs)) << op.name;
      EXPECT_EQ(c.free_count - b.free_count, static_cast<uint64_t>(outputs)) << op.name;
    }
  }
}

TEST_F(Elementwise, EveryOpMapsEmptyBuffersToEmptyResults) {
  for (const AbiOp& op : kOps) {
    for (uint8_t dt : {kF32, kF64}) {
      std::vector<Obj> in;
      std::vector<lean_object*> raw;
      for (int k = 0; k < inputs_of(op.sig); ++k) {
        in.push_back(buffer({}, dt));
        raw.push_back(in.back().get());
      }
      const std::vector<double> s = some_scalars(op.sig);
      const Counters a = Counters::read();
      Obj r(op.call(raw.data(), s.data()));
      const Counters b = Counters::read();
      EXPECT_EQ(b.alloc_count, a.alloc_count) << op.name;
      EXPECT_EQ(b.live_bytes, a.live_bytes) << op.name;
      EXPECT_EQ(b.wrapper_alloc - a.wrapper_alloc, static_cast<uint64_t>(outputs_of(op.sig)))
          << op.name;
      for (lean_object* f : fields(r.get(), outputs_of(op.sig))) {
        EXPECT_EQ(torchlean_cuda_buffer_size(f), 0u) << op.name;
        EXPECT_EQ(torchlean_cuda_buffer_dtype(f), dt) << op.name;
      }
    }
  }
}

TEST_F(Elementwise, EveryOpIsElementwiseOverOddSizes) {
  // Element i of a 1023-element call equals the same op on element i alone (no stray lanes,
  // tails handled).
  for (const AbiOp& op : kOps) {
    const int inputs = inputs_of(op.sig), outputs = outputs_of(op.sig);
    std::vector<Values> data(inputs);
    for (int k = 0; k < inputs; ++k) {
      for (int i = 0; i < 1023; ++i) data[k].push_back(std::sin(i * (0.7 + k)) * (2 + k));
    }
    const std::vector<double> s = some_scalars(op.sig);
    std::vector<Obj> in;
    std::vector<lean_object*> raw;
    for (int k = 0; k < inputs; ++k) {
      in.push_back(buffer(data[k], kF32));
      raw.push_back(in.back().get());
    }
    Obj r(op.call(raw.data(), s.data()));
    std::vector<Values> whole;
    for (lean_object* f : fields(r.get(), outputs)) whole.push_back(values_of(f));
    for (int i : {0, 1, 2, 511, 1019, 1020, 1021, 1022}) {
      std::vector<Obj> one;
      std::vector<lean_object*> one_raw;
      for (int k = 0; k < inputs; ++k) {
        one.push_back(buffer({data[k][i]}, kF32));
        one_raw.push_back(one.back().get());
      }
      Obj single(op.call(one_raw.data(), s.data()));
      const auto f = fields(single.get(), outputs);
      for (int o = 0; o < outputs; ++o) {
        EXPECT_TRUE(same(values_of(f[o])[0], whole[o][i], kF32)) << op.name << " [" << i << "]";
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Bad inputs: each panics (pure symbols), one op per signature class

const AbiOp& first_of(Sig s) {
  for (const AbiOp& op : kOps) {
    if (op.sig == s) return op;
  }
  static const AbiOp none{"", s, nullptr};
  return none;
}

// Calls `op` on buffers of `size` scalars, with input `odd` replaced by `replacement`.
void call_with(const AbiOp& op, int odd, lean_object* replacement) {
  std::vector<lean_object*> in;
  for (int k = 0; k < inputs_of(op.sig); ++k) {
    in.push_back(k == odd ? replacement : torchlean_cuda_buffer_full(3, 1.0, kF32));
  }
  const std::vector<double> s = some_scalars(op.sig);
  op.call(in.data(), s.data());
}

TEST_F(ElementwiseDeathTest, BadInputsPanicForEverySignatureClass) {
  for (Sig sig : {Sig::unary, Sig::binary, Sig::unary_s1, Sig::binary_s1, Sig::unary_s2,
                  Sig::binary_s2, Sig::ternary_pair, Sig::adam, Sig::copy_release}) {
    const AbiOp& op = first_of(sig);
    if (op.call == nullptr) continue;
    const std::string name = op.name;
    const int last = inputs_of(sig) - 1;
    SCOPED_TRACE(name);
    if (last > 0) {
      EXPECT_EXIT(call_with(op, last, torchlean_cuda_buffer_full(2, 1.0, kF32)),
                  ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*" + name + ".*size");
      EXPECT_EXIT(call_with(op, last, torchlean_cuda_buffer_full(3, 1.0, kF64)),
                  ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*" + name + ".*dtype");
    }
    EXPECT_EXIT(call_with(op, last, released_buffer(3)), ::testing::ExitedWithCode(1),
                "INTERNAL PANIC: .*" + name + ".*released");
    EXPECT_EXIT(call_with(op, 0, lean_box(3)), ::testing::ExitedWithCode(1),
                "INTERNAL PANIC: .*" + name + ".*not a buffer");
    EXPECT_EXIT(call_with(op, last, float_array({1, 2, 3}).get()), ::testing::ExitedWithCode(1),
                "INTERNAL PANIC: .*" + name + ".*not a buffer");
  }
}

// Every op of two or more operands, each with its own name and the spec's order of words (SPEC-ops
// 2; docs/ABI.md): the size mismatch first (the first operand sets the size), then the dtypes.
TEST_F(ElementwiseDeathTest, EveryMultiOperandOpNamesItselfAndTheSizes) {
  std::set<std::string> checked;
  for (const AbiOp& op : kOps) {
    const int last = inputs_of(op.sig) - 1;
    if (op.call == nullptr || last < 1) continue;
    const std::string p = "INTERNAL PANIC: tlrt: " + std::string(op.name) + ": ";
    SCOPED_TRACE(op.name);
    EXPECT_EXIT(call_with(op, last, torchlean_cuda_buffer_full(2, 1.0, kF32)),
                ::testing::ExitedWithCode(1), p + "buffer sizes differ \\(3 vs 2\\)");
    EXPECT_EXIT(call_with(op, last, torchlean_cuda_buffer_full(3, 1.0, kF64)),
                ::testing::ExitedWithCode(1), p + "dtypes differ \\(float32 vs float64\\)");
    EXPECT_EXIT(call_with(op, last, released_buffer(3)), ::testing::ExitedWithCode(1),
                p + "buffer has been released");
    checked.insert(op.name);
  }
  // The hand-written adapters of SPEC-ops 2 among them, and the binary ops.
  for (const char* name :
       {"abs_bwd", "sqrt_bwd", "clamp_bwd", "max_bwd", "min_bwd", "adam_step", "add", "mul"}) {
    EXPECT_EQ(checked.count(name), 1u) << name;
  }
}

TEST_F(ElementwiseDeathTest, ASizeMismatchInAnyPositionPanics) {
  // The first operand sets the size; a mismatch in the middle operand is caught as well.
  const AbiOp& adam = first_of(Sig::adam);
  EXPECT_EXIT(call_with(adam, 1, torchlean_cuda_buffer_full(4, 1.0, kF32)),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*adam_step.*size");
  EXPECT_EXIT(call_with(adam, 0, torchlean_cuda_buffer_full(0, 1.0, kF32)),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*adam_step.*size");
  EXPECT_EXIT(call_with(adam, 2, torchlean_cuda_buffer_full(3, 1.0, kF64)),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*adam_step.*dtype");
}

}  // namespace
