// Parity cases of the matrix products (SPEC-ops 10): bmm_with_transpose in float32 and float64 for
// every tA/tB combination on random shapes (odd sizes, extents of 1, a long contraction, batches,
// and zero extents: n = 0 gives zeros, batch, m or p = 0 nothing), drawn three ways (mixed signs in
// (-1, 1), positive in [1/2, 2), and tiny values whose products are subnormal); dgemm_cuda on host
// binary64 arrays of the same kinds; with --shapes N, N more shapes of each op (extents, flags and
// draw) from the seed. The accumulation order is unspecified, so results are compared within the
// bound derived in docs/NUMERICS.md ("Matrix products"), element by element at the scale
// S = sum_k |a_ik||b_kj|:
//   subject vs reference:     |c_s - c_r| <= (gamma_n(u) + u + 2 gamma_n(u_w)) S + 2 n eta
//   reference vs the oracle:  |c_r - c_o| <= (u + 3 gamma_n(u_L)) S + n eta
// with u the unit roundoff of the dtype (2^-24, 2^-53), u_w that of the reference's wider format
// (binary64 for float32, long double for float64), u_L = 2^-64 that of the long double oracle, and
// eta the dtype's smallest subnormal. The oracle is a plain long double dot product per element,
// written apart from the reference backend's loops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/matmul_dispatch.h"
#include "tools/parity/case_key.h"
#include "tools/parity/parity_case.h"
#include "tools/parity/ulp.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;

static_assert(std::numeric_limits<long double>::digits >= 64,
              "the matmul oracle needs a long double of at least 64 significand bits");

enum class Pattern { mixed, positive, tiny };

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::mixed:
      return "mixed signs";
    case Pattern::positive:
      return "positive";
    case Pattern::tiny:
      return "subnormal products";
  }
  return "";
}

double unit_draw(uint64_t key, uint64_t i) {  // [0, 1)
  return static_cast<double>(splitmix64_finalize(key + i) >> 11) * 0x1p-53;
}

template <class T>
T draw(Pattern pattern, uint64_t key, uint64_t i) {
  const double u = unit_draw(key, i);
  switch (pattern) {
    case Pattern::mixed:
      return static_cast<T>(2 * u - 1);
    case Pattern::positive:
      return static_cast<T>(0.5 + 1.5 * u);
    case Pattern::tiny: {
      // Products in the subnormal range, below 2^-140 (float32) and 2^-1060 (float64).
      const int e = sizeof(T) == 4 ? -70 : -530;
      return static_cast<T>(std::ldexp(2 * u - 1, e));
    }
  }
  return T(0);
}

long double gamma_of(uint64_t k, long double u) {
  const long double ku = static_cast<long double>(k) * u;
  return ku / (1 - ku);
}

struct Extents {
  uint32_t batch, m, n, p;
};

std::string extents_text(const Extents& e, bool ta, bool tb) {
  return "batch = " + std::to_string(e.batch) + ", m = " + std::to_string(e.m) +
         ", n = " + std::to_string(e.n) + ", p = " + std::to_string(e.p) +
         ", tA = " + std::to_string(ta) + ", tB = " + std::to_string(tb);
}

// Host values of one product: stored operands, per-output scale S and the oracle value.
class Product {
 public:
  Product(Dtype dtype, Extents e, bool ta, bool tb) : dtype_(dtype), e_(e), ta_(ta), tb_(tb) {}

  void fill(Pattern pattern, uint64_t key) {
    const uint64_t na = uint64_t{e_.batch} * e_.m * e_.n, nb = uint64_t{e_.batch} * e_.n * e_.p;
    a_ = HostArray(dtype_, na);
    b_ = HostArray(dtype_, nb);
    if (dtype_ == Dtype::f32) {
      fill_typed<float>(pattern, key, na, nb);
    } else {
      fill_typed<double>(pattern, key, na, nb);
    }
    compute_oracle();
  }

  // A'[bb, i, k] and B'[bb, k, j] through the stored layouts, widened.
  long double a_at(uint64_t bb, uint64_t i, uint64_t k) const {
    const uint64_t at = ta_ ? (bb * e_.n + k) * e_.m + i : (bb * e_.m + i) * e_.n + k;
    return a_.at(at);
  }
  long double b_at(uint64_t bb, uint64_t k, uint64_t j) const {
    const uint64_t at = tb_ ? (bb * e_.p + j) * e_.n + k : (bb * e_.n + k) * e_.p + j;
    return b_.at(at);
  }

  const HostArray& a() const { return a_; }
  const HostArray& b() const { return b_; }
  long double scale(uint64_t i) const { return scale_[i]; }
  long double oracle(uint64_t i) const { return oracle_[i]; }
  const Extents& extents() const { return e_; }

 private:
  template <class T>
  void fill_typed(Pattern pattern, uint64_t key, uint64_t na, uint64_t nb) {
    for (uint64_t i = 0; i < na; ++i) a_.as<T>()[i] = draw<T>(pattern, key, i);
    for (uint64_t i = 0; i < nb; ++i) b_.as<T>()[i] = draw<T>(pattern, ~key, i);
  }

  void compute_oracle() {
    const uint64_t outputs = uint64_t{e_.batch} * e_.m * e_.p;
    scale_.assign(outputs, 0);
    oracle_.assign(outputs, 0);
    for (uint64_t bb = 0; bb < e_.batch; ++bb) {
      for (uint64_t i = 0; i < e_.m; ++i) {
        for (uint64_t j = 0; j < e_.p; ++j) {
          long double sum = 0, magnitude = 0;
          for (uint64_t k = 0; k < e_.n; ++k) {
            const long double t = a_at(bb, i, k) * b_at(bb, k, j);
            sum += t;
            magnitude += std::fabs(t);
          }
          const uint64_t at = (bb * e_.m + i) * e_.p + j;
          oracle_[at] = sum;
          scale_[at] = magnitude;
        }
      }
    }
  }

  Dtype dtype_;
  Extents e_;
  bool ta_, tb_;
  HostArray a_, b_;
  std::vector<long double> scale_, oracle_;
};

// The allowed distances of the header, for one output of scale S.
struct MatmulBound {
  long double relative_subject = 0;  // times S, subject vs reference
  long double relative_oracle = 0;   // times S, reference vs oracle
  long double absolute_subject = 0;  // underflow terms
  long double absolute_oracle = 0;
};

MatmulBound matmul_bound(Dtype dtype, uint64_t n) {
  const bool f32 = dtype == Dtype::f32;
  const long double u = std::ldexp(1.0L, f32 ? -24 : -53);
  const long double u_wide = f32 ? std::ldexp(1.0L, -53) : std::ldexp(1.0L, -64);
  const long double u_oracle = std::ldexp(1.0L, -64);
  const long double eta =
      f32 ? std::numeric_limits<float>::denorm_min() : std::numeric_limits<double>::denorm_min();
  MatmulBound b;
  b.relative_subject = gamma_of(n, u) + u + 2 * gamma_of(n, u_wide);
  b.relative_oracle = u + 3 * gamma_of(n, u_oracle);
  b.absolute_subject = 2 * static_cast<long double>(n) * eta;
  b.absolute_oracle = static_cast<long double>(n) * eta;
  return b;
}

// The relative error is reported only where S is a normal number of the dtype: below it the
// underflow term of the bound dominates and error / S says nothing.
long double normal_floor(Dtype dtype) {
  return dtype == Dtype::f32 ? std::numeric_limits<float>::min()
                             : std::numeric_limits<double>::min();
}

// Records |got - want| against relative * S + absolute.
void record_scaled(Stats& stats, Dtype dtype, double got, long double want, long double scale,
                   long double relative, long double absolute,
                   const std::function<std::string()>& describe) {
  const double rounded = dtype == Dtype::f32 ? static_cast<double>(static_cast<float>(want))
                                             : static_cast<double>(want);
  if (same_bits(got, rounded)) {
    stats.record_equal();
    return;
  }
  Deviation d;
  const long double error =
      std::isfinite(got) ? std::fabs(static_cast<long double>(got) - want) : INFINITY;
  const double at = static_cast<double>(std::max<long double>(scale, std::fabs(want)));
  d.ulps = static_cast<double>(error / ulp_of(dtype, at));
  if (scale >= normal_floor(dtype)) d.rel = static_cast<double>(error / scale);
  d.within = error <= relative * scale + absolute;
  stats.record(d, describe);
}

class BmmCase : public ComparedCase {
 public:
  BmmCase(Dtype dtype, Extents e, bool ta, bool tb, Pattern pattern, uint64_t key)
      : dtype_(dtype),
        product_(dtype, e, ta, tb),
        ta_(ta),
        tb_(tb),
        pattern_(pattern),
        key_(key),
        bound_(matmul_bound(dtype, e.n)) {}

  std::string op() const override { return "bmm_with_transpose"; }
  Dtype dtype() const override { return dtype_; }
  Bound bound() const override { return Bound::relative(0, "(g_n+u+2g_n(w))*S"); }
  std::string oracle_name() const override { return "a long double dot product"; }
  std::string oracle_label() const override { return "ref vs long double"; }
  Bound oracle_bound() const override { return Bound::relative(0, "(u+3g_n(L))*S"); }
  std::string shape() const override {
    return extents_text(product_.extents(), ta_, tb_) + ", " + pattern_name(pattern_);
  }

  void make_inputs(uint64_t) override { product_.fill(pattern_, key_); }

  HostArrays run(Backend backend) override {
    const Extents& e = product_.extents();
    const HostArray& a = product_.a();
    const HostArray& b = product_.b();
    std::unique_ptr<Buffer> da = upload(backend, a, 0, a.size());
    std::unique_ptr<Buffer> db = upload(backend, b, 0, b.size());
    HostArrays out;
    out.push_back(download(*bmm(*da, *db, e.batch, e.m, e.n, e.p, ta_, tb_, "parity")));
    return out;
  }

  Deviation measure(size_t, uint64_t i, double got, double want, const Bound&) const override {
    Deviation d;
    const long double scale = product_.scale(i);
    const long double error =
        std::isfinite(got) ? std::fabs(static_cast<long double>(got) - want) : INFINITY;
    const double at = static_cast<double>(std::max<long double>(scale, std::fabs(want)));
    d.ulps = static_cast<double>(error / ulp_of(dtype_, at));
    if (scale >= normal_floor(dtype_)) d.rel = static_cast<double>(error / scale);
    d.within = error <= bound_.relative_subject * scale + bound_.absolute_subject;
    return d;
  }

  std::string describe(size_t, uint64_t i, double got, double want) const override {
    return shape() + ", output " + std::to_string(i) + ": " + number(got, dtype_) + ", expected " +
           number(want, dtype_) +
           ", S = " + number(static_cast<double>(product_.scale(i)), Dtype::f64);
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    const HostArray& r = reference[0];
    for (uint64_t i = 0; i < r.size(); ++i) {
      const double got = r.at(i);
      record_scaled(stats, dtype_, got, product_.oracle(i), product_.scale(i),
                    bound_.relative_oracle, bound_.absolute_oracle, [&] {
                      return shape() + ", output " + std::to_string(i) + ": reference " +
                             number(got, dtype_) + ", oracle " +
                             number(static_cast<double>(product_.oracle(i)), Dtype::f64) +
                             ", S = " + number(static_cast<double>(product_.scale(i)), Dtype::f64);
                    });
    }
  }

 private:
  Dtype dtype_;
  Product product_;
  bool ta_, tb_;
  Pattern pattern_;
  uint64_t key_;
  MatmulBound bound_;
};

class DgemmCase : public ComparedCase {
 public:
  DgemmCase(Extents e, Pattern pattern, uint64_t key)
      : product_(Dtype::f64, e, false, false),
        pattern_(pattern),
        key_(key),
        bound_(matmul_bound(Dtype::f64, e.n)) {}

  std::string op() const override { return "dgemm"; }
  Dtype dtype() const override { return Dtype::f64; }
  Bound bound() const override { return Bound::relative(0, "(g_n+u+2g_n(w))*S"); }
  std::string oracle_name() const override { return "a long double dot product"; }
  std::string oracle_label() const override { return "ref vs long double"; }
  Bound oracle_bound() const override { return Bound::relative(0, "(u+3g_n(L))*S"); }
  std::string shape() const override {
    const Extents& e = product_.extents();
    return "m = " + std::to_string(e.m) + ", n = " + std::to_string(e.n) +
           ", p = " + std::to_string(e.p) + ", " + pattern_name(pattern_);
  }

  void make_inputs(uint64_t) override { product_.fill(pattern_, key_); }

  HostArrays run(Backend backend) override {
    const Extents& e = product_.extents();
    const uint64_t outputs =
        dgemm_output_size(product_.a().size(), product_.b().size(), e.m, e.n, e.p, "parity");
    HostArray c(Dtype::f64, outputs);
    dgemm(backend, product_.a().as<double>(), product_.b().as<double>(), c.as<double>(), e.m, e.n,
          e.p, "parity");
    HostArrays out;
    out.push_back(std::move(c));
    return out;
  }

  Deviation measure(size_t, uint64_t i, double got, double want, const Bound&) const override {
    Deviation d;
    const long double scale = product_.scale(i);
    const long double error =
        std::isfinite(got) ? std::fabs(static_cast<long double>(got) - want) : INFINITY;
    const double at = static_cast<double>(std::max<long double>(scale, std::fabs(want)));
    d.ulps = static_cast<double>(error / ulp_of(Dtype::f64, at));
    if (scale >= normal_floor(Dtype::f64)) d.rel = static_cast<double>(error / scale);
    d.within = error <= bound_.relative_subject * scale + bound_.absolute_subject;
    return d;
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    const HostArray& r = reference[0];
    for (uint64_t i = 0; i < r.size(); ++i) {
      const double got = r.at(i);
      record_scaled(stats, Dtype::f64, got, product_.oracle(i), product_.scale(i),
                    bound_.relative_oracle, bound_.absolute_oracle, [&] {
                      return shape() + ", output " + std::to_string(i) + ": reference " +
                             number(got, Dtype::f64) + ", oracle " +
                             number(static_cast<double>(product_.oracle(i)), Dtype::f64);
                    });
    }
  }

 private:
  Product product_;
  Pattern pattern_;
  uint64_t key_;
  MatmulBound bound_;
};

// One random recipe (--shapes) of either op.
struct RandomProduct {
  Extents extents;
  int flags;  // tA in bit 0, tB in bit 1
  Pattern pattern;
};

// Extents drawn one at a time in a random order, each within what those drawn before leave: A, B
// and C at most `budget` elements, batch * m * n * p at most 64 budget multiply-adds; a zero in 4%
// of the draws (a zero extent counts as 1 in the limits). dgemm's batch stays 1, its flags 0.
RandomProduct draw_product(ShapeDraw& shapes, uint64_t budget, bool batched) {
  uint64_t e[4] = {1, 1, 1, 1};  // batch, m, n, p
  struct Limit {
    unsigned extents;  // bit i: e[i] is a factor
    uint64_t most;
  };
  const Limit limits[] = {
      {0b0111, budget}, {0b1101, budget}, {0b1011, budget}, {0b1111, 64 * budget}};
  unsigned order[4] = {0, 1, 2, 3};
  for (unsigned i = 3; i > 0; --i) std::swap(order[i], order[shapes.below(i + 1)]);
  for (unsigned x : order) {
    if (x == 0 && !batched) continue;
    uint64_t most = std::numeric_limits<uint64_t>::max();
    for (const Limit& limit : limits) {
      if ((limit.extents >> x & 1) == 0) continue;
      uint64_t others = 1;
      for (unsigned y = 0; y < 4; ++y) {
        if (y != x && (limit.extents >> y & 1) != 0) others *= std::max<uint64_t>(e[y], 1);
      }
      most = std::min(most, limit.most / others);
    }
    // A cap of most / 2^j (j uniform up to half the bits of most) spreads the budget over the four
    // extents more often.
    unsigned bits = 0;
    while ((most >> bits) > 1) ++bits;
    e[x] = shapes.extent(most >> shapes.below(bits / 2 + 1), 4);
  }
  RandomProduct r;
  r.extents = {static_cast<uint32_t>(e[0]), static_cast<uint32_t>(e[1]),
               static_cast<uint32_t>(e[2]), static_cast<uint32_t>(e[3])};
  r.flags = batched ? static_cast<int>(shapes.below(4)) : 0;
  r.pattern = shapes.pick(std::vector<Pattern>{Pattern::mixed, Pattern::positive, Pattern::tiny});
  return r;
}

CaseList make_matmul_cases(const Options& options) {
  CaseList cases;
  // --shapes: N products of each op, their extents, flags and draw from the seed.
  ShapeDraw shape_draw(options.seed, "matmul");
  const uint64_t budget = random_shape_budget(options);
  std::vector<RandomProduct> random_bmm, random_dgemm;
  for (uint64_t i = 0; i < options.shapes; ++i) {
    random_bmm.push_back(draw_product(shape_draw, budget, true));
    random_dgemm.push_back(draw_product(shape_draw, budget, false));
  }
  // Odd sizes, extents of 1, a long contraction, batches; two shapes whose float32 products of
  // transposed operands take the cuBLASLt route on a device of 132 SMs (132 partial tiles of
  // 128 x 256, one a matrix; 132 tiles, two by two a matrix: kernels::bmm_lt_qualifies); then the
  // zero extents.
  const std::vector<Extents> shapes = {
      {1, 1, 1, 1},       {1, 1, 7, 1},    {1, 17, 1, 13},  {3, 5, 7, 9},       {2, 33, 65, 31},
      {1, 128, 257, 64},  {4, 64, 64, 64}, {1, 3, 4099, 5}, {1, 129, 255, 127}, {132, 4, 8, 4},
      {33, 260, 12, 132}, {2, 3, 0, 4},    {0, 3, 4, 5},    {2, 0, 4, 5},       {1, 3, 4, 0}};
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    const uint64_t base = case_key(options.seed, "bmm_with_transpose", dtype == Dtype::f32);
    uint64_t k = 0;
    for (const Extents& e : shapes) {
      for (int flags = 0; flags < 4; ++flags) {
        for (Pattern pattern : {Pattern::mixed, Pattern::positive, Pattern::tiny}) {
          // The positive and tiny draws on every other flag combination keep the list short.
          if (pattern != Pattern::mixed && flags % 3 != 0) continue;
          cases.push_back(std::make_unique<BmmCase>(dtype, e, flags & 1, flags & 2, pattern,
                                                    splitmix64_finalize(base + k++)));
        }
      }
    }
    for (const RandomProduct& r : random_bmm) {
      cases.push_back(std::make_unique<BmmCase>(dtype, r.extents, r.flags & 1, r.flags & 2,
                                                r.pattern, splitmix64_finalize(base + k++)));
    }
  }
  const std::vector<Extents> dgemm_shapes = {{1, 1, 1, 1},       {1, 5, 7, 3},    {1, 64, 300, 17},
                                             {1, 200, 200, 200}, {1, 1, 4099, 1}, {1, 3, 0, 2},
                                             {1, 0, 3, 2},       {1, 2, 3, 0}};
  const uint64_t base = case_key(options.seed, "dgemm", false);
  uint64_t k = 0;
  for (const Extents& e : dgemm_shapes) {
    for (Pattern pattern : {Pattern::mixed, Pattern::positive, Pattern::tiny}) {
      cases.push_back(std::make_unique<DgemmCase>(e, pattern, splitmix64_finalize(base + k++)));
    }
  }
  for (const RandomProduct& r : random_dgemm) {
    cases.push_back(
        std::make_unique<DgemmCase>(r.extents, r.pattern, splitmix64_finalize(base + k++)));
  }
  return cases;
}

const FamilyRegistration kMatmulFamily("matmul", &make_matmul_cases);

}  // namespace
}  // namespace tlrt::parity
