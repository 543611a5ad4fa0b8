// The diagonal selective scans selective_scan_diag_fwd / _bwd / _var_fwd / _var_bwd through the
// Lean boundary, on the backend TLRT_DEVICE selects (ctest runs this binary once with cpu and once
// with cuda). Inputs are made and results read back as exact words. Covered: the staged rounding
// (cases where fl(fl(a*h) + b) and fma(a, h, b) differ, for the state and the product B*X), the
// +0 start of g (a -0 cotangent gives +0 gradients), the reverse-time fold of the constant
// variant's dA and dB (1e8, 1, -1e8 patterns where the order shows), |A| > 1, NaN and infinity
// propagation, float64, the empty rules, the (dA, (dB, (dX, dH0))) tuple and its ownership,
// bit-exact agreement with an independent host recurrence with the deterministic setting on
// (both backends), the derived bound with it off (the fast schedules on the device: resident
// blocks at the edges of their channel counts and of their range, rows blocks at the edges of
// their chunks and groups of chunk maps, chunked tiles at their chunk edges), marked channels
// inside resident, rows and chunked blocks, ten-run bitwise repeatability in both modes, and
// every bad input's panic with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "abi_test_support.h"
#include "kernels/scan/scan_bound.h"
#include "tests/support/repeat_runs.h"

using namespace abi_test;

namespace {

template <class T>
using Bits = typename Dt<T>::Bits;

// ---------------------------------------------------------------------------------------------
// Problem data and an independent host recurrence (the spec's formulas, literally).

template <class T>
struct Problem {
  uint32_t steps = 0, state = 0;
  bool variable = false;
  std::vector<T> a, b, x, h0, out, dy;
};

template <class T>
std::vector<T> host_fwd(const Problem<T>& p) {
  const uint64_t S = p.state;
  std::vector<T> h(uint64_t{p.steps} * S);
  for (uint64_t j = 0; j < S; ++j) {
    T state = p.h0[j];
    for (uint64_t t = 0; t < p.steps; ++t) {
      const uint64_t i = t * S + j;
      const T a = p.variable ? p.a[i] : p.a[j];
      const T b = p.variable ? p.b[i] : p.b[j];
      const T bx = b * p.x[i];
      const T ah = a * state;
      state = ah + bx;
      h[i] = state;
    }
  }
  return h;
}

template <class T>
struct Grads {
  std::vector<T> da, db, dx, dh0;
};

template <class T>
Grads<T> host_bwd(const Problem<T>& p) {
  const uint64_t S = p.state, steps = p.steps;
  Grads<T> r;
  r.da.assign(p.variable ? steps * S : S, T(0));
  r.db.assign(p.variable ? steps * S : S, T(0));
  r.dx.assign(steps * S, T(0));
  r.dh0.assign(S, T(0));
  if (steps == 0) return r;
  for (uint64_t j = 0; j < S; ++j) {
    T g = T(0);
    T sa = T(0), sb = T(0);
    for (uint64_t s = 0; s < steps; ++s) {
      const uint64_t t = steps - 1 - s;
      const uint64_t i = t * S + j;
      if (s == 0) {
        g = T(0) + p.dy[i];
      } else {
        const T an = p.variable ? p.a[i + S] : p.a[j];
        const T ag = an * g;
        g = ag + p.dy[i];
      }
      const T hp = t == 0 ? p.h0[j] : p.out[i - S];
      const T da = g * hp;
      const T db = g * p.x[i];
      r.dx[i] = g * (p.variable ? p.b[i] : p.b[j]);
      if (p.variable) {
        r.da[i] = da;
        r.db[i] = db;
      } else {
        sa = sa + da;
        sb = sb + db;
      }
    }
    if (!p.variable) {
      r.da[j] = sa;
      r.db[j] = sb;
    }
    r.dh0[j] = g * p.a[j];
  }
  return r;
}

template <class T>
Problem<T> random_problem(uint32_t steps, uint32_t state, bool variable, uint32_t seed,
                          bool specials, double a_max = 0.999) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Problem<T> p;
  p.steps = steps;
  p.state = state;
  p.variable = variable;
  const uint64_t n = uint64_t{steps} * state;
  const uint64_t nc = variable ? n : state;
  for (uint64_t i = 0; i < nc; ++i) {
    p.a.push_back(static_cast<T>(a_max * unit(gen)));
    p.b.push_back(static_cast<T>(unit(gen)));
  }
  for (uint64_t i = 0; i < n; ++i) {
    p.x.push_back(static_cast<T>(unit(gen)));
    p.dy.push_back(static_cast<T>(unit(gen)));
  }
  for (uint64_t j = 0; j < state; ++j) p.h0.push_back(static_cast<T>(unit(gen)));
  if (specials && n > 4) {
    const T inf = std::numeric_limits<T>::infinity();
    const T nan = std::numeric_limits<T>::quiet_NaN();
    p.x[n / 3] = nan;
    p.x[n / 2] = inf;
    p.dy[n / 4] = -inf;
    p.h0[0] = nan;
    p.a[nc - 1] = T(1.5);  // |A| > 1
  }
  p.out = host_fwd(p);
  return p;
}

struct Handles {
  Obj a, b, x, h0, out, dy;
};

template <class T>
Handles upload(const Problem<T>& p) {
  return {make_buffer(p.a),  make_buffer(p.b),   make_buffer(p.x),
          make_buffer(p.h0), make_buffer(p.out), make_buffer(p.dy)};
}

template <class T>
std::vector<T> device_fwd(const Problem<T>& p, const Handles& h) {
  Obj r(p.variable ? torchlean_cuda_buffer_selective_scan_diag_var_fwd(
                         h.a.get(), h.b.get(), h.x.get(), h.h0.get(), p.steps, p.state)
                   : torchlean_cuda_buffer_selective_scan_diag_fwd(h.a.get(), h.b.get(), h.x.get(),
                                                                   h.h0.get(), p.steps, p.state));
  return read_values<T>(r.get());
}

// Splits the (dA, (dB, (dX, dH0))) tuple, checking its constructor layout.
template <class T>
Grads<T> unpack(lean_object* tuple) {
  Grads<T> g;
  EXPECT_TRUE(lean_is_ctor(tuple));
  EXPECT_EQ(lean_ptr_tag(tuple), 0u);
  EXPECT_EQ(lean_ctor_num_objs(tuple), 2u);
  lean_object* rest = lean_ctor_get(tuple, 1);
  EXPECT_EQ(lean_ctor_num_objs(rest), 2u);
  lean_object* last = lean_ctor_get(rest, 1);
  EXPECT_EQ(lean_ctor_num_objs(last), 2u);
  g.da = read_values<T>(lean_ctor_get(tuple, 0));
  g.db = read_values<T>(lean_ctor_get(rest, 0));
  g.dx = read_values<T>(lean_ctor_get(last, 0));
  g.dh0 = read_values<T>(lean_ctor_get(last, 1));
  return g;
}

lean_object* call_bwd(bool variable, const Handles& h, uint32_t steps, uint32_t state) {
  return variable ? torchlean_cuda_buffer_selective_scan_diag_var_bwd(
                        h.a.get(), h.b.get(), h.x.get(), h.h0.get(), h.out.get(), h.dy.get(), steps,
                        state)
                  : torchlean_cuda_buffer_selective_scan_diag_bwd(h.a.get(), h.b.get(), h.x.get(),
                                                                  h.h0.get(), h.out.get(),
                                                                  h.dy.get(), steps, state);
}

template <class T>
Grads<T> device_bwd(const Problem<T>& p, const Handles& h) {
  Obj r(call_bwd(p.variable, h, p.steps, p.state));
  return unpack<T>(r.get());
}

// Equal bits, or both NaN.
template <class T>
void expect_same(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!same_bits_or_nan(got[i], want[i]) && reported++ < 5) {
      ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << " (0x" << std::hex
                    << bits_of(got[i]) << ") want " << want[i] << " (0x" << bits_of(want[i])
                    << std::dec << ")";
    }
  }
}

template <class T>
void expect_same(const Grads<T>& got, const Grads<T>& want, const std::string& what) {
  expect_same(got.da, want.da, what + " dA");
  expect_same(got.db, want.db, what + " dB");
  expect_same(got.dx, want.dx, what + " dX");
  expect_same(got.dh0, want.dh0, what + " dH0");
}

template <class T>
void expect_within(const std::vector<T>& got, const std::vector<T>& want,
                   const std::vector<long double>& bound, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const long double d = std::fabs(static_cast<long double>(got[i]) - want[i]);
    if (!(d <= bound[i]) && reported++ < 5) {
      ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << " want " << want[i] << " bound "
                    << static_cast<double>(bound[i]);
    }
  }
}

tlrt::kernels::ScanOperands<float> operands_of(const Problem<float>& p) {
  return {p.a.data(), p.b.data(), p.x.data(), p.h0.data(), p.steps, p.state, p.variable};
}
tlrt::kernels::ScanOperands<double> operands_of(const Problem<double>& p) {
  return {p.a.data(), p.b.data(), p.x.data(), p.h0.data(), p.steps, p.state, p.variable};
}

// A bound with the given channels' entries set to 0 (their values are compared bit for bit).
std::vector<long double> rest_bound(std::vector<long double> b, uint64_t state,
                                    const std::vector<uint64_t>& channels) {
  for (uint64_t i = 0; i < b.size(); ++i) {
    for (uint64_t j : channels) {
      if (i % state == j) b[i] = 0;
    }
  }
  return b;
}

class Scan : public BackendSuite {};
using ScanDeathTest = Scan;

template <class T>
Problem<T> fixed(uint32_t steps, uint32_t state, bool variable, std::vector<T> a, std::vector<T> b,
                 std::vector<T> x, std::vector<T> h0) {
  Problem<T> p;
  p.steps = steps;
  p.state = state;
  p.variable = variable;
  p.a = std::move(a);
  p.b = std::move(b);
  p.x = std::move(x);
  p.h0 = std::move(h0);
  p.out = host_fwd(p);
  p.dy.assign(uint64_t{steps} * state, T(1));
  return p;
}

// ---------------------------------------------------------------------------------------------
// Hand fixtures.

TEST_F(Scan, StateIsMultipliedThenAddedNotFused) {
  const float e = 0x1p-23f;
  // Channel 0: fl(a*h) = 1 + 2^-22 (the 2^-46 of the exact product is lost), + (-(1 + 2^-22)) = 0;
  // fma(a, h, b) would give 2^-46. Channel 1: fl(B*X) = 1 + 2^-22 likewise, added to
  // fl(1 * -(1 + 2^-22)) gives 0 where fma(B, X, a*h) gives 2^-46.
  for (bool variable : {false, true}) {
    Problem<float> p = fixed<float>(1, 2, variable, {1 + e, 1}, {1, 1 + e}, {-(1 + 2 * e), 1 + e},
                                    {1 + e, -(1 + 2 * e)});
    Handles h = upload(p);
    const std::vector<float> got = device_fwd(p, h);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(bits_of(got[0]), 0u) << variable;
    EXPECT_EQ(bits_of(got[1]), 0u) << variable;
    EXPECT_NE(bits_of(std::fma(1 + e, 1 + e, -(1 + 2 * e))), 0u);
  }
  // float64: the same with 2^-52.
  const double d = 0x1p-52;
  Problem<double> p = fixed<double>(1, 1, false, {1 + d}, {1}, {-(1 + 2 * d)}, {1 + d});
  Handles h = upload(p);
  const std::vector<double> got = device_fwd(p, h);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(bits_of(got[0]), 0u);
}

TEST_F(Scan, GradientRecurrenceIsMultipliedThenAdded) {
  const float e = 0x1p-23f;
  // T = 2: g_1 = 1 + 2^-23; g_0 = fl(fl(A * g_1) + dY_0) = fl((1 + 2^-22) - (1 + 2^-22)) = +0,
  // so dX_0 = g_0 * B = +0 (fused: 2^-46).
  for (bool variable : {false, true}) {
    Problem<float> p;
    p.steps = 2;
    p.state = 1;
    p.variable = variable;
    p.a = variable ? std::vector<float>{1 + e, 1 + e} : std::vector<float>{1 + e};
    p.b = variable ? std::vector<float>{1, 1} : std::vector<float>{1};
    p.x = {1, 1};
    p.h0 = {1};
    p.out = host_fwd(p);
    p.dy = {-(1 + 2 * e), 1 + e};
    Handles h = upload(p);
    const Grads<float> g = device_bwd(p, h);
    ASSERT_EQ(g.dx.size(), 2u);
    EXPECT_EQ(bits_of(g.dx[0]), 0u) << variable;
    EXPECT_EQ(bits_of(g.dx[1]), bits_of(1 + e)) << variable;
    expect_same(g, host_bwd(p), "hand");
  }
}

TEST_F(Scan, NegativeZeroCotangentStartsFromPositiveZero) {
  for (bool variable : {false, true}) {
    Problem<float> p = fixed<float>(1, 1, variable, {1}, {1}, {1}, {1});
    p.dy = {-0.0f};
    Handles h = upload(p);
    const Grads<float> g = device_bwd(p, h);
    // g_0 = fl(+0 + -0) = +0: every product with a positive factor is +0.
    for (const auto* v : {&g.da, &g.db, &g.dx, &g.dh0}) {
      ASSERT_EQ(v->size(), 1u);
      EXPECT_EQ(bits_of((*v)[0]), 0u) << variable;
    }
  }
}

// The fast schedules start the backward's recurrence the same way: g_{T-1} = fl(+0 + dY_{T-1}),
// so a -0 cotangent gives +0 although A < 0 (fl(A * +0) = -0 and -0 + -0 = -0). The shapes take,
// in float32 with the setting off, the constant backward's slab (T 2048 x S 1024), chunked (T 300
// x S 200), rows (T 3000 x S 5) and split (T 8192 x S 100) schedules, and the variable backward's
// chunked and rows ones; dX_{T-1} = fl(g_{T-1} B) with B > 0 must be +0 in every channel.
TEST_F(Scan, NegativeZeroCotangentStartsFromPositiveZeroInTheFastSchedules) {
  DeterministicScope scope(false);
  const std::pair<uint32_t, uint32_t> shapes[] = {{2048, 1024}, {300, 200}, {3000, 5}, {8192, 100}};
  for (auto [steps, state] : shapes) {
    for (bool variable : {false, true}) {
      Problem<float> p = random_problem<float>(steps, state, variable, steps + state, false);
      for (float& a : p.a) a = -0.5f;
      for (float& b : p.b) b = 0.75f;
      const uint64_t last = uint64_t{steps - 1} * state;
      for (uint64_t j = 0; j < state; ++j) p.dy[last + j] = -0.0f;
      Handles h = upload(p);
      const Grads<float> g = device_bwd(p, h);
      ASSERT_EQ(g.dx.size(), uint64_t{steps} * state);
      uint64_t negative = 0;
      for (uint64_t j = 0; j < state; ++j) negative += bits_of(g.dx[last + j]) != 0u;
      EXPECT_EQ(negative, 0u) << "T " << steps << " S " << state << (variable ? " var" : " const")
                              << ": channels whose dX_{T-1} is not +0";
    }
  }
}

// The slab blocks' depths against the rows schedule's, as docs/NUMERICS.md states them (float32,
// K 33): the constant forward's (35 + 24 floor(t / 1024)) and the constant backward's (28 + 20
// floor(t / 1024)) stay below it at every position of the slab range; the variable forward's (27 +
// 20 floor(t / 512)) first passes it at t 6656 and by at most 13 nodes, at t 7680.
TEST(ScanBound, SlabDepthsAgainstTheRowsScheduleAsDerived) {
  using tlrt::kernels::scan_rows_depth;
  using tlrt::kernels::scan_slab_depth;
  EXPECT_EQ(scan_slab_depth(tlrt::kernels::kScanSlabFwd, 1024), 35u + 24u);
  EXPECT_EQ(scan_slab_depth(tlrt::kernels::kScanSlabBwd, 1024), 28u + 20u);
  EXPECT_EQ(scan_slab_depth(tlrt::kernels::kScanSlabVarFwd, 512), 27u + 20u);
  uint64_t first_over = 0, most_over = 0, most_at = 0;
  for (uint64_t t = 0; t < tlrt::kernels::scan_resident_max_steps(sizeof(float)); ++t) {
    const uint64_t rows = scan_rows_depth<float>(t);
    EXPECT_LT(scan_slab_depth(tlrt::kernels::kScanSlabFwd, t), rows) << t;
    EXPECT_LT(scan_slab_depth(tlrt::kernels::kScanSlabBwd, t), rows) << t;
    const uint64_t var = scan_slab_depth(tlrt::kernels::kScanSlabVarFwd, t);
    if (var > rows) {
      if (first_over == 0) first_over = t;
      if (var - rows > most_over) {
        most_over = var - rows;
        most_at = t;
      }
    }
  }
  EXPECT_EQ(first_over, 6656u);
  EXPECT_EQ(most_over, 13u);
  EXPECT_EQ(most_at, 7680u);
}

TEST_F(Scan, ConstantGradientsFoldInReverseTime) {
  // A = 0 makes g_t = dY_t = 1; da_t = hprev_t = [1, 1e8, -1e8] and db_t = X_t likewise. The
  // reverse fold ((+0 + -1e8) + 1e8) + 1 = 1; the forward one (1 + 1e8) - 1e8 would be 0.
  Problem<float> p;
  p.steps = 3;
  p.state = 1;
  p.a = {0};
  p.b = {1};
  p.x = {1, 1e8f, -1e8f};
  p.h0 = {1};
  p.out = {1e8f, -1e8f, 5};
  p.dy = {1, 1, 1};
  Handles h = upload(p);
  const Grads<float> g = device_bwd(p, h);
  ASSERT_EQ(g.da.size(), 1u);
  EXPECT_EQ(g.da[0], 1.0f);
  EXPECT_EQ(g.db[0], 1.0f);
  expect_same(g, host_bwd(p), "fold");
  // float64: 1e17 swamps 1 the same way.
  Problem<double> q;
  q.steps = 3;
  q.state = 1;
  q.a = {0};
  q.b = {1};
  q.x = {1, 1e17, -1e17};
  q.h0 = {1};
  q.out = {1e17, -1e17, 5};
  q.dy = {1, 1, 1};
  Handles hq = upload(q);
  const Grads<double> gq = device_bwd(q, hq);
  ASSERT_EQ(gq.da.size(), 1u);
  EXPECT_EQ(gq.da[0], 1.0);
  EXPECT_EQ(gq.db[0], 1.0);
}

TEST_F(Scan, ExpansiveAndNonFiniteValuesPropagate) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Channel 0 grows by 2 each step; channel 1 meets +inf at t = 1; channel 2 NaN in X at t = 0.
  Problem<float> p = fixed<float>(3, 3, false, {2, 0.5f, 1}, {1, 1, 1},
                                  {1, 0, nan, 0, inf, 0, 0, 0, 0}, {1, 0, 0});
  Handles h = upload(p);
  const std::vector<float> got = device_fwd(p, h);
  ASSERT_EQ(got.size(), 9u);
  EXPECT_EQ(got[0], 3.0f);
  EXPECT_EQ(got[3], 6.0f);
  EXPECT_EQ(got[6], 12.0f);
  EXPECT_EQ(got[4], inf);
  EXPECT_EQ(got[7], inf);
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_TRUE(std::isnan(got[8]));
  expect_same(got, host_fwd(p), "fwd");
  expect_same(device_bwd(p, h), host_bwd(p), "bwd");
}

// ---------------------------------------------------------------------------------------------
// Empty rules.

TEST_F(Scan, EmptyShapes) {
  for (bool variable : {false, true}) {
    for (auto [steps, state] : {std::pair<uint32_t, uint32_t>{0, 3}, {4, 0}, {0, 0}}) {
      const uint64_t n = uint64_t{steps} * state;
      const uint64_t nc = variable ? n : state;
      Handles h{make_buffer(std::vector<float>(nc, 1)), make_buffer(std::vector<float>(nc, 1)),
                make_buffer(std::vector<float>(n, 1)),  make_buffer(std::vector<float>(state, 1)),
                make_buffer(std::vector<float>(n, 1)),  make_buffer(std::vector<float>(n, 1))};
      Obj f(variable ? torchlean_cuda_buffer_selective_scan_diag_var_fwd(
                           h.a.get(), h.b.get(), h.x.get(), h.h0.get(), steps, state)
                     : torchlean_cuda_buffer_selective_scan_diag_fwd(
                           h.a.get(), h.b.get(), h.x.get(), h.h0.get(), steps, state));
      EXPECT_EQ(torchlean_cuda_buffer_size(f.get()), 0u);
      Obj r(call_bwd(variable, h, steps, state));
      const Grads<float> g = unpack<float>(r.get());
      EXPECT_EQ(g.da, std::vector<float>(nc, 0.0f));
      EXPECT_EQ(g.db, std::vector<float>(nc, 0.0f));
      EXPECT_TRUE(g.dx.empty());
      EXPECT_EQ(g.dh0, std::vector<float>(state, 0.0f));
      for (const auto* v : {&g.da, &g.db, &g.dh0}) {
        for (float z : *v) EXPECT_EQ(bits_of(z), 0u);  // +0, not -0
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Against the host recurrence.

template <class T>
void exact_against_host(uint32_t seed) {
  DeterministicScope scope(true);
  const std::pair<uint32_t, uint32_t> shapes[] = {{1, 1},    {3, 5},    {33, 33},
                                                  {300, 70}, {1000, 3}, {129, 40}};
  for (auto [steps, state] : shapes) {
    for (bool variable : {false, true}) {
      for (bool specials : {false, true}) {
        Problem<T> p = random_problem<T>(steps, state, variable, seed++, specials, 1.05);
        Handles h = upload(p);
        const std::string what = "T " + std::to_string(steps) + " S " + std::to_string(state) +
                                 (variable ? " var" : " const") + (specials ? " specials" : "");
        expect_same(device_fwd(p, h), host_fwd(p), what + " fwd");
        expect_same(device_bwd(p, h), host_bwd(p), what + " bwd");
      }
    }
  }
}

TEST_F(Scan, DeterministicSettingGivesTheRecurrenceBitForBitFloat32) {
  exact_against_host<float>(11);
}

TEST_F(Scan, DeterministicSettingGivesTheRecurrenceBitForBitFloat64) {
  exact_against_host<double>(23);
}

// Both variants of every shape with the deterministic setting off: every result within the
// derived bound, and `runs` runs giving the same bits.
template <class T>
void fast_shapes_within_bound(const std::vector<std::pair<uint32_t, uint32_t>>& shapes,
                              uint32_t seed, int runs) {
  DeterministicScope scope(false);
  for (auto [steps, state] : shapes) {
    for (bool variable : {false, true}) {
      Problem<T> p = random_problem<T>(steps, state, variable, seed++, false, 1.0);
      Handles h = upload(p);
      const std::string what = "T " + std::to_string(steps) + " S " + std::to_string(state) +
                               (variable ? " var" : " const");
      const auto ops = operands_of(p);
      const std::vector<T> got = device_fwd(p, h);
      expect_within(got, host_fwd(p), tlrt::kernels::selective_scan_fwd_bound(ops), what + " fwd");
      const Grads<T> g = device_bwd(p, h);
      const Grads<T> want = host_bwd(p);
      const auto bound = tlrt::kernels::selective_scan_bwd_bound(ops, p.out.data(), p.dy.data());
      expect_within(g.da, want.da, bound.da, what + " dA");
      expect_within(g.db, want.db, bound.db, what + " dB");
      expect_within(g.dx, want.dx, bound.dx, what + " dX");
      expect_within(g.dh0, want.dh0, bound.dh0, what + " dH0");
      for (int run = 1; run < runs; ++run) {
        expect_same(device_fwd(p, h), got, what + " fwd run " + std::to_string(run));
        expect_same(device_bwd(p, h), g, what + " bwd run " + std::to_string(run));
      }
    }
  }
}

template <class T>
void fast_within_bound(uint32_t seed) {
  fast_shapes_within_bound<T>({{1, 1},
                               {17, 3},
                               {100, 5},
                               {300, 70},
                               {3000, 5},
                               {129, 40},
                               {4100, 33},
                               {100000, 3},
                               {40, 1000}},
                              seed, 1);
}

TEST_F(Scan, FastScheduleStaysWithinTheDerivedBoundFloat32) {
  fast_within_bound<float>(5);
}

TEST_F(Scan, FastScheduleStaysWithinTheDerivedBoundFloat64) {
  fast_within_bound<double>(7);
}

// The constant forward's resident schedule (setting off, 32 < T <= its range): a block of C
// channels holds whole sequences, K steps a thread (K = 32 in float32, 16 in float64), so C halves
// where ceil(T/K) * C passes 1024 threads. The shapes put T at both sides of those points (256,
// 512, 1024, 2048, 4096) and of the range's end (8192 in float32 and float64, chunked past it), S
// at 1, below one block, not a multiple of C, and large enough for 16 and 32 channels a block
// (1000 x 5000). Past T 4096 a block holds less than a 32-byte sector of a row (4 float32 or 2
// float64 channels), and the call stays resident only while its grid fits one block per SM: 6000
// x 200 stays resident; 6000 x 1000 takes the slab schedule in float32 (S a multiple of 4 past T
// 4096, as the variable forward and the constant backward do there) and the chunked one in
// float64 (on a device of 100 to 249 SMs). The other variants run their own schedules on the same
// shapes. Every result within the bound, and the same bits over ten runs on the device.
template <class T>
void resident_edges(uint32_t seed) {
  fast_shapes_within_bound<T>({{33, 13},
                               {64, 1},
                               {256, 600},
                               {257, 600},
                               {512, 1000},
                               {513, 77},
                               {1024, 1},
                               {1025, 13},
                               {2048, 200},
                               {2049, 1000},
                               {4096, 300},
                               {4097, 13},
                               {6000, 200},
                               {6000, 1000},
                               {8192, 5},
                               {8193, 3},
                               {1000, 5000}},
                              seed, cuda_requested() ? test_runs::repeat_runs(10) : 1);
}

// The forwards' slab schedule (float32, setting off, S a multiple of 4, T from 2048 to the
// resident range's end, S at least 1024, or 512 past T 4096; scan.h): a block holds 16 channels
// and moves them in rounds of rows (1024 in the constant forward, 512 in the variable one). The
// shapes put T at whole rounds of each block, one step past them and a partial last round (3000),
// S at a multiple of 16 and at 4 past one (the last block's last three row pieces idle); T 4096 x
// S 512 at the rule's edge (resident or chunked) and T 4097 x S 516 past it (slab); S 514 (not a
// multiple of 4: the other schedules); T at the range's end. The constant backward takes its own
// slab (8 channels a block, rounds of 1024 rows in reverse time) at the same shapes; the variable
// backward and float64 run their own schedules. Every result within the bound, and the same bits
// over ten runs on the device.
template <class T>
void slab_edges(uint32_t seed) {
  fast_shapes_within_bound<T>({{2048, 1024},
                               {2049, 1028},
                               {3000, 1024},
                               {4096, 512},
                               {4097, 516},
                               {5000, 514},
                               {8192, 520}},
                              seed, cuda_requested() ? test_runs::repeat_runs(10) : 1);
}

TEST_F(Scan, SlabScheduleEdgesStayWithinTheBoundAndRepeatFloat32) {
  slab_edges<float>(81);
}

TEST_F(Scan, SlabScheduleEdgesStayWithinTheBoundAndRepeatFloat64) {
  slab_edges<double>(83);
}

// The chunked schedule (more than 128 channels; more than 64 in the backwards) at its chunk
// boundaries (setting off): L = 8K steps a chunk, in float32 96 for the variable forward (K 12),
// 128 for the backwards (K 16) and 256 for the constant forward past the resident range (K 32); in
// float64 64 (K 8). The shapes put T at one and two chunks exactly and one step past them, for
// each of those lengths, with a partial last tile of channels: at 129 to 133 channels (5 tiles,
// the look-back window of 16 but in the variable backward) and at 291 (10 tiles, the window of
// 8). In float32 the constant backward takes the split schedule at all of them but T 9216 and
// 9217 x S 133 (72 chunks of 5 tiles); T 8192 and 8193 x S 100 (4 tiles) put its carries' chain
// at one round of 64 chunk maps and one chunk past it. Every result within the bound, and the
// same bits over ten runs on the device.
template <class T>
void chunk_edges(uint32_t seed) {
  fast_shapes_within_bound<T>({{64, 130},
                               {65, 130},
                               {96, 130},
                               {97, 130},
                               {128, 129},
                               {129, 129},
                               {192, 129},
                               {193, 129},
                               {256, 131},
                               {257, 131},
                               {9216, 133},
                               {9217, 133},
                               {96, 291},
                               {97, 291},
                               {256, 291},
                               {257, 291},
                               {8192, 100},
                               {8193, 100}},
                              seed, cuda_requested() ? test_runs::repeat_runs(10) : 1);
}

// The rows schedule (at most 64 channels; 128 in the forwards) at its edges (setting off): a
// chunk is R = Q K rows, K = scan_rows_steps, Q = floor(threads / S) segments a channel (threads
// per variant: scan_rows_threads), and the chunk maps are composed in groups of 32 at each level.
// With c(S) the backwards' chunk at S channels (the forwards' chunks are as long or twice as
// long), the shapes put T at one chunk and one step past it at S = 1, at 32 chunks (the first
// complete group) and one past it, and one past 1024 chunks (a third level); at S = 32 and 64 at
// 32 chunks and past 1025; S at 3 (Q not a power of two), 17, 31, 33 and 63. Past 64 channels only
// the forwards take it: at S = 128 (one segment a channel in the variable forward, two in the
// constant one) at 32 chunks of the variable forward and past 1025, and at S = 65, 100 and 127
// (rows not a multiple of 16 bytes). Every result within the bound, and the same bits over ten
// runs on the device.
template <class T>
void rows_edges(uint32_t seed) {
  const uint32_t k = static_cast<uint32_t>(tlrt::kernels::scan_rows_steps(sizeof(T)));
  const uint32_t threads = static_cast<uint32_t>(tlrt::kernels::scan_rows_threads(true, true));
  const auto c = [&](uint32_t state) { return threads / state * k; };
  const uint32_t r = c(1);
  fast_shapes_within_bound<T>({{33, 1},
                               {r, 1},
                               {r + 1, 1},
                               {32 * r, 1},
                               {32 * r + 1, 1},
                               {1024 * r + 1, 1},
                               {32 * c(32), 32},
                               {1025 * c(32) + 1, 32},
                               {32 * c(64), 64},
                               {1025 * c(64), 64},
                               {21 * k * 40 + 5, 3},
                               {12345, 17},
                               {100003, 31},
                               {1000 * k + 7, 33},
                               {5000, 63},
                               {32 * k, 128},
                               {1025 * k + 1, 128},
                               {40 * k + 3, 65},
                               {2000, 100},
                               {777, 127}},
                              seed, cuda_requested() ? test_runs::repeat_runs(10) : 1);
}

TEST_F(Scan, RowsScheduleEdgesStayWithinTheBoundAndRepeatFloat32) {
  rows_edges<float>(71);
}

TEST_F(Scan, RowsScheduleEdgesStayWithinTheBoundAndRepeatFloat64) {
  rows_edges<double>(73);
}

// Few channels with long sequences (setting off): the rows schedule's thousands of chunks, each
// chunk's carry-in composed from the published maps of fixed groups of earlier chunks (at 100
// channels the forwards' only), and at 100 channels (the backwards) and 160 the chunked
// schedule's tiles of 256 to 1024 chunks, each chunk's carry-in resolved by the look-back over
// its nearest predecessors, wherever in that window the first inclusive value appears (the
// float32 constant backward at 100 channels: the split schedule's 512 chunks a tile). Every
// result within the bound, and the same bits over ten runs on the device (what a block finds
// published varies run to run, the maps it applies do not).
template <class T>
void long_sequences(uint32_t seed) {
  fast_shapes_within_bound<T>(
      {{1u << 20, 1}, {300001, 5}, {1u << 17, 40}, {1u << 16, 100}, {1u << 16, 160}}, seed,
      cuda_requested() ? test_runs::repeat_runs(10) : 1);
}

TEST_F(Scan, LongSequencesOfFewChannelsStayWithinTheBoundAndRepeatFloat32) {
  long_sequences<float>(61);
}

TEST_F(Scan, LongSequencesOfFewChannelsStayWithinTheBoundAndRepeatFloat64) {
  long_sequences<double>(67);
}

TEST_F(Scan, ChunkBoundariesStayWithinTheBoundAndRepeatFloat32) {
  chunk_edges<float>(51);
}

TEST_F(Scan, ChunkBoundariesStayWithinTheBoundAndRepeatFloat64) {
  chunk_edges<double>(53);
}

TEST_F(Scan, ResidentScheduleEdgesStayWithinTheBoundAndRepeatFloat32) {
  resident_edges<float>(41);
}

TEST_F(Scan, ResidentScheduleEdgesStayWithinTheBoundAndRepeatFloat64) {
  resident_edges<double>(43);
}

// The fast schedule's preconditions (SPEC-ops 13): channels with |A| > 1 or a non-finite bias,
// state or result are recomputed on the literal recurrence, so they carry its bits (NaN where it
// has NaN, inf where it overflows); the other channels stay within the bound. The shapes up to
// T 8192 take the resident schedule (several marked channels in one block, S not a multiple of
// its channel count) in the constant forward; at most 64 channels take the rows schedule
// otherwise (T 20000 x S 20 every op; T 9000 x S 70 the forwards), more the chunked one (T 9000
// x S 70 the backwards, the float32 constant one on its split schedule; T 9000 x S 130 every
// op); T 64 x S 20000 has enough channels that the
// launcher may take the exact schedule for the whole call; T 5000 x S 520 takes the slab schedule
// in the float32 forwards and constant backward (marks in the first block and in the last one,
// partial in the forwards' blocks of 16 channels).
template <class T>
void marked_channels_follow_the_recurrence(uint32_t seed) {
  DeterministicScope scope(false);
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::pair<uint32_t, uint32_t> shapes[] = {
      {3000, 40}, {200, 70},   {40, 50},   {1025, 40},  {2049, 37},  {4096, 45}, {8192, 38},
      {9000, 40}, {20000, 20}, {9000, 70}, {9000, 130}, {64, 20000}, {5000, 520}};
  for (auto [steps, state] : shapes) {
    for (bool variable : {false, true}) {
      Problem<T> p = random_problem<T>(steps, state, variable, seed++, false, 0.999);
      const uint64_t S = state;
      // Channel 3 grows by 1.5 (2 in float64) a step from max / 10^6 and overflows to +inf within
      // 35 steps; channel 5 meets NaN
      // in X, channel 7 +inf in X, channel 9 a NaN h0, channel 11 -inf in dY (the backward only),
      // channel 13 |A| = 1 exactly (inside the preconditions). Channels in later tiles of 32
      // (the last one partial where S is not a multiple of 32) are marked too: channel S-2 meets
      // +inf in X, channel 33 (where S > 33) -inf in dY (the backward only).
      const T grow = sizeof(T) == 4 ? T(1.5) : T(2);
      for (uint64_t t = 0; t < (variable ? steps : 1); ++t) {
        p.a[t * S + 3] = grow;
        p.a[t * S + 13] = (t % 2 == 0) ? T(1) : T(-1);
      }
      for (uint64_t t = 0; t < steps; ++t) p.x[t * S + 3] = T(1);
      p.h0[3] = std::numeric_limits<T>::max() / T(1e6);
      p.x[(steps / 3) * S + 5] = nan;
      p.x[(steps / 2) * S + 7] = inf;
      p.h0[9] = nan;
      p.dy[(steps / 4) * S + 11] = -inf;
      p.x[(steps / 5) * S + (S - 2)] = inf;
      if (S > 33) p.dy[(steps / 6) * S + 33] = -inf;
      // Channel 15: B near the top of the range, X = 0 (so the state decays and fl(g hprev) and
      // fl(g X) stay finite) and one large dY: g stays finite, fl(g B) overflows. Channel 17: a
      // non-finite B.
      const T big_b = sizeof(T) == 4 ? T(1e30) : T(1e300);
      for (uint64_t t = 0; t < (variable ? steps : 1); ++t) p.b[t * S + 15] = big_b;
      for (uint64_t t = 0; t < steps; ++t) p.x[t * S + 15] = T(0);
      p.dy[(steps / 7) * S + 15] = T(1e10);
      p.b[(variable ? (steps / 8) * S : 0) + 17] = inf;
      p.out = host_fwd(p);
      Handles h = upload(p);
      const std::string what = "T " + std::to_string(steps) + " S " + std::to_string(state) +
                               (variable ? " var" : " const");
      std::vector<uint64_t> marked = {3, 5, 7, 9, 11, 15, 17, S - 2};
      if (S > 33) marked.push_back(33);
      auto column = [&](const std::vector<T>& v, uint64_t j) {
        std::vector<T> r;
        for (uint64_t i = j; i < v.size(); i += S) r.push_back(v[i]);
        return r;
      };
      auto rest = [&](const std::vector<T>& v) {
        std::vector<T> r = v;
        for (uint64_t i = 0; i < r.size(); ++i) {
          for (uint64_t j : marked) {
            if (i % S == j) r[i] = T(0);
          }
        }
        return r;
      };
      const auto ops = operands_of(p);
      const std::vector<T> got = device_fwd(p, h);
      const std::vector<T> want = host_fwd(p);
      EXPECT_EQ(want[(steps - 1) * S + 3], inf) << what;
      for (uint64_t j : {uint64_t{3}, uint64_t{5}, uint64_t{7}, uint64_t{9}, uint64_t{17}, S - 2}) {
        expect_same(column(got, j), column(want, j), what + " fwd channel " + std::to_string(j));
      }
      const std::vector<long double> fb = tlrt::kernels::selective_scan_fwd_bound(ops);
      expect_within(rest(got), rest(want), rest_bound(fb, S, marked), what + " fwd");
      const Grads<T> g = device_bwd(p, h);
      const Grads<T> gw = host_bwd(p);
      EXPECT_EQ(std::fabs(gw.dx[(steps / 7) * S + 15]), inf) << what;  // g B overflowed
      const auto bound = tlrt::kernels::selective_scan_bwd_bound(ops, p.out.data(), p.dy.data());
      for (uint64_t j : marked) {
        const std::string c = what + " bwd channel " + std::to_string(j);
        if (variable) {
          expect_same(column(g.da, j), column(gw.da, j), c + " dA");
          expect_same(column(g.db, j), column(gw.db, j), c + " dB");
        } else {
          expect_same(std::vector<T>{g.da[j]}, std::vector<T>{gw.da[j]}, c + " dA");
          expect_same(std::vector<T>{g.db[j]}, std::vector<T>{gw.db[j]}, c + " dB");
        }
        expect_same(column(g.dx, j), column(gw.dx, j), c + " dX");
        expect_same(std::vector<T>{g.dh0[j]}, std::vector<T>{gw.dh0[j]}, c + " dH0");
      }
      expect_within(rest(g.dx), rest(gw.dx), rest_bound(bound.dx, S, marked), what + " dX");
      expect_within(rest(g.dh0), rest(gw.dh0), rest_bound(bound.dh0, S, marked), what + " dH0");
      expect_within(rest(g.da), rest(gw.da), rest_bound(bound.da, S, marked), what + " dA");
      expect_within(rest(g.db), rest(gw.db), rest_bound(bound.db, S, marked), what + " dB");
    }
  }
}

TEST_F(Scan, MarkedChannelsFollowTheRecurrenceFloat32) {
  marked_channels_follow_the_recurrence<float>(31);
}

TEST_F(Scan, MarkedChannelsFollowTheRecurrenceFloat64) {
  marked_channels_follow_the_recurrence<double>(37);
}

TEST_F(Scan, TenRunsGiveTheSameBitsInBothModes) {
  for (bool deterministic : {true, false}) {
    DeterministicScope scope(deterministic);
    for (bool variable : {false, true}) {
      Problem<float> p = random_problem<float>(5000, 40, variable, 99, false);
      Handles h = upload(p);
      const std::vector<float> first = device_fwd(p, h);
      const Grads<float> first_g = device_bwd(p, h);
      for (int run = 1; run < test_runs::repeat_runs(10); ++run) {
        expect_same(device_fwd(p, h), first, "fwd run " + std::to_string(run));
        expect_same(device_bwd(p, h), first_g, "bwd run " + std::to_string(run));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Ownership.

TEST_F(Scan, TupleAndBuffersAreFreshAndOwned) {
  for (bool variable : {false, true}) {
    Problem<float> p = random_problem<float>(6, 4, variable, 3, false);
    Handles h = upload(p);
    const std::initializer_list<lean_object*> inputs = {h.a.get(), h.b.get(), h.x.get(),
                                                        h.h0.get()};
    expect_fresh_result(
        "fwd",
        [&] {
          return variable ? torchlean_cuda_buffer_selective_scan_diag_var_fwd(
                                h.a.get(), h.b.get(), h.x.get(), h.h0.get(), 6, 4)
                          : torchlean_cuda_buffer_selective_scan_diag_fwd(
                                h.a.get(), h.b.get(), h.x.get(), h.h0.get(), 6, 4);
        },
        fresh_buffer(24 * sizeof(float)), inputs);
    const uint64_t coefficient = variable ? 24 : 4;
    expect_fresh_result(
        "bwd", [&] { return call_bwd(variable, h, 6, 4); },
        FreshResult{4, (2 * coefficient + 24 + 4) * sizeof(float), 4}, inputs);
    // The arguments are borrowed and unchanged.
    expect_same(read_values<float>(h.x.get()), p.x, "x");
  }
}

// ---------------------------------------------------------------------------------------------
// Panics.

lean_object* zeros(uint32_t n, uint8_t dtype = 0) {
  return torchlean_cuda_buffer_zeros(n, dtype);
}

TEST_F(ScanDeathTest, ForwardSizesMustMatchTheShape) {
  EXPECT_EXIT(
      torchlean_cuda_buffer_selective_scan_diag_fwd(zeros(3), zeros(4), zeros(8), zeros(4), 2, 4),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: selective_scan_diag_fwd: buffer size does not match shape "
      "\\(size\\(A\\) = 3 but state = 4\\)");
  EXPECT_EXIT(
      torchlean_cuda_buffer_selective_scan_diag_fwd(zeros(4), zeros(5), zeros(8), zeros(4), 2, 4),
      ::testing::ExitedWithCode(1),
      "selective_scan_diag_fwd: buffer size does not match shape \\(size\\(B\\) = 5 but "
      "state = 4\\)");
  EXPECT_EXIT(
      torchlean_cuda_buffer_selective_scan_diag_fwd(zeros(4), zeros(4), zeros(9), zeros(4), 2, 4),
      ::testing::ExitedWithCode(1),
      "selective_scan_diag_fwd: buffer size does not match shape \\(size\\(X\\) = 9 but "
      "seqLen\\*state = 8\\)");
  EXPECT_EXIT(
      torchlean_cuda_buffer_selective_scan_diag_fwd(zeros(4), zeros(4), zeros(8), zeros(2), 2, 4),
      ::testing::ExitedWithCode(1),
      "selective_scan_diag_fwd: buffer size does not match shape \\(size\\(h0\\) = 2 but "
      "state = 4\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_var_fwd(zeros(4), zeros(8), zeros(8),
                                                                zeros(4), 2, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: selective_scan_diag_var_fwd: buffer size does not match "
              "shape \\(size\\(A\\) = 4 but seqLen\\*state = 8\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_var_fwd(zeros(8), zeros(4), zeros(8),
                                                                zeros(4), 2, 4),
              ::testing::ExitedWithCode(1),
              "selective_scan_diag_var_fwd: buffer size does not match shape \\(size\\(B\\) = 4 "
              "but seqLen\\*state = 8\\)");
}

// seqLen*state of two 32-bit extents can pass INT64_MAX: refused as a shape size overflow before
// any buffer size is compared, in both variants and both directions.
TEST_F(ScanDeathTest, ShapeProductPastInt64IsAnOverflow) {
  const char* overflow =
      "shape size overflow \\(\\[seqLen, state\\] = \\[4294967295, 4294967295\\]\\)";
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_fwd(zeros(4), zeros(4), zeros(8), zeros(4),
                                                            0xffffffffu, 0xffffffffu),
              ::testing::ExitedWithCode(1),
              std::string("INTERNAL PANIC: tlrt: selective_scan_diag_fwd: ") + overflow);
  EXPECT_EXIT(
      torchlean_cuda_buffer_selective_scan_diag_var_bwd(
          zeros(4), zeros(4), zeros(8), zeros(4), zeros(8), zeros(8), 0xffffffffu, 0xffffffffu),
      ::testing::ExitedWithCode(1),
      std::string("INTERNAL PANIC: tlrt: selective_scan_diag_var_bwd: ") + overflow);
  // 2^32 - 1 times 2^31 + 1 is the first such product past INT64_MAX with the largest seqLen.
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_var_fwd(zeros(4), zeros(4), zeros(8),
                                                                zeros(4), 0xffffffffu, 0x80000001u),
              ::testing::ExitedWithCode(1), "selective_scan_diag_var_fwd: shape size overflow");
}

TEST_F(ScanDeathTest, BackwardSizesMustMatchTheShape) {
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_bwd(zeros(4), zeros(4), zeros(8), zeros(4),
                                                            zeros(7), zeros(8), 2, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: selective_scan_diag_bwd: buffer size does not match shape "
              "\\(size\\(out\\) = 7 but seqLen\\*state = 8\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_bwd(zeros(4), zeros(4), zeros(8), zeros(4),
                                                            zeros(8), zeros(9), 2, 4),
              ::testing::ExitedWithCode(1),
              "selective_scan_diag_bwd: buffer size does not match shape \\(size\\(dY\\) = 9 but "
              "seqLen\\*state = 8\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_var_bwd(zeros(8), zeros(8), zeros(8),
                                                                zeros(3), zeros(8), zeros(8), 2, 4),
              ::testing::ExitedWithCode(1),
              "selective_scan_diag_var_bwd: buffer size does not match shape \\(size\\(h0\\) = 3 "
              "but state = 4\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_var_bwd(zeros(8), zeros(8), zeros(8),
                                                                zeros(4), zeros(8), zeros(8), 4, 4),
              ::testing::ExitedWithCode(1),
              "selective_scan_diag_var_bwd: buffer size does not match shape \\(size\\(A\\) = 8 "
              "but seqLen\\*state = 16\\)");
}

TEST_F(ScanDeathTest, MixedDtypesAndReleasedBuffersPanic) {
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_fwd(zeros(4), zeros(4, 1), zeros(8),
                                                            zeros(4), 2, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: selective_scan_diag_fwd: dtypes differ \\(float32 vs "
              "float64\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_var_bwd(
                  zeros(8), zeros(8), zeros(8), zeros(4), zeros(8), zeros(8, 1), 2, 4),
              ::testing::ExitedWithCode(1),
              "selective_scan_diag_var_bwd: dtypes differ \\(float32 vs float64\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_bwd(zeros(4), zeros(4), zeros(8), zeros(4),
                                                            zeros(8, 1), zeros(8), 2, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: selective_scan_diag_bwd: dtypes differ \\(float32 vs "
              "float64\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_var_fwd(zeros(8), zeros(8), zeros(8),
                                                                zeros(4, 1), 2, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: selective_scan_diag_var_fwd: dtypes differ \\(float32 vs "
              "float64\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_bwd(zeros(4), zeros(4), released_buffer(8),
                                                            zeros(4), zeros(8), zeros(8), 2, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: selective_scan_diag_bwd: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_fwd(released_buffer(4), zeros(4), zeros(8),
                                                            zeros(4), 2, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: selective_scan_diag_fwd: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_var_fwd(zeros(8), zeros(8), zeros(8),
                                                                released_buffer(4), 2, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: selective_scan_diag_var_fwd: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_var_bwd(
                  zeros(8), zeros(8), zeros(8), zeros(4), zeros(8), released_buffer(8), 2, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: selective_scan_diag_var_bwd: buffer has been released");
}

}  // namespace
