// Parity cases of the legacy attention pair (symbols-ops.tsv rows 78-79, SPEC-ops 15 and 16):
// attention_fwd (out) and attention_bwd (dQ, dK, dV from the forward's context and a cotangent) in
// float32 and float64, on (batch, n, d) = 1x1x1, 2x5x3, 3x33x17, 4x128x64, 1x257x40 and 2x1000x8
// with and without a mask (density 0.5, every seventh row fully blocked, blocked entries +0 or -0,
// a fifth of the allowed ones NaN), scale 1/sqrt(d), a negative scale and scale 0; special values
// (+inf and NaN in rows of Q: NaN rows; -inf in a blocked row of Q; +inf in V at a blocked row:
// that row's output still +0; NaN in blocked rows of the cotangent: nothing reaches dK or dV);
// peaked rows (|Q|, |K| up to 4, d = 64); the empty shapes (batch, n or d = 0); and with --shapes N
// more recipes drawn from the seed. Operands are uniform in (-1, 1) otherwise.
//
// The order of every sum is free, so each result is judged against the long double oracle of
// tools/parity/attention_oracle.h, which gives the exact value x and one backend's bound b against
// it (docs/NUMERICS.md, "Legacy attention"):
//   subject vs reference:  |y_subject - y_reference| <= b_cuda(x) + b_reference(x)
//   reference vs oracle:   |y_reference - x| <= b_reference(x) + b_oracle(x)
// (b_oracle: the oracle's own long double error), and on both rows: blocked rows (exact +0 in out
// and dQ) +0 bit for bit, NaN where x is NaN, x itself where x is infinite.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/attention_dispatch.h"
#include "tools/parity/attention_oracle.h"
#include "tools/parity/case_key.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;
namespace ora = tlrt::parity::attention;
using LD = long double;

enum class ScaleKind { inv_sqrt_d, negative, zero };

enum class Special {
  none,
  nonfinite_q,  // +inf and NaN in rows of Q (NaN rows), -inf in a blocked row of Q
  inf_v,        // +inf in V at a blocked row
  nan_g,        // NaN in blocked rows of the cotangent, +inf in a blocked row of Q
};

struct Recipe {
  uint64_t batch = 0, n = 0, d = 0;
  bool mask = false;
  ScaleKind scale = ScaleKind::inv_sqrt_d;
  double magnitude = 1;  // Q and K uniform in (-magnitude, magnitude)
  Special special = Special::none;
  uint64_t index = 0;  // the recipe's place in the list: its inputs' key
};

const char* special_name(Special s) {
  switch (s) {
    case Special::none:
      return "";
    case Special::nonfinite_q:
      return ", inf/NaN rows of Q";
    case Special::inf_v:
      return ", inf in V at a blocked row";
    case Special::nan_g:
      return ", NaN in blocked rows of dOut";
  }
  return "";
}

double scale_of(const Recipe& r) {
  switch (r.scale) {
    case ScaleKind::inv_sqrt_d:
      return r.d == 0 ? 1.0 : 1.0 / std::sqrt(static_cast<double>(r.d));
    case ScaleKind::negative:
      return -1.3;
    case ScaleKind::zero:
      return 0.0;
  }
  return 1.0;
}

// Rows i with i % 7 == 3 are fully blocked in masked recipes.
bool blocked_row(uint64_t i) {
  return i % 7 == 3;
}

const char* kOutputs[2][3] = {{"out", "", ""}, {"dQ", "dK", "dV"}};

class AttentionCase : public ParityCase {
 public:
  AttentionCase(Dtype dtype, Recipe r, bool backward, uint64_t key)
      : dtype_(dtype), r_(r), backward_(backward), key_(key), scale_(scale_of(r)) {}

  std::string op() const override { return backward_ ? "attention_bwd" : "attention_fwd"; }
  Dtype dtype() const override { return dtype_; }
  std::string shape() const override {
    return std::to_string(r_.batch) + "x" + std::to_string(r_.n) + "x" + std::to_string(r_.d) +
           (r_.mask ? ", masked" : ", no mask") + ", scale " + number(scale_, Dtype::f32) +
           (r_.magnitude != 1 ? ", |Q|,|K| < " + number(r_.magnitude, Dtype::f32) : "") +
           special_name(r_.special);
  }
  std::vector<double> host_scalars() const override { return {scale_}; }
  std::string oracle_name() const override { return "long double attention"; }

  void evaluate(const RunContext& ctx, RowTable& rows) override {
    Row& vs_reference = rows.row(label(), dtype_, "reference", Bound::relative(0, "b_cuda+b_ref"));
    Row* vs_oracle = ctx.with_oracle ? &rows.row(label(), dtype_, "ref vs long double",
                                                 Bound::relative(0, "b_ref+b_LD"))
                                     : nullptr;
    try {
      make_inputs();
      // The oracle's evaluations run beside the backends: the reference's bounds always; the
      // CUDA bounds when CUDA is the subject (otherwise the subject is the reference itself and
      // only the special-value rules can fail); the oracle's own error for the oracle row.
      const ora::Problem problem = make_problem();
      const bool f32 = dtype_ == Dtype::f32;
      auto later = [&](const ora::Unit& un) {
        return std::async(std::launch::async,
                          [&problem, un] { return ora::evaluate(problem, un); });
      };
      std::future<ora::Exact> sub, self;
      if (ctx.gpu) sub = later(f32 ? ora::cuda_unit<float>() : ora::cuda_unit<double>());
      if (vs_oracle != nullptr) {
        self = later(f32 ? ora::oracle_unit<float>() : ora::oracle_unit<double>());
      }
      const ora::Exact ref = ora::evaluate(
          problem, f32 ? ora::reference_unit<float>() : ora::reference_unit<double>());
      const HostArrays want = run(Backend::reference);
      const HostArrays got = run(ctx.subject);
      ora::Exact sub_exact;
      if (ctx.gpu) sub_exact = sub.get();
      compare(got, want, ref, ctx.gpu ? sub_exact : ref, vs_reference.stats);
      if (vs_oracle != nullptr) check_oracle(want, ref, self.get(), vs_oracle->stats);
    } catch (const std::exception& e) {
      if (vs_reference.error.empty()) vs_reference.error = shape() + ": " + e.what();
    }
  }

 private:
  void set(HostArray& a, uint64_t i, double v) const {
    if (dtype_ == Dtype::f32) {
      a.as<float>()[i] = static_cast<float>(v);
    } else {
      a.as<double>()[i] = v;
    }
  }

  void make_inputs() {
    const uint64_t nd = r_.batch * r_.n * r_.d, nn = r_.batch * r_.n * r_.n;
    q_ = HostArray(dtype_, nd);
    k_ = HostArray(dtype_, nd);
    v_ = HostArray(dtype_, nd);
    g_ = HostArray(dtype_, nd);
    mask_ = HostArray(dtype_, r_.mask ? nn : 0);
    const uint64_t kq = splitmix64_finalize(key_ + 1), kk = splitmix64_finalize(key_ + 2);
    const uint64_t kv = splitmix64_finalize(key_ + 3), kg = splitmix64_finalize(key_ + 4);
    const uint64_t km = splitmix64_finalize(key_ + 5);
    for (uint64_t x = 0; x < nd; ++x) {
      set(q_, x, r_.magnitude * (2 * unit_draw(kq, x) - 1));
      set(k_, x, r_.magnitude * (2 * unit_draw(kk, x) - 1));
      set(v_, x, 2 * unit_draw(kv, x) - 1);
      set(g_, x, 2 * unit_draw(kg, x) - 1);
    }
    for (uint64_t x = 0; x < mask_.size(); ++x) {
      const uint64_t h = splitmix64_finalize(km + x);
      const uint64_t i = x / r_.n % r_.n;
      const bool allowed = !blocked_row(i) && (h >> 11) * 0x1p-53 < 0.5;
      double m = 0;
      if (allowed) {
        m = (h >> 3) % 5 == 0 ? NAN : 1.0;
      } else if (h & 1) {
        m = -0.0;
      }
      set(mask_, x, m);
    }
    // Special values at fixed places (the special recipes are masked and have n >= 18, d >= 3,
    // batch >= 3): rows 3, 10 and 17 of every batch are blocked.
    const uint64_t n = r_.n, d = r_.d;
    auto at = [&](uint64_t b, uint64_t i, uint64_t l) { return (b * n + i) * d + l; };
    switch (r_.special) {
      case Special::none:
        break;
      case Special::nonfinite_q:
        set(q_, at(0, 1, 2), INFINITY);  // scores +-inf: a NaN row
        set(q_, at(2, 5, 0), NAN);       // NaN scores: a NaN row
        for (uint64_t l = 0; l < d; ++l) set(q_, at(1, 3, l), -INFINITY);  // blocked row
        break;
      case Special::inf_v:
        set(v_, at(0, 3, 1), INFINITY);  // key row 3 of batch 0, a blocked query row
        break;
      case Special::nan_g:
        for (uint64_t l = 0; l < d; ++l) set(g_, at(0, 3, l), NAN);
        set(g_, at(1, 10, 0), NAN);
        set(q_, at(2, 17, 1), INFINITY);
        break;
    }
  }

  ora::Problem make_problem() const {
    ora::Problem p;
    p.batch = r_.batch;
    p.n = r_.n;
    p.d = r_.d;
    p.alpha = dtype_ == Dtype::f32 ? static_cast<LD>(static_cast<float>(scale_))
                                   : static_cast<LD>(scale_);
    p.has_mask = r_.mask;
    auto widen = [](const HostArray& a) {
      std::vector<LD> w(a.size());
      for (uint64_t x = 0; x < a.size(); ++x) w[x] = a.at(x);
      return w;
    };
    p.q = widen(q_);
    p.k = widen(k_);
    p.v = widen(v_);
    p.mask = widen(mask_);
    if (backward_) p.g = widen(g_);
    return p;
  }

  HostArrays run(Backend backend) const {
    const std::unique_ptr<Buffer> q = upload(backend, q_, 0, q_.size());
    const std::unique_ptr<Buffer> k = upload(backend, k_, 0, k_.size());
    const std::unique_ptr<Buffer> v = upload(backend, v_, 0, v_.size());
    std::unique_ptr<Buffer> mask;
    if (r_.mask) mask = upload(backend, mask_, 0, mask_.size());
    const std::unique_ptr<Buffer> out = attention_fwd(*q, *k, *v, mask.get(), r_.mask ? 1 : 0,
                                                      r_.batch, r_.n, r_.d, scale_, "parity");
    HostArrays results;
    if (!backward_) {
      results.push_back(download(*out));
      return results;
    }
    const std::unique_ptr<Buffer> g = upload(backend, g_, 0, g_.size());
    AttentionGrads grads = attention_bwd(*out, *g, "parity");
    results.push_back(download(*grads.dq));
    results.push_back(download(*grads.dk));
    results.push_back(download(*grads.dv));
    return results;
  }

  // Output o's exact values and the bounds of one side.
  static const std::vector<LD>& exact_of(const ora::Exact& e, bool backward, size_t o) {
    if (!backward) return e.out;
    return o == 0 ? e.dq : o == 1 ? e.dk : e.dv;
  }
  static const std::vector<LD>& bound_of(const ora::Exact& e, bool backward, size_t o) {
    if (!backward) return e.out_bound;
    return o == 0 ? e.dq_bound : o == 1 ? e.dk_bound : e.dv_bound;
  }
  // out and dQ of a blocked row: +0 on every backend.
  bool zero_row(const ora::Exact& e, size_t o, uint64_t x) const {
    return (o == 0) && r_.d != 0 && e.blocked[x / r_.d] != 0;
  }

  std::string where(size_t o, uint64_t x) const {
    const uint64_t d = r_.d, n = r_.n;
    return shape() + ", " + kOutputs[backward_][o] + "[" + std::to_string(x / d / n) + ", " +
           std::to_string(x / d % n) + ", " + std::to_string(x % d) + "]";
  }

  // Records one element: equal bits (and the rule met) counts as equal.
  static void record(Stats& stats, bool same, bool within, double ulps, double rel,
                     const std::function<std::string()>& describe) {
    if (same && within) {
      stats.record_equal();
      return;
    }
    Deviation dev;
    dev.ulps = within ? ulps : INFINITY;
    dev.rel = rel;
    dev.within = within;
    stats.record(dev, describe);
  }

  // The rules of the header for a value y against the exact x: +0 bits on blocked rows, NaN for
  // NaN, x itself for an infinite x; otherwise finite (the distance is checked by the caller).
  static bool special_rule(bool zero, LD x, double y, bool& decided) {
    decided = true;
    if (zero) return same_bits(y, 0.0);
    if (std::isnan(x)) return std::isnan(y);
    if (std::isinf(x)) return static_cast<LD>(y) == x;
    decided = false;
    return std::isfinite(y);
  }

  void compare(const HostArrays& got, const HostArrays& want, const ora::Exact& ref,
               const ora::Exact& sub, Stats& stats) const {
    for (size_t o = 0; o < want.size(); ++o) {
      const std::vector<LD>& x = exact_of(ref, backward_, o);
      const std::vector<LD>& br = bound_of(ref, backward_, o);
      const std::vector<LD>& bs = bound_of(sub, backward_, o);
      for (uint64_t i = 0; i < want[o].size(); ++i) {
        const double s = got[o].at(i), r = want[o].at(i);
        const bool zero = zero_row(ref, o, i);
        bool decided = false;  // the same for both sides: it depends on the exact value only
        bool within = special_rule(zero, x[i], s, decided) && special_rule(zero, x[i], r, decided);
        const LD allowed = bs[i] + br[i];
        const LD err = std::fabs(static_cast<LD>(s) - static_cast<LD>(r));
        if (within && !decided) within = err <= allowed;
        const double rel = !decided && std::isfinite(s) && std::isfinite(r) && r != 0
                               ? static_cast<double>(err / std::fabs(r))
                               : NAN;
        record(stats, same_bits(s, r), within, ulps_between(s, r, dtype_), rel, [&] {
          return where(o, i) + ": " + number(s, dtype_) + ", reference " + number(r, dtype_) +
                 ", exact " + number(static_cast<double>(x[i]), Dtype::f64) + ", allowed " +
                 number(static_cast<double>(allowed), Dtype::f64);
        });
      }
    }
  }

  void check_oracle(const HostArrays& reference, const ora::Exact& ref, const ora::Exact& self,
                    Stats& stats) const {
    for (size_t o = 0; o < reference.size(); ++o) {
      const std::vector<LD>& x = exact_of(ref, backward_, o);
      const std::vector<LD>& br = bound_of(ref, backward_, o);
      const std::vector<LD>& bo = bound_of(self, backward_, o);
      for (uint64_t i = 0; i < reference[o].size(); ++i) {
        const double r = reference[o].at(i);
        const bool zero = zero_row(ref, o, i);
        bool decided = false;
        bool within = special_rule(zero, x[i], r, decided);
        const LD allowed = br[i] + bo[i];
        const LD err = decided ? 0 : std::fabs(static_cast<LD>(r) - x[i]);
        if (within && !decided) within = err <= allowed;
        const double rounded = dtype_ == Dtype::f32 ? static_cast<double>(static_cast<float>(x[i]))
                                                    : static_cast<double>(x[i]);
        const bool same = decided ? within : same_bits(r, rounded);
        const double ulps = static_cast<double>(err) / ulp_of(dtype_, rounded);
        const double rel = !decided && x[i] != 0 ? static_cast<double>(err / std::fabs(x[i])) : NAN;
        record(stats, same, within, ulps, rel, [&] {
          return where(o, i) + ": reference " + number(r, dtype_) + ", oracle " +
                 number(static_cast<double>(x[i]), Dtype::f64) + ", allowed " +
                 number(static_cast<double>(allowed), Dtype::f64);
        });
      }
    }
  }

  Dtype dtype_;
  Recipe r_;
  bool backward_;
  uint64_t key_;
  double scale_;
  HostArray q_, k_, v_, g_, mask_;
};

// --shapes: batch, n and d (0 included in a few draws), mask, scale and peaked rows drawn; a
// quarter masked with one of the special-value patterns, as the fixed ones (batch >= 3, n >= 18,
// d >= 3, scale 1/sqrt(d), |Q|, |K| < 1). The largest of batch, n and d is halved until the scores
// (batch x n x n) and the operands fit the budget and batch x n x n x d fits `work`.
Recipe random_recipe(ShapeDraw& draw, uint64_t budget, uint64_t work) {
  Recipe r;
  const bool special = draw.percent(25);
  const uint64_t least_batch = special ? 3 : 0, least_n = special ? 18 : 0;
  const uint64_t least_d = special ? 3 : 0;
  const unsigned empty = special ? 0 : 4;  // percent of the draws with an empty extent
  r.batch = std::max(least_batch, draw.extent(8, empty));
  const double per_batch = static_cast<double>(budget / std::max<uint64_t>(r.batch, 1));
  r.n = std::max(least_n, draw.extent(static_cast<uint64_t>(std::sqrt(per_batch)), empty));
  r.d = std::max(least_d, draw.extent(256, empty));
  r.mask = special || draw.percent(50);
  if (special) {
    r.special =
        draw.pick(std::vector<Special>{Special::nonfinite_q, Special::inf_v, Special::nan_g});
    if (draw.percent(25)) r.scale = ScaleKind::zero;  // q and k unread: their specials vanish
  } else {
    const uint64_t scale = draw.below(20);
    r.scale = scale < 14   ? ScaleKind::inv_sqrt_d
              : scale < 17 ? ScaleKind::negative
                           : ScaleKind::zero;
    if (draw.percent(15)) r.magnitude = 4.0;
  }
  for (;;) {
    const uint64_t rows = r.batch * r.n;
    if (rows * r.n <= budget && rows * r.d <= budget && rows * r.n * r.d <= work) break;
    uint64_t* largest = nullptr;
    for (auto [v, least] :
         {std::pair{&r.batch, least_batch}, std::pair{&r.n, least_n}, std::pair{&r.d, least_d}}) {
      if (*v / 2 >= std::max<uint64_t>(least, 1) && (largest == nullptr || *v > *largest))
        largest = v;
    }
    if (largest == nullptr) break;
    *largest /= 2;
  }
  return r;
}

CaseList make_attention_cases(const Options& options) {
  std::vector<Recipe> recipes;
  auto add = [&](Recipe r) {
    r.index = recipes.size();
    recipes.push_back(r);
  };
  struct Shape {
    uint64_t batch, n, d;
  };
  for (const Shape& s : {Shape{1, 1, 1}, Shape{2, 5, 3}, Shape{3, 33, 17}, Shape{4, 128, 64},
                         Shape{1, 257, 40}, Shape{2, 1000, 8}}) {
    for (bool mask : {false, true}) add(Recipe{s.batch, s.n, s.d, mask});
  }
  add(Recipe{2, 5, 3, false, ScaleKind::negative});
  add(Recipe{3, 33, 17, true, ScaleKind::negative});
  add(Recipe{2, 5, 3, true, ScaleKind::zero});
  add(Recipe{4, 128, 64, false, ScaleKind::zero});
  // Peaked rows: scores with a standard deviation of about 5, up to 128 in magnitude.
  add(Recipe{2, 128, 64, false, ScaleKind::inv_sqrt_d, 4.0});
  add(Recipe{2, 128, 64, true, ScaleKind::inv_sqrt_d, 4.0});
  for (Special sp : {Special::nonfinite_q, Special::inf_v, Special::nan_g}) {
    add(Recipe{3, 33, 17, true, ScaleKind::inv_sqrt_d, 1.0, sp});
  }
  for (const Shape& s : {Shape{0, 5, 3}, Shape{2, 0, 3}, Shape{2, 5, 0}}) {
    for (bool mask : {false, true}) add(Recipe{s.batch, s.n, s.d, mask});
  }
  // --shapes: the drawn recipes, after the fixed ones (their inputs' keys stay the same), with
  // batch x n x n x d within 64 x 2^19 (the oracle evaluates in long double, twice).
  ShapeDraw draw(options.seed, "attention");
  const uint64_t budget = random_shape_budget(options);
  const uint64_t work = 64 * std::min<uint64_t>(budget, uint64_t{1} << 19);
  for (uint64_t i = 0; i < options.shapes; ++i) add(random_recipe(draw, budget, work));
  CaseList cases;
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    const uint64_t base = case_key(options.seed, "attention", dtype == Dtype::f32);
    for (const Recipe& r : recipes) {
      // The forward and backward cases of a recipe draw the same inputs.
      const uint64_t key = splitmix64_finalize(base + r.index);
      for (bool backward : {false, true}) {
        cases.push_back(std::make_unique<AttentionCase>(dtype, r, backward, key));
      }
    }
  }
  return cases;
}

const FamilyRegistration kAttentionFamily("attention", &make_attention_cases);

}  // namespace
}  // namespace tlrt::parity
