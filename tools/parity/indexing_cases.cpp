// Parity cases of the indexing family (SPEC-ops 11) in float32 and float64: gather_rows,
// scatter_add_rows, scatter_add, gather_at and scatter_add_at. Every result is bit-defined (the
// gathers are selections, the scatters the ordered fold, which tlrt uses whatever the
// deterministic setting says), so the subject must equal the reference backend word for word,
// NaNs of any payload counting as equal for the scatters (SPEC-ops 2.4) and not for the gathers
// (copies keep payloads). Without a GPU (or with --oracle) the reference is measured against an
// independent host evaluation: rows cut from the inputs, and the fold written per target (each
// target's sources collected first, then folded from -0 + base in increasing source order).
// Inputs: special words (NaNs with payloads, +-inf, +-0, subnormals, extremes) then random words
// of moderate magnitude; index lists with repeats, out-of-range entries (up to 2^32 - 1), all
// sources on one target, and zero extents; positions with NaN, +-inf, -0, negatives, fractions and
// values past the table; with --shapes N more extents, counts and patterns drawn from the seed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/indexing/indexing.h"
#include "kernels/random/splitmix.h"
#include "runtime/indexing_dispatch.h"
#include "tools/parity/case_key.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;

enum class Op { gather_rows, scatter_add_rows, scatter_add, gather_at, scatter_add_at };

const char* name_of(Op op) {
  switch (op) {
    case Op::gather_rows:
      return "gather_rows";
    case Op::scatter_add_rows:
      return "scatter_add_rows";
    case Op::scatter_add:
      return "scatter_add";
    case Op::gather_at:
      return "gather_at";
    case Op::scatter_add_at:
      return "scatter_add_at";
  }
  return "?";
}

bool is_gather(Op op) {
  return op == Op::gather_rows || op == Op::gather_at;
}

const uint32_t kSpecialF32[] = {0x7FC00000u, 0xFFC12345u, 0x7F800001u, 0x00000000u,
                                0x80000000u, 0x7F800000u, 0xFF800000u, 0x00000001u,
                                0x807FFFFFu, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u};
const uint64_t kSpecialF64[] = {
    0x7FF8000000000000ull, 0xFFF80000DEADBEEFull, 0x7FF0000000000001ull, 0x0000000000000000ull,
    0x8000000000000000ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x0000000000000001ull,
    0x800FFFFFFFFFFFFFull, 0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull, 0x3FF0000000000000ull};
constexpr uint64_t kSpecials = sizeof(kSpecialF32) / sizeof(kSpecialF32[0]);

void put(HostArray& x, uint64_t i, double v) {
  if (x.dtype() == Dtype::f32)
    x.as<float>()[i] = static_cast<float>(v);
  else
    x.as<double>()[i] = v;
}

// Specials first (when `specials`), then signed values of moderate magnitude (so sums round).
HostArray values_array(Dtype dtype, uint64_t n, uint64_t key, bool specials) {
  HostArray x(dtype, n);
  for (uint64_t i = 0; i < n; ++i) {
    if (specials && i < kSpecials) {
      if (dtype == Dtype::f32)
        std::memcpy(x.bytes() + 4 * i, &kSpecialF32[i], 4);
      else
        std::memcpy(x.bytes() + 8 * i, &kSpecialF64[i], 8);
      continue;
    }
    const uint64_t r = splitmix64_finalize(key + i);
    const double m = static_cast<double>(r >> 40) - static_cast<double>(1u << 23);
    put(x, i, std::ldexp(m, static_cast<int>((r >> 8) % 40) - 20));
  }
  return x;
}

// Positions over a table of `size`: the awkward ones first, then fractions in [-3, size + 3).
HostArray positions_array(Dtype dtype, uint64_t n, uint32_t size, uint64_t key) {
  const double awkward[] = {NAN,
                            INFINITY,
                            -INFINITY,
                            -0.0,
                            -0.5,
                            -3,
                            2.75,
                            1e30,
                            -1e30,
                            static_cast<double>(size) - 1,
                            static_cast<double>(size) - 0.5};
  HostArray x(dtype, n);
  for (uint64_t i = 0; i < n; ++i) {
    if (i < std::size(awkward)) {
      put(x, i, awkward[i]);
      continue;
    }
    const uint64_t r = splitmix64_finalize(key + i);
    put(x, i, static_cast<double>(r % (uint64_t{size + 6} * 8)) / 8.0 - 3.0);
  }
  return x;
}

uint64_t word_at(const HostArray& x, uint64_t i) {
  const size_t width = dtype_width(x.dtype());
  uint64_t w = 0;
  std::memcpy(&w, x.bytes() + width * i, width);
  return w;
}

std::string hex_word(uint64_t w, Dtype dtype) {
  char s[24];
  std::snprintf(s, sizeof s, dtype == Dtype::f32 ? "0x%08llx" : "0x%016llx",
                static_cast<unsigned long long>(w));
  return s;
}

void compare_words(const HostArray& got, const HostArray& want, bool nan_free, Stats& stats,
                   const std::function<std::string(uint64_t)>& where) {
  if (got.size() != want.size() || got.dtype() != want.dtype()) {
    throw std::runtime_error("result has " + std::to_string(got.size()) + " elements, expected " +
                             std::to_string(want.size()));
  }
  for (uint64_t i = 0; i < got.size(); ++i) {
    const uint64_t g = word_at(got, i), w = word_at(want, i);
    if (g == w || (nan_free && std::isnan(got.at(i)) && std::isnan(want.at(i)))) {
      stats.record_equal();
      continue;
    }
    Deviation d;
    d.ulps = ulps_between(got.at(i), want.at(i), got.dtype());
    d.within = false;
    stats.record(d, [&] {
      return where(i) + ": " + hex_word(g, got.dtype()) + ", expected " + hex_word(w, want.dtype());
    });
  }
}

enum class IndexPattern { random, one_target, none_in_range };

struct Recipe {
  uint32_t rows = 0;  // rows / n / size
  uint32_t cols = 1;
  uint64_t k = 0;  // index list length / count
  IndexPattern pattern = IndexPattern::random;
  uint64_t key = 0;
};

class IndexingCase : public ParityCase {
 public:
  IndexingCase(Op op, Dtype dtype, Recipe r) : op_(op), dtype_(dtype), r_(r) {}

  std::string op() const override { return name_of(op_); }
  Dtype dtype() const override { return dtype_; }
  std::string shape() const override {
    const char* pattern = r_.pattern == IndexPattern::random       ? "random"
                          : r_.pattern == IndexPattern::one_target ? "one target"
                                                                   : "none in range";
    return "rows = " + std::to_string(r_.rows) + ", cols = " + std::to_string(r_.cols) +
           ", k = " + std::to_string(r_.k) + ", " + pattern;
  }
  std::string oracle_name() const override {
    return is_gather(op_) ? "input rows" : "fold per target";
  }

  void evaluate(const RunContext& ctx, RowTable& rows) override {
    Row& vs_reference = rows.row(label(), dtype_, "reference", Bound::bit_exact());
    Row* vs_oracle = ctx.with_oracle
                         ? &rows.row(label(), dtype_, "ref vs " + oracle_name(), Bound::bit_exact())
                         : nullptr;
    try {
      make_inputs();
      const HostArray want = run(Backend::reference);
      const auto where = [&](uint64_t i) { return shape() + ", element " + std::to_string(i); };
      const bool nan_free = !is_gather(op_);
      compare_words(run(ctx.subject), want, nan_free, vs_reference.stats, where);
      if (vs_oracle != nullptr) compare_words(want, oracle(), nan_free, vs_oracle->stats, where);
    } catch (const std::exception& e) {
      if (vs_reference.error.empty()) vs_reference.error = shape() + ": " + e.what();
    }
  }

 private:
  void make_inputs() {
    const uint64_t base_n = uint64_t{r_.rows} * r_.cols;
    switch (op_) {
      case Op::gather_rows:
        a_ = values_array(dtype_, base_n, r_.key, true);
        break;
      case Op::scatter_add_rows:
      case Op::scatter_add:
        a_ = values_array(dtype_, base_n, r_.key, true);
        b_ = values_array(dtype_, r_.k * r_.cols, r_.key ^ 7, r_.k * r_.cols > 64);
        break;
      case Op::gather_at:
        a_ = values_array(dtype_, r_.rows, r_.key, true);
        b_ = positions_array(dtype_, r_.k, r_.rows, r_.key ^ 7);
        break;
      case Op::scatter_add_at:
        a_ = positions_array(dtype_, r_.k, r_.rows, r_.key);
        b_ = values_array(dtype_, r_.k, r_.key ^ 7, r_.k > 64);
        break;
    }
    idx_.assign(r_.k, 0);
    for (uint64_t i = 0; i < r_.k; ++i) {
      const uint64_t h = splitmix64_finalize(r_.key * 31 + i);
      switch (r_.pattern) {
        case IndexPattern::random:
          // About one in nine out of range, a few at the top of UInt32.
          idx_[i] =
              h % 97 == 0 ? 0xFFFFFFFFu : static_cast<uint32_t>(h % (r_.rows + r_.rows / 8 + 1));
          break;
        case IndexPattern::one_target:
          idx_[i] = r_.rows / 2;
          break;
        case IndexPattern::none_in_range:
          idx_[i] = r_.rows + static_cast<uint32_t>(h % 3);
          break;
      }
    }
  }

  HostIndices host_indices() const {
    HostIndices list;
    list.count = idx_.size();
    list.check = [] {};
    list.fill = [this](uint32_t* dst, uint64_t first, uint64_t count) {
      std::copy(idx_.begin() + static_cast<ptrdiff_t>(first),
                idx_.begin() + static_cast<ptrdiff_t>(first + count), dst);
    };
    return list;
  }

  HostArray run(Backend backend) const {
    const std::unique_ptr<Buffer> a = upload(backend, a_, 0, a_.size());
    switch (op_) {
      case Op::gather_rows:
        return download(*gather_rows(*a, r_.rows, r_.cols, host_indices(), "parity"));
      case Op::scatter_add_rows:
      case Op::scatter_add: {
        const std::unique_ptr<Buffer> b = upload(backend, b_, 0, b_.size());
        return download(*scatter_add_rows(*a, *b, r_.rows, r_.cols, host_indices(), "parity"));
      }
      case Op::gather_at: {
        const std::unique_ptr<Buffer> b = upload(backend, b_, 0, b_.size());
        return download(*gather_at(*a, r_.rows, *b, r_.k, "parity"));
      }
      case Op::scatter_add_at: {
        const std::unique_ptr<Buffer> b = upload(backend, b_, 0, b_.size());
        return download(*scatter_add_at(r_.rows, *a, *b, r_.k, "parity"));
      }
    }
    throw std::logic_error("unknown op");
  }

  template <class T>
  HostArray oracle_as() const {
    const uint64_t cols = r_.cols;
    if (op_ == Op::gather_rows || op_ == Op::gather_at) {
      const uint64_t n = op_ == Op::gather_rows ? r_.k * cols : r_.k;
      HostArray out(dtype_, n);
      const size_t width = sizeof(T);
      for (uint64_t i = 0; i < r_.k; ++i) {
        uint64_t src = 0;
        bool zero = false;
        if (op_ == Op::gather_rows) {
          zero = idx_[i] >= r_.rows;
          src = uint64_t{idx_[i]} * cols;
        } else {
          // The addressing written out: NaN -> 0, +inf -> size-1, -inf -> 0, clamp, trunc.
          double p = b_.at(i);
          const double last = static_cast<double>(r_.rows) - 1;
          if (std::isnan(p)) p = 0;
          p = std::min(std::max(p, 0.0), last);
          src = static_cast<uint64_t>(std::trunc(p));
        }
        const uint64_t span = op_ == Op::gather_rows ? cols : 1;
        if (zero)
          std::memset(out.bytes() + i * span * width, 0, span * width);
        else
          std::memcpy(out.bytes() + i * span * width, a_.bytes() + src * width, span * width);
      }
      return out;
    }
    // Scatters: targets and sources.
    const bool at = op_ == Op::scatter_add_at;
    const uint64_t rows = r_.rows;
    std::vector<uint64_t> target(r_.k);
    for (uint64_t i = 0; i < r_.k; ++i) {
      if (at) {
        double p = a_.at(i);
        if (std::isnan(p)) p = 0;
        p = std::min(std::max(p, 0.0), static_cast<double>(rows) - 1);
        target[i] = static_cast<uint64_t>(std::trunc(p));
      } else {
        target[i] = idx_[i];
      }
    }
    const HostArray& values = b_;
    HostArray out(dtype_, rows * cols);
    if (!at && rows * cols != 0) std::memcpy(out.bytes(), a_.bytes(), rows * cols * sizeof(T));
    if (at) std::memset(out.bytes(), 0, rows * sizeof(T));
    std::vector<std::vector<uint64_t>> sources(rows);
    for (uint64_t i = 0; i < r_.k; ++i) {
      if (target[i] < rows) sources[target[i]].push_back(i);
    }
    for (uint64_t t = 0; t < rows; ++t) {
      if (sources[t].empty()) continue;
      for (uint64_t c = 0; c < cols; ++c) {
        volatile T acc = static_cast<T>(-0.0);
        acc = acc + out.as<T>()[t * cols + c];
        for (uint64_t s : sources[t]) acc = acc + values.as<T>()[s * cols + c];
        out.as<T>()[t * cols + c] = acc;
      }
    }
    return out;
  }

  HostArray oracle() const {
    return dtype_ == Dtype::f32 ? oracle_as<float>() : oracle_as<double>();
  }

  Op op_;
  Dtype dtype_;
  Recipe r_;
  HostArray a_, b_;
  std::vector<uint32_t> idx_;
};

std::vector<Recipe> recipes(Op op, uint64_t n) {
  std::vector<Recipe> list;
  const uint64_t big_k = std::max<uint64_t>(1, std::min<uint64_t>(n, uint64_t{1} << 22));
  if (op == Op::gather_at || op == Op::scatter_add_at) {
    for (uint32_t size : {1u, 2u, 5u, 1000u}) {
      for (uint64_t k : {uint64_t{0}, uint64_t{11}, uint64_t{4096}}) list.push_back({size, 1, k});
    }
    list.push_back({65537, 1, big_k});
    list.push_back({3, 1, big_k});  // long runs
    return list;
  }
  const bool single = op == Op::scatter_add;
  const std::vector<uint32_t> widths =
      single ? std::vector<uint32_t>{1} : std::vector<uint32_t>{1, 3, 4, 31, 32, 33, 256, 1000};
  for (uint32_t cols : widths) {
    list.push_back({0, cols, 17});
    list.push_back({17, cols, 0});
    list.push_back({64, cols, 500});
    list.push_back({4000, cols, 300});
    list.push_back({64, cols, 5000, IndexPattern::one_target});
    list.push_back({64, cols, 50, IndexPattern::none_in_range});
  }
  list.push_back({5, 0, 9});
  const uint32_t cols = single ? 1 : 64;
  const uint64_t k = std::max<uint64_t>(1, big_k / cols);
  list.push_back({static_cast<uint32_t>(std::max<uint64_t>(1, k / 4)), cols, k});
  list.push_back({1000, cols, k, IndexPattern::one_target});
  return list;
}

constexpr Op kOps[] = {Op::gather_rows, Op::scatter_add_rows, Op::scatter_add, Op::gather_at,
                       Op::scatter_add_at};
constexpr size_t kOpCount = sizeof(kOps) / sizeof(kOps[0]);

// The --shapes recipes, per op in kOps' order: each op's own parameters drawn from the seed with
// every operand and the result within the element budget. Rows ops: width (mostly up to 1024),
// rows and index count, empty extents included, and the index pattern; positions ops: the table
// size (at least 1) and the count.
std::vector<std::vector<Recipe>> random_recipes(const Options& options) {
  std::vector<std::vector<Recipe>> out(kOpCount);
  ShapeDraw draw(options.seed, "indexing");
  const uint64_t budget = random_shape_budget(options);
  for (uint64_t i = 0; i < options.shapes; ++i) {
    for (size_t o = 0; o < kOpCount; ++o) {
      Recipe r;
      if (kOps[o] == Op::gather_at || kOps[o] == Op::scatter_add_at) {
        r.rows = static_cast<uint32_t>(draw.extent(budget));
        r.k = draw.extent(budget, 3);
      } else {
        r.cols = kOps[o] == Op::scatter_add
                     ? 1
                     : static_cast<uint32_t>(draw.extent(
                           draw.percent(75) ? std::min<uint64_t>(budget, 1024) : budget, 3));
        const uint64_t room = budget / std::max<uint64_t>(r.cols, 1);
        r.rows = static_cast<uint32_t>(draw.extent(room, 3));
        r.k = draw.extent(room, 3);
        const uint64_t pattern = draw.below(10);
        r.pattern = pattern < 6   ? IndexPattern::random
                    : pattern < 8 ? IndexPattern::one_target
                                  : IndexPattern::none_in_range;
      }
      out[o].push_back(r);
    }
  }
  return out;
}

CaseList make_indexing_cases(const Options& options) {
  CaseList cases;
  const std::vector<std::vector<Recipe>> drawn = random_recipes(options);
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    const bool f32 = dtype == Dtype::f32;
    for (size_t o = 0; o < kOpCount; ++o) {
      const Op op = kOps[o];
      if (!options.selected(name_of(op))) continue;
      const uint64_t key = case_key(options.seed, name_of(op), f32);
      std::vector<Recipe> list = recipes(op, options.n);
      list.insert(list.end(), drawn[o].begin(), drawn[o].end());
      for (size_t i = 0; i < list.size(); ++i) {
        list[i].key = splitmix64_finalize(key + i);
        cases.push_back(std::make_unique<IndexingCase>(op, dtype, list[i]));
      }
    }
  }
  return cases;
}

const FamilyRegistration kIndexingFamily("indexing", &make_indexing_cases);

}  // namespace
}  // namespace tlrt::parity
