// Parity cases of the axis reductions (SPEC-ops 8) in float32 and float64:
//   * reduce_max_by_row / reduce_max_by_column: a selection under one total order (NaN as -inf,
//     +0 above -0), bit-exact against the reference backend;
//   * reduce_sum_axis / reduce_from_broadcast: the ordered column fold, bit-exact;
//   * reduce_sum_by_row: any order, within gamma_n * sum|x| of the reference backend per row
//     (docs/NUMERICS.md, "Axis reductions").
// Inputs: random values over 40 binades with special values (NaN, +-0, +-inf: 4% of the maxima's
// inputs, 0.04% of the sums') and 4% -0, at odd sizes, zero extents and one-element axes: matrices
// from 0 x 5 up to 2 x 70001 and 65537 x 3, reduce_sum_axis with every axis of ranks 0 to 4
// (chains of several chunks among them), reduce_from_broadcast with inserted, broadcast and
// permuted axes, and with --shapes N more of each drawn from the seed. The oracle (without a GPU,
// or with --oracle) measures the reference backend against independent host evaluations: the maxima
// and folds bit for bit, the row sums against a long double sum within (u + gamma_n(u_wide))
// sum|x| (the reference accumulates in a wider format and rounds once).
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/reduce_axis_dispatch.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;

enum class AxisOp { sum_by_row, max_by_row, max_by_column, sum_axis, from_broadcast };

const char* name_of(AxisOp op) {
  switch (op) {
    case AxisOp::sum_by_row:
      return "reduce_sum_by_row";
    case AxisOp::max_by_row:
      return "reduce_max_by_row";
    case AxisOp::max_by_column:
      return "reduce_max_by_column";
    case AxisOp::sum_axis:
      return "reduce_sum_axis";
    case AxisOp::from_broadcast:
      return "reduce_from_broadcast";
  }
  return "?";
}

struct Recipe {
  uint64_t rows = 0, cols = 0;  // matrix ops
  Dims dims;                    // sum_axis: dims; from_broadcast: outDims
  uint64_t axis = 0;            // sum_axis
  Dims in_dims, axis_map;       // from_broadcast
  uint64_t key = 0;
};

uint64_t product(const Dims& d) {
  uint64_t p = 1;
  for (uint64_t e : d) p *= e;
  return p;
}

// gamma_k = k u / (1 - k u).
long double gamma_of(uint64_t k, long double u) {
  const long double ku = static_cast<long double>(k) * u;
  return ku / (1 - ku);
}

class AxisCase : public ComparedCase {
 public:
  AxisCase(AxisOp op, Dtype dtype, Recipe r) : op_(op), dtype_(dtype), r_(std::move(r)) {}

  std::string op() const override { return name_of(op_); }
  Dtype dtype() const override { return dtype_; }
  std::string shape() const override {
    switch (op_) {
      case AxisOp::sum_axis:
        return "dims = " + dims_text(r_.dims) + ", axis = " + std::to_string(r_.axis);
      case AxisOp::from_broadcast:
        return "inDims = " + dims_text(r_.in_dims) + ", outDims = " + dims_text(r_.dims) +
               ", axisMap = " + dims_text(r_.axis_map);
      default:
        return std::to_string(r_.rows) + " x " + std::to_string(r_.cols);
    }
  }
  Bound bound() const override {
    return op_ == AxisOp::sum_by_row ? Bound::relative(0, "<= gamma_n sum|x|") : Bound::bit_exact();
  }
  std::string oracle_name() const override {
    return op_ == AxisOp::sum_by_row ? "long double sum" : "host selection / fold";
  }
  std::string oracle_label() const override { return "ref vs host"; }
  Bound oracle_bound() const override {
    return op_ == AxisOp::sum_by_row ? Bound::relative(0, "<= (u + gamma_n(u_wide)) sum|x|")
                                     : Bound::bit_exact();
  }

  void make_inputs(uint64_t seed) override {
    const uint64_t n = input_size();
    x_ = HostArray(dtype_, n);
    const uint64_t key = splitmix64_finalize(seed ^ r_.key);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t h = splitmix64_finalize(key + i);
      double v;
      // Specials in 4% of the maxima's inputs, in 0.04% of the sums' (a NaN or an infinity
      // decides every sum it enters); -0 in 4% of both.
      const bool maximum = op_ == AxisOp::max_by_row || op_ == AxisOp::max_by_column;
      if (h % (maximum ? 100 : 10000) < 4) {
        const double specials[] = {NAN, 0.0, -0.0, INFINITY, -INFINITY};
        v = specials[(h >> 8) % 5];
      } else if ((h >> 20) % 100 < 4) {
        v = -0.0;
      } else {
        const double m = static_cast<double>((h >> 11) & ((uint64_t{1} << 40) - 1)) /
                             static_cast<double>(uint64_t{1} << 40) * 2.0 -
                         1.0;
        v = std::ldexp(m, static_cast<int>((h >> 52) % 41) - 20);
      }
      if (dtype_ == Dtype::f32) {
        x_.as<float>()[i] = static_cast<float>(v);
      } else {
        x_.as<double>()[i] = v;
      }
    }
  }

  HostArrays run(Backend backend) override {
    const std::unique_ptr<Buffer> x = upload(backend, x_, 0, x_.size());
    const char* op = "parity";
    switch (op_) {
      case AxisOp::sum_by_row:
        return {download(*reduce_sum_by_row(*x, r_.rows, r_.cols, op))};
      case AxisOp::max_by_row:
        return {download(*reduce_max_by_row(*x, r_.rows, r_.cols, op))};
      case AxisOp::max_by_column:
        return {download(*reduce_max_by_column(*x, r_.rows, r_.cols, op))};
      case AxisOp::sum_axis:
        return {download(*reduce_sum_axis(*x, r_.dims, r_.axis, op))};
      case AxisOp::from_broadcast:
        return {download(*reduce_from_broadcast(*x, r_.in_dims, r_.dims, r_.axis_map, op))};
    }
    return {};
  }

  Deviation measure(size_t, uint64_t i, double got, double want,
                    const Bound& bound) const override {
    Deviation d;
    d.ulps = ulps_between(got, want, dtype_);
    if (op_ != AxisOp::sum_by_row || !std::isfinite(got) || !std::isfinite(want)) return d;
    const long double u = unit_roundoff();
    const long double magnitude = row_magnitude(i);
    const long double err = std::fabs(static_cast<long double>(got) - want);
    // Any order in T against one rounding of the reference's wide sum (SPEC-ops 8 leaves the
    // order free): gamma_n(u) covers the subject's gamma_{n-1}(u) and the final rounding u, and
    // gamma_n(u_wide) the wide accumulation.
    const long double allowed =
        (gamma_of(r_.cols, u) + gamma_of(r_.cols, wide_roundoff())) * magnitude;
    if (magnitude > 0) d.rel = static_cast<double>(err / magnitude);
    d.ulps = static_cast<double>(err) / ulp_of(dtype_, static_cast<double>(magnitude));
    d.within = bound.kind == Bound::Kind::relative && err <= allowed;
    return d;
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    if (reference.empty()) return;
    const HostArray& got = reference[0];
    if (op_ == AxisOp::sum_by_row) {
      const long double u = unit_roundoff();
      for (uint64_t i = 0; i < got.size(); ++i) {
        long double exact = 0;
        for (uint64_t j = 0; j < r_.cols; ++j) exact += x_.at(i * r_.cols + j);
        const double g = got.at(i);
        if (!std::isfinite(exact)) {
          const double w = static_cast<double>(exact);
          if (same_bits(g, w) || (std::isnan(g) && std::isnan(w))) {
            stats.record_equal();
          } else {
            Deviation d;
            d.ulps = INFINITY;
            stats.record(d, [&] { return describe_row(i, g, w); });
          }
          continue;
        }
        const long double magnitude = row_magnitude(i);
        const long double err = std::fabs(static_cast<long double>(g) - exact);
        if (err == 0) {
          stats.record_equal();
          continue;
        }
        Deviation d;
        d.ulps = static_cast<double>(err) / ulp_of(dtype_, static_cast<double>(magnitude));
        d.rel = static_cast<double>(err / magnitude);
        // One rounding of the wide sum, and the wide accumulation's own error.
        d.within = err <= (u + gamma_of(r_.cols, wide_roundoff())) * magnitude;
        stats.record(d, [&] { return describe_row(i, g, static_cast<double>(exact)); });
      }
      return;
    }
    const HostArray want = host_result();
    for (uint64_t i = 0; i < got.size() && i < want.size(); ++i) {
      const double g = got.at(i), w = want.at(i);
      if (same_bits(g, w)) {
        stats.record_equal();
        continue;
      }
      Deviation d;
      d.ulps = ulps_between(g, w, dtype_);
      stats.record(d, [&] { return describe_row(i, g, w); });
    }
  }

 private:
  uint64_t input_size() const {
    switch (op_) {
      case AxisOp::sum_axis:
      case AxisOp::from_broadcast:
        return product(r_.dims);
      default:
        return r_.rows * r_.cols;
    }
  }

  long double unit_roundoff() const { return std::ldexp(1.0L, dtype_ == Dtype::f32 ? -24 : -53); }

  // The reference backend accumulates float32 rows in binary64 and float64 rows in long double.
  long double wide_roundoff() const {
    return std::ldexp(1.0L, dtype_ == Dtype::f32 ? -53 : -std::numeric_limits<long double>::digits);
  }

  long double row_magnitude(uint64_t i) const {
    long double m = 0;
    for (uint64_t j = 0; j < r_.cols; ++j)
      m += std::fabs(static_cast<long double>(x_.at(i * r_.cols + j)));
    return m;
  }

  std::string describe_row(uint64_t i, double got, double want) const {
    return shape() + ", element " + std::to_string(i) + ": " + number(got, dtype_) + ", expected " +
           number(want, dtype_);
  }

  // The contract evaluated on the host in T, independently of the reference backend's loops.
  template <class T>
  void host_eval(HostArray& out) const {
    const T* x = x_.as<T>();
    T* o = out.as<T>();
    auto before = [](T a, T b) {  // a before b in the total order, NaN as -inf
      const T inf = std::numeric_limits<T>::infinity();
      if (std::isnan(a)) a = -inf;
      if (std::isnan(b)) b = -inf;
      if (a == 0 && b == 0) return std::signbit(a) && !std::signbit(b);
      return a < b;
    };
    auto clean = [](T v) { return std::isnan(v) ? -std::numeric_limits<T>::infinity() : v; };
    switch (op_) {
      case AxisOp::max_by_row:
        for (uint64_t i = 0; i < r_.rows; ++i) {
          T best = T(0);
          for (uint64_t j = 0; j < r_.cols; ++j) {
            const T v = clean(x[i * r_.cols + j]);
            if (j == 0 || before(best, v)) best = v;
          }
          o[i] = best;
        }
        break;
      case AxisOp::max_by_column:
        for (uint64_t j = 0; j < r_.cols; ++j) {
          T best = T(0);
          for (uint64_t i = 0; i < r_.rows; ++i) {
            const T v = clean(x[i * r_.cols + j]);
            if (i == 0 || before(best, v)) best = v;
          }
          o[j] = best;
        }
        break;
      case AxisOp::sum_axis: {
        if (r_.dims.empty()) {
          o[0] = x[0];
          break;
        }
        uint64_t outer = 1, inner = 1;
        for (size_t k = 0; k < r_.axis; ++k) outer *= r_.dims[k];
        for (size_t k = r_.axis + 1; k < r_.dims.size(); ++k) inner *= r_.dims[k];
        const uint64_t len = r_.dims[r_.axis];
        for (uint64_t a = 0; a < outer; ++a) {
          for (uint64_t b = 0; b < inner; ++b) {
            T acc = T(0);
            for (uint64_t r = 0; r < len; ++r) acc = acc + x[(a * len + r) * inner + b];
            o[a * inner + b] = acc;
          }
        }
        break;
      }
      case AxisOp::from_broadcast: {
        const uint64_t in_size = product(r_.in_dims), out_size = product(r_.dims);
        for (uint64_t i = 0; i < in_size; ++i) o[i] = T(0);
        if (in_size == 0) break;
        Dims c(r_.dims.size());
        for (uint64_t flat = 0; flat < out_size; ++flat) {
          uint64_t rem = flat;
          for (size_t j = r_.dims.size(); j-- > 0;) {
            c[j] = rem % r_.dims[j];
            rem /= r_.dims[j];
          }
          uint64_t i = 0;
          for (size_t a = 0; a < r_.in_dims.size(); ++a) {
            uint64_t coord = 0;
            for (size_t j = 0; j < r_.dims.size(); ++j) {
              if (r_.axis_map[j] == a + 1 && r_.in_dims[a] != 1) coord = c[j];
            }
            i = i * r_.in_dims[a] + coord;
          }
          o[i] = o[i] + x[flat];
        }
        break;
      }
      case AxisOp::sum_by_row:
        break;
    }
  }

  HostArray host_result() const {
    uint64_t n = 0;
    switch (op_) {
      case AxisOp::max_by_row:
        n = r_.rows;
        break;
      case AxisOp::max_by_column:
        n = r_.cols;
        break;
      case AxisOp::sum_axis: {
        Dims rest;
        for (size_t k = 0; k < r_.dims.size(); ++k) {
          if (k != r_.axis) rest.push_back(r_.dims[k]);
        }
        n = product(rest);
        break;
      }
      case AxisOp::from_broadcast:
        n = product(r_.in_dims);
        break;
      case AxisOp::sum_by_row:
        n = r_.rows;
        break;
    }
    HostArray out(dtype_, n);
    if (dtype_ == Dtype::f32) {
      host_eval<float>(out);
    } else {
      host_eval<double>(out);
    }
    return out;
  }

  AxisOp op_;
  Dtype dtype_;
  Recipe r_;
  HostArray x_;
};

CaseList make_reduce_axis_cases(const Options& options) {
  CaseList list;
  std::vector<Recipe> matrices;
  const std::pair<uint64_t, uint64_t> shapes[] = {{0, 5},     {5, 0},     {0, 0},     {1, 1},
                                                  {3, 7},     {1, 1000},  {257, 33},  {1023, 65},
                                                  {2, 70001}, {65537, 3}, {129, 4097}};
  uint64_t key = 1;
  for (auto [rows, cols] : shapes) {
    Recipe r;
    r.rows = rows;
    r.cols = cols;
    r.key = key++;
    matrices.push_back(r);
  }
  if (options.n > 0) {
    Recipe r;
    r.rows = options.n / 1024 + 1;
    r.cols = 1024;
    r.key = key++;
    matrices.push_back(r);
  }
  std::vector<Recipe> axes;
  // The last two: chains of several chunks in 8- and 16-column tiles.
  const std::vector<Dims> dims_list = {{},         {7},          {0, 3},        {3, 0},
                                       {1, 1},     {5, 1, 3},    {33, 65, 7},   {1000, 37},
                                       {37, 1000}, {2, 3, 4, 5}, {4099, 1, 17}, {3, 1100, 9},
                                       {9000, 9},  {5, 9000},    {6001, 512},   {2500, 3000}};
  for (const Dims& d : dims_list) {
    for (uint64_t axis = 0; axis < (d.empty() ? 1 : d.size()); ++axis) {
      Recipe r;
      r.dims = d;
      r.axis = axis;
      r.key = key++;
      axes.push_back(r);
    }
  }
  struct B {
    Dims in, out, map;
  };
  const std::vector<B> bcasts = {
      {{3}, {2, 3}, {0, 1}},
      {{3}, {3, 2}, {1, 0}},
      {{1, 3}, {4, 3}, {1, 2}},
      {{2, 3}, {3, 4, 2}, {2, 0, 1}},
      {{2, 1, 3}, {3, 7, 4, 2}, {3, 0, 2, 1}},
      {{40}, {700, 40}, {0, 1}},
      {{1}, {5}, {1}},
      {{4, 5}, {4, 5}, {1, 2}},
      {{}, {6, 2}, {0, 0}},
      {{3}, {0, 3}, {0, 1}},
      {{0}, {4, 0}, {0, 1}},
      {{65}, {33, 65, 9}, {0, 1, 0}},
      {{9, 33}, {33, 65, 9}, {2, 0, 1}},
      {{9}, {700, 9, 7}, {0, 1, 0}},
      {{64, 8}, {5, 64, 900, 8}, {0, 1, 0, 2}},  // two row axes apart, 16-byte pieces
  };
  std::vector<Recipe> broadcasts;
  for (const B& b : bcasts) {
    Recipe r;
    r.in_dims = b.in;
    r.dims = b.out;
    r.axis_map = b.map;
    r.key = key++;
    broadcasts.push_back(r);
  }
  // --shapes: per recipe a matrix, a reduce_sum_axis shape of rank 0-4 with one of its axes, and a
  // reduce_from_broadcast geometry (input rank 0-3, up to two inserted axes, a random permutation,
  // extent-1 input axes broadcast), each within the element budget, empty extents included.
  ShapeDraw draw(options.seed, "reduce_axis");
  const uint64_t budget = random_shape_budget(options);
  for (uint64_t i = 0; i < options.shapes; ++i) {
    Recipe m;
    const Dims rc = draw.dims(2, budget);
    m.rows = rc[0];
    m.cols = rc[1];
    m.key = key++;
    matrices.push_back(m);
    Recipe a;
    a.dims = draw.dims(draw.below(5), budget);
    a.axis = a.dims.empty() ? 0 : draw.below(a.dims.size());
    a.key = key++;
    axes.push_back(a);
    Recipe b;
    const ShapeDraw::Broadcast g = draw.broadcast(3, 2, budget);
    b.dims = g.out;
    b.in_dims = g.in;
    b.axis_map = g.map;
    b.key = key++;
    broadcasts.push_back(b);
  }
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    for (AxisOp op : {AxisOp::sum_by_row, AxisOp::max_by_row, AxisOp::max_by_column}) {
      for (const Recipe& r : matrices) list.push_back(std::make_unique<AxisCase>(op, dtype, r));
    }
    for (const Recipe& r : axes) {
      list.push_back(std::make_unique<AxisCase>(AxisOp::sum_axis, dtype, r));
    }
    for (const Recipe& r : broadcasts) {
      list.push_back(std::make_unique<AxisCase>(AxisOp::from_broadcast, dtype, r));
    }
  }
  return list;
}

}  // namespace

const FamilyRegistration kReduceAxisFamily("reduce_axis", &make_reduce_axis_cases);

}  // namespace tlrt::parity
