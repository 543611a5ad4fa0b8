// Parity cases of layer normalization (SPEC-ops 9): layer_norm_fwd and layer_norm_bwd in float32
// and float64 on rows of 1, 2, 3, 31, 1024, 4097 and 20000 columns (as many rows as --n allows,
// up to 2048), drawn as mixed values, rows with a large common offset (1e6, noise of order 1), rows
// of which every third is constant, and for the forward a special pattern (a row holding NaN, a row
// holding inf, rows of magnitude 1e30 / 1e150, and epsilon = 0 on a constant row, which gives 0/0);
// with --shapes N, N more (rows, cols, pattern) drawn from the seed.
// The sums' order is free, so results are compared element by element within the bounds derived in
// docs/NUMERICS.md ("Layer normalization"), each computed per element on the host:
//
//   forward, with n = cols, u the dtype's unit roundoff, u_d = 2^-53, A = mean |x| of the row,
//   sd the row's standard deviation and D = gamma_{n+1}(u_d) A / sd (the binary64 mean's error
//   seen through the division):
//     xhat:   |h_s - h_r| <= 2u|h| + 2 (D + (gamma_{n+4}(u_d) + D^2) |h|)
//     invStd: |i_s - i_r| <= (2u + gamma_{n+6}(u_d) + D^2) |i|
//     y:      |y_s - y_r| <= |gamma_j| bound(xhat) + 2u (|h gamma_j| + |y|)
//   backward, with S1 = sum |q|, S2 = sum |fl(q xhat)| over the row, u_w the unit roundoff of the
//   reference's wide format (2^-53 for float32, 2^-64 for float64) and u_s = 2^-53 the subject's:
//     s1, s2: D1 = 2u|s1| + (gamma_n(u_w) + gamma_n(u_s)) S1, D2 likewise with S2
//     dx:     (D1 + |xhat| D2 + 2u (2|q cs| + 2|s1| + 3|xhat s2|)) |invStd invCols| + 4u|dx|
//     dGamma: 2u|dGamma| + (gamma_rows(u_w) + gamma_rows(u_s)) sum |fl(dy xhat)|, dBeta alike.
// Each allowance is widened by (1 + 8u) and four of the dtype's smallest subnormals.
//
// Without a GPU the reference is measured against an oracle: the forward's statistics in long
// double (xhat and invStd within the same bound with u_d replaced by u_d + 2^-64: the oracle's
// values are rounded to the dtype too, hence the same 2u), and y against fl(fl(xhat_r * gamma) +
// beta) from the reference's own xhat, bit for bit (the staging of y); the backward's s1, s2 and
// column sums in long double with the staged roundings of dx in the dtype.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/layer_norm_dispatch.h"
#include "tools/parity/case_key.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;

enum class Pattern { mixed, offset, constant, special };

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::mixed:
      return "mixed";
    case Pattern::offset:
      return "large common offset";
    case Pattern::constant:
      return "every third row constant";
    case Pattern::special:
      return "NaN, inf and huge rows";
  }
  return "";
}

long double gamma_of(uint64_t k, long double u) {
  const long double ku = static_cast<long double>(k) * u;
  return ku / (1 - ku);
}

double unit_roundoff(Dtype dtype) {
  return dtype == Dtype::f32 ? 0x1p-24 : 0x1p-53;
}

double tiny_of(Dtype dtype) {
  return dtype == Dtype::f32 ? std::numeric_limits<float>::denorm_min()
                             : std::numeric_limits<double>::denorm_min();
}

double round_to(Dtype dtype, long double v) {
  return dtype == Dtype::f32 ? static_cast<double>(static_cast<float>(v)) : static_cast<double>(v);
}

std::string shape_text(uint64_t rows, uint64_t cols, Pattern p) {
  return "rows = " + std::to_string(rows) + ", cols = " + std::to_string(cols) + ", " +
         pattern_name(p);
}

// Element-wise allowances of one output.
using Allowance = std::vector<double>;

Deviation deviation(Dtype dtype, double got, double want, double allowed) {
  Deviation d;
  const double error = std::isfinite(got) && std::isfinite(want) ? std::fabs(got - want) : INFINITY;
  d.ulps = error / ulp_of(dtype, want);
  if (std::fabs(want) >= tiny_of(dtype) && std::isfinite(error)) d.rel = error / std::fabs(want);
  d.within = error <= allowed;
  return d;
}

void record_against(Stats& stats, Dtype dtype, double got, double want, double allowed,
                    const std::function<std::string()>& describe) {
  if (same_bits(got, want)) {
    stats.record_equal();
    return;
  }
  stats.record(deviation(dtype, got, want, allowed), describe);
}

const char* kForwardOutputs[] = {"y", "xhat", "invStd"};
const char* kBackwardOutputs[] = {"dx", "dGamma", "dBeta"};

// ---------------------------------------------------------------------------------------------

class ForwardCase : public ComparedCase {
 public:
  ForwardCase(Dtype dtype, uint64_t rows, uint64_t cols, Pattern pattern, uint64_t key)
      : dtype_(dtype), rows_(rows), cols_(cols), pattern_(pattern), key_(key) {}

  std::string op() const override { return "layer_norm_fwd"; }
  Dtype dtype() const override { return dtype_; }
  Bound bound() const override { return Bound::relative(0, "2u|h|+2(D+(g_n+D^2)|h|) per row"); }
  std::string shape() const override { return shape_text(rows_, cols_, pattern_); }
  std::vector<double> host_scalars() const override { return {epsilon_}; }
  std::string oracle_name() const override { return "long double statistics"; }
  std::string oracle_label() const override { return "ref vs long double"; }

  void make_inputs(uint64_t) override {
    const uint64_t n = rows_ * cols_;
    x_ = HostArray(dtype_, n);
    gamma_ = HostArray(dtype_, cols_);
    beta_ = HostArray(dtype_, cols_);
    const bool f32 = dtype_ == Dtype::f32;
    epsilon_ = 1e-5;
    for (uint64_t r = 0; r < rows_; ++r) {
      for (uint64_t j = 0; j < cols_; ++j) {
        const uint64_t i = r * cols_ + j;
        const double w = 2 * unit_draw(key_, i) - 1;
        double v = w * 3;
        switch (pattern_) {
          case Pattern::mixed:
            break;
          case Pattern::offset:
            v = 1e6 + w;
            break;
          case Pattern::constant:
            if (r % 3 == 0) v = 2.5 + static_cast<double>(r);
            break;
          case Pattern::special:
            if (r % 5 == 1) v = w * (f32 ? 1e30 : 1e150);
            if (r % 5 == 2 && j == cols_ / 2) v = NAN;
            if (r % 5 == 3 && j == 0) v = INFINITY;
            if (r % 5 == 4) v = 7;  // constant, with epsilon 0 below when rows_ == 5
            break;
        }
        set(x_, i, v);
      }
    }
    if (pattern_ == Pattern::special && rows_ == 5) epsilon_ = 0;
    for (uint64_t j = 0; j < cols_; ++j) {
      set(gamma_, j, 0.5 + unit_draw(~key_, j));
      set(beta_, j, 2 * unit_draw(key_ ^ 0x5555, j) - 1);
    }
    compute_oracle();
  }

  HostArrays run(Backend backend) override {
    std::unique_ptr<Buffer> x = upload(backend, x_, 0, x_.size());
    std::unique_ptr<Buffer> g = upload(backend, gamma_, 0, gamma_.size());
    std::unique_ptr<Buffer> b = upload(backend, beta_, 0, beta_.size());
    LayerNormResults r = layer_norm_fwd(*x, *g, *b, rows_, cols_, epsilon_, "parity");
    HostArrays out;
    for (auto& buffer : r) out.push_back(download(*buffer));
    return out;
  }

  Deviation measure(size_t output, uint64_t i, double got, double want,
                    const Bound&) const override {
    return deviation(dtype_, got, want, allow_[output][i]);
  }

  std::string describe(size_t output, uint64_t i, double got, double want) const override {
    return shape() + ", " + kForwardOutputs[output] + "[" + std::to_string(i) +
           "]: " + number(got, dtype_) + ", expected " + number(want, dtype_) + ", allowed " +
           number(allow_[output][i], Dtype::f64);
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    for (uint64_t i = 0; i < rows_ * cols_; ++i) {
      const double h = reference[1].at(i);
      const double y = reference[0].at(i);
      // y staged from the reference's own xhat: bit for bit.
      const double want_y = staged_y(h, i % cols_);
      record_against(stats, dtype_, y, want_y, 0.0, [&] {
        return shape() + ", y[" + std::to_string(i) + "]: reference " + number(y, dtype_) +
               ", staged from its xhat " + number(want_y, dtype_);
      });
      record_against(stats, dtype_, h, oracle_h_[i], oracle_allow_h_[i], [&] {
        return shape() + ", xhat[" + std::to_string(i) + "]: reference " + number(h, dtype_) +
               ", oracle " + number(oracle_h_[i], dtype_);
      });
    }
    for (uint64_t r = 0; r < rows_; ++r) {
      const double got = reference[2].at(r);
      record_against(stats, dtype_, got, oracle_i_[r], oracle_allow_i_[r], [&] {
        return shape() + ", invStd[" + std::to_string(r) + "]: reference " + number(got, dtype_) +
               ", oracle " + number(oracle_i_[r], dtype_);
      });
    }
  }

 private:
  void set(HostArray& a, uint64_t i, double v) {
    if (dtype_ == Dtype::f32) {
      a.as<float>()[i] = static_cast<float>(v);
    } else {
      a.as<double>()[i] = v;
    }
  }

  // fl(fl(h * gamma_j) + beta_j) in the dtype.
  double staged_y(double h, uint64_t j) const {
    if (dtype_ == Dtype::f32) {
      const float p = static_cast<float>(h) * gamma_.as<float>()[j];
      const float y = p + beta_.as<float>()[j];
      return y;
    }
    const double p = h * gamma_.as<double>()[j];
    const double y = p + beta_.as<double>()[j];
    return y;
  }

  void compute_oracle() {
    const double u = unit_roundoff(dtype_);
    const long double ud = 0x1p-53L, ul = 0x1p-64L;
    const double slack = 1 + 8 * u, tiny = 4 * tiny_of(dtype_);
    const uint64_t n = cols_;
    allow_.assign(3, Allowance());
    allow_[0].assign(rows_ * n, 0);
    allow_[1].assign(rows_ * n, 0);
    allow_[2].assign(rows_, 0);
    oracle_h_.assign(rows_ * n, 0);
    oracle_allow_h_.assign(rows_ * n, 0);
    oracle_i_.assign(rows_, 0);
    oracle_allow_i_.assign(rows_, 0);
    for (uint64_t r = 0; r < rows_; ++r) {
      long double sum = 0, abs_sum = 0;
      for (uint64_t j = 0; j < n; ++j) {
        const long double v = x_.at(r * n + j);
        sum += v;
        abs_sum += std::fabs(v);
      }
      const long double mu = sum / n;
      long double sq = 0;
      for (uint64_t j = 0; j < n; ++j) {
        const long double c = x_.at(r * n + j) - mu;
        sq += c * c;
      }
      const long double sd = std::sqrt(sq / n + static_cast<long double>(epsilon_));
      const long double a = abs_sum / n;
      const long double d_sub = gamma_of(n + 1, ud) * a / sd;
      const long double d_ora = (gamma_of(n + 1, ud) + gamma_of(n + 1, ul)) * a / sd;
      const long double g_sub = gamma_of(n + 4, ud), g_ora = gamma_of(n + 4, ud) + gamma_of(n, ul);
      const long double inv = 1 / sd;
      oracle_i_[r] = round_to(dtype_, inv);
      allow_[2][r] =
          static_cast<double>((2 * u + gamma_of(n + 6, ud) + d_sub * d_sub) * std::fabs(inv)) *
              slack +
          tiny;
      oracle_allow_i_[r] =
          static_cast<double>((2 * u + gamma_of(n + 6, ud) + gamma_of(n, ul) + d_ora * d_ora) *
                              std::fabs(inv)) *
              slack +
          tiny;
      for (uint64_t j = 0; j < n; ++j) {
        const uint64_t i = r * n + j;
        const long double h = (x_.at(i) - mu) / sd;
        const long double ah = std::fabs(h);
        oracle_h_[i] = round_to(dtype_, h);
        const long double bh = 2 * u * ah + 2 * (d_sub + (g_sub + d_sub * d_sub) * ah);
        allow_[1][i] = static_cast<double>(bh) * slack + tiny;
        oracle_allow_h_[i] =
            static_cast<double>(2 * u * ah + d_ora + (g_ora + d_ora * d_ora) * ah) * slack + tiny;
        const long double g = std::fabs(static_cast<long double>(gamma_.at(j)));
        const long double y = std::fabs(h * gamma_.at(j) + beta_.at(j));
        allow_[0][i] = static_cast<double>(g * bh + 2 * u * (ah * g + y)) * slack + tiny;
      }
    }
  }

  Dtype dtype_;
  uint64_t rows_, cols_;
  Pattern pattern_;
  uint64_t key_;
  double epsilon_ = 1e-5;
  HostArray x_, gamma_, beta_;
  std::vector<Allowance> allow_;
  std::vector<double> oracle_h_, oracle_allow_h_, oracle_i_, oracle_allow_i_;
};

// ---------------------------------------------------------------------------------------------

class BackwardCase : public ComparedCase {
 public:
  BackwardCase(Dtype dtype, uint64_t rows, uint64_t cols, Pattern pattern, uint64_t key)
      : dtype_(dtype), rows_(rows), cols_(cols), pattern_(pattern), key_(key) {}

  std::string op() const override { return "layer_norm_bwd"; }
  Dtype dtype() const override { return dtype_; }
  Bound bound() const override { return Bound::relative(0, "g_n(u_w+u_s)*S staged"); }
  std::string shape() const override { return shape_text(rows_, cols_, pattern_); }
  std::vector<double> host_scalars() const override { return {cols_scale_, inv_cols_}; }
  std::string oracle_name() const override { return "long double sums"; }
  std::string oracle_label() const override { return "ref vs long double"; }

  void make_inputs(uint64_t) override {
    const uint64_t n = rows_ * cols_;
    dy_ = HostArray(dtype_, n);
    xhat_ = HostArray(dtype_, n);
    inv_std_ = HostArray(dtype_, rows_);
    gamma_ = HostArray(dtype_, cols_);
    cols_scale_ = static_cast<double>(cols_);
    inv_cols_ = 1.0 / static_cast<double>(cols_);
    for (uint64_t r = 0; r < rows_; ++r) {
      for (uint64_t j = 0; j < cols_; ++j) {
        const uint64_t i = r * cols_ + j;
        double d = 2 * unit_draw(key_, i) - 1;
        double h = 4 * unit_draw(~key_, i) - 2;
        if (pattern_ == Pattern::offset) d += 100;  // s1 cancels against q * cols
        if (pattern_ == Pattern::constant && r % 3 == 0) h = 0;
        set(dy_, i, d);
        set(xhat_, i, h);
      }
      set(inv_std_, r, 0.25 + 4 * unit_draw(key_ ^ 0x77, r));
    }
    for (uint64_t j = 0; j < cols_; ++j) set(gamma_, j, 0.5 + unit_draw(key_ ^ 0x99, j));
    compute_oracle();
  }

  HostArrays run(Backend backend) override {
    std::unique_ptr<Buffer> d = upload(backend, dy_, 0, dy_.size());
    std::unique_ptr<Buffer> h = upload(backend, xhat_, 0, xhat_.size());
    std::unique_ptr<Buffer> i = upload(backend, inv_std_, 0, inv_std_.size());
    std::unique_ptr<Buffer> g = upload(backend, gamma_, 0, gamma_.size());
    LayerNormResults r =
        layer_norm_bwd(*d, *h, *i, *g, rows_, cols_, cols_scale_, inv_cols_, "parity");
    HostArrays out;
    for (auto& buffer : r) out.push_back(download(*buffer));
    return out;
  }

  Deviation measure(size_t output, uint64_t i, double got, double want,
                    const Bound&) const override {
    return deviation(dtype_, got, want, allow_[output][i]);
  }

  std::string describe(size_t output, uint64_t i, double got, double want) const override {
    return shape() + ", " + kBackwardOutputs[output] + "[" + std::to_string(i) +
           "]: " + number(got, dtype_) + ", expected " + number(want, dtype_) + ", allowed " +
           number(allow_[output][i], Dtype::f64);
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    for (size_t o = 0; o < 3; ++o) {
      for (uint64_t i = 0; i < reference[o].size(); ++i) {
        const double got = reference[o].at(i);
        record_against(stats, dtype_, got, oracle_[o][i], oracle_allow_[o][i], [&] {
          return shape() + ", " + kBackwardOutputs[o] + "[" + std::to_string(i) + "]: reference " +
                 number(got, dtype_) + ", oracle " + number(oracle_[o][i], dtype_);
        });
      }
    }
  }

 private:
  void set(HostArray& a, uint64_t i, double v) {
    if (dtype_ == Dtype::f32) {
      a.as<float>()[i] = static_cast<float>(v);
    } else {
      a.as<double>()[i] = v;
    }
  }

  // One rounding to the dtype of a product / difference of dtype values, computed in the dtype
  // (a long double product of two binary64 values would round twice).
  double mul(double a, double b) const {
    if (dtype_ == Dtype::f32) {
      const float p = static_cast<float>(a) * static_cast<float>(b);
      return p;
    }
    const double p = a * b;
    return p;
  }
  double sub(double a, double b) const {
    if (dtype_ == Dtype::f32) {
      const float d = static_cast<float>(a) - static_cast<float>(b);
      return d;
    }
    const double d = a - b;
    return d;
  }

  void compute_oracle() {
    const bool f32 = dtype_ == Dtype::f32;
    const double u = unit_roundoff(dtype_);
    const long double uw = f32 ? 0x1p-53L : 0x1p-64L, us = 0x1p-53L, ul = 0x1p-64L;
    const double slack = 1 + 8 * u, tiny = 4 * tiny_of(dtype_);
    const uint64_t n = cols_;
    const double cs = round_to(dtype_, cols_scale_), ic = round_to(dtype_, inv_cols_);
    allow_.assign(3, Allowance());
    oracle_.assign(3, std::vector<double>());
    oracle_allow_.assign(3, Allowance());
    allow_[0].assign(rows_ * n, 0);
    oracle_[0].assign(rows_ * n, 0);
    oracle_allow_[0].assign(rows_ * n, 0);
    std::vector<long double> sg(n, 0), sb(n, 0), ag(n, 0), ab(n, 0);
    for (uint64_t r = 0; r < rows_; ++r) {
      long double s1 = 0, s2 = 0, a1 = 0, a2 = 0;
      for (uint64_t j = 0; j < n; ++j) {
        const uint64_t i = r * n + j;
        const double q = mul(dy_.at(i), gamma_.at(j));
        const double qh = mul(q, xhat_.at(i));
        s1 += q;
        s2 += qh;
        a1 += std::fabs(q);
        a2 += std::fabs(qh);
        const double gh = mul(dy_.at(i), xhat_.at(i));
        sg[j] += gh;
        ab[j] += std::fabs(dy_.at(i));
        sb[j] += dy_.at(i);
        ag[j] += std::fabs(gh);
      }
      const double s1t = round_to(dtype_, s1), s2t = round_to(dtype_, s2);
      const long double d1s = 2 * u * std::fabs(s1) + (gamma_of(n, uw) + gamma_of(n, us)) * a1;
      const long double d2s = 2 * u * std::fabs(s2) + (gamma_of(n, uw) + gamma_of(n, us)) * a2;
      const long double d1o = 2 * u * std::fabs(s1) + (gamma_of(n, uw) + gamma_of(n, ul)) * a1;
      const long double d2o = 2 * u * std::fabs(s2) + (gamma_of(n, uw) + gamma_of(n, ul)) * a2;
      const long double scale = std::fabs(static_cast<long double>(inv_std_.at(r)) * ic);
      for (uint64_t j = 0; j < n; ++j) {
        const uint64_t i = r * n + j;
        const double h = xhat_.at(i);
        const double q = mul(dy_.at(i), gamma_.at(j));
        const double t = sub(sub(mul(q, cs), s1t), mul(h, s2t));
        const double dx = mul(mul(t, inv_std_.at(r)), ic);
        oracle_[0][i] = dx;
        const long double staged = 2 * u *
                                   (2 * std::fabs(q * cs) + 2 * std::fabs(s1) +
                                    3 * std::fabs(static_cast<long double>(h) * s2));
        const long double rest = 4 * u * std::fabs(dx);
        allow_[0][i] =
            static_cast<double>((d1s + std::fabs(h) * d2s + staged) * scale + rest) * slack + tiny;
        oracle_allow_[0][i] =
            static_cast<double>((d1o + std::fabs(h) * d2o + staged) * scale + rest) * slack + tiny;
      }
    }
    for (int o = 1; o < 3; ++o) {
      const std::vector<long double>& sum = o == 1 ? sg : sb;
      const std::vector<long double>& mag = o == 1 ? ag : ab;
      allow_[o].assign(n, 0);
      oracle_[o].assign(n, 0);
      oracle_allow_[o].assign(n, 0);
      for (uint64_t j = 0; j < n; ++j) {
        oracle_[o][j] = round_to(dtype_, sum[j]);
        const long double base = 2 * u * std::fabs(sum[j]);
        allow_[o][j] =
            static_cast<double>(base + (gamma_of(rows_, uw) + gamma_of(rows_, us)) * mag[j]) *
                slack +
            tiny;
        oracle_allow_[o][j] =
            static_cast<double>(base + (gamma_of(rows_, uw) + gamma_of(rows_, ul)) * mag[j]) *
                slack +
            tiny;
      }
    }
  }

  Dtype dtype_;
  uint64_t rows_, cols_;
  Pattern pattern_;
  uint64_t key_;
  double cols_scale_ = 1, inv_cols_ = 1;
  HostArray dy_, xhat_, inv_std_, gamma_;
  std::vector<Allowance> allow_, oracle_allow_;
  std::vector<std::vector<double>> oracle_;
};

// One random recipe (--shapes): the forward's pattern, and the backward's (one of the first three
// where the forward's is the special one).
struct RandomRecipe {
  uint64_t rows, cols;
  Pattern forward, backward;
};

// rows and cols (both positive) in a random order, the second within what the first leaves of the
// element budget; the special pattern has 5 rows (epsilon 0 on its constant row) half the time.
RandomRecipe draw_recipe(ShapeDraw& draw, uint64_t budget) {
  const std::vector<Pattern> plain = {Pattern::mixed, Pattern::offset, Pattern::constant};
  RandomRecipe r;
  r.forward = draw.percent(25) ? Pattern::special : draw.pick(plain);
  r.backward = r.forward == Pattern::special ? draw.pick(plain) : r.forward;
  if (r.forward == Pattern::special && draw.percent(50)) {
    r.rows = 5;
    r.cols = draw.extent(budget / 5);
  } else {
    const std::vector<uint64_t> extents = draw.dims(2, budget, 0);
    r.rows = extents[0];
    r.cols = extents[1];
  }
  return r;
}

CaseList make_layer_norm_cases(const Options& options) {
  CaseList cases;
  // --shapes: N recipes of both ops within the element budget.
  ShapeDraw draw(options.seed, "layer_norm");
  const uint64_t budget = random_shape_budget(options);
  std::vector<RandomRecipe> random_recipes;
  for (uint64_t i = 0; i < options.shapes; ++i) random_recipes.push_back(draw_recipe(draw, budget));
  const uint64_t col_list[] = {1, 2, 3, 31, 1024, 4097, 20000};
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    const bool f32 = dtype == Dtype::f32;
    const uint64_t fwd_base = case_key(options.seed, "layer_norm_fwd", f32);
    const uint64_t bwd_base = case_key(options.seed, "layer_norm_bwd", f32);
    uint64_t k = 0;
    for (uint64_t cols : col_list) {
      const uint64_t rows = std::clamp<uint64_t>(options.n / cols, 1, 2048);
      for (Pattern p : {Pattern::mixed, Pattern::offset, Pattern::constant}) {
        cases.push_back(
            std::make_unique<ForwardCase>(dtype, rows, cols, p, splitmix64_finalize(fwd_base + k)));
        cases.push_back(std::make_unique<BackwardCase>(dtype, rows, cols, p,
                                                       splitmix64_finalize(bwd_base + k)));
        ++k;
      }
      // Special values: rows 5 (epsilon 0 on the constant row) and 10 (epsilon 1e-5).
      for (uint64_t special_rows : {uint64_t{5}, uint64_t{10}}) {
        cases.push_back(std::make_unique<ForwardCase>(dtype, special_rows, cols, Pattern::special,
                                                      splitmix64_finalize(fwd_base + k++)));
      }
    }
    for (const RandomRecipe& r : random_recipes) {
      cases.push_back(std::make_unique<ForwardCase>(dtype, r.rows, r.cols, r.forward,
                                                    splitmix64_finalize(fwd_base + k)));
      cases.push_back(std::make_unique<BackwardCase>(dtype, r.rows, r.cols, r.backward,
                                                     splitmix64_finalize(bwd_base + k)));
      ++k;
    }
  }
  return cases;
}

const FamilyRegistration kLayerNormFamily("layer_norm", &make_layer_norm_cases);

}  // namespace
}  // namespace tlrt::parity
