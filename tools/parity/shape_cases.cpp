// Parity cases of the shape ops (SPEC-ops 8) in float32 and float64: concat1d, slice1d,
// broadcast_vec_to_cols, broadcast_to and swap_adjacent_at_depth. All are byte copies, so results
// are compared as whole words: the subject must equal the reference backend bit for bit, NaN
// payloads and signalling NaNs included (stricter than the "both NaN" rule of the arithmetic ops,
// which ComparedCase applies), and without a GPU (or with
// --oracle) the reference is measured against the words cut from the host inputs directly.
// Inputs: a block of special words (quiet and signalling NaNs with payloads and both signs, +-0,
// +-inf, the extreme subnormals and normals) followed by random words, at 0, 1, 3, 5, 256, 1023,
// 65537 and --n elements:
//   * concat1d: each size with an empty, a one-element, a five-element and an equal second
//     operand, and the empty first operand with each size;
//   * slice1d: the whole buffer, empty windows at both ends, the interior from offset 1, the upper
//     half, the last element and a random window;
//   * broadcast_vec_to_cols: rows x cols from 0 to 1000 x 1000 (odd and 16-byte multiple rows);
//   * broadcast_to: fixed geometries (TorchLean's attention map [2, 0, 1], plain transposes with
//     tile edges, broadcast rows) and random ones: input ranks 0-5, up to two inserted axes, a
//     random permutation, extent-1 input axes broadcast;
//   * swap_adjacent_at_depth: fixed shapes (short and long contiguous runs, plain transposes) and
//     random ranks 2-6 with every depth; the oracle is the spec's index formula;
//   * --shapes N: N more recipes of each op drawn from the seed (ranks, extents, maps, depths,
//     sizes and windows);
//   * --large: slice1d windows past element 2^31 of a 2^31 + 17 element float32 buffer.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/random/splitmix.h"
#include "kernels/shape/shape.h"
#include "runtime/context.h"
#include "runtime/shape_dispatch.h"
#include "runtime/shape_geometry.h"
#include "runtime/transfer.h"
#include "tools/parity/case_key.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;

enum class ShapeOp { concat1d, slice1d };

const char* name_of(ShapeOp op) {
  return op == ShapeOp::concat1d ? "concat1d" : "slice1d";
}

const char* kOracleLabel = "ref vs input words";

// ---------------------------------------------------------------------------------------------
// Words

const uint32_t kSpecialF32[] = {0x7FC00000u, 0xFFC00000u, 0x7FC12345u, 0xFFD0BEEFu, 0x7F800001u,
                                0xFF80DEADu, 0x7FBFFFFFu, 0x00000000u, 0x80000000u, 0x7F800000u,
                                0xFF800000u, 0x00000001u, 0x807FFFFFu, 0x00800000u, 0x7F7FFFFFu,
                                0xFF7FFFFFu, 0x3F800000u};
const uint64_t kSpecialF64[] = {0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF80000DEADBEEFull,
                                0xFFFC000000000123ull, 0x7FF0000000000001ull, 0xFFF00000CAFEF00Dull,
                                0x7FF7FFFFFFFFFFFFull, 0x0000000000000000ull, 0x8000000000000000ull,
                                0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x0000000000000001ull,
                                0x800FFFFFFFFFFFFFull, 0x0010000000000000ull, 0x7FEFFFFFFFFFFFFFull,
                                0xFFEFFFFFFFFFFFFFull, 0x3FF0000000000000ull};
constexpr uint64_t kSpecials = sizeof(kSpecialF32) / sizeof(kSpecialF32[0]);
static_assert(kSpecials == sizeof(kSpecialF64) / sizeof(kSpecialF64[0]), "one list per dtype");

// Word i of an operand drawn with `key`: the special block first, then random bits.
HostArray operand(Dtype dtype, uint64_t n, uint64_t key) {
  HostArray x(dtype, n);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t r = splitmix64_finalize(key + i);
    if (dtype == Dtype::f32) {
      const uint32_t w = i < kSpecials ? kSpecialF32[i] : static_cast<uint32_t>(r >> 32);
      std::memcpy(x.bytes() + 4 * i, &w, 4);
    } else {
      const uint64_t w = i < kSpecials ? kSpecialF64[i] : r;
      std::memcpy(x.bytes() + 8 * i, &w, 8);
    }
  }
  return x;
}

// The word of element i (the dtype's width, zero-extended).
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

// got against want word by word into stats; `where` describes element i.
void compare_words(const HostArray& got, const HostArray& want, Stats& stats,
                   const std::function<std::string(uint64_t)>& where) {
  if (got.size() != want.size() || got.dtype() != want.dtype()) {
    throw std::runtime_error("result has " + std::to_string(got.size()) + " " +
                             dtype_name(got.dtype()) + " elements, expected " +
                             std::to_string(want.size()) + " " + dtype_name(want.dtype()));
  }
  for (uint64_t i = 0; i < got.size(); ++i) {
    const uint64_t g = word_at(got, i), w = word_at(want, i);
    if (g == w) {
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

// ---------------------------------------------------------------------------------------------
// One op on one input recipe.

struct Recipe {
  uint64_t n = 0;      // concat1d: size(a); slice1d: size(x)
  uint64_t m = 0;      // concat1d: size(b)
  uint64_t start = 0;  // slice1d
  uint64_t len = 0;    // slice1d
  uint64_t key = 0;
};

class ShapeCase : public ParityCase {
 public:
  ShapeCase(ShapeOp op, Dtype dtype, Recipe recipe) : op_(op), dtype_(dtype), r_(recipe) {}

  std::string op() const override { return name_of(op_); }
  Dtype dtype() const override { return dtype_; }
  std::string shape() const override {
    return op_ == ShapeOp::concat1d
               ? "n = " + std::to_string(r_.n) + ", m = " + std::to_string(r_.m)
               : "n = " + std::to_string(r_.n) + ", start = " + std::to_string(r_.start) +
                     ", len = " + std::to_string(r_.len);
  }
  std::string oracle_name() const override { return "the input words"; }

  void evaluate(const RunContext& ctx, RowTable& rows) override {
    Row& vs_reference = rows.row(label(), dtype_, "reference", Bound::bit_exact());
    Row* vs_oracle =
        ctx.with_oracle ? &rows.row(label(), dtype_, kOracleLabel, Bound::bit_exact()) : nullptr;
    try {
      a_ = operand(dtype_, r_.n, r_.key);
      if (op_ == ShapeOp::concat1d) b_ = operand(dtype_, r_.m, splitmix64_finalize(r_.key ^ 1));
      const HostArray want = run(Backend::reference);
      const auto where = [&](uint64_t i) { return shape() + ", element " + std::to_string(i); };
      compare_words(run(ctx.subject), want, vs_reference.stats, where);
      if (vs_oracle != nullptr) compare_words(want, expected(), vs_oracle->stats, where);
    } catch (const std::exception& e) {
      if (vs_reference.error.empty()) vs_reference.error = shape() + ": " + e.what();
    }
  }

 private:
  HostArray run(Backend backend) const {
    const std::unique_ptr<Buffer> a = upload(backend, a_, 0, r_.n);
    if (op_ == ShapeOp::concat1d) {
      const std::unique_ptr<Buffer> b = upload(backend, b_, 0, r_.m);
      return download(*concat1d(*a, *b, r_.n, r_.m, "parity"));
    }
    return download(*slice1d(*a, r_.n, r_.start, r_.len, "parity"));
  }

  // The result cut from the host inputs.
  HostArray expected() const {
    const size_t width = dtype_width(dtype_);
    if (op_ == ShapeOp::concat1d) {
      HostArray out(dtype_, r_.n + r_.m);
      if (r_.n != 0) std::memcpy(out.bytes(), a_.bytes(), r_.n * width);
      if (r_.m != 0) std::memcpy(out.bytes() + r_.n * width, b_.bytes(), r_.m * width);
      return out;
    }
    HostArray out(dtype_, r_.len);
    if (r_.len != 0) std::memcpy(out.bytes(), a_.bytes() + r_.start * width, r_.len * width);
    return out;
  }

  ShapeOp op_;
  Dtype dtype_;
  Recipe r_;
  HostArray a_, b_;
};

std::vector<Recipe> concat_recipes(uint64_t n) {
  std::vector<uint64_t> sizes = {0, 1, 3, 5, 256, 1023, 65537};
  if (std::find(sizes.begin(), sizes.end(), n) == sizes.end()) sizes.push_back(n);
  std::vector<Recipe> list;
  for (uint64_t s : sizes) {
    for (uint64_t m : {uint64_t{0}, uint64_t{1}, uint64_t{5}, s}) list.push_back({s, m});
    if (s != 0) list.push_back({0, s});
  }
  return list;
}

std::vector<Recipe> slice_recipes(uint64_t n, uint64_t key) {
  std::vector<uint64_t> sizes = {0, 1, 3, 5, 256, 1023, 65537};
  if (std::find(sizes.begin(), sizes.end(), n) == sizes.end()) sizes.push_back(n);
  std::vector<Recipe> list;
  for (uint64_t s : sizes) {
    list.push_back({s, 0, 0, s});
    list.push_back({s, 0, 0, 0});
    list.push_back({s, 0, s, 0});
    if (s >= 2) list.push_back({s, 0, 1, s - 2});
    if (s >= 1) list.push_back({s, 0, s / 2, s - s / 2});
    if (s >= 1) list.push_back({s, 0, s - 1, 1});
    const uint64_t start = splitmix64_finalize(key + s) % (s + 1);
    list.push_back({s, 0, start, splitmix64_finalize(key ^ s) % (s - start + 1)});
  }
  return list;
}

// ---------------------------------------------------------------------------------------------
// slice1d past element 2^31: one 2^31 + 17 element float32 buffer filled in place on all cores
// (on the reference backend the subject's own payload, so host memory holds one copy), windows
// across element 2^31 and at the end; the words are a formula of the index, so the oracle needs
// no copy of the input.

constexpr uint64_t kLargeN = (uint64_t{1} << 31) + 17;
constexpr uint64_t kLargeChunk = uint64_t{1} << 22;
constexpr uint64_t kLargeChunks = (kLargeN + kLargeChunk - 1) / kLargeChunk;

struct Window {
  uint64_t start, len;
};
const Window kLargeWindows[] = {{(uint64_t{1} << 31) - 5, 20}, {kLargeN - 9, 9}, {0, 7}};

uint32_t large_word(uint64_t key, uint64_t i) {
  return static_cast<uint32_t>(splitmix64_finalize(key + i) >> 32);
}

class SliceLargeCase : public ParityCase {
 public:
  explicit SliceLargeCase(uint64_t key) : key_(key) {}

  std::string op() const override { return name_of(ShapeOp::slice1d); }
  std::string label() const override { return op() + " [2^31+17]"; }
  Dtype dtype() const override { return Dtype::f32; }
  std::string oracle_name() const override { return "the input words"; }
  // Filling reports each chunk; the windows one step each.
  uint64_t steps() const override { return kLargeChunks + std::size(kLargeWindows); }

  void evaluate(const RunContext& ctx, RowTable& rows) override {
    Row& row = rows.row(label(), Dtype::f32, "reference", Bound::bit_exact());
    Row* vs_oracle = ctx.with_oracle
                         ? &rows.row(label(), Dtype::f32, kOracleLabel, Bound::bit_exact())
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
    std::unique_ptr<Buffer> subject_input;
    std::unique_ptr<uint32_t[]> host_copy;
    uint32_t* x = nullptr;
    if (on_device) {
      host_copy.reset(new uint32_t[kLargeN]);
      x = host_copy.get();
    } else {
      subject_input = Buffer::allocate(Backend::reference, Dtype::f32, kLargeN, "parity");
      x = subject_input->as<uint32_t>();
    }
    const uint64_t base = ctx.progress.done();
    parallel_chunks(
        kLargeN, kLargeChunk,
        [&](uint64_t b, uint64_t e, int) {
          for (uint64_t i = b; i < e; ++i) x[i] = large_word(key_, i);
        },
        [&](uint64_t chunks) { ctx.progress.show(base + chunks); });
    if (on_device) {
      subject_input = upload_words(Backend::cuda, Dtype::f32, reinterpret_cast<const uint8_t*>(x),
                                   kLargeN, Dtype::f32, "parity");
    }
    for (const Window& w : kLargeWindows) {
      const auto where = [&](uint64_t i) {
        return "n = " + std::to_string(kLargeN) + ", start = " + std::to_string(w.start) +
               ", len = " + std::to_string(w.len) + ", element " + std::to_string(i);
      };
      const HostArray got = download(*slice1d(*subject_input, kLargeN, w.start, w.len, "parity"));
      HostArray want(Dtype::f32, w.len);
      kernels::slice1d_ref(reinterpret_cast<const float*>(x), w.start, w.len, want.as<float>());
      compare_words(got, want, row.stats, where);
      if (vs_oracle != nullptr) {
        HostArray formula(Dtype::f32, w.len);
        for (uint64_t i = 0; i < w.len; ++i) {
          const uint32_t word = large_word(key_, w.start + i);
          std::memcpy(formula.bytes() + 4 * i, &word, 4);
        }
        compare_words(want, formula, vs_oracle->stats, where);
      }
      ctx.progress.step();
    }
  }

  uint64_t key_;
};

// ---------------------------------------------------------------------------------------------
// broadcast_vec_to_cols, broadcast_to, swap_adjacent_at_depth: one input, a geometry.

enum class GeometryOp { vec_to_cols, broadcast_to, swap };

const char* name_of(GeometryOp op) {
  switch (op) {
    case GeometryOp::vec_to_cols:
      return "broadcast_vec_to_cols";
    case GeometryOp::broadcast_to:
      return "broadcast_to";
    case GeometryOp::swap:
      break;
  }
  return "swap_adjacent_at_depth";
}

struct Geometry {
  Dims in, out, map;  // broadcast_to; swap: in = dims; vec_to_cols: in = {rows}, out = {rows, cols}
  uint64_t depth = 0;  // swap
};

uint64_t product(const Dims& dims) {
  uint64_t p = 1;
  for (uint64_t d : dims) p *= d;
  return p;
}

class GeometryCase : public ParityCase {
 public:
  GeometryCase(GeometryOp op, Dtype dtype, Geometry g, uint64_t key)
      : op_(op), dtype_(dtype), g_(std::move(g)), key_(key) {}

  std::string op() const override { return name_of(op_); }
  Dtype dtype() const override { return dtype_; }
  std::string shape() const override {
    switch (op_) {
      case GeometryOp::vec_to_cols:
        return "rows = " + std::to_string(g_.out[0]) + ", cols = " + std::to_string(g_.out[1]);
      case GeometryOp::broadcast_to:
        return "inDims = " + dims_text(g_.in) + ", outDims = " + dims_text(g_.out) +
               ", axisMap = " + dims_text(g_.map);
      case GeometryOp::swap:
        break;
    }
    return "dims = " + dims_text(g_.in) + ", depth = " + std::to_string(g_.depth);
  }
  std::string oracle_name() const override { return "the spec's index formula"; }

  void evaluate(const RunContext& ctx, RowTable& rows) override {
    Row& vs_reference = rows.row(label(), dtype_, "reference", Bound::bit_exact());
    Row* vs_oracle =
        ctx.with_oracle ? &rows.row(label(), dtype_, kOracleLabel, Bound::bit_exact()) : nullptr;
    try {
      x_ = operand(dtype_, product(g_.in), key_);
      const HostArray want = run(Backend::reference);
      const auto where = [&](uint64_t i) { return shape() + ", element " + std::to_string(i); };
      compare_words(run(ctx.subject), want, vs_reference.stats, where);
      if (vs_oracle != nullptr) compare_words(want, expected(), vs_oracle->stats, where);
    } catch (const std::exception& e) {
      if (vs_reference.error.empty()) vs_reference.error = shape() + ": " + e.what();
    }
  }

 private:
  HostArray run(Backend backend) const {
    const std::unique_ptr<Buffer> x = upload(backend, x_, 0, x_.size());
    switch (op_) {
      case GeometryOp::vec_to_cols:
        return download(*broadcast_vec_to_cols(*x, g_.out[0], g_.out[1], "parity"));
      case GeometryOp::broadcast_to:
        return download(
            *broadcast_to(*x, broadcast_geometry(g_.in, g_.out, g_.map, "parity"), "parity"));
      case GeometryOp::swap:
        break;
    }
    return download(
        *swap_adjacent_at_depth(*x, swap_geometry(g_.in, g_.depth, "parity"), "parity"));
  }

  // out[o] = x[i] with i_a = 0 where in[a] = 1, else o_j for the j with map[j] = a + 1; swap and
  // vec_to_cols written as such maps.
  HostArray expected() const {
    Dims in = g_.in, out = g_.out, map = g_.map;
    if (op_ == GeometryOp::vec_to_cols) map = {1, 0};
    if (op_ == GeometryOp::swap) {
      out = in;
      std::swap(out[g_.depth], out[g_.depth + 1]);
      map.resize(in.size());
      for (size_t j = 0; j < in.size(); ++j) map[j] = j + 1;
      std::swap(map[g_.depth], map[g_.depth + 1]);
    }
    const size_t width = dtype_width(dtype_);
    HostArray r(dtype_, product(out));
    std::vector<uint64_t> o(out.size());
    for (uint64_t e = 0; e < r.size(); ++e) {
      uint64_t rest = e;
      for (size_t j = out.size(); j-- > 0;) {
        o[j] = rest % out[j];
        rest /= out[j];
      }
      uint64_t from = 0;
      for (size_t a = 0; a < in.size(); ++a) {
        uint64_t coord = 0;
        for (size_t j = 0; j < map.size(); ++j) {
          if (map[j] == a + 1 && in[a] != 1) coord = o[j];
        }
        from = from * in[a] + coord;
      }
      std::memcpy(r.bytes() + width * e, x_.bytes() + width * from, width);
    }
    return r;
  }

  GeometryOp op_;
  Dtype dtype_;
  Geometry g_;
  uint64_t key_;
  HostArray x_;
};

std::vector<Geometry> vec_to_cols_geometries() {
  std::vector<Geometry> list;
  const uint64_t shapes[][2] = {{0, 0}, {0, 5},  {5, 0},   {1, 1},      {1, 7},       {7, 1},
                                {3, 4}, {17, 5}, {33, 65}, {256, 1023}, {1000, 1000}, {65537, 2}};
  for (const auto& s : shapes) {
    Geometry g;
    g.in = {s[0]};
    g.out = {s[0], s[1]};
    list.push_back(g);
  }
  return list;
}

std::vector<Geometry> broadcast_geometries(uint64_t key) {
  std::vector<Geometry> list = {
      {{}, {}, {}},
      {{}, {3, 2}, {0, 0}},
      {{1}, {9}, {1}},
      {{5, 4}, {4, 3, 5}, {2, 0, 1}},
      {{1024, 64}, {64, 4, 1024}, {2, 0, 1}},
      {{33, 65}, {65, 33}, {2, 1}},
      {{300, 257}, {257, 300}, {2, 1}},
      {{40, 3}, {3, 40, 64}, {2, 1, 0}},
      {{64, 1}, {64, 3, 130}, {1, 0, 2}},
      {{8, 1, 64}, {8, 5, 64}, {1, 2, 3}},
      {{2, 3}, {2, 0, 3}, {1, 0, 2}},
  };
  for (uint64_t k = 0; k < 48; ++k) {
    uint64_t r = splitmix64_finalize(key + k);
    auto draw = [&](uint64_t n) {
      r = splitmix64_finalize(r);
      return r % n;
    };
    const size_t in_rank = draw(6), inserted = draw(3);
    Geometry g;
    g.in.resize(in_rank);
    for (uint64_t& d : g.in) d = draw(4) == 0 ? 1 : 1 + draw(24);
    std::vector<uint64_t> order(in_rank + inserted);
    for (size_t j = 0; j < order.size(); ++j) order[j] = j;
    for (size_t j = order.size(); j > 1; --j) std::swap(order[j - 1], order[draw(j)]);
    for (uint64_t a : order) {
      if (a < in_rank) {
        g.map.push_back(a + 1);
        g.out.push_back(g.in[a] == 1 ? 1 + draw(6) : g.in[a]);
      } else {
        g.map.push_back(0);
        g.out.push_back(1 + draw(6));
      }
    }
    list.push_back(g);
  }
  return list;
}

std::vector<Geometry> swap_geometries(uint64_t key) {
  std::vector<Geometry> list;
  auto add = [&](Dims dims, uint64_t depth) {
    Geometry g;
    g.in = std::move(dims);
    g.depth = depth;
    list.push_back(g);
  };
  add({2, 3}, 0);
  add({33, 65, 3}, 0);
  add({33, 65, 3}, 1);
  add({4, 33, 65}, 1);
  add({8, 100, 16, 64}, 1);
  add({2, 129, 97, 3}, 1);
  add({3, 0, 2}, 1);
  add({1, 5, 1}, 0);
  for (uint64_t k = 0; k < 40; ++k) {
    uint64_t r = splitmix64_finalize(key + k);
    auto draw = [&](uint64_t n) {
      r = splitmix64_finalize(r);
      return r % n;
    };
    Dims dims(2 + draw(5));
    for (uint64_t& d : dims) d = 1 + draw(14);
    add(dims, draw(dims.size() - 1));
  }
  return list;
}

// The --shapes recipes: per recipe one geometry or recipe of each op, drawn from the seed with the
// result (and so every operand) within the element budget, empty extents included.
struct RandomRecipes {
  std::vector<Geometry> vec_to_cols, broadcasts, swaps;
  std::vector<Recipe> concat, slice;
};

RandomRecipes random_recipes(const Options& options) {
  RandomRecipes out;
  ShapeDraw draw(options.seed, "shape");
  const uint64_t budget = random_shape_budget(options);
  for (uint64_t i = 0; i < options.shapes; ++i) {
    Geometry v;
    v.out = draw.dims(2, budget);
    v.in = {v.out[0]};
    out.vec_to_cols.push_back(v);
    // Input ranks 0-5, up to two inserted axes, a random permutation, a quarter of the input axes
    // of extent 1 (broadcast).
    Geometry b;
    const ShapeDraw::Broadcast g = draw.broadcast(5, 2, budget);
    b.in = g.in;
    b.out = g.out;
    b.map = g.map;
    out.broadcasts.push_back(b);
    // Ranks 2-6, any depth.
    Geometry s;
    s.in = draw.dims(2 + draw.below(5), budget);
    s.depth = draw.below(s.in.size() - 1);
    out.swaps.push_back(s);
    // concat1d: n + m within the budget, a fifth with m = n.
    Recipe c;
    c.n = draw.extent(budget, 5);
    if (2 * c.n <= budget && draw.percent(20)) {
      c.m = c.n;
    } else {
      c.m = c.n < budget ? draw.extent(budget - c.n, 5) : 0;
    }
    if (draw.percent(50)) std::swap(c.n, c.m);
    out.concat.push_back(c);
    // slice1d: windows at either end, in the interior, empty, whole, of one or two elements.
    Recipe w;
    w.n = draw.extent(budget, 5);
    switch (draw.below(3)) {
      case 0:
        w.start = 0;
        break;
      case 1:
        w.start = w.n - draw.between(0, std::min<uint64_t>(w.n, 2));
        break;
      default:
        w.start = draw.between(0, w.n);
    }
    const uint64_t left = w.n - w.start;
    switch (draw.below(4)) {
      case 0:
        w.len = left;
        break;
      case 1:
        w.len = draw.between(0, std::min<uint64_t>(left, 2));
        break;
      default:
        w.len = draw.between(0, left);
    }
    out.slice.push_back(w);
  }
  return out;
}

CaseList make_shape_cases(const Options& options) {
  CaseList cases;
  const RandomRecipes drawn = random_recipes(options);
  auto with = [](std::vector<Geometry> list, const std::vector<Geometry>& more) {
    list.insert(list.end(), more.begin(), more.end());
    return list;
  };
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    const bool f32 = dtype == Dtype::f32;
    uint64_t k = case_key(options.seed, name_of(GeometryOp::vec_to_cols), f32);
    for (Geometry& g : with(vec_to_cols_geometries(), drawn.vec_to_cols)) {
      cases.push_back(std::make_unique<GeometryCase>(GeometryOp::vec_to_cols, dtype, g,
                                                     splitmix64_finalize(++k)));
    }
    k = case_key(options.seed, name_of(GeometryOp::broadcast_to), f32);
    for (Geometry& g : with(broadcast_geometries(k), drawn.broadcasts)) {
      cases.push_back(std::make_unique<GeometryCase>(GeometryOp::broadcast_to, dtype, g,
                                                     splitmix64_finalize(++k)));
    }
    k = case_key(options.seed, name_of(GeometryOp::swap), f32);
    for (Geometry& g : with(swap_geometries(k), drawn.swaps)) {
      cases.push_back(
          std::make_unique<GeometryCase>(GeometryOp::swap, dtype, g, splitmix64_finalize(++k)));
    }
  }
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    const bool f32 = dtype == Dtype::f32;
    const uint64_t concat_key = case_key(options.seed, name_of(ShapeOp::concat1d), f32);
    std::vector<Recipe> concat = concat_recipes(options.n);
    concat.insert(concat.end(), drawn.concat.begin(), drawn.concat.end());
    for (size_t k = 0; k < concat.size(); ++k) {
      concat[k].key = splitmix64_finalize(concat_key + k);
      cases.push_back(std::make_unique<ShapeCase>(ShapeOp::concat1d, dtype, concat[k]));
    }
    const uint64_t slice_key = case_key(options.seed, name_of(ShapeOp::slice1d), f32);
    std::vector<Recipe> slice = slice_recipes(options.n, slice_key);
    slice.insert(slice.end(), drawn.slice.begin(), drawn.slice.end());
    for (size_t k = 0; k < slice.size(); ++k) {
      slice[k].key = splitmix64_finalize(slice_key + k);
      cases.push_back(std::make_unique<ShapeCase>(ShapeOp::slice1d, dtype, slice[k]));
    }
  }
  if (options.large) {
    cases.push_back(
        std::make_unique<SliceLargeCase>(case_key(options.seed, "slice1d [2^31+17]", true)));
  }
  return cases;
}

const FamilyRegistration kShapeFamily("shape", &make_shape_cases);

}  // namespace
}  // namespace tlrt::parity
