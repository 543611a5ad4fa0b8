// Parity cases of the whole-buffer reductions reduce_sum and reduce_mean (SPEC-ops 6.4) in float32
// and float64. Both backends compute the deterministic 256-lane tree, so the subject must equal the
// reference backend bit for bit (NaN against NaN equal). Inputs, each one reduction:
//   * random values at 0, 1, 3, 5, 256, 257, 1023, 65537 and --n elements (one, two and three tree
//     passes), drawn four ways: mixed signs in (-1, 1), positive in [2^-8, 2^10), cancelling
//     pairs (the sum far below the sum of magnitudes), and the whole exponent range down to the
//     subnormals (kept below overflow); with --shapes N, N more lengths drawn from the seed;
//   * every special value (NaN of both signs and a signalling NaN, +-0, +-inf, the extreme
//     subnormals and normals, +-1) once inside 1023 mixed values, every ordered pair of them as a
//     two-element input, and uniform runs (all -0, all subnormal, +-max alternating, ...);
//   * --large: 2^31 + 17 float32 elements (the first pass folds 129 values per lane).
// The oracle (without a GPU, or with --oracle) measures the reference backend against a
// compensated long double sum with the error bound of the tree derived in docs/NUMERICS.md
// ("Whole-buffer reductions"): |result - sum| <= gamma_d * sum|x|, d the tree depth for n.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "kernels/reduce/reduce.h"
#include "runtime/context.h"
#include "runtime/reduce_dispatch.h"
#include "runtime/transfer.h"
#include "tools/parity/case_key.h"
#include "tools/parity/parity_case.h"
#include "tools/parity/ulp.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;

enum class Reduction { sum, mean };

const char* name_of(Reduction r) {
  return r == Reduction::sum ? "reduce_sum" : "reduce_mean";
}

// ---------------------------------------------------------------------------------------------
// The oracle: Sum2 of Ogita, Rump and Oishi (error-free TwoSum per element, the error terms summed
// on the side) in long double, written independently of the reference backend's tree. Its error
// is at most u_L |sum| + gamma_{n-1}(u_L)^2 sum|x| with u_L = 2^-64, below 2^-62 sum|x| for any
// n < 2^32: far below the tree's bound for either dtype.

static_assert(std::numeric_limits<long double>::digits >= 64,
              "the reduction oracle needs a long double of at least 64 significand bits");

struct CompensatedSum {
  long double high = 0, low = 0;
  void add(long double v) {
    const long double s = high + v;
    const long double t = s - high;
    low += (high - (s - t)) + (v - t);
    high = s;
  }
  void merge(const CompensatedSum& o) {
    add(o.high);
    low += o.low;
  }
  long double value() const { return high + low; }
};

// What the oracle needs to know of an input.
struct OracleSums {
  CompensatedSum sum, magnitude;  // of the finite elements
  bool nan = false, plus_inf = false, minus_inf = false;

  template <class T>
  void add(const T* x, uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) {
      const T v = x[i];
      if (std::isnan(v)) {
        nan = true;
      } else if (std::isinf(v)) {
        (v > 0 ? plus_inf : minus_inf) = true;
      } else {
        sum.add(v);
        magnitude.add(std::fabs(static_cast<long double>(v)));
      }
    }
  }
  void merge(const OracleSums& o) {
    sum.merge(o.sum);
    magnitude.merge(o.magnitude);
    nan = nan || o.nan;
    plus_inf = plus_inf || o.plus_inf;
    minus_inf = minus_inf || o.minus_inf;
  }
};

// The depth of the tree for n elements: the most roundings on any element's way to the result.
// A pass over m values has B = min(ceil(m/256), 65535) rows of 256 lanes; a lane folds its
// ceil(m / 256B) values into +0 (the first addition is exact) and each row halves 8 times; the
// B row results are the next pass's values until one is left.
uint64_t tree_depth(uint64_t n) {
  uint64_t depth = 0;
  for (uint64_t m = n; m > 0;) {
    const uint64_t rows = std::min<uint64_t>((m + 255) / 256, 65535);
    const uint64_t per_lane = (m + 256 * rows - 1) / (256 * rows);
    depth += per_lane - 1 + 8;
    if (rows == 1) break;
    m = rows;
  }
  return depth;
}

// gamma_k = k u / (1 - k u) (Higham, Accuracy and Stability of Numerical Algorithms, 3.1).
long double gamma_of(uint64_t k, long double u) {
  const long double ku = static_cast<long double>(k) * u;
  return ku / (1 - ku);
}

// The oracle's verdict on one reduction result.
struct OracleCheck {
  Deviation deviation;
  bool equal = false;  // the bits of the correctly rounded result (or the required special value)
  std::string detail;
};

template <class T>
OracleCheck check_result(Reduction kind, uint64_t n, const OracleSums& sums, T result) {
  using L = std::numeric_limits<T>;
  const Dtype dt = sizeof(T) == 4 ? Dtype::f32 : Dtype::f64;
  const long double u = std::ldexp(1.0L, -L::digits);  // unit roundoff of T
  const uint64_t depth = tree_depth(n);
  const long double count = static_cast<long double>(n);
  const long double oracle_sum = sums.sum.value();
  const long double magnitude = sums.magnitude.value();
  // Partial sums are bounded by (1 + gamma_d) sum|x|: below the largest finite, nothing overflows.
  const bool may_overflow =
      (1 + gamma_of(depth, u)) * magnitude * (1 + std::ldexp(1.0L, -60)) > L::max();
  OracleCheck c;
  auto require = [&](T required, const char* why) {
    c.equal = same_bits<T>(result, required);
    c.deviation.within = c.equal;
    c.deviation.ulps = ulp_distance<T>(result, required);
    c.detail = std::string(why) + ": expected " + number(required, dt);
  };
  if (n == 0) {
    require(kind == Reduction::sum ? T(0) : L::quiet_NaN(), "empty");
    return c;
  }
  if (sums.nan || (sums.plus_inf && sums.minus_inf)) {
    require(L::quiet_NaN(), "NaN or both infinities in the input");
    return c;
  }
  if (sums.plus_inf || sums.minus_inf) {
    const T inf = sums.plus_inf ? L::infinity() : -L::infinity();
    require(inf, "one infinity in the input");
    // Where the finite values' partial sums may overflow to the other infinity, NaN is right too.
    if (may_overflow && std::isnan(result)) {
      c.deviation.within = true;
      c.deviation.ulps = 0;
      c.detail += " or NaN (partial sums may overflow)";
    }
    return c;
  }
  // Finite inputs.
  long double target = oracle_sum, scale = magnitude, allowed = 0;
  if (kind == Reduction::sum) {
    allowed = (gamma_of(depth, u) + std::ldexp(1.0L, -61)) * magnitude;
  } else {
    // fl(n), the reciprocal (two roundings for float32), the product: four more factors, and
    // half the smallest subnormal where the product underflows.
    target = oracle_sum / count;
    scale = magnitude / count;
    allowed = (gamma_of(depth + 4, u) + std::ldexp(1.0L, -60)) * scale + L::denorm_min() / 2.0L;
  }
  const T rounded = static_cast<T>(target);
  c.equal = same_bits<T>(result, rounded);
  const bool finite = std::isfinite(result);
  const long double error = finite ? std::fabs(static_cast<long double>(result) - target) : 0;
  // ULPs at the magnitude of sum|x| (the scale of the bound); an accepted overflow counts 0.
  const double ulp = ulp_at<T>(static_cast<double>(std::fmin(scale, L::max())));
  c.deviation.ulps = finite         ? static_cast<double>(error / ulp)
                     : may_overflow ? 0.0
                                    : static_cast<double>(INFINITY);
  if (finite && scale > 0) c.deviation.rel = static_cast<double>(error / scale);
  // The tree never returns -0: lanes start at +0 and x + (-x) is +0 when rounding to nearest.
  const bool sign_ok = !(kind == Reduction::sum && result == 0 && std::signbit(result));
  c.deviation.within = finite ? error <= allowed && sign_ok : may_overflow;
  c.detail = "oracle " + number(static_cast<double>(target), Dtype::f64) +
             ", sum|x| = " + number(static_cast<double>(magnitude), Dtype::f64) + ", depth " +
             std::to_string(depth) + ", allowed error " +
             number(static_cast<double>(allowed), Dtype::f64) +
             (may_overflow ? " (partial sums may overflow: any non-finite result accepted)" : "");
  return c;
}

// Adds the verdict on `result` (of the input `text` describes) to an oracle row.
template <class T>
void record_check(Stats& stats, const OracleCheck& c, const std::string& text, T result) {
  if (c.equal) {
    stats.record_equal();
    return;
  }
  const Dtype dt = sizeof(T) == 4 ? Dtype::f32 : Dtype::f64;
  stats.record(c.deviation,
               [&] { return text + ": reference " + number(result, dt) + ", " + c.detail; });
}

std::unique_ptr<Buffer> run_reduction(Reduction kind, const Buffer& x) {
  return kind == Reduction::sum ? reduce_sum(x, "parity") : reduce_mean(x, "parity");
}

template <class T>
T reference_reduction(Reduction kind, const T* x, uint64_t n) {
  return kind == Reduction::sum ? kernels::reduce_sum_ref(x, n) : kernels::reduce_mean_ref(x, n);
}

Bound oracle_bound_of(Reduction kind) {
  return Bound::relative(0, kind == Reduction::sum ? "g_d*sum|x|" : "g_d+4*mean|x|");
}

// ---------------------------------------------------------------------------------------------
// Inputs

enum class Pattern {
  mixed,
  positive,
  cancelling,
  wide,
  one_special,
  special_pair,
  uniform,
  alternating
};

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::mixed:
      return "mixed signs";
    case Pattern::positive:
      return "positive";
    case Pattern::cancelling:
      return "cancelling pairs";
    case Pattern::wide:
      return "whole exponent range";
    case Pattern::one_special:
      return "one special value in mixed signs";
    case Pattern::special_pair:
      return "a pair of special values";
    case Pattern::uniform:
      return "one special value throughout";
    case Pattern::alternating:
      return "a special value with alternating signs";
  }
  return "";
}

// NaNs of both signs and a signalling one, signed zeros and infinities, the extreme subnormals
// and normals, and +-1; recipes name them by index so that one list serves both dtypes.
template <class T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  return {L::quiet_NaN(),
          -L::quiet_NaN(),
          L::signaling_NaN(),
          T(0),
          -T(0),
          L::infinity(),
          -L::infinity(),
          L::denorm_min(),
          -L::denorm_min(),
          L::min() - L::denorm_min(),
          -(L::min() - L::denorm_min()),
          L::min(),
          -L::min(),
          L::max(),
          -L::max(),
          T(1),
          T(-1)};
}
constexpr int kSpecials = 17;
constexpr int kMinusZero = 4, kDenormMin = 7, kLargestSubnormal = 9, kMax = 13;

struct Recipe {
  uint64_t n;
  Pattern pattern;
  int special = 0;   // index into special_values() (one_special, uniform, alternating, pair first)
  int second = 0;    // the pair's second value
  uint64_t key = 0;  // the draws of this recipe
};

// Counter-based draws: value i of a recipe depends only on (key, i).
double unit_draw(uint64_t key, uint64_t i) {  // [0, 1)
  return static_cast<double>(splitmix64_finalize(key + i) >> 11) * 0x1p-53;
}

template <class T>
T draw(const Recipe& r, uint64_t i) {
  using L = std::numeric_limits<T>;
  switch (r.pattern) {
    case Pattern::mixed:
    case Pattern::one_special:
      return static_cast<T>(2 * unit_draw(r.key, i) - 1);
    case Pattern::positive: {
      const uint64_t b = splitmix64_finalize(r.key + i);
      return static_cast<T>(std::ldexp(1 + (b >> 11) * 0x1p-53, static_cast<int>(b % 18) - 8));
    }
    case Pattern::cancelling: {
      // Pair k holds v and -v, except every eighth pair, whose second value is -3v/4.
      const uint64_t k = i / 2;
      const T v = static_cast<T>(2 * unit_draw(r.key, k) - 1);
      if (i % 2 == 0) return v;
      return k % 8 == 7 ? static_cast<T>(-0.75 * static_cast<double>(v)) : -v;
    }
    case Pattern::wide: {
      // Exponents from below the smallest subnormal up to where n values stay below max / 4.
      const uint64_t b = splitmix64_finalize(r.key + i);
      int headroom = 2;
      while ((uint64_t{1} << headroom) < r.n + 1 && headroom < 62) ++headroom;
      const int lo = L::min_exponent - L::digits - 1, hi = L::max_exponent - 2 - headroom;
      const int e = lo + static_cast<int>((b >> 1) % static_cast<uint64_t>(hi - lo + 1));
      const double m = 1 + static_cast<double>(b >> 12) * 0x1p-52;
      return static_cast<T>((b & 1 ? -1 : 1) * std::ldexp(m, e));
    }
    case Pattern::special_pair:
      return special_values<T>()[i == 0 ? r.special : r.second];
    case Pattern::uniform:
      return special_values<T>()[r.special];
    case Pattern::alternating: {
      const T v = special_values<T>()[r.special];
      return i % 2 == 0 ? v : -v;
    }
  }
  return T(0);
}

// Where a recipe with one special value puts it: spread over lanes and rows.
uint64_t special_position(const Recipe& r) {
  return (static_cast<uint64_t>(r.special) * 389 + 7) % r.n;
}

template <class T>
void fill(const Recipe& r, T* x, uint64_t begin, uint64_t end) {
  for (uint64_t i = begin; i < end; ++i) x[i] = draw<T>(r, i);
  if (r.pattern == Pattern::one_special) {
    const uint64_t p = special_position(r);
    if (p >= begin && p < end) x[p] = special_values<T>()[r.special];
  }
}

std::vector<Recipe> recipes(const Options& options) {
  std::vector<Recipe> list;
  std::vector<uint64_t> sizes = {0, 1, 3, 5, 256, 257, 1023, 65537};
  const uint64_t n = options.n;
  if (std::find(sizes.begin(), sizes.end(), n) == sizes.end()) sizes.push_back(n);
  for (uint64_t size : sizes) {
    for (Pattern p : {Pattern::mixed, Pattern::positive, Pattern::cancelling, Pattern::wide}) {
      list.push_back({size, p});
      if (size == 0) break;
    }
  }
  // --shapes: lengths drawn within the element budget (the tree's partial blocks and levels),
  // each with one of the four value patterns.
  ShapeDraw draw(options.seed, "reduce");
  for (uint64_t i = 0; i < options.shapes; ++i) {
    const uint64_t size = draw.extent(random_shape_budget(options));
    list.push_back({size, draw.pick(std::vector<Pattern>{Pattern::mixed, Pattern::positive,
                                                         Pattern::cancelling, Pattern::wide})});
  }
  for (int s = 0; s < kSpecials; ++s) list.push_back({1023, Pattern::one_special, s});
  for (int a = 0; a < kSpecials; ++a) {
    for (int b = 0; b < kSpecials; ++b) list.push_back({2, Pattern::special_pair, a, b});
  }
  list.push_back({1023, Pattern::uniform, kMinusZero});
  list.push_back({1023, Pattern::uniform, kDenormMin});
  list.push_back({1023, Pattern::uniform, kLargestSubnormal});
  list.push_back({3, Pattern::uniform, kMax});
  list.push_back({1023, Pattern::alternating, kMax});
  return list;
}

template <class T>
std::string recipe_text(const Recipe& r) {
  const Dtype dt = sizeof(T) == 4 ? Dtype::f32 : Dtype::f64;
  std::string t = "n = " + std::to_string(r.n) + ", " + pattern_name(r.pattern);
  const std::vector<T> s = special_values<T>();
  if (r.pattern == Pattern::special_pair) {
    t += " (" + number(s[r.special], dt) + ", " + number(s[r.second], dt) + ")";
  } else if (r.pattern == Pattern::one_special) {
    t += " (" + number(s[r.special], dt) + " at " + std::to_string(special_position(r)) + ")";
  } else if (r.pattern == Pattern::uniform || r.pattern == Pattern::alternating) {
    t += " (" + number(s[r.special], dt) + ")";
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// One reduction of one recipe.

class ReduceCase : public ComparedCase {
 public:
  ReduceCase(Reduction kind, Dtype dtype, Recipe recipe)
      : kind_(kind), dtype_(dtype), recipe_(recipe) {}

  std::string op() const override { return name_of(kind_); }
  Dtype dtype() const override { return dtype_; }
  Bound bound() const override { return Bound::bit_exact(); }
  std::string oracle_name() const override { return "a compensated long double sum"; }
  std::string oracle_label() const override { return "ref vs long double"; }
  Bound oracle_bound() const override { return oracle_bound_of(kind_); }
  std::string shape() const override { return text(); }

  void make_inputs(uint64_t) override {
    x_ = HostArray(dtype_, recipe_.n);
    if (dtype_ == Dtype::f32) {
      fill<float>(recipe_, x_.as<float>(), 0, recipe_.n);
    } else {
      fill<double>(recipe_, x_.as<double>(), 0, recipe_.n);
    }
  }

  HostArrays run(Backend backend) override {
    HostArrays out;
    out.push_back(download(*run_reduction(kind_, *upload(backend, x_, 0, recipe_.n))));
    return out;
  }

  std::string describe(size_t, uint64_t, double got, double want) const override {
    return text() + ": " + number(got, dtype_) + ", expected " + number(want, dtype_);
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    dtype_ == Dtype::f32 ? typed_oracle<float>(reference[0].as<float>()[0], stats)
                         : typed_oracle<double>(reference[0].as<double>()[0], stats);
  }

 private:
  std::string text() const {
    return dtype_ == Dtype::f32 ? recipe_text<float>(recipe_) : recipe_text<double>(recipe_);
  }

  template <class T>
  void typed_oracle(T result, Stats& stats) const {
    OracleSums sums;
    sums.add(x_.as<T>(), 0, recipe_.n);
    record_check<T>(stats, check_result<T>(kind_, recipe_.n, sums, result), text(), result);
  }

  Reduction kind_;
  Dtype dtype_;
  Recipe recipe_;
  HostArray x_;
};

// ---------------------------------------------------------------------------------------------
// 2^31 + 17 float32 elements: one buffer filled in place on all cores (on the reference backend
// the subject's own payload, so host memory holds one copy), the reference launcher called on the
// same host values, and the oracle summed in chunks on all cores.

constexpr uint64_t kLargeN = (uint64_t{1} << 31) + 17;
constexpr uint64_t kLargeChunk = uint64_t{1} << 22;
constexpr uint64_t kLargeChunks = (kLargeN + kLargeChunk - 1) / kLargeChunk;

// Fills or sums the large input on every core, advancing the progress bar chunk by chunk.
void on_all_cores(const std::function<void(uint64_t, uint64_t, int)>& body, ProgressBar& progress) {
  const uint64_t base = progress.done();
  parallel_chunks(kLargeN, kLargeChunk, body,
                  [&](uint64_t chunks) { progress.show(base + chunks); });
}

class ReduceLargeCase : public ParityCase {
 public:
  explicit ReduceLargeCase(Reduction kind) : kind_(kind) {}

  std::string op() const override { return name_of(kind_); }
  std::string label() const override { return op() + " [2^31+17]"; }
  Dtype dtype() const override { return Dtype::f32; }
  std::string oracle_name() const override { return "a compensated long double sum"; }
  // Filling and the oracle report each chunk; the two single reductions one step each.
  uint64_t steps() const override { return 2 * kLargeChunks + 2; }

  void evaluate(const RunContext& ctx, RowTable& rows) override {
    Row& row = rows.row(label(), Dtype::f32, "reference", Bound::bit_exact());
    Row* vs_oracle = ctx.with_oracle ? &rows.row(label(), Dtype::f32, "ref vs long double",
                                                 oracle_bound_of(kind_))
                                     : nullptr;
    try {
      compare(ctx, row, vs_oracle);
    } catch (const std::exception& e) {
      if (row.error.empty()) row.error = e.what();
    }
  }

 private:
  void compare(const RunContext& ctx, Row& row, Row* vs_oracle) const {
    const uint64_t bytes = kLargeN * sizeof(float);
    if (!large_case_fits(ctx, bytes, bytes, row)) {
      if (vs_oracle != nullptr) vs_oracle->skipped = true;
      return;
    }
    const bool on_device = ctx.subject == Backend::cuda;
    // On the reference backend the values are written straight into the subject's buffer.
    std::unique_ptr<Buffer> subject_input;
    std::unique_ptr<float[]> host_copy;
    float* x = nullptr;
    if (on_device) {
      host_copy.reset(new float[kLargeN]);
      x = host_copy.get();
    } else {
      subject_input = Buffer::allocate(Backend::reference, Dtype::f32, kLargeN, "parity");
      x = subject_input->as<float>();
    }
    const Recipe recipe{kLargeN, Pattern::positive, 0, 0,
                        case_key(ctx.options.seed, label().c_str(), true)};
    on_all_cores([&](uint64_t b, uint64_t e, int) { fill<float>(recipe, x, b, e); }, ctx.progress);
    if (on_device) {
      subject_input = upload_words(Backend::cuda, Dtype::f32, reinterpret_cast<const uint8_t*>(x),
                                   kLargeN, Dtype::f32, "parity");
    }
    float got = 0;
    download_words(*run_reduction(kind_, *subject_input), reinterpret_cast<uint8_t*>(&got),
                   Dtype::f32, "parity");
    if (on_device) subject_input.reset();
    ctx.progress.step();
    const float want = reference_reduction<float>(kind_, x, kLargeN);
    ctx.progress.step();
    const std::string text = "n = " + std::to_string(kLargeN) + ", positive";
    if (same_bits<float>(got, want)) {
      row.stats.record_equal();
    } else {
      Deviation d;
      d.ulps = ulp_distance<float>(got, want);
      row.stats.record(d, [&] {
        return text + ": " + number(got, Dtype::f32) + ", expected " + number(want, Dtype::f32);
      });
    }
    if (vs_oracle == nullptr) return;
    std::vector<OracleSums> partial(worker_count());
    on_all_cores([&](uint64_t b, uint64_t e, int w) { partial[w].add(x, b, e); }, ctx.progress);
    OracleSums sums;
    for (const OracleSums& p : partial) sums.merge(p);
    record_check<float>(vs_oracle->stats, check_result<float>(kind_, kLargeN, sums, want), text,
                        want);
  }

  Reduction kind_;
};

CaseList make_reduce_cases(const Options& options) {
  CaseList cases;
  for (Reduction kind : {Reduction::sum, Reduction::mean}) {
    for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
      const uint64_t key = case_key(options.seed, name_of(kind), dtype == Dtype::f32);
      std::vector<Recipe> list = recipes(options);
      for (size_t k = 0; k < list.size(); ++k) {
        list[k].key = splitmix64_finalize(key + k);
        cases.push_back(std::make_unique<ReduceCase>(kind, dtype, list[k]));
      }
    }
  }
  if (options.large) {
    for (Reduction kind : {Reduction::sum, Reduction::mean}) {
      cases.push_back(std::make_unique<ReduceLargeCase>(kind));
    }
  }
  return cases;
}

const FamilyRegistration kReduceFamily("reduce", &make_reduce_cases);

}  // namespace
}  // namespace tlrt::parity
