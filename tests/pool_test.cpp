// The pooling symbols maxpool_fwd/_bwd, avgpool_fwd/_bwd and smooth_maxpool_fwd/_bwd through the
// Lean boundary, on the backend TLRT_DEVICE selects (ctest runs this binary once with cpu and once
// with cuda). Inputs are made and results read back as exact words. Covered: 1-, 2- and 3-D hand
// cases; the max-pool tie rule (first maximum, signed zeros kept as selected), padding never
// selected, all -inf windows, the NaN rule (any NaN wins, the last NaN is selected, its payload
// copied; the backward routes the cotangent to it); count_include_pad averages summed in the dtype
// in kernel order and 3-D inputs smaller than the kernel; the smooth max fixtures at +-1e20 and
// the literal-0 padding; every empty rule; the beta check and its order; every geometry and size
// panic in the contract's order; mixed dtypes; ownership; and every op against an independent host
// oracle written from SPEC-ops 14 over random geometries (bit-exact for max and average, within
// the smooth-max bound of docs/NUMERICS.md), ten runs bitwise equal with the deterministic setting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "abi_test_support.h"

using namespace abi_test;

namespace {

using Dims = std::vector<uint64_t>;

template <class T>
using Bits = typename Dt<T>::Bits;

lean_object* nat_list(const Dims& values) {
  lean_object* a = lean_alloc_array(values.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    lean_array_set_core(a, i, lean_box(static_cast<size_t>(values[i])));
  }
  return a;
}

Obj nats(const Dims& values) {
  return Obj(nat_list(values));
}

struct Geo {
  Dims in, k, s, p;
  uint32_t c = 1;
};

enum class Op { max_fwd, max_bwd, avg_fwd, avg_bwd, smooth_fwd, smooth_bwd };

// One call through the ABI; x and dy may be unused by the op.
template <class T>
Obj call(Op op, const Geo& g, const std::vector<T>& x, const std::vector<T>& dy,
         double beta = 1.0) {
  Obj xb = make_buffer(x);
  Obj db = make_buffer(dy);
  Obj in = nats(g.in), k = nats(g.k), s = nats(g.s), p = nats(g.p);
  switch (op) {
    case Op::max_fwd:
      return Obj(torchlean_cuda_maxpool_fwd(xb.get(), in.get(), k.get(), s.get(), p.get(), g.c));
    case Op::max_bwd:
      return Obj(
          torchlean_cuda_maxpool_bwd(xb.get(), db.get(), in.get(), k.get(), s.get(), p.get(), g.c));
    case Op::avg_fwd:
      return Obj(torchlean_cuda_avgpool_fwd(xb.get(), in.get(), k.get(), s.get(), p.get(), g.c));
    case Op::avg_bwd:
      return Obj(torchlean_cuda_avgpool_bwd(db.get(), in.get(), k.get(), s.get(), p.get(), g.c));
    case Op::smooth_fwd:
      return Obj(torchlean_cuda_smooth_maxpool_fwd(xb.get(), beta, in.get(), k.get(), s.get(),
                                                   p.get(), g.c));
    case Op::smooth_bwd:
      return Obj(torchlean_cuda_smooth_maxpool_bwd(xb.get(), db.get(), beta, in.get(), k.get(),
                                                   s.get(), p.get(), g.c));
  }
  return Obj();
}

template <class T>
std::vector<Bits<T>> run(Op op, const Geo& g, const std::vector<T>& x, const std::vector<T>& dy,
                         double beta = 1.0) {
  Obj r = call(op, g, x, dy, beta);
  return words_of<T>(r.get());
}

template <class T>
std::vector<T> values(const std::vector<Bits<T>>& w) {
  std::vector<T> v;
  for (Bits<T> b : w) v.push_back(value_of<T>(b));
  return v;
}

// ---------------------------------------------------------------------------------------------
// Host oracle, written from SPEC-ops 14 over the given rank (no normalisation to three axes).

uint64_t out_dim(uint64_t in, uint64_t k, uint64_t s, uint64_t p) {
  if (in == 0 || p > k / 2 || in + 2 * p < k) return 0;
  return (in + 2 * p - k) / s + 1;
}

uint64_t prod(const Dims& d) {
  uint64_t v = 1;
  for (uint64_t e : d) v *= e;
  return v;
}

Dims out_dims(const Geo& g) {
  Dims o;
  for (size_t a = 0; a < g.in.size(); ++a) o.push_back(out_dim(g.in[a], g.k[a], g.s[a], g.p[a]));
  return o;
}

// Multi-index of flat index f over extents e (row-major).
std::vector<int64_t> unflat(uint64_t f, const Dims& e) {
  std::vector<int64_t> idx(e.size());
  for (size_t a = e.size(); a-- > 0;) {
    idx[a] = static_cast<int64_t>(f % e[a]);
    f /= e[a];
  }
  return idx;
}

// Per window: the kernel offsets in row-major order with the input offset or -1 (padding).
std::vector<int64_t> window_offsets(const Geo& g, const std::vector<int64_t>& o) {
  std::vector<int64_t> result;
  const uint64_t kv = prod(g.k);
  for (uint64_t kappa = 0; kappa < kv; ++kappa) {
    const std::vector<int64_t> kk = unflat(kappa, g.k);
    int64_t at = 0;
    bool inside = true;
    for (size_t a = 0; a < g.in.size(); ++a) {
      const int64_t i = o[a] * static_cast<int64_t>(g.s[a]) - static_cast<int64_t>(g.p[a]) + kk[a];
      if (i < 0 || i >= static_cast<int64_t>(g.in[a])) inside = false;
      at = at * static_cast<int64_t>(g.in[a]) + i;
    }
    result.push_back(inside ? at : -1);
  }
  return result;
}

template <class T>
struct Oracle {
  const Geo& g;
  Dims out;
  uint64_t iv, ov;
  explicit Oracle(const Geo& geo) : g(geo), out(out_dims(geo)), iv(prod(geo.in)), ov(prod(out)) {}

  int64_t select(const T* xc, const std::vector<int64_t>& offs) const {
    int64_t sel = -1;
    T best = T(0);
    for (int64_t at : offs) {
      if (at < 0) continue;
      const T v = xc[at];
      if (sel < 0 || v > best || std::isnan(v)) {
        best = v;
        sel = at;
      }
    }
    return sel;
  }

  std::vector<T> max_fwd(const std::vector<T>& x) const {
    std::vector<T> y;
    for (uint64_t c = 0; c < g.c; ++c) {
      for (uint64_t q = 0; q < ov; ++q) {
        const T* xc = x.data() + c * iv;
        y.push_back(xc[select(xc, window_offsets(g, unflat(q, out)))]);
      }
    }
    return y;
  }

  std::vector<T> max_bwd(const std::vector<T>& x, const std::vector<T>& dy) const {
    std::vector<T> dx(g.c * iv, T(0));
    for (uint64_t c = 0; c < g.c; ++c) {
      for (uint64_t q = 0; q < ov; ++q) {
        const int64_t sel = select(x.data() + c * iv, window_offsets(g, unflat(q, out)));
        dx[c * iv + sel] = dx[c * iv + sel] + dy[c * ov + q];
      }
    }
    return dx;
  }

  std::vector<T> avg_fwd(const std::vector<T>& x) const {
    std::vector<T> y;
    const T div = static_cast<T>(prod(g.k));
    for (uint64_t c = 0; c < g.c; ++c) {
      for (uint64_t q = 0; q < ov; ++q) {
        T s = T(0);
        for (int64_t at : window_offsets(g, unflat(q, out))) {
          if (at >= 0) s = s + x[c * iv + at];
        }
        y.push_back(s / div);
      }
    }
    return y;
  }

  std::vector<T> avg_bwd(const std::vector<T>& dy) const {
    std::vector<T> dx(g.c * iv, T(0));
    const T div = static_cast<T>(prod(g.k));
    for (uint64_t c = 0; c < g.c; ++c) {
      for (uint64_t q = 0; q < ov; ++q) {
        for (int64_t at : window_offsets(g, unflat(q, out))) {
          if (at >= 0) dx[c * iv + at] = dx[c * iv + at] + dy[c * ov + q] / div;
        }
      }
    }
    return dx;
  }

  // Smooth max in long double (the value the staged formula approximates).
  void stats(const T* xc, const std::vector<int64_t>& offs, T b, T& pivot, T& d) const {
    pivot = b > 0 ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    for (int64_t at : offs) {
      const T v = at < 0 ? T(0) : xc[at];
      if (std::isnan(v)) continue;
      pivot = b > 0 ? std::max(pivot, v) : std::min(pivot, v);
    }
    d = T(0);
    for (int64_t at : offs) {
      const T v = at < 0 ? T(0) : xc[at];
      d = d + static_cast<T>(std::exp(static_cast<long double>((v - pivot) * b)));
    }
  }

  std::vector<T> smooth_fwd(const std::vector<T>& x, T b) const {
    std::vector<T> y;
    for (uint64_t c = 0; c < g.c; ++c) {
      for (uint64_t q = 0; q < ov; ++q) {
        T pivot, d;
        stats(x.data() + c * iv, window_offsets(g, unflat(q, out)), b, pivot, d);
        y.push_back(pivot + static_cast<T>(std::log(static_cast<long double>(d))) * (T(1) / b));
      }
    }
    return y;
  }

  std::vector<T> smooth_bwd(const std::vector<T>& x, const std::vector<T>& dy, T b) const {
    std::vector<T> dx(g.c * iv, T(0));
    for (uint64_t c = 0; c < g.c; ++c) {
      const T* xc = x.data() + c * iv;
      for (uint64_t q = 0; q < ov; ++q) {
        const std::vector<int64_t> offs = window_offsets(g, unflat(q, out));
        T pivot, d;
        stats(xc, offs, b, pivot, d);
        for (int64_t at : offs) {
          if (at < 0) continue;
          const T e = static_cast<T>(std::exp(static_cast<long double>((xc[at] - pivot) * b)));
          dx[c * iv + at] = dx[c * iv + at] + dy[c * ov + q] * (e / d);
        }
      }
    }
    return dx;
  }
};

class Pool : public BackendSuite {};
using PoolDeathTest = Pool;

template <class T>
class PoolTyped : public BackendSuite {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PoolTyped, Dtypes);

template <class T>
T nan_with(uint64_t payload) {
  if constexpr (sizeof(T) == 4) {
    return value_of<float>(static_cast<uint32_t>(0x7fc00000u | (payload & 0x3fffffu)));
  } else {
    return value_of<double>(0x7ff8000000000000ull | (payload & 0xfffffffffffffull));
  }
}

// ---------------------------------------------------------------------------------------------
// Max pooling

TYPED_TEST(PoolTyped, MaxHandCases) {
  using T = TypeParam;
  // 1-D, 2 of stride 2: [3, 5].
  EXPECT_EQ(run<T>(Op::max_fwd, {{5}, {2}, {2}, {0}}, {1, 3, 2, 5, 4}, {}), words<T>({3, 5}));
  // 2-D, 2 channels of 2x3, 2x2 stride 1: [[5, 6]], [[-1, -2]].
  EXPECT_EQ(run<T>(Op::max_fwd, {{2, 3}, {2, 2}, {1, 1}, {0, 0}, 2},
                   {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6}, {}),
            words<T>({5, 6, -1, -2}));
  // 3-D, 2x2x2 to 1.
  EXPECT_EQ(run<T>(Op::max_fwd, {{2, 2, 2}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}},
                   {1, 8, 3, 4, 5, 6, 7, 2}, {}),
            words<T>({8}));
}

TYPED_TEST(PoolTyped, MaxKeepsTheFirstOfTiesAndNeverSelectsPadding) {
  using T = TypeParam;
  const T pz = T(0), nz = -T(0);
  // Ties keep the first: +0 then -0 gives +0, -0 then +0 gives -0.
  EXPECT_EQ(run<T>(Op::max_fwd, {{4}, {2}, {2}, {0}}, {pz, nz, nz, pz}, {}), words<T>({pz, nz}));
  // All-negative windows beside padding: the padding (not a value) is never chosen.
  EXPECT_EQ(run<T>(Op::max_fwd, {{3}, {3}, {1}, {1}}, {-3, -2, -1}, {}), words<T>({-2, -1, -1}));
  // The backward routes ties to the first position.
  EXPECT_EQ(run<T>(Op::max_bwd, {{4}, {2}, {2}, {0}}, {7, 7, 1, 1}, {5, 6}),
            words<T>({5, 0, 6, 0}));
}

TYPED_TEST(PoolTyped, MaxAllMinusInfinityWindowSelectsItsFirstValidPosition) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  EXPECT_EQ(run<T>(Op::max_fwd, {{3}, {2}, {1}, {0}}, {-inf, -inf, 5}, {}), words<T>({-inf, 5}));
  EXPECT_EQ(run<T>(Op::max_bwd, {{3}, {2}, {1}, {0}}, {-inf, -inf, 5}, {1, 2}),
            words<T>({1, 0, 2}));
  // With padding on the left the first valid position is index 0.
  EXPECT_EQ(run<T>(Op::max_bwd, {{2}, {3}, {1}, {1}}, {-inf, -inf}, {1, 2}), words<T>({3, 0}));
}

TYPED_TEST(PoolTyped, MaxNaNRuleSelectsTheLastNaN) {
  using T = TypeParam;
  const T a = nan_with<T>(1), b = nan_with<T>(2);
  const Geo g{{5}, {5}, {1}, {0}};
  const std::vector<T> x = {1, a, 3, b, 2};
  // A NaN replaces the choice, so the last NaN (its payload) is the output.
  EXPECT_EQ(run<T>(Op::max_fwd, g, x, {}), words<T>({b}));
  EXPECT_EQ(run<T>(Op::max_bwd, g, x, {7}), words<T>({0, 0, 0, 7, 0}));
  // A NaN first and a larger value later: the NaN stays.
  EXPECT_EQ(run<T>(Op::max_bwd, {{3}, {3}, {1}, {0}}, {a, 9, 1}, {4}), words<T>({4, 0, 0}));
  // A NaN cotangent reaches only its selection.
  const std::vector<Bits<T>> dx = run<T>(Op::max_bwd, {{3}, {3}, {1}, {0}}, {1, 9, 1}, {a});
  ASSERT_EQ(dx.size(), 3u);
  EXPECT_TRUE(std::isnan(value_of<T>(dx[1])));
  EXPECT_EQ(dx[0], bits_of(T(0)));
  EXPECT_EQ(dx[2], bits_of(T(0)));
}

TYPED_TEST(PoolTyped, MaxBackwardSumsOverlappingWindowsFromPlusZero) {
  using T = TypeParam;
  // Both windows select position 1: dx[1] = (+0 + 1) + 2.
  EXPECT_EQ(run<T>(Op::max_bwd, {{3}, {2}, {1}, {0}}, {1, 5, 2}, {1, 2}), words<T>({0, 3, 0}));
  // A single -0 cotangent arrives as +0 + -0 = +0.
  EXPECT_EQ(run<T>(Op::max_bwd, {{2}, {2}, {2}, {0}}, {1, 5}, {-T(0)}), words<T>({0, 0}));
}

// ---------------------------------------------------------------------------------------------
// Average pooling

TYPED_TEST(PoolTyped, AvgCountsPaddingInTheDivisor) {
  using T = TypeParam;
  const Geo g{{3}, {3}, {1}, {1}};
  EXPECT_EQ(run<T>(Op::avg_fwd, g, {1, 2, 3}, {}),
            words<T>({T(3) / T(3), T(6) / T(3), T(5) / T(3)}));
  // Backward: every window's share fl(dy / 3), summed from +0 in output order.
  const T s0 = T(3) / T(3), s1 = T(6) / T(3), s2 = T(9) / T(3);
  EXPECT_EQ(run<T>(Op::avg_bwd, g, {}, {3, 6, 9}),
            words<T>({T(0) + s0 + s1, T(0) + s0 + s1 + s2, T(0) + s1 + s2}));
}

TYPED_TEST(PoolTyped, AvgSumsInTheDtypeInKernelOrder) {
  using T = TypeParam;
  const T big = sizeof(T) == 4 ? T(1e8) : T(1e17);
  // (+0 + big) + 1 rounds back to big, then - big gives 0 (a wider sum would give 1/3).
  EXPECT_EQ(run<T>(Op::avg_fwd, {{3}, {3}, {1}, {0}}, {big, 1, -big}, {}), words<T>({0}));
  EXPECT_EQ(run<T>(Op::avg_fwd, {{3}, {3}, {1}, {0}}, {big, -big, 1}, {}), words<T>({T(1) / T(3)}));
}

TYPED_TEST(PoolTyped, Avg3DInputSmallerThanTheKernel) {
  using T = TypeParam;
  const Geo g{{1, 1, 2}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}};  // out [1, 1, 2]
  EXPECT_EQ(run<T>(Op::avg_fwd, g, {27, 54}, {}), words<T>({T(81) / T(27), T(81) / T(27)}));
  const T share = T(27) / T(27);
  EXPECT_EQ(run<T>(Op::avg_bwd, g, {}, {27, 27}), words<T>({share + share, share + share}));
}

// ---------------------------------------------------------------------------------------------
// Smooth max pooling

TYPED_TEST(PoolTyped, SmoothMaxPivotsBeforeScaling) {
  using T = TypeParam;
  const T e20 = static_cast<T>(1e20);
  const Geo g{{2}, {2}, {2}, {0}};
  // b*x overflows, the pivoted form does not: y = P + log(D) / b with D in {1, 2}.
  EXPECT_EQ(run<T>(Op::smooth_fwd, g, {-e20, e20}, {}, 1e20), words<T>({e20}));
  EXPECT_EQ(run<T>(Op::smooth_fwd, g, {-e20, e20}, {}, -1e20), words<T>({-e20}));
  EXPECT_EQ(run<T>(Op::smooth_fwd, g, {e20, e20}, {}, 1e20), words<T>({e20}));
  // Backward: weight fl(exp(0) / 1) = 1 on the maximum, exp(-inf) = 0 on the other.
  EXPECT_EQ(run<T>(Op::smooth_bwd, g, {-e20, e20}, {3}, 1e20), words<T>({0, 3}));
  EXPECT_EQ(run<T>(Op::smooth_bwd, g, {-e20, e20}, {3}, -1e20), words<T>({3, 0}));
}

TYPED_TEST(PoolTyped, SmoothMaxPaddingIsTheLiteralZero) {
  using T = TypeParam;
  const Geo g{{1}, {3}, {1}, {1}};
  const std::vector<T> y = values<T>(run<T>(Op::smooth_fwd, g, {-5}, {}, 1.0));
  ASSERT_EQ(y.size(), 1u);
  const double expected = std::log(2.0 + std::exp(-5.0));
  EXPECT_NEAR(static_cast<double>(y[0]), expected, 16 * std::numeric_limits<T>::epsilon());
  // The padding takes part in P and D but receives nothing: dx = dy * e^-5 / D.
  const std::vector<T> dx = values<T>(run<T>(Op::smooth_bwd, g, {-5}, {1}, 1.0));
  ASSERT_EQ(dx.size(), 1u);
  EXPECT_NEAR(static_cast<double>(dx[0]), std::exp(-5.0) / (2.0 + std::exp(-5.0)),
              16 * std::numeric_limits<T>::epsilon());
}

TYPED_TEST(PoolTyped, SmoothMaxBackwardAddsInIncreasingKernelOffset) {
  using T = TypeParam;
  // Overlapping windows (2 of stride 1): each input's terms arrive in increasing kernel offset.
  const Geo g{{3}, {2}, {1}, {0}};
  const std::vector<T> x = {0, 0, 0}, dy = {2, 4};
  // Every weight is exp(0) / 2 = 0.5: dx = [1, (+0 + 2) + 1 = 3, 2].
  EXPECT_EQ(run<T>(Op::smooth_bwd, g, x, dy, 1.0), words<T>({1, 3, 2}));
}

// ---------------------------------------------------------------------------------------------
// Empty rules

TYPED_TEST(PoolTyped, EmptyRules) {
  using T = TypeParam;
  // Zero channels, an empty input axis, padding beyond half the kernel, a kernel larger than the
  // padded input: empty forwards (smooth max does not look at beta then).
  const std::vector<Geo> empty_out = {{{4}, {2}, {2}, {0}, 0},
                                      {{0, 3}, {1, 1}, {1, 1}, {0, 0}},
                                      {{4}, {2}, {1}, {2}},
                                      {{2, 2}, {5, 1}, {1, 1}, {1, 0}}};
  for (const Geo& g : empty_out) {
    const std::vector<T> x(g.c * prod(g.in), T(1));
    EXPECT_TRUE(run<T>(Op::max_fwd, g, x, {}).empty());
    EXPECT_TRUE(run<T>(Op::avg_fwd, g, x, {}).empty());
    EXPECT_TRUE(run<T>(Op::smooth_fwd, g, x, {}, 0.0).empty());
    EXPECT_TRUE(run<T>(Op::smooth_fwd, g, x, {}, std::nan("")).empty());
    // Backward with an empty dY: zeros of the input size.
    const std::vector<Bits<T>> zeros(x.size(), bits_of(T(0)));
    EXPECT_EQ(run<T>(Op::max_bwd, g, x, {}), zeros);
    EXPECT_EQ(run<T>(Op::avg_bwd, g, {}, {}), zeros);
    EXPECT_EQ(run<T>(Op::smooth_bwd, g, x, {}, 1.0), zeros);
  }
}

// ---------------------------------------------------------------------------------------------
// Against the host oracle

struct Case {
  Geo g;
  bool specials;
};

std::vector<Case> random_cases(std::mt19937_64& rng, int count) {
  std::vector<Case> cases;
  // Fixed shapes first: the vectorised 2x2 stride 2 path, 3x3 stride 1 padding 1, stride above the
  // kernel, a ragged tail, rank 3.
  cases.push_back({{{6, 8}, {2, 2}, {2, 2}, {0, 0}, 3}, false});
  cases.push_back({{{5, 7}, {2, 2}, {2, 2}, {0, 0}, 2}, true});
  cases.push_back({{{6, 6}, {3, 3}, {1, 1}, {1, 1}, 2}, true});
  cases.push_back({{{9}, {2}, {3}, {1}, 2}, true});
  cases.push_back({{{4, 5, 3}, {2, 3, 2}, {2, 1, 3}, {1, 1, 0}, 2}, true});
  cases.push_back({{{7, 6}, {3, 2}, {2, 2}, {1, 1}, 1}, true});
  for (int n = 0; n < count; ++n) {
    Geo g;
    const size_t rank = 1 + rng() % 3;
    for (size_t a = 0; a < rank; ++a) {
      const uint64_t k = 1 + rng() % 4;
      g.k.push_back(k);
      g.s.push_back(1 + rng() % 4);
      g.p.push_back(rng() % (k / 2 + 1));
      g.in.push_back(rng() % 3 == 0 ? 1 + rng() % 3 : 1 + rng() % 9);
    }
    g.c = static_cast<uint32_t>(1 + rng() % 3);
    cases.push_back({g, n % 2 == 0});
  }
  return cases;
}

template <class T>
std::vector<T> random_values(std::mt19937_64& rng, uint64_t n, bool specials) {
  std::uniform_real_distribution<double> u(-4, 4);
  std::vector<T> v(n);
  for (uint64_t i = 0; i < n; ++i) {
    v[i] = static_cast<T>(std::round(u(rng) * 4) / 4);  // ties are common
    if (specials) {
      const uint64_t r = rng() % 16;
      if (r == 0) v[i] = std::numeric_limits<T>::quiet_NaN();
      if (r == 1) v[i] = std::numeric_limits<T>::infinity();
      if (r == 2) v[i] = -std::numeric_limits<T>::infinity();
      if (r == 3) v[i] = -T(0);
    }
  }
  return v;
}

template <class T>
void expect_equal_or_both_nan(const std::vector<Bits<T>>& got, const std::vector<T>& want,
                              const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const T g = value_of<T>(got[i]);
    EXPECT_TRUE(same_bits_or_nan(g, want[i]))
        << what << " at " << i << ": " << g << " vs " << want[i];
  }
}

// |got - want| <= eps (absolute + relative |want|): the smooth-max bounds of docs/NUMERICS.md
// ("Pooling"), forward absolute = (2n + 4 + 5 ln n) / |b|, relative = 3; backward absolute =
// (4n + 12) times the largest sum of |dY| over the windows of one input, relative = 2.
template <class T>
void expect_close(const std::vector<Bits<T>>& got, const std::vector<T>& want, double absolute,
                  double relative, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double eps = static_cast<double>(std::numeric_limits<T>::epsilon()) / 2;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(value_of<T>(got[i]));
    const double w = static_cast<double>(want[i]);
    if (std::isnan(g) || std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g) && std::isnan(w))
          << what << " at " << i << ": " << g << " vs " << w;
      continue;
    }
    if (std::isinf(w)) {
      EXPECT_EQ(g, w) << what << " at " << i;
      continue;
    }
    EXPECT_LE(std::fabs(g - w), eps * (absolute + relative * std::fabs(w)))
        << what << " at " << i << ": " << g << " vs " << w;
  }
}

TYPED_TEST(PoolTyped, EveryOpMatchesTheHostOracle) {
  using T = TypeParam;
  std::mt19937_64 rng(17);
  for (const Case& c : random_cases(rng, 60)) {
    const Geo& g = c.g;
    const Oracle<T> oracle(g);
    const std::vector<T> x = random_values<T>(rng, g.c * oracle.iv, c.specials);
    const std::vector<T> dy = random_values<T>(rng, g.c * oracle.ov, false);
    const std::string what = "in " + std::to_string(g.in.size()) + "-D case, C " +
                             std::to_string(g.c) + ", in[0] " + std::to_string(g.in[0]) +
                             ", k[0] " + std::to_string(g.k[0]);
    expect_equal_or_both_nan(run<T>(Op::max_fwd, g, x, {}), oracle.max_fwd(x), "max_fwd " + what);
    expect_equal_or_both_nan(run<T>(Op::avg_fwd, g, x, {}), oracle.avg_fwd(x), "avg_fwd " + what);
    if (oracle.ov == 0) continue;
    expect_equal_or_both_nan(run<T>(Op::max_bwd, g, x, dy), oracle.max_bwd(x, dy),
                             "max_bwd " + what);
    expect_equal_or_both_nan(run<T>(Op::avg_bwd, g, {}, dy), oracle.avg_bwd(dy), "avg_bwd " + what);
    // Smooth max on finite values (its NaN/inf propagation is checked by the parity rows).
    const std::vector<T> xf = random_values<T>(rng, g.c * oracle.iv, false);
    const double n = static_cast<double>(prod(g.k));
    double dy_max = 0;
    for (T v : dy) dy_max = std::max(dy_max, std::fabs(static_cast<double>(v)));
    for (double beta : {1.0, -2.5}) {
      expect_close(run<T>(Op::smooth_fwd, g, xf, {}, beta), oracle.smooth_fwd(xf, T(beta)),
                   (2 * n + 4 + 5 * std::log(n)) / std::fabs(beta), 3, "smooth_fwd " + what);
      expect_close(run<T>(Op::smooth_bwd, g, xf, dy, beta), oracle.smooth_bwd(xf, dy, T(beta)),
                   (4 * n + 12) * n * dy_max, 2, "smooth_bwd " + what);
    }
  }
}

TYPED_TEST(PoolTyped, OrderedPathsAreBitwiseRepeatable) {
  using T = TypeParam;
  DeterministicScope deterministic(true);
  std::mt19937_64 rng(5);
  const std::vector<Geo> geos = {{{6, 8}, {2, 2}, {2, 2}, {0, 0}, 4},
                                 {{9, 7}, {3, 3}, {1, 1}, {1, 1}, 3},
                                 {{5, 6, 4}, {2, 3, 2}, {1, 2, 1}, {1, 1, 0}, 2}};
  for (const Geo& g : geos) {
    const Oracle<T> oracle(g);
    const std::vector<T> x = random_values<T>(rng, g.c * oracle.iv, true);
    const std::vector<T> dy = random_values<T>(rng, g.c * oracle.ov, false);
    for (Op op :
         {Op::max_fwd, Op::max_bwd, Op::avg_fwd, Op::avg_bwd, Op::smooth_fwd, Op::smooth_bwd}) {
      const std::vector<Bits<T>> first = run<T>(op, g, x, dy, 0.75);
      for (int r = 1; r < 10; ++r) {
        EXPECT_EQ(run<T>(op, g, x, dy, 0.75), first) << "op " << static_cast<int>(op);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Ownership

TEST_F(Pool, OwnershipOfEveryResult) {
  Obj x = make_buffer<float>({1, 2, 3, 4});
  Obj dy = make_buffer<float>({1, 2});
  Obj empty = make_buffer<float>({});
  Obj in = nats({4}), k = nats({2}), s = nats({2}), p = nats({0});
  Obj in0 = nats({0}), k5 = nats({5});
  struct Case {
    const char* name;
    std::function<lean_object*()> call;
    uint64_t bytes;
  };
  const std::vector<Case> cases = {
      {"maxpool_fwd",
       [&] { return torchlean_cuda_maxpool_fwd(x.get(), in.get(), k.get(), s.get(), p.get(), 1); },
       8},
      {"maxpool_bwd",
       [&] {
         return torchlean_cuda_maxpool_bwd(x.get(), dy.get(), in.get(), k.get(), s.get(), p.get(),
                                           1);
       },
       16},
      {"avgpool_fwd",
       [&] { return torchlean_cuda_avgpool_fwd(x.get(), in.get(), k.get(), s.get(), p.get(), 1); },
       8},
      {"avgpool_bwd",
       [&] { return torchlean_cuda_avgpool_bwd(dy.get(), in.get(), k.get(), s.get(), p.get(), 1); },
       16},
      {"smooth_maxpool_fwd",
       [&] {
         return torchlean_cuda_smooth_maxpool_fwd(x.get(), 1.0, in.get(), k.get(), s.get(), p.get(),
                                                  1);
       },
       8},
      {"smooth_maxpool_bwd",
       [&] {
         return torchlean_cuda_smooth_maxpool_bwd(x.get(), dy.get(), 1.0, in.get(), k.get(),
                                                  s.get(), p.get(), 1);
       },
       16},
      {"maxpool_fwd empty",
       [&] {
         return torchlean_cuda_maxpool_fwd(empty.get(), in0.get(), k.get(), s.get(), p.get(), 1);
       },
       0},
      {"maxpool_bwd zeros",
       [&] {
         return torchlean_cuda_maxpool_bwd(x.get(), empty.get(), in.get(), k5.get(), s.get(),
                                           p.get(), 1);
       },
       16},
      {"avgpool_bwd empty",
       [&] {
         return torchlean_cuda_avgpool_bwd(empty.get(), in0.get(), k.get(), s.get(), p.get(), 1);
       },
       0},
  };
  for (const Case& c : cases) {
    const uint64_t payloads = c.bytes != 0 ? 1 : 0;
    const Counters before = Counters::read();
    Obj r(c.call());
    const Counters mid = Counters::read();
    EXPECT_EQ(mid.alloc_count - before.alloc_count, payloads) << c.name;
    EXPECT_EQ(mid.live_bytes - before.live_bytes, c.bytes) << c.name;
    EXPECT_EQ(mid.wrapper_live - before.wrapper_live, 1u) << c.name;
    EXPECT_NE(r.get(), x.get()) << c.name;
    EXPECT_NE(r.get(), dy.get()) << c.name;
    EXPECT_NE(r.get(), empty.get()) << c.name;
    r.reset();
    const Counters after = Counters::read();
    EXPECT_EQ(after.live_bytes, before.live_bytes) << c.name;
    EXPECT_EQ(after.free_count - before.free_count, payloads) << c.name;
    EXPECT_EQ(after.wrapper_live, before.wrapper_live) << c.name;
  }
  EXPECT_EQ(words_of<float>(x.get()), words<float>({1, 2, 3, 4}));
  EXPECT_EQ(words_of<float>(dy.get()), words<float>({1, 2}));
}

// ---------------------------------------------------------------------------------------------
// Bad inputs: pure symbols panic, naming the op and the sizes

lean_object* zeros(uint32_t n, uint8_t dtype = 0) {
  return torchlean_cuda_buffer_zeros(n, dtype);
}

lean_object* maxfwd(uint32_t n, const Dims& in, const Dims& k, const Dims& s, const Dims& p,
                    uint32_t c = 1) {
  return torchlean_cuda_maxpool_fwd(zeros(n), nat_list(in), nat_list(k), nat_list(s), nat_list(p),
                                    c);
}

TEST_F(PoolDeathTest, GeometryChecksInTheContractsOrder) {
  const std::string prefix = "INTERNAL PANIC: tlrt: maxpool_fwd: torchlean conv/pool: ";
  // Arrays first: all four must be arrays, then each is decoded.
  EXPECT_EXIT(torchlean_cuda_maxpool_fwd(zeros(1), nat_list({1}), nat_list({1}), lean_box(1),
                                         nat_list({}), 1),
              ::testing::ExitedWithCode(1), prefix + "expected shape arrays");
  EXPECT_EXIT(maxfwd(1, {4294967296ull}, {}, {}, {}), ::testing::ExitedWithCode(1),
              prefix + "bad input dimension \\(inSpatial\\[0\\] exceeds UInt32");
  EXPECT_EXIT(maxfwd(1, {}, {4294967296ull}, {}, {}), ::testing::ExitedWithCode(1),
              prefix + "bad kernel dimension");
  EXPECT_EXIT(maxfwd(1, {}, {}, {4294967296ull}, {}), ::testing::ExitedWithCode(1),
              prefix + "bad stride");
  EXPECT_EXIT(maxfwd(1, {}, {}, {}, {4294967296ull}), ::testing::ExitedWithCode(1),
              prefix + "bad padding");
  EXPECT_EXIT(maxfwd(1, {}, {}, {}, {}), ::testing::ExitedWithCode(1),
              prefix + "spatial rank must be one, two, or three \\(size\\(inSpatial\\) = 0\\)");
  EXPECT_EXIT(maxfwd(1, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}),
              ::testing::ExitedWithCode(1), prefix + "spatial rank must be one, two, or three");
  EXPECT_EXIT(maxfwd(1, {1, 1}, {1, 1}, {1}, {0, 0}), ::testing::ExitedWithCode(1),
              prefix +
                  "array rank mismatch \\(size\\(inSpatial\\) = 2, size\\(kernel\\) = 2, "
                  "size\\(stride\\) = 1, size\\(padding\\) = 2\\)");
  EXPECT_EXIT(maxfwd(1, {1}, {0}, {1}, {0}), ::testing::ExitedWithCode(1),
              prefix +
                  "invalid spatial dimension, kernel, stride or padding \\(axis 0: "
                  "inSpatial = 1, kernel = 0");
  EXPECT_EXIT(maxfwd(1, {1, 1}, {1, 1}, {1, 0}, {0, 0}), ::testing::ExitedWithCode(1),
              prefix + "invalid spatial dimension, kernel, stride or padding \\(axis 1");
  // Products: the kernel's past 2^64, then C times a volume past 2^63-1.
  EXPECT_EXIT(maxfwd(1, {1, 1, 1}, {4294967295u, 4294967295u, 4294967295u}, {1, 1, 1}, {0, 0, 0}),
              ::testing::ExitedWithCode(1),
              prefix + "dimension product overflow \\(prod\\(kernel\\)");
  EXPECT_EXIT(maxfwd(1, {4294967295u, 4294967295u}, {1, 1}, {1, 1}, {0, 0}, 4294967295u),
              ::testing::ExitedWithCode(1),
              prefix +
                  "dimension product overflow \\(shape \\[4294967295, 4294967295, "
                  "4294967295\\]\\)");
  EXPECT_EXIT(
      maxfwd(1, {4294967295u, 4294967295u}, {1, 1}, {1, 1}, {0, 0}, 1),
      ::testing::ExitedWithCode(1),
      prefix + "tensor size exceeds ATen indexing \\(shape \\[1, 4294967295, 4294967295\\]");
  // An output extent past UInt32, in TorchLean's words.
  EXPECT_EXIT(maxfwd(1, {4294967295u}, {2}, {1}, {1}), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: maxpool_fwd: LibTorch conv/pool: outDim overflow \\(axis 0: "
              "4294967296 exceeds UInt32\\)");
  // The geometry comes before any buffer is looked at.
  lean_object* released = zeros(4);
  torchlean_cuda_buffer_release(released);
  EXPECT_EXIT(torchlean_cuda_maxpool_fwd(released, nat_list({}), nat_list({}), nat_list({}),
                                         nat_list({}), 1),
              ::testing::ExitedWithCode(1), prefix + "spatial rank must be one, two, or three");
  EXPECT_EXIT(torchlean_cuda_smooth_maxpool_bwd(released, released, 1.0, nat_list({4}),
                                                nat_list({0}), nat_list({1}), nat_list({0}), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: smooth_maxpool_bwd: torchlean conv/pool: invalid spatial "
              "dimension, kernel, stride or padding");
  // Then each buffer in turn: gradOutput's size before input's liveness.
  EXPECT_EXIT(torchlean_cuda_maxpool_bwd(released, zeros(3), nat_list({4}), nat_list({2}),
                                         nat_list({2}), nat_list({0}), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: maxpool_bwd: torchlean conv/pool: buffer size mismatch "
              "\\(size\\(gradOutput\\) = 3");
  lean_dec(released);
  // Then the buffer sizes.
  EXPECT_EXIT(
      maxfwd(5, {2, 3}, {2, 2}, {1, 1}, {0, 0}), ::testing::ExitedWithCode(1),
      prefix + "buffer size mismatch \\(size\\(input\\) = 5 but C x prod\\(inSpatial\\) = 6\\)");
}

TEST_F(PoolDeathTest, BackwardBufferChecks) {
  // maxpool_bwd: gradOutput first, then input.
  EXPECT_EXIT(torchlean_cuda_maxpool_bwd(zeros(3), zeros(3), nat_list({4}), nat_list({2}),
                                         nat_list({2}), nat_list({0}), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: maxpool_bwd: torchlean conv/pool: buffer size mismatch "
              "\\(size\\(gradOutput\\) = 3 but C x prod\\(outSpatial\\) = 2\\)");
  EXPECT_EXIT(torchlean_cuda_maxpool_bwd(zeros(3), zeros(2), nat_list({4}), nat_list({2}),
                                         nat_list({2}), nat_list({0}), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: maxpool_bwd: torchlean conv/pool: buffer size mismatch "
              "\\(size\\(input\\) = 3 but C x prod\\(inSpatial\\) = 4\\)");
  EXPECT_EXIT(torchlean_cuda_avgpool_bwd(zeros(3), nat_list({4}), nat_list({2}), nat_list({2}),
                                         nat_list({0}), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: avgpool_bwd: torchlean conv/pool: buffer size mismatch "
              "\\(size\\(gradOutput\\) = 3");
  // Mixed dtypes are refused.
  EXPECT_EXIT(torchlean_cuda_maxpool_bwd(zeros(4, 0), zeros(2, 1), nat_list({4}), nat_list({2}),
                                         nat_list({2}), nat_list({0}), 1),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: tlrt: maxpool_bwd: .*dtype");
  EXPECT_EXIT(torchlean_cuda_smooth_maxpool_bwd(zeros(4, 1), zeros(2, 0), 1.0, nat_list({4}),
                                                nat_list({2}), nat_list({2}), nat_list({0}), 1),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: tlrt: smooth_maxpool_bwd: .*dtype");
}

TEST_F(PoolDeathTest, SmoothBetaMustBeFiniteAndNonzero) {
  auto fwd = [](double beta, uint8_t dtype) {
    return torchlean_cuda_smooth_maxpool_fwd(zeros(4, dtype), beta, nat_list({4}), nat_list({2}),
                                             nat_list({2}), nat_list({0}), 1);
  };
  auto bwd = [](double beta, uint32_t dy, uint8_t dtype) {
    return torchlean_cuda_smooth_maxpool_bwd(zeros(4, dtype), zeros(dy, dtype), beta, nat_list({4}),
                                             nat_list({2}), nat_list({2}), nat_list({0}), 1);
  };
  const std::string fwd_msg =
      "INTERNAL PANIC: tlrt: smooth_maxpool_fwd: torchlean smooth pool: beta must be finite and "
      "nonzero";
  const std::string bwd_msg =
      "INTERNAL PANIC: tlrt: smooth_maxpool_bwd: torchlean smooth pool: beta must be finite and "
      "nonzero";
  for (uint8_t dtype : {0, 1}) {
    EXPECT_EXIT(fwd(0.0, dtype), ::testing::ExitedWithCode(1), fwd_msg);
    EXPECT_EXIT(fwd(-0.0, dtype), ::testing::ExitedWithCode(1), fwd_msg);
    EXPECT_EXIT(fwd(std::nan(""), dtype), ::testing::ExitedWithCode(1), fwd_msg);
    EXPECT_EXIT(fwd(INFINITY, dtype), ::testing::ExitedWithCode(1), fwd_msg);
    EXPECT_EXIT(fwd(-INFINITY, dtype), ::testing::ExitedWithCode(1), fwd_msg);
    EXPECT_EXIT(bwd(0.0, 2, dtype), ::testing::ExitedWithCode(1), bwd_msg);
    // The backward checks beta even when dY is empty... but after the buffer sizes.
    EXPECT_EXIT(
        torchlean_cuda_smooth_maxpool_bwd(zeros(4, dtype), zeros(0, dtype), NAN, nat_list({4}),
                                          nat_list({5}), nat_list({1}), nat_list({0}), 1),
        ::testing::ExitedWithCode(1), bwd_msg);
    EXPECT_EXIT(bwd(0.0, 3, dtype), ::testing::ExitedWithCode(1),
                "INTERNAL PANIC: tlrt: smooth_maxpool_bwd: torchlean conv/pool: buffer size "
                "mismatch");
  }
  // Rounded to float32 first: 1e-50 becomes 0 and 1e300 becomes inf; both are fine for float64.
  EXPECT_EXIT(fwd(1e-50, 0), ::testing::ExitedWithCode(1), fwd_msg);
  EXPECT_EXIT(fwd(1e300, 0), ::testing::ExitedWithCode(1), fwd_msg);
}

TEST_F(Pool, SmoothBetaRoundingToFloat64IsTheIdentity) {
  for (double beta : {1e-50, 1e300}) {
    Obj x(torchlean_cuda_buffer_zeros(4, 1));
    Obj r(torchlean_cuda_smooth_maxpool_fwd(x.get(), beta, nats({4}).get(), nats({2}).get(),
                                            nats({2}).get(), nats({0}).get(), 1));
    EXPECT_EQ(words_of<double>(r.get()).size(), 2u);
  }
}

TEST_F(PoolDeathTest, ReleasedAndNonBufferOperandsPanic) {
  lean_object* released = zeros(4, 1);
  torchlean_cuda_buffer_release(released);
  EXPECT_EXIT(torchlean_cuda_maxpool_fwd(released, nat_list({4}), nat_list({2}), nat_list({2}),
                                         nat_list({0}), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: maxpool_fwd: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_avgpool_bwd(released, nat_list({4}), nat_list({2}), nat_list({2}),
                                         nat_list({0}), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: avgpool_bwd: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_avgpool_fwd(byte_array({1, 2}).get(), nat_list({4}), nat_list({2}),
                                         nat_list({2}), nat_list({0}), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: avgpool_fwd: argument is not a buffer object");
  lean_dec(released);
}

}  // namespace
