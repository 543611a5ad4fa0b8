// Parity cases of the softmax family (SPEC-ops 7) in float32 and float64:
//   * hard_masked_softmax_by_row at row lengths 1, 2, 31, 128, 1000, 1024, 4097, 32768 and 40000
//     (every CUDA path: warp rows, rows in shared memory, online long rows), masks of density 0,
//     0.5 and 1, and a special recipe (NaN, +-inf scores in 1% of the entries, NaN and -0 mask
//     entries, fully blocked rows);
//   * softmax_io on 3-D shapes along every axis (the row kernel for the last axis, the column
//     kernel, in registers and online, for the others);
//   * with --shapes N, N more of each op drawn from the seed (extents, empty ones included,
//     densities, specials; softmax_io's rank 1-4 and axis).
// Compared with the reference backend per element within the bound of docs/NUMERICS.md
// ("Softmax"): blocked entries and fully blocked rows bit for bit (+0), NaN rows as NaN, and
//   |y - y_ref| <= ((|s - m| + ln n + 4k + 4) u + (2k + 3) gamma_n(u)
//                   + (|s - m| + n + 8) u_w) |y_ref| + (2k + 2) denorm_min
// where n is the row's allowed count, m its max, k the device exp's ULP bound (2 for expf, 1 for
// exp), u the dtype's unit roundoff and u_w the reference's wide format's. The oracle (without a
// GPU, or with --oracle) measures the reference backend against a long double evaluation within
// (u + 2 (|s - m| + n + 8) u_w) |y| + denorm_min / 2.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/softmax_dispatch.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;

struct Recipe {
  bool masked = true;
  uint64_t rows = 0, cols = 0;  // masked
  double density = 1;           // masked: the share of allowed entries
  bool specials = false;        // masked: non-finite scores, NaN / -0 masks, blocked rows
  Dims dims;                    // softmax_io
  uint64_t axis = 0;            // softmax_io
  uint64_t key = 0;
};

long double gamma_of(uint64_t k, long double u) {
  const long double ku = static_cast<long double>(k) * u;
  return ku / (1 - ku);
}

// Per line: the max of the allowed values (NaN when one is NaN) and their count.
struct LineStats {
  long double m = -INFINITY;
  uint64_t n = 0;
};

class SoftmaxCase : public ComparedCase {
 public:
  SoftmaxCase(Dtype dtype, Recipe r) : dtype_(dtype), r_(std::move(r)) {
    if (r_.masked) {
      outer_ = r_.rows;
      len_ = r_.cols;
      inner_ = 1;
    } else {
      for (size_t k = 0; k < r_.axis; ++k) outer_ *= r_.dims[k];
      for (size_t k = r_.axis + 1; k < r_.dims.size(); ++k) inner_ *= r_.dims[k];
      len_ = r_.dims[r_.axis];
    }
  }

  std::string op() const override {
    return r_.masked ? "hard_masked_softmax_by_row" : "softmax_io";
  }
  Dtype dtype() const override { return dtype_; }
  std::string shape() const override {
    if (!r_.masked) return "dims = " + dims_text(r_.dims) + ", axis = " + std::to_string(r_.axis);
    return std::to_string(r_.rows) + " x " + std::to_string(r_.cols) + ", density " +
           std::to_string(r_.density) + (r_.specials ? ", specials" : "");
  }
  Bound bound() const override {
    return Bound::relative(0,
                           "<= ((|s-m| + ln n + 4k + 4) u + (2k+3) gamma_n + (|s-m| + n + 8) "
                           "u_w) y + (2k+2) denorm");
  }
  std::string oracle_name() const override { return "long double softmax"; }
  std::string oracle_label() const override { return "ref vs host"; }
  Bound oracle_bound() const override {
    return Bound::relative(0, "<= (u + 2 (|s-m| + n + 8) u_w) y + denorm/2");
  }

  void make_inputs(uint64_t seed) override {
    const uint64_t n = outer_ * len_ * inner_;
    x_ = HostArray(dtype_, n);
    mask_ = HostArray(dtype_, r_.masked ? n : 0);
    const uint64_t key = splitmix64_finalize(seed ^ (r_.key * 0x9e3779b97f4a7c15ull));
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t h = splitmix64_finalize(key + 2 * i);
      const uint64_t g = splitmix64_finalize(key + 2 * i + 1);
      double v = (static_cast<double>(h >> 11) / 9007199254740992.0 * 2.0 - 1.0) * 20.0;
      if (r_.specials && h % 100 == 0) {
        const double specials[] = {NAN, INFINITY, -INFINITY, -INFINITY};
        v = specials[(h >> 8) % 4];
      }
      set(x_, i, v);
      if (!r_.masked) continue;
      const double u01 = static_cast<double>(g >> 11) / 9007199254740992.0;
      double mv = u01 < r_.density ? 1.0 : 0.0;
      if (r_.specials) {
        const uint64_t row = i / r_.cols;
        if (row % 7 == 3) mv = 0.0;  // fully blocked rows
        if (mv == 0.0 && (g & 1)) mv = -0.0;
        if (mv != 0.0 && (g >> 1) % 5 == 0) mv = NAN;
      }
      set(mask_, i, mv);
    }
    lines_.assign(outer_ * inner_, LineStats{});
    for (uint64_t line = 0; line < outer_ * inner_; ++line) {
      LineStats& st = lines_[line];
      bool nan = false;
      for (uint64_t k = 0; k < len_; ++k) {
        const uint64_t i = index(line, k);
        if (!allowed(i)) continue;
        ++st.n;
        const long double v = x_.at(i);
        if (std::isnan(v)) nan = true;
        if (v > st.m) st.m = v;
      }
      if (nan) st.m = NAN;
    }
  }

  HostArrays run(Backend backend) override {
    const std::unique_ptr<Buffer> x = upload(backend, x_, 0, x_.size());
    const char* op = "parity";
    if (r_.masked) {
      const std::unique_ptr<Buffer> m = upload(backend, mask_, 0, mask_.size());
      return {download(*hard_masked_softmax_by_row(*x, *m, r_.rows, r_.cols, op))};
    }
    require_softmax_axis(r_.dims, r_.axis, op);
    return {download(*softmax_along(*x, r_.dims, r_.axis, op))};
  }

  Deviation measure(size_t, uint64_t i, double got, double want,
                    const Bound& bound) const override {
    Deviation d;
    d.ulps = ulps_between(got, want, dtype_);
    if (!std::isfinite(got) || !std::isfinite(want) || !allowed(i)) return d;  // must be equal
    const LineStats& st = lines_[line_of(i)];
    const long double spread = std::fabs(static_cast<long double>(x_.at(i)) - st.m);
    const long double u = unit_roundoff();
    const long double k = dtype_ == Dtype::f32 ? 2 : 1;
    const long double rel = (spread + std::log(static_cast<long double>(st.n)) + 4 * k + 4) * u +
                            (2 * k + 3) * gamma_of(st.n, u) +
                            (spread + static_cast<long double>(st.n) + 8) * wide_roundoff();
    const long double err = std::fabs(static_cast<long double>(got) - want);
    const long double allowed_err =
        rel * std::fabs(static_cast<long double>(want)) + (2 * k + 2) * denorm_min();
    if (want != 0) d.rel = static_cast<double>(err / std::fabs(static_cast<long double>(want)));
    d.within = bound.kind == Bound::Kind::relative && err <= allowed_err;
    return d;
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    if (reference.empty()) return;
    const HostArray& got = reference[0];
    const long double u = unit_roundoff();
    for (uint64_t line = 0; line < outer_ * inner_; ++line) {
      const LineStats& st = lines_[line];
      long double sum = 0;
      for (uint64_t k = 0; k < len_; ++k) {
        const uint64_t i = index(line, k);
        if (allowed(i)) sum += std::exp(static_cast<long double>(x_.at(i)) - st.m);
      }
      for (uint64_t k = 0; k < len_; ++k) {
        const uint64_t i = index(line, k);
        const double g = got.at(i);
        long double want = 0;
        if (allowed(i)) want = std::exp(static_cast<long double>(x_.at(i)) - st.m) / sum;
        const double w = static_cast<double>(want);
        if (!allowed(i) || !std::isfinite(want)) {
          // Blocked entries: +0 bit for bit; NaN rows: NaN.
          if (same_bits(g, allowed(i) ? w : 0.0)) {
            stats.record_equal();
          } else {
            Deviation d;
            d.ulps = INFINITY;
            stats.record(d, [&] { return describe(0, i, g, w); });
          }
          continue;
        }
        const long double err = std::fabs(static_cast<long double>(g) - want);
        if (err == 0) {
          stats.record_equal();
          continue;
        }
        const long double spread = std::fabs(static_cast<long double>(x_.at(i)) - st.m);
        Deviation d;
        d.ulps = static_cast<double>(err) / ulp_of(dtype_, w);
        if (want != 0) d.rel = static_cast<double>(err / want);
        d.within =
            err <=
            (u + 2 * (spread + static_cast<long double>(st.n) + 8) * wide_roundoff()) * want +
                denorm_min() / 2;
        stats.record(d, [&] { return describe(0, i, g, w); });
      }
    }
  }

  std::string describe(size_t, uint64_t i, double got, double want) const override {
    return shape() + ", element " + std::to_string(i) + " (score " + number(x_.at(i), dtype_) +
           (r_.masked ? ", mask " + number(mask_.at(i), dtype_) : std::string()) +
           "): " + number(got, dtype_) + ", expected " + number(want, dtype_);
  }

 private:
  static void set(HostArray& a, uint64_t i, double v) {
    if (a.dtype() == Dtype::f32) {
      a.as<float>()[i] = static_cast<float>(v);
    } else {
      a.as<double>()[i] = v;
    }
  }
  bool allowed(uint64_t i) const { return !r_.masked || mask_.at(i) != 0; }
  // Element k of line l (l = o * inner + c).
  uint64_t index(uint64_t line, uint64_t k) const {
    const uint64_t o = line / inner_, c = line % inner_;
    return (o * len_ + k) * inner_ + c;
  }
  uint64_t line_of(uint64_t i) const {
    const uint64_t c = i % inner_;
    const uint64_t o = i / (len_ * inner_);
    return o * inner_ + c;
  }
  long double unit_roundoff() const { return std::ldexp(1.0L, dtype_ == Dtype::f32 ? -24 : -53); }
  long double wide_roundoff() const {
    return std::ldexp(1.0L, dtype_ == Dtype::f32 ? -53 : -std::numeric_limits<long double>::digits);
  }
  long double denorm_min() const {
    return dtype_ == Dtype::f32 ? std::numeric_limits<float>::denorm_min()
                                : std::numeric_limits<double>::denorm_min();
  }

  Dtype dtype_;
  Recipe r_;
  uint64_t outer_ = 1, len_ = 1, inner_ = 1;
  HostArray x_, mask_;
  std::vector<LineStats> lines_;
};

CaseList make_softmax_cases(const Options& options) {
  CaseList list;
  std::vector<Recipe> recipes;
  uint64_t key = 1;
  const uint64_t budget = options.n > 0 ? options.n : 1;
  for (uint64_t cols : {1, 2, 31, 128, 1000, 1024, 4097, 32768, 40000}) {
    const uint64_t rows = std::max<uint64_t>(2, std::min<uint64_t>(4099, budget / cols));
    for (double density : {0.0, 0.5, 1.0}) {
      Recipe r;
      r.rows = rows;
      r.cols = cols;
      r.density = density;
      r.key = key++;
      recipes.push_back(r);
    }
    Recipe s;
    s.rows = std::max<uint64_t>(8, rows / 4);
    s.cols = cols;
    s.density = 0.6;
    s.specials = true;
    s.key = key++;
    recipes.push_back(s);
  }
  // The axis split over a block, the column in registers (len <= 64 with >= 2^15 columns), the
  // row kernel for the last axis.
  const std::vector<Dims> shapes = {{64, 33, 17}, {7, 1000, 5},   {3, 5, 4097},
                                    {100, 1, 70}, {2, 70, 300},   {1, 1, 1},
                                    {8, 5000, 8}, {33, 40, 1024}, {20, 2, 20000}};
  for (const Dims& d : shapes) {
    for (uint64_t axis = 0; axis < d.size(); ++axis) {
      Recipe r;
      r.masked = false;
      r.dims = d;
      r.axis = axis;
      r.key = key++;
      recipes.push_back(r);
    }
  }
  // --shapes: N masked recipes (rows x cols within the element budget, empty ones included; a
  // density of 0, 1/2, 1 or drawn; a quarter with the specials) and N softmax_io shapes (rank 1-4,
  // any axis).
  ShapeDraw draw(options.seed, "softmax");
  const uint64_t shape_budget = random_shape_budget(options);
  for (uint64_t i = 0; i < options.shapes; ++i) {
    Recipe r;
    const Dims extents = draw.dims(2, shape_budget);
    r.rows = extents[0];
    r.cols = extents[1];
    r.density = draw.percent(40) ? draw.pick(std::vector<double>{0.0, 0.5, 1.0})
                                 : static_cast<double>(draw.between(1, 99)) / 100;
    r.specials = draw.percent(25);
    r.key = key++;
    recipes.push_back(r);
    Recipe io;
    io.masked = false;
    io.dims = draw.dims(draw.between(1, 4), shape_budget);
    io.axis = draw.below(io.dims.size());
    io.key = key++;
    recipes.push_back(io);
  }
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    for (const Recipe& r : recipes) list.push_back(std::make_unique<SoftmaxCase>(dtype, r));
  }
  return list;
}

}  // namespace

const FamilyRegistration kSoftmaxFamily("softmax", &make_softmax_cases);

}  // namespace tlrt::parity
