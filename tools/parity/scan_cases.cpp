// Parity cases of the diagonal selective scans (SPEC-ops 13), all four ops in float32 and float64:
//   * "<op>": the subject with the deterministic setting off (on the device: the fast
//     schedules, resident, rows or chunked by shape) against the reference backend, within the
//     per-element bound of
//     docs/NUMERICS.md ("Diagonal selective scans"), computed by kernels/scan/scan_bound.h from
//     the absolute-value recurrence H of each element's channel and the composition depth;
//   * "<op> [deterministic]": the subject with the setting on (one thread per channel, the literal
//     recurrence), bit-exact against the reference backend.
// Shapes: T and S from {1, 2, 3, 17, 1000, 4096} in pairs that reach both the channel-parallel and
// the time-parallel extremes, T = 100000 x S = 4, and T 2048 x S 1028 (the float32 slab
// schedule of the forwards and the constant backward, the last block partial), and with --shapes N
// more (T, S) drawn from the seed. Inputs: |A| < 1 in most channels, |A| in [1, 1.01) in every
// seventh; B, X, h0, out, dY in [-1, 1]; the "specials" recipes put NaN and
// +-inf into X and dY (where the reference is NaN the subject must be NaN; where H is not finite
// the bound says nothing else). The oracle (without a GPU, or with --oracle) checks the reference
// backend bit for bit against an independent host recurrence.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "kernels/scan/scan_bound.h"
#include "runtime/scan_dispatch.h"
#include "runtime/settings.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;

struct Recipe {
  uint64_t steps = 0, state = 0;
  bool specials = false;
  uint64_t key = 0;
};

const char* op_name(bool backward, bool variable) {
  if (backward) return variable ? "selective_scan_diag_var_bwd" : "selective_scan_diag_bwd";
  return variable ? "selective_scan_diag_var_fwd" : "selective_scan_diag_fwd";
}

// Sets the deterministic setting for one run and restores it.
class SettingScope {
 public:
  explicit SettingScope(bool on) : saved_(get_setting(2)) { set_setting(2, on ? 1 : 0); }
  ~SettingScope() { set_setting(2, saved_); }
  SettingScope(const SettingScope&) = delete;
  SettingScope& operator=(const SettingScope&) = delete;

 private:
  uint32_t saved_;
};

class ScanCase : public ComparedCase {
 public:
  ScanCase(bool backward, bool variable, bool exact, Dtype dtype, Recipe r)
      : backward_(backward), variable_(variable), exact_(exact), dtype_(dtype), r_(r) {}

  std::string op() const override { return op_name(backward_, variable_); }
  std::string label() const override { return op() + (exact_ ? " [deterministic]" : ""); }
  Dtype dtype() const override { return dtype_; }
  std::string shape() const override {
    return "T = " + std::to_string(r_.steps) + ", S = " + std::to_string(r_.state) +
           (r_.specials ? ", NaN/inf" : "");
  }
  uint64_t steps() const override { return 1; }
  Bound bound() const override {
    return exact_ ? Bound::bit_exact() : Bound::relative(0, "<= (g_2(t+1)+1 + g_2d+t+2) H");
  }
  std::string oracle_name() const override { return exact_ ? "host recurrence" : ""; }
  std::string oracle_label() const override { return "ref vs host"; }
  Bound oracle_bound() const override { return Bound::bit_exact(); }

  void make_inputs(uint64_t seed) override {
    const uint64_t n = r_.steps * r_.state, s = r_.state;
    const uint64_t nc = variable_ ? n : s;
    const uint64_t key = splitmix64_finalize(seed ^ r_.key);
    uint64_t counter = 0;
    auto unit = [&]() {
      const uint64_t h = splitmix64_finalize(key + counter++);
      return static_cast<double>(h >> 11) / static_cast<double>(uint64_t{1} << 53) * 2.0 - 1.0;
    };
    a_ = HostArray(dtype_, nc);
    b_ = HostArray(dtype_, nc);
    x_ = HostArray(dtype_, n);
    h0_ = HostArray(dtype_, s);
    out_ = HostArray(dtype_, n);
    dy_ = HostArray(dtype_, n);
    for (uint64_t i = 0; i < nc; ++i) {
      const uint64_t channel = i % s;
      const double u = unit();
      // Every seventh channel slightly expansive, the rest contractive.
      const double a = channel % 7 == 3 ? std::copysign(1.0 + 0.01 * std::fabs(u), u) : 0.999 * u;
      set(a_, i, a);
      set(b_, i, unit());
    }
    for (uint64_t i = 0; i < n; ++i) {
      set(x_, i, unit());
      set(out_, i, unit());
      set(dy_, i, unit());
    }
    for (uint64_t j = 0; j < s; ++j) set(h0_, j, unit());
    if (r_.specials && n > 8) {
      set(x_, n / 3, NAN);
      set(x_, n / 2 + 1, INFINITY);
      set(dy_, n / 5, -INFINITY);
      set(dy_, (2 * n) / 3, NAN);
    }
    if (!exact_) compute_bounds();
  }

  HostArrays run(Backend backend) override {
    SettingScope setting(exact_);
    const auto a = upload(backend, a_, 0, a_.size());
    const auto b = upload(backend, b_, 0, b_.size());
    const auto x = upload(backend, x_, 0, x_.size());
    const auto h0 = upload(backend, h0_, 0, h0_.size());
    const char* op = "parity";
    if (!backward_) {
      return {download(*selective_scan_fwd(*a, *b, *x, *h0, r_.steps, r_.state, variable_, op))};
    }
    const auto out = upload(backend, out_, 0, out_.size());
    const auto dy = upload(backend, dy_, 0, dy_.size());
    ScanGradientBuffers g =
        selective_scan_bwd(*a, *b, *x, *h0, *out, *dy, r_.steps, r_.state, variable_, op);
    return {download(*g.da), download(*g.db), download(*g.dx), download(*g.dh0)};
  }

  Deviation measure(size_t output, uint64_t i, double got, double want,
                    const Bound& bound) const override {
    Deviation d;
    d.ulps = ulps_between(got, want, dtype_);
    if (std::isfinite(got) && std::isfinite(want) && want != 0) {
      d.rel = std::fabs(got - want) / std::fabs(want);
    }
    if (bound.kind != Bound::Kind::relative || output >= bounds_.size()) return d;
    const double allowed = bounds_[output][i];
    if (std::isnan(want)) {
      d.within = false;  // the reference is NaN: so must the subject be
    } else if (!std::isfinite(allowed)) {
      d.within = true;  // H overflowed or met an infinity: the bound allows anything but NaN
    } else {
      d.within = std::fabs(got - want) <= allowed;
    }
    return d;
  }

  std::string describe(size_t output, uint64_t i, double got, double want) const override {
    std::string s = "output " + std::to_string(output) + " element " + std::to_string(i) +
                    " (t = " + std::to_string(i / r_.state) + "): " + number(got, dtype_) +
                    ", expected " + number(want, dtype_);
    if (!exact_ && output < bounds_.size() && i < bounds_[output].size()) {
      s += ", bound " + number(bounds_[output][i], Dtype::f64);
    }
    return s;
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    const HostArrays want = dtype_ == Dtype::f32 ? host<float>() : host<double>();
    for (size_t o = 0; o < want.size() && o < reference.size(); ++o) {
      for (uint64_t i = 0; i < want[o].size() && i < reference[o].size(); ++i) {
        const double g = reference[o].at(i), w = want[o].at(i);
        if (same_bits(g, w)) {
          stats.record_equal();
        } else {
          Deviation d;
          d.ulps = ulps_between(g, w, dtype_);
          stats.record(d, [&] { return describe(o, i, g, w); });
        }
      }
    }
  }

 private:
  static void set(HostArray& a, uint64_t i, double v) {
    if (a.dtype() == Dtype::f32) {
      a.as<float>()[i] = static_cast<float>(v);
    } else {
      a.as<double>()[i] = v;
    }
  }

  template <class T>
  kernels::ScanOperands<T> operands() const {
    return {a_.as<T>(), b_.as<T>(), x_.as<T>(), h0_.as<T>(), r_.steps, r_.state, variable_};
  }

  template <class T>
  void bounds_for() {
    auto widen = [](const std::vector<long double>& v) {
      return std::vector<double>(v.begin(), v.end());
    };
    bounds_.clear();
    if (!backward_) {
      bounds_.push_back(widen(kernels::selective_scan_fwd_bound(operands<T>())));
      return;
    }
    const kernels::ScanGradientBound g =
        kernels::selective_scan_bwd_bound(operands<T>(), out_.as<T>(), dy_.as<T>());
    for (const auto* v : {&g.da, &g.db, &g.dx, &g.dh0}) bounds_.push_back(widen(*v));
  }

  void compute_bounds() {
    if (dtype_ == Dtype::f32) {
      bounds_for<float>();
    } else {
      bounds_for<double>();
    }
  }

  // The spec's recurrences, literally, per channel (independent of kernels/scan/scan_ref.cpp,
  // which runs time-major).
  template <class T>
  HostArrays host() const {
    const uint64_t steps = r_.steps, s = r_.state;
    const T* A = a_.as<T>();
    const T* B = b_.as<T>();
    const T* X = x_.as<T>();
    const T* H0 = h0_.as<T>();
    const T* OUT = out_.as<T>();
    const T* DY = dy_.as<T>();
    auto coef = [&](const T* p, uint64_t t, uint64_t j) { return variable_ ? p[t * s + j] : p[j]; };
    if (!backward_) {
      HostArray h(dtype_, steps * s);
      for (uint64_t j = 0; j < s; ++j) {
        T state = H0[j];
        for (uint64_t t = 0; t < steps; ++t) {
          const T bx = coef(B, t, j) * X[t * s + j];
          const T ah = coef(A, t, j) * state;
          state = ah + bx;
          h.as<T>()[t * s + j] = state;
        }
      }
      return {h};
    }
    const uint64_t nc = variable_ ? steps * s : s;
    HostArray da(dtype_, nc), db(dtype_, nc), dx(dtype_, steps * s), dh0(dtype_, s);
    for (uint64_t j = 0; j < s; ++j) {
      T g = T(0), sa = T(0), sb = T(0);
      for (uint64_t k = 0; k < steps; ++k) {
        const uint64_t t = steps - 1 - k;
        const uint64_t i = t * s + j;
        if (k == 0) {
          g = T(0) + DY[i];
        } else {
          const T ag = coef(A, t + 1, j) * g;
          g = ag + DY[i];
        }
        const T hp = t == 0 ? H0[j] : OUT[i - s];
        const T pa = g * hp;
        const T pb = g * X[i];
        dx.as<T>()[i] = g * coef(B, t, j);
        if (variable_) {
          da.as<T>()[i] = pa;
          db.as<T>()[i] = pb;
        } else {
          sa = sa + pa;
          sb = sb + pb;
        }
      }
      if (!variable_) {
        da.as<T>()[j] = sa;
        db.as<T>()[j] = sb;
      }
      dh0.as<T>()[j] = steps == 0 ? T(0) : g * A[j];
    }
    return {da, db, dx, dh0};
  }

  bool backward_, variable_, exact_;
  Dtype dtype_;
  Recipe r_;
  HostArray a_, b_, x_, h0_, out_, dy_;
  std::vector<std::vector<double>> bounds_;  // per output, per element (fast rows)
};

CaseList make_scan_cases(const Options& options) {
  CaseList list;
  const std::pair<uint64_t, uint64_t> shapes[] = {
      {1, 1},      {2, 3},       {3, 17},      {17, 2},    {1000, 3},    {3, 1000},
      {17, 1000},  {1000, 17},   {4096, 17},   {17, 4096}, {1000, 1000}, {4096, 64},
      {100000, 4}, {10000, 100}, {2048, 1028}, {0, 3},     {3, 0}};
  uint64_t key = 0x5ca9;
  std::vector<Recipe> recipes;
  for (auto [steps, state] : shapes) {
    for (bool specials : {false, true}) {
      if (specials && steps * state < 64) continue;
      recipes.push_back({steps, state, specials, key++});
    }
  }
  // --shapes: T and S drawn within the element budget (empty ones included), a third with
  // special values.
  ShapeDraw draw(options.seed, "scan");
  const uint64_t budget = random_shape_budget(options);
  for (uint64_t i = 0; i < options.shapes; ++i) {
    const std::vector<uint64_t> ts = draw.dims(2, budget);
    recipes.push_back({ts[0], ts[1], ts[0] * ts[1] >= 64 && draw.percent(33), key++});
  }
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    for (bool backward : {false, true}) {
      for (bool variable : {false, true}) {
        for (bool exact : {false, true}) {
          for (const Recipe& r : recipes) {
            list.push_back(std::make_unique<ScanCase>(backward, variable, exact, dtype, r));
          }
        }
      }
    }
  }
  return list;
}

}  // namespace

const FamilyRegistration kScanFamily("scan", &make_scan_cases);

}  // namespace tlrt::parity
