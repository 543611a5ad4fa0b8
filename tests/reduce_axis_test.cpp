// The axis reductions reduce_sum_by_row, reduce_max_by_row, reduce_max_by_column, reduce_sum_axis
// and reduce_from_broadcast through the Lean boundary, on the backend TLRT_DEVICE selects (ctest
// runs this binary once with cpu and once with cuda). Inputs are made and results read back as
// exact words (of_bytes_io / to_bytes_io). Covered: the max's NaN rule and its signed-zero rule
// (+0 above -0, in either order), also on long rows and columns where one special value decides
// at any position of the kernels' loops (heads, tails, full and partial batches of loads), the
// row sums' error bound on the same kinds of shapes, the launchers on views at every offset from
// a 16-byte boundary (cuda pass only), the ordered column fold's exact bits on inputs where the
// order shows ([1e8, 1, -1e8] against [1e8, -1e8, 1], an all -0 column giving +0), the fold against
// an independent host fold for the axis first, in the middle and last and for permuted axis maps,
// long chains over columns of every kind of value (ties, cancellation, specials, subnormals,
// overflow, 40 binades), the same bits with the deterministic setting on and off and over ten runs,
// the empty rules, the ownership counters, and every bad input's panic with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "abi_test_support.h"

#if TLRT_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/reduce_axis/reduce_axis.h"
#endif

using namespace abi_test;

namespace {

using Dims = std::vector<uint64_t>;

template <class T>
using Bits = typename Dt<T>::Bits;

template <class T>
std::vector<Bits<T>> sum_axis(const std::vector<T>& x, const Dims& dims, uint32_t axis) {
  Obj b = make_buffer(x);
  Obj r(torchlean_cuda_buffer_reduce_sum_axis(b.get(), nats(dims).get(), axis));
  return words_of<T>(r.get());
}

template <class T>
std::vector<Bits<T>> from_broadcast(const std::vector<T>& d, const Dims& in, const Dims& out,
                                    const Dims& map) {
  Obj b = make_buffer(d);
  Obj r(torchlean_cuda_buffer_reduce_from_broadcast(b.get(), nats(in).get(), nats(out).get(),
                                                    nats(map).get()));
  return words_of<T>(r.get());
}

using Matrix = lean_obj_res (*)(b_lean_obj_arg, uint32_t, uint32_t);

template <class T>
std::vector<Bits<T>> matrix_op(Matrix f, const std::vector<T>& x, uint32_t rows, uint32_t cols) {
  Obj b = make_buffer(x);
  Obj r(f(b.get(), rows, cols));
  return words_of<T>(r.get());
}

// Host fold written from the contract: x viewed with dims, summed over `axis` from +0 in
// increasing index order, for every output index of dims without axis in row-major order.
template <class T>
std::vector<T> host_sum_axis(const std::vector<T>& x, const Dims& dims, size_t axis) {
  uint64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= dims[k];
  for (size_t k = axis + 1; k < dims.size(); ++k) inner *= dims[k];
  std::vector<T> out(outer * inner);
  for (uint64_t o = 0; o < outer; ++o) {
    for (uint64_t i = 0; i < inner; ++i) {
      T acc = T(0);
      for (uint64_t r = 0; r < dims[axis]; ++r) acc = acc + x[(o * dims[axis] + r) * inner + i];
      out[o * inner + i] = acc;
    }
  }
  return out;
}

// Host adjoint of broadcast_to from the contract: for every input index (row-major over in), the
// fold from +0 over the reduced output coordinates in row-major order.
template <class T>
std::vector<T> host_from_broadcast(const std::vector<T>& d, const Dims& in, const Dims& out,
                                   const Dims& map) {
  uint64_t in_size = 1, out_size = 1;
  for (uint64_t e : in) in_size *= e;
  for (uint64_t e : out) out_size *= e;
  std::vector<T> result(in_size, T(0));
  if (in_size == 0 || out_size == 0) return result;
  // Enumerating o in row-major order visits each input's contributions in the order of the
  // reduced coordinates (the kept coordinates are fixed by the input index).
  Dims o(out.size(), 0);
  for (uint64_t flat = 0; flat < out_size; ++flat) {
    uint64_t rem = flat;
    for (size_t j = out.size(); j-- > 0;) {
      o[j] = rem % out[j];
      rem /= out[j];
    }
    uint64_t i = 0;
    for (size_t a = 0; a < in.size(); ++a) {
      uint64_t coord = 0;
      for (size_t j = 0; j < out.size(); ++j) {
        if (map[j] == a + 1 && in[a] != 1) coord = o[j];
      }
      i = i * in[a] + coord;
    }
    result[i] = result[i] + d[flat];
  }
  return result;
}

template <class T>
std::vector<T> random_values(size_t n, uint32_t seed, double scale = 1e4) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& e : v) {
    const double m = dist(rng);
    e = static_cast<T>(m * m * m * scale);  // wide range of magnitudes, cancellations
  }
  return v;
}

// The row sums' error bound of NUMERICS.md for any order: |got - exact| <= k/(1-k) sum|x| +
// u |exact| with k = cols u.
template <class T>
void expect_row_sums_within_bound(const std::vector<T>& x, uint64_t rows, uint64_t cols,
                                  const std::vector<Bits<T>>& got, const std::string& what) {
  ASSERT_EQ(got.size(), rows) << what;
  const long double u = std::ldexp(1.0L, -std::numeric_limits<T>::digits);
  for (uint64_t i = 0; i < rows; ++i) {
    long double exact = 0, magnitude = 0;
    for (uint64_t j = 0; j < cols; ++j) {
      exact += x[i * cols + j];
      magnitude += std::fabs(static_cast<long double>(x[i * cols + j]));
    }
    const long double k = static_cast<long double>(cols) * u;
    const long double bound = k / (1 - k) * magnitude + u * std::fabs(exact);
    EXPECT_LE(std::fabs(static_cast<long double>(value_of<T>(got[i])) - exact), bound)
        << what << " row " << i;
  }
}

// a comes before b in the maxima's total order: NaN as -inf, -0 before +0.
template <class T>
bool max_before(T a, T b) {
  const T inf = std::numeric_limits<T>::infinity();
  if (std::isnan(a)) a = -inf;
  if (std::isnan(b)) b = -inf;
  if (a == 0 && b == 0) return std::signbit(a) && !std::signbit(b);
  return a < b;
}

// The maxima of the rows (by_rows) or of the columns of a row-major rows x cols matrix, selected
// on the host in index order.
template <class T>
std::vector<T> host_max(const std::vector<T>& x, uint64_t rows, uint64_t cols, bool by_rows) {
  std::vector<T> best(by_rows ? rows : cols);
  for (uint64_t i = 0; i < rows; ++i) {
    for (uint64_t j = 0; j < cols; ++j) {
      const T v =
          std::isnan(x[i * cols + j]) ? -std::numeric_limits<T>::infinity() : x[i * cols + j];
      T& b = best[by_rows ? i : j];
      if ((by_rows ? j : i) == 0 || max_before(b, v)) b = v;
    }
  }
  return best;
}

// Lines (rows, or columns of the transpose) of one rule's values each, line i of rule i % 7, the
// value that decides the maximum (if one does) at a position that moves with i (first, last, a
// scalar head or tail, inside a 16-byte vector):
//   0: finite values of both signs and NaN; 1: NaN and -0 (-> -0); 2: NaN, -0 and one +0 (-> +0);
//   3: NaN only (-> -inf); 4: NaN and -inf (-> -inf); 5: -inf, finite negatives and one -1e-30
//   (-> it); 6: NaN and one +inf (-> +inf).
template <class T>
std::vector<T> rule_lines(uint64_t lines, uint64_t length, uint32_t seed) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  std::mt19937_64 rng(seed);
  std::vector<T> x(lines * length);
  for (uint64_t i = 0; i < lines; ++i) {
    T* line = x.data() + i * length;
    const uint32_t rule = static_cast<uint32_t>(i % 7);
    for (uint64_t j = 0; j < length; ++j) {
      const uint64_t r = rng();
      switch (rule) {
        case 0:
          line[j] = r % 9 == 0 ? nan : static_cast<T>(static_cast<double>(r % 20001) - 10000.0);
          break;
        case 1:
          line[j] = r % 2 ? nan : T(-0.0);
          break;
        case 2:
          line[j] = r % 2 ? T(-0.0) : nan;
          break;
        case 3:
          line[j] = r % 2 ? nan : -nan;
          break;
        case 4:
          line[j] = r % 2 ? nan : -inf;
          break;
        case 5:
          line[j] = r % 2 ? -inf : -static_cast<T>(1 + r % 1000);
          break;
        default:
          line[j] = nan;
          break;
      }
    }
    const uint64_t positions[] = {
        0, length - 1, 1, 2, length - 2, length / 2 + 3, (i * 37) % length};
    const uint64_t at = positions[(i / 7) % 7];
    if (rule == 2) line[at] = T(0.0);
    if (rule == 5) line[at] = T(-1e-30);
    if (rule == 6) line[at] = inf;
  }
  return x;
}

template <class T>
std::vector<T> transposed(const std::vector<T>& x, uint64_t rows, uint64_t cols) {
  std::vector<T> t(x.size());
  for (uint64_t i = 0; i < rows; ++i) {
    for (uint64_t j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
  }
  return t;
}

class ReduceAxis : public BackendSuite {};
using ReduceAxisDeathTest = ReduceAxis;

template <class T>
class ReduceAxisTyped : public BackendSuite {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ReduceAxisTyped, Dtypes);

// ---------------------------------------------------------------------------------------------
// Row sums

TYPED_TEST(ReduceAxisTyped, SumByRow) {
  using T = TypeParam;
  EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_sum_by_row, {1, 2, 3, 4, 5, 6}, 2, 3),
            words<T>({6, 15}));
  EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_sum_by_row, {}, 4, 0),
            words<T>({0, 0, 0, 0}));
  EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_sum_by_row, {}, 0, 7), words<T>({}));
  const T inf = std::numeric_limits<T>::infinity();
  const auto r = matrix_op<T>(torchlean_cuda_buffer_reduce_sum_by_row,
                              {inf, 1, -inf, 1, std::numeric_limits<T>::quiet_NaN(), 2}, 3, 2);
  EXPECT_EQ(r[0], bits_of(inf));
  EXPECT_EQ(r[1], bits_of(-inf));
  EXPECT_TRUE(std::isnan(value_of<T>(r[2])));
}

// The row kernels' shapes: the block per row (3 x 70001), rows at odd offsets (unaligned starts: a
// scalar head and tail), rows of whole 16-byte vectors with a full batch of loads per lane (300 x
// 1024) and lanes whose vector count is not a multiple of the batch (257 x 1000, 2200 x 4099: the
// warp per row on long rows), one element per row.
constexpr std::pair<uint32_t, uint32_t> kRowSumShapes[] = {{3, 70001},  {1025, 333},  {300, 1024},
                                                           {257, 1000}, {2200, 4099}, {5000, 1}};

TYPED_TEST(ReduceAxisTyped, SumByRowWithinTheBoundOnLargeRows) {
  using T = TypeParam;
  for (auto [rows, cols] : kRowSumShapes) {
    const std::vector<T> x = random_values<T>(uint64_t{rows} * cols, rows + cols);
    expect_row_sums_within_bound(
        x, rows, cols, matrix_op<T>(torchlean_cuda_buffer_reduce_sum_by_row, x, rows, cols),
        std::to_string(rows) + "x" + std::to_string(cols));
  }
}

// SPEC-ops 8: the row sum's order is unspecified and the deterministic setting does not change
// it: the same bits with the setting on and off, on every row kernel.
TYPED_TEST(ReduceAxisTyped, SumByRowIgnoresTheDeterministicSetting) {
  using T = TypeParam;
  for (auto [rows, cols] : kRowSumShapes) {
    const std::vector<T> x = random_values<T>(uint64_t{rows} * cols, 7 * rows + cols);
    auto sums = [&](bool deterministic) {
      const DeterministicScope setting(deterministic);
      return matrix_op<T>(torchlean_cuda_buffer_reduce_sum_by_row, x, rows, cols);
    };
    EXPECT_EQ(sums(true), sums(false)) << rows << "x" << cols;
  }
}

// ---------------------------------------------------------------------------------------------
// Maxima: NaN as -inf, +0 above -0, zeros for empty views

TYPED_TEST(ReduceAxisTyped, MaxByRowRules) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> x = {nan,  1,    -2,   3,     // NaN ignored
                            nan,  nan,  nan,  nan,   // all NaN -> -inf
                            -0.0, 0.0,  -5,   -0.0,  // +0 beats -0
                            0.0,  -0.0, -0.0, -7,    // in either order
                            -0.0, -0.0, -inf, -1,    // -0 alone
                            -inf, nan,  -inf, nan};  // -inf and NaN
  EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_row, x, 6, 4),
            words<T>({3, -inf, 0.0, 0.0, -0.0, -inf}));
  EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_row, {}, 3, 0), words<T>({0, 0, 0}));
  EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_row, {}, 0, 3), words<T>({}));
  EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_row, {inf, nan}, 1, 2),
            words<T>({inf}));
}

TYPED_TEST(ReduceAxisTyped, MaxByColumnRules) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  // The transpose of MaxByRowRules.
  const std::vector<T> x = {nan, nan, -0.0, 0.0,  -0.0, -inf,  //
                            1,   nan, 0.0,  -0.0, -0.0, nan,   //
                            -2,  nan, -5,   -0.0, -inf, -inf,  //
                            3,   nan, -0.0, -7,   -1,   nan};
  EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_column, x, 4, 6),
            words<T>({3, -inf, 0.0, 0.0, -0.0, -inf}));
  EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_column, {}, 0, 3),
            words<T>({0, 0, 0}));
  EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_column, {}, 3, 0), words<T>({}));
}

// Large random matrices with specials sprinkled in, against a host selection of the same order.
TYPED_TEST(ReduceAxisTyped, MaxMatchesTheHostSelection) {
  using T = TypeParam;
  const T specials[] = {std::numeric_limits<T>::quiet_NaN(), -0.0, 0.0,
                        std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity()};
  // Scalar and 16-byte column tiles, narrow tiles (many row lanes), one split and many; rows of
  // whole batches of loads per lane (2048 x 1024) and not (257 x 1000, 2200 x 4099), column
  // tiles cut by the last column (130 x 3000).
  for (auto [rows, cols] : {std::pair<uint32_t, uint32_t>{1000, 77},
                            {3, 9000},
                            {4100, 33},
                            {2048, 1024},
                            {700, 12},
                            {5000, 1},
                            {64, 4096},
                            {333, 130},
                            {257, 1000},
                            {2200, 4099},
                            {130, 3000}}) {
    std::vector<T> x = random_values<T>(uint64_t{rows} * cols, rows * 7 + cols);
    std::mt19937 rng(rows);
    for (size_t k = 0; k < x.size() / 17; ++k) x[rng() % x.size()] = specials[rng() % 5];
    EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_row, x, rows, cols),
              words<T>(host_max(x, rows, cols, true)))
        << rows << "x" << cols;
    EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_column, x, rows, cols),
              words<T>(host_max(x, rows, cols, false)))
        << rows << "x" << cols;
  }
}

// Rows, and columns of the transpose, where NaN, -0, +0 and the infinities decide the maximum,
// the deciding value at every kind of position of the kernels' loops.
TYPED_TEST(ReduceAxisTyped, MaxRulesDecideLongLines) {
  using T = TypeParam;
  for (auto [lines, length] : {std::pair<uint32_t, uint32_t>{49, 1027},
                               {49, 1024},
                               {98, 1000},
                               {49, 4099},
                               {14, 70001},
                               {2300, 13}}) {
    const std::vector<T> x = rule_lines<T>(lines, length, lines + length);
    const std::vector<Bits<T>> want = words<T>(host_max(x, lines, length, true));
    const std::string what = std::to_string(lines) + " lines of " + std::to_string(length);
    EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_row, x, lines, length), want)
        << what;
    EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_column, transposed(x, lines, length),
                           length, lines),
              want)
        << what;
  }
}

// ---------------------------------------------------------------------------------------------
// The ordered fold

TYPED_TEST(ReduceAxisTyped, SumAxisFoldsInIncreasingIndexOrderFromPlusZero) {
  using T = TypeParam;
  const T big = sizeof(T) == 4 ? T(1e8) : T(1e17);  // 1 is below half an ULP of big
  for (bool deterministic : {true, false}) {
    DeterministicScope scope(deterministic);
    EXPECT_EQ(sum_axis<T>({big, 1, -big}, {3}, 0), words<T>({0.0}));
    EXPECT_EQ(sum_axis<T>({big, -big, 1}, {3}, 0), words<T>({1}));
    EXPECT_EQ(sum_axis<T>({1, big, -big}, {3}, 0), words<T>({0.0}));
    // Columns of a [3, 2] matrix along axis 0; the same columns along axis 1 of its transpose.
    EXPECT_EQ(sum_axis<T>({big, -big, 1, big, -big, 1}, {3, 2}, 0), words<T>({0.0, 1}));
    EXPECT_EQ(sum_axis<T>({big, 1, -big, -big, big, 1}, {2, 3}, 1), words<T>({0.0, 1}));
    // +0 + (-0) = +0: an all -0 column sums to +0; a single -0 too.
    EXPECT_EQ(sum_axis<T>({-0.0, -0.0, -0.0}, {3}, 0), words<T>({0.0}));
    EXPECT_EQ(sum_axis<T>({-0.0, -0.0}, {1, 2}, 0), words<T>({0.0, 0.0}));
  }
}

TYPED_TEST(ReduceAxisTyped, SumAxisOfNoDimsIsACopy) {
  using T = TypeParam;
  EXPECT_EQ(sum_axis<T>({-0.0}, {}, 0), words<T>({-0.0}));
  EXPECT_EQ(sum_axis<T>({-0.0}, {}, 7), words<T>({-0.0}));  // the axis is not checked
  // A NaN payload survives the copy.
  const Bits<T> payload = sizeof(T) == 4 ? Bits<T>(0xFFC12345u) : Bits<T>(0x7FF80000DEADBEEFull);
  EXPECT_EQ(sum_axis<T>({value_of<T>(payload)}, {}, 0), (std::vector<Bits<T>>{payload}));
}

TYPED_TEST(ReduceAxisTyped, SumAxisEmptyRules) {
  using T = TypeParam;
  EXPECT_EQ(sum_axis<T>({}, {0, 3}, 0), words<T>({0, 0, 0}));
  EXPECT_EQ(sum_axis<T>({}, {3, 0}, 0), words<T>({}));
  EXPECT_EQ(sum_axis<T>({}, {2, 0, 3}, 1), words<T>({0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(sum_axis<T>({}, {0}, 0), words<T>({0.0}));
}

// Axis first, in the middle and last, on shapes that exercise the tiles (column counts that are
// not multiples of the tile, rows spanning several chunks, contiguous chains), flag on and off.
TYPED_TEST(ReduceAxisTyped, SumAxisMatchesTheHostFold) {
  using T = TypeParam;
  const std::vector<Dims> shapes = {{5, 7, 3},
                                    {2500, 37},
                                    {37, 2500},
                                    {3, 1100, 9},
                                    {1, 1, 4},
                                    {4, 1},
                                    {3000, 2, 2},
                                    {2, 3, 5, 7},
                                    {9000, 9},
                                    {5, 9000},
                                    // 32-column tiles (16 KiB chunks): several chunks, both
                                    // load orders; and a long chain in narrow tiles.
                                    {700, 4500},
                                    {4500, 300},
                                    // Tiles of 16-byte pieces whose columns span two runs of
                                    // the innermost axis (12 per run), and whose rows are not
                                    // a multiple of the chunk.
                                    {2, 1030, 12},
                                    // 32-column tiles whose rows are not a whole number of
                                    // 16-byte pieces (element copies).
                                    {300, 4241}};
  for (const Dims& dims : shapes) {
    uint64_t n = 1;
    for (uint64_t e : dims) n *= e;
    const std::vector<T> x = random_values<T>(n, static_cast<uint32_t>(n));
    for (uint32_t axis = 0; axis < dims.size(); ++axis) {
      const auto want = words<T>(host_sum_axis(x, dims, axis));
      for (bool deterministic : {true, false}) {
        DeterministicScope scope(deterministic);
        EXPECT_EQ(sum_axis<T>(x, dims, axis), want)
            << "axis " << axis << " of " << dims.size() << "-d, " << n << " elements, flag "
            << deterministic;
      }
    }
  }
}

TYPED_TEST(ReduceAxisTyped, FromBroadcastMatchesTheHostFold) {
  using T = TypeParam;
  struct Case {
    Dims in, out, map;
  };
  const std::vector<Case> cases = {
      {{3}, {2, 3}, {0, 1}},                     // rows inserted in front
      {{3}, {3, 2}, {1, 0}},                     // inserted behind: chains contiguous
      {{1, 3}, {4, 3}, {1, 2}},                  // an extent-1 input axis
      {{2, 3}, {3, 4, 2}, {2, 0, 1}},            // permuted, an axis inserted between
      {{3, 2}, {2, 5, 3}, {2, 0, 1}},            // permuted the other way
      {{2, 1, 3}, {3, 7, 4, 2}, {3, 0, 2, 1}},   // permuted, inserted and broadcast
      {{40}, {700, 40}, {0, 1}},                 // several chunks of rows
      {{1}, {5}, {1}},                           // everything reduced into one element
      {{4, 5}, {4, 5}, {1, 2}},                  // nothing reduced: +0 + x
      {{}, {6, 2}, {0, 0}},                      // a scalar input
      {{9}, {700, 9, 7}, {0, 1, 0}},             // two reduced axes apart, more chunks than stages
      {{64, 8}, {5, 64, 700, 8}, {0, 1, 0, 2}},  // two reduced axes apart, 16-byte pieces
  };
  for (const Case& c : cases) {
    uint64_t n = 1;
    for (uint64_t e : c.out) n *= e;
    std::vector<T> d = random_values<T>(n, static_cast<uint32_t>(n + c.in.size()));
    if (n > 2) d[1] = -0.0;
    for (bool deterministic : {true, false}) {
      DeterministicScope scope(deterministic);
      EXPECT_EQ(from_broadcast<T>(d, c.in, c.out, c.map),
                words<T>(host_from_broadcast(d, c.in, c.out, c.map)))
          << "case with " << c.out.size() << " output axes, flag " << deterministic;
    }
  }
}

TYPED_TEST(ReduceAxisTyped, FromBroadcastOrderAndEmptyRules) {
  using T = TypeParam;
  const T big = sizeof(T) == 4 ? T(1e8) : T(1e17);
  DeterministicScope scope(true);
  EXPECT_EQ(from_broadcast<T>({big, -big, 1, big, -big, 1}, {2}, {3, 2}, {0, 1}),
            words<T>({0.0, 1}));
  EXPECT_EQ(from_broadcast<T>({-0.0, -0.0}, {1}, {2}, {1}), words<T>({0.0}));
  EXPECT_EQ(from_broadcast<T>({}, {3}, {0, 3}, {0, 1}), words<T>({0, 0, 0}));
  EXPECT_EQ(from_broadcast<T>({}, {1, 3}, {0, 3}, {1, 2}), words<T>({0, 0, 0}));
  EXPECT_EQ(from_broadcast<T>({}, {0}, {4, 0}, {0, 1}), words<T>({}));
}

// The ordered paths give the same bits on every run (the GPU schedule must not show).
// Both sides of the light kernel's border (at most 32 rows and 2^16 elements, one row axis and
// one column axis: a thread per column; beyond, the staged fold and the split column maxima): the
// same results as the host's fold and selection, rows of one element, specials in the maxima,
// every row count up to 32.
TYPED_TEST(ReduceAxisTyped, LightAndStagedPathsMeetAtTheirBorder) {
  using T = TypeParam;
  const T specials[] = {std::numeric_limits<T>::quiet_NaN(), -0.0, 0.0,
                        std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity()};
  std::vector<std::pair<uint32_t, uint32_t>> shapes = {{32, 2048}, {33, 2048}, {32, 2049},
                                                       {31, 2113}, {1, 65536}, {1, 65537},
                                                       {2, 5},     {32, 1},    {17, 3}};
  // Every row count the light kernel takes: its batches of 8 rows and the last rows in batches of
  // 4, 2 and 1, each combination, over two blocks of columns.
  for (uint32_t rows = 1; rows <= 32; ++rows) shapes.emplace_back(rows, 129);
  for (auto [rows, cols] : shapes) {
    const uint64_t n = uint64_t{rows} * cols;
    std::vector<T> x = random_values<T>(n, rows * 13 + cols);
    for (uint64_t k = 0; k < n; k += 7) x[k] = T(-0.0);
    for (bool deterministic : {true, false}) {
      DeterministicScope scope(deterministic);
      EXPECT_EQ(sum_axis<T>(x, {rows, cols}, 0), words<T>(host_sum_axis(x, {rows, cols}, 0)))
          << rows << "x" << cols << ", flag " << deterministic;
      EXPECT_EQ(from_broadcast<T>(x, {cols}, {rows, cols}, {0, 1}),
                words<T>(host_from_broadcast(x, {cols}, {rows, cols}, {0, 1})))
          << rows << "x" << cols << ", flag " << deterministic;
    }
    std::mt19937 rng(rows + cols);
    for (size_t k = 0; k < n / 11; ++k) x[rng() % n] = specials[rng() % 5];
    EXPECT_EQ(matrix_op<T>(torchlean_cuda_buffer_reduce_max_by_column, x, rows, cols),
              words<T>(host_max(x, rows, cols, false)))
        << rows << "x" << cols;
  }
  // Rows over two axes apart (the staged fold: the light kernel takes one row axis and one column
  // axis), 28 and 35 of them, columns permuted.
  for (uint64_t front : {4u, 5u}) {
    const Dims in = {9, 3}, out = {front, 3, 7, 9}, map = {0, 2, 0, 1};
    const std::vector<T> d = random_values<T>(front * 3 * 7 * 9, static_cast<uint32_t>(front));
    EXPECT_EQ(from_broadcast<T>(d, in, out, map), words<T>(host_from_broadcast(d, in, out, map)))
        << front << " x 7 rows";
  }
}

TYPED_TEST(ReduceAxisTyped, OrderedPathsAreBitwiseRepeatable) {
  using T = TypeParam;
  DeterministicScope scope(true);
  const std::vector<T> x = random_values<T>(64 * 33 * 257, 11);
  const auto first_middle = sum_axis<T>(x, {64, 33, 257}, 1);
  const auto first_last = sum_axis<T>(x, {64 * 33, 257}, 1);
  const auto first_front = sum_axis<T>(x, {64 * 33, 257}, 0);
  const auto first_bcast = from_broadcast<T>(x, {257, 64}, {64, 33, 257}, {2, 0, 1});
  EXPECT_EQ(first_front, words<T>(host_sum_axis(x, {64 * 33, 257}, 0)));
  for (int run = 0; run < 10; ++run) {
    EXPECT_EQ(sum_axis<T>(x, {64, 33, 257}, 1), first_middle) << run;
    EXPECT_EQ(sum_axis<T>(x, {64 * 33, 257}, 1), first_last) << run;
    EXPECT_EQ(sum_axis<T>(x, {64 * 33, 257}, 0), first_front) << run;
    EXPECT_EQ(from_broadcast<T>(x, {257, 64}, {64, 33, 257}, {2, 0, 1}), first_bcast) << run;
  }
}

// Equal bits, or both NaN (NaN encodings are free, SPEC-ops 2.4: the host's NaN from inf - inf
// is not the device's).
template <class T>
void expect_fold_bits(const std::vector<Bits<T>>& got, const std::vector<T>& want,
                      const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t wrong = 0;
  for (size_t c = 0; c < got.size(); ++c) {
    const T g = value_of<T>(got[c]);
    if (same_bits_or_nan(g, want[c])) continue;
    if (++wrong <= 4) {
      ADD_FAILURE() << what << ": column " << c << " gives " << g << ", the host fold " << want[c];
    }
  }
  EXPECT_EQ(wrong, 0u) << what;
}

// Long chains (several chunks of rows, whole and partial; 8- and 16-column tiles; one and two row
// axes) whose columns each hold one kind of values, so that every tile meets all of them: the
// bench's uniform [0, 1), symmetric values, steps that tie on the chain's spacing, cancelling
// pairs (the chain near zero), infinities and NaN, subnormals, overflow to infinity, and
// magnitudes over 40 binades; -0 sprinkled in.
TYPED_TEST(ReduceAxisTyped, LongChainsOfEveryValueKindMatchTheHostFold) {
  using T = TypeParam;
  constexpr uint64_t kKinds = 8;
  const T inf = std::numeric_limits<T>::infinity();
  auto make = [&](uint64_t rows, uint64_t cols, uint32_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<T> x(rows * cols);
    for (uint64_t r = 0; r < rows; ++r) {
      for (uint64_t c = 0; c < cols; ++c) {
        const double u = unit(rng);
        double v = 0.0;
        switch (c % kKinds) {
          case 0:
            v = u;
            break;
          case 1:
            v = 2 * u - 1;
            break;
          case 2:
            v = std::ldexp(static_cast<double>(rng() % 8192), -13);
            break;
          case 3:
            v = r % 2 == 0 ? 1e6 * (1 + u * 1e-6) : -1e6 + u;
            break;
          case 4: {
            const uint64_t pick = rng() % 4096;
            v = pick == 0 ? inf : pick == 1 ? -inf : pick == 2 ? std::nan("") : 2 * u - 1;
            break;
          }
          case 5:
            v = (2 * u - 1) * 1e-38;
            break;
          case 6:
            v = rng() % 512 == 0 ? 3e38 : (2 * u - 1) * 1e30;
            break;
          default:
            v = std::ldexp(1 + u, static_cast<int>(rng() % 40) - 20) * (rng() % 2 ? 1 : -1);
        }
        x[r * cols + c] = rng() % 997 == 0 ? T(-0.0) : static_cast<T>(v);
      }
    }
    return x;
  };
  DeterministicScope scope(true);
  for (auto [rows, cols] : {std::pair<uint64_t, uint64_t>{5000, 64}, {4103, 3000}, {1024, 8}}) {
    const std::vector<T> x = make(rows, cols, static_cast<uint32_t>(rows + cols));
    expect_fold_bits<T>(sum_axis<T>(x, {rows, cols}, 0), host_sum_axis(x, {rows, cols}, 0),
                        std::to_string(rows) + "x" + std::to_string(cols));
  }
  // Two row axes apart (row offsets through a table), the kind by the innermost index.
  const Dims in = {64, 8}, out = {3, 64, 1700, 8}, map = {0, 1, 0, 2};
  const std::vector<T> d = make(3 * 64 * 1700, 8, 3);
  expect_fold_bits<T>(from_broadcast<T>(d, in, out, map), host_from_broadcast(d, in, out, map),
                      "[3, 64, 1700, 8] -> [64, 8]");
}

// ---------------------------------------------------------------------------------------------
// Ownership: one wrapper and one payload more per call (none for an empty result), never an
// argument, all returned after the drop; the arguments unchanged.

TEST_F(ReduceAxis, OwnershipOfEveryResult) {
  Obj x = make_buffer<float>({1, 2, 3, 4, 5, 6});
  Obj dims = nats({2, 3});
  Obj in = nats({3}), out = nats({2, 3}), map = nats({0, 1});
  Obj empty = make_buffer<float>({});
  Obj empty_dims = nats({0, 3});
  struct Case {
    const char* name;
    std::function<lean_object*()> call;
    uint64_t bytes;
  };
  const std::vector<Case> cases = {
      {"sum_by_row", [&] { return torchlean_cuda_buffer_reduce_sum_by_row(x.get(), 2, 3); }, 8},
      {"max_by_row", [&] { return torchlean_cuda_buffer_reduce_max_by_row(x.get(), 2, 3); }, 8},
      {"max_by_column", [&] { return torchlean_cuda_buffer_reduce_max_by_column(x.get(), 2, 3); },
       12},
      {"max_by_column empty",
       [&] { return torchlean_cuda_buffer_reduce_max_by_column(empty.get(), 6, 0); }, 0},
      {"sum_axis", [&] { return torchlean_cuda_buffer_reduce_sum_axis(x.get(), dims.get(), 1); },
       8},
      {"sum_axis zeros",
       [&] { return torchlean_cuda_buffer_reduce_sum_axis(empty.get(), empty_dims.get(), 0); }, 12},
      {"from_broadcast",
       [&] {
         return torchlean_cuda_buffer_reduce_from_broadcast(x.get(), in.get(), out.get(),
                                                            map.get());
       },
       12},
  };
  for (const Case& c : cases) {
    expect_fresh_result(c.name, c.call, fresh_buffer(c.bytes), {x.get(), empty.get()});
  }
  EXPECT_EQ(words_of<float>(x.get()), words<float>({1, 2, 3, 4, 5, 6}));
  // dims = [] copies: a fresh buffer, not the argument.
  Obj one = make_buffer<float>({5});
  Obj none = nats({});
  Obj copy(torchlean_cuda_buffer_reduce_sum_axis(one.get(), none.get(), 0));
  EXPECT_NE(copy.get(), one.get());
  EXPECT_EQ(words_of<float>(copy.get()), words<float>({5}));
}

// ---------------------------------------------------------------------------------------------
// Bad inputs: pure symbols panic, naming the op and the sizes

lean_object* zeros(uint32_t n, uint8_t dtype = 0) {
  return torchlean_cuda_buffer_zeros(n, dtype);
}

TEST_F(ReduceAxisDeathTest, MatrixSizesMustMatchTheShape) {
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_by_row(zeros(5), 2, 3), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_by_row: buffer size does not match shape "
              "\\(size\\(x\\) = 5 but prod\\(\\[rows, cols\\]\\) = 6");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_max_by_row(zeros(0, 1), 1, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_max_by_row: buffer size does not match shape");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_max_by_column(zeros(7), 0, 7),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_max_by_column: buffer size does not match shape "
              "\\(size\\(x\\) = 7 but prod\\(\\[rows, cols\\]\\) = 0");
}

TEST_F(ReduceAxisDeathTest, SumAxisChecks) {
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(zeros(5), nat_list({2, 3}), 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_axis: buffer size does not match shape "
              "\\(size\\(x\\) = 5 but prod\\(dims\\) = 6 for dims = \\[2, 3\\]\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(zeros(6), nat_list({2, 3}), 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_axis: reduceSumAxis: invalid axis \\(axis = 2 "
              "but dims = \\[2, 3\\] has rank 2\\)");
  // The shape is checked before the axis.
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(zeros(5), nat_list({2, 3}), 9),
              ::testing::ExitedWithCode(1), "buffer size does not match shape");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(zeros(2), nat_list({}), 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_axis: buffer size does not match shape "
              "\\(size\\(x\\) = 2 but prod\\(dims\\) = 1");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(
                  zeros(1), nat_list({4294967295u, 4294967295u, 4294967295u}), 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_axis: shape size overflow \\(dims = ");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(zeros(1), lean_box(3), 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_axis: expected Array Nat dims");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(zeros(1), nat_list({4294967296ull}), 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_axis: dims\\[0\\] exceeds UInt32");
  // A heap object in place of a scalar entry stands for a bignum (SPEC-ops 1).
  EXPECT_EXIT(
      {
        lean_object* dims = nat_list({2, 3});
        lean_array_set_core(dims, 1, lean_box_uint64(uint64_t{1} << 40));
        torchlean_cuda_buffer_reduce_sum_axis(zeros(6), dims, 0);
      },
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: reduce_sum_axis: dims\\[1\\] exceeds UInt32 \\(a bignum\\)");
  // The output shape, dims without axis, is checked too: a zero extent makes prod(dims) 0
  // whatever the other extents are.
  const uint32_t big = 4294967295u;
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(zeros(0), nat_list({0, big, big, big}), 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_axis: shape size overflow \\(dims without axis = "
              "\\[4294967295, 4294967295, 4294967295\\]\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(zeros(0), nat_list({big, 0, big, big}), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_axis: shape size overflow \\(dims without axis");
  // dims is decoded before x is looked at (TorchLean's order).
  lean_object* released = zeros(1);
  torchlean_cuda_buffer_release(released);
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(released, lean_box(3), 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_axis: expected Array Nat dims");
  // So is its product.
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(released, nat_list({big, big, 3}), 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_axis: shape size overflow \\(dims = ");
  lean_dec(released);
}

TEST_F(ReduceAxisDeathTest, FromBroadcastChecks) {
  auto call = [](uint32_t n, const Dims& in, const Dims& out, const Dims& map) {
    return torchlean_cuda_buffer_reduce_from_broadcast(zeros(n), nat_list(in), nat_list(out),
                                                       nat_list(map));
  };
  const char* prefix = "INTERNAL PANIC: tlrt: reduce_from_broadcast: ";
  EXPECT_EXIT(call(6, {3}, {2, 3}, {1}), ::testing::ExitedWithCode(1),
              std::string(prefix) + "axis map rank mismatch");
  EXPECT_EXIT(call(6, {3}, {2, 3}, {0, 2}), ::testing::ExitedWithCode(1),
              std::string(prefix) + "broadcast axis out of range");
  EXPECT_EXIT(call(9, {3}, {3, 3}, {1, 1}), ::testing::ExitedWithCode(1),
              std::string(prefix) + "repeated broadcast input axis");
  EXPECT_EXIT(call(8, {3}, {2, 4}, {0, 1}), ::testing::ExitedWithCode(1),
              std::string(prefix) + "incompatible broadcast dimension");
  EXPECT_EXIT(call(6, {3, 1}, {2, 3}, {0, 1}), ::testing::ExitedWithCode(1),
              std::string(prefix) + "broadcast omits an input axis");
  EXPECT_EXIT(call(5, {3}, {2, 3}, {0, 1}), ::testing::ExitedWithCode(1),
              std::string(prefix) +
                  "buffer size does not match shape \\(size\\(dOut\\) = 5 but prod\\(outDims\\) "
                  "= 6 for outDims = \\[2, 3\\]\\)");
  EXPECT_EXIT(call(1, {4294967295u, 4294967295u, 4294967295u}, {}, {}),
              ::testing::ExitedWithCode(1), std::string(prefix) + "shape size overflow");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_from_broadcast(zeros(1), nat_list({}), lean_box(0),
                                                          nat_list({})),
              ::testing::ExitedWithCode(1), std::string(prefix) + "expected Array Nat outDims");
  // The geometry is checked as broadcast_to checks it, before dOut is looked at.
  lean_object* released = zeros(6);
  torchlean_cuda_buffer_release(released);
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_from_broadcast(released, nat_list({3}), nat_list({2, 3}),
                                                          nat_list({1})),
              ::testing::ExitedWithCode(1), std::string(prefix) + "axis map rank mismatch");
  EXPECT_EXIT(
      torchlean_cuda_buffer_reduce_from_broadcast(
          released, nat_list({4294967295u, 4294967295u, 4294967295u}), lean_box(0), nat_list({})),
      ::testing::ExitedWithCode(1), std::string(prefix) + "shape size overflow \\(inDims");
  lean_dec(released);
}

TEST_F(ReduceAxisDeathTest, ReleasedAndNonBufferOperandsPanic) {
  lean_object* released = zeros(6, 1);
  torchlean_cuda_buffer_release(released);
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_by_row(released, 2, 3), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_by_row: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(released, nat_list({6}), 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_sum_axis: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_max_by_row(released, 2, 3), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_max_by_row: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_max_by_column(released, 2, 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_max_by_column: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_from_broadcast(released, nat_list({6}), nat_list({6}),
                                                          nat_list({1})),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_from_broadcast: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_max_by_column(lean_box(1), 1, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_max_by_column: argument is not a buffer object");
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_from_broadcast(byte_array({1, 2}).get(), nat_list({}),
                                                          nat_list({}), nat_list({})),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: reduce_from_broadcast: argument is not a buffer object");
  lean_dec(released);
}

// ---------------------------------------------------------------------------------------------
// The CUDA launchers directly (cuda run only): views that start past an allocation's start (the
// ABI's buffers never do), so that rows begin at every offset from a 16-byte boundary.

#if TLRT_HAVE_CUDA

template <class T>
class ReduceAxisLauncher : public LauncherSuite {
 protected:
  enum class Op { sum_by_row, max_by_row, max_by_column };

  // The launcher of `op` on a rows x cols view `offset` elements past the start of a device
  // allocation holding x there; the result's words.
  std::vector<Bits<T>> launch(Op op, const std::vector<T>& x, uint64_t offset, uint64_t rows,
                              uint64_t cols) {
    const uint64_t outputs = op == Op::max_by_column ? cols : rows;
    T* dev = nullptr;
    T* out = nullptr;
    void* workspace = nullptr;
    EXPECT_EQ(cudaMalloc(&dev, (offset + x.size()) * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&out, outputs * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dev + offset, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice),
              cudaSuccess);
    switch (op) {
      case Op::sum_by_row:
        tlrt::kernels::reduce_sum_by_row_cuda(dev + offset, rows, cols, out, stream_);
        break;
      case Op::max_by_row:
        tlrt::kernels::reduce_max_by_row_cuda(dev + offset, rows, cols, out, stream_);
        break;
      case Op::max_by_column: {
        const uint64_t bytes =
            tlrt::kernels::reduce_max_by_column_workspace_bytes<T>(dev + offset, rows, cols);
        if (bytes != 0) {
          EXPECT_EQ(cudaMalloc(&workspace, bytes), cudaSuccess);
        }
        tlrt::kernels::reduce_max_by_column_cuda(dev + offset, rows, cols, out, workspace, stream_);
        break;
      }
    }
    std::vector<Bits<T>> got(outputs);
    EXPECT_EQ(
        cudaMemcpyAsync(got.data(), out, outputs * sizeof(T), cudaMemcpyDeviceToHost, stream_),
        cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    cudaFree(dev);
    cudaFree(out);
    cudaFree(workspace);
    return got;
  }
};
TYPED_TEST_SUITE(ReduceAxisLauncher, Dtypes);

// Views at 0 .. 3 elements past a 256-byte aligned start: rows with a scalar head before their
// first 16-byte boundary and a scalar tail, lanes with full and partial batches of loads, the
// block per row, narrow rows; the maxima on the rule lines and, for the columns, on their
// transpose and on random values with specials.
TYPED_TEST(ReduceAxisLauncher, ViewsAtEveryOffsetFromAVectorBoundary) {
  using T = TypeParam;
  using Op = typename TestFixture::Op;
  const T specials[] = {std::numeric_limits<T>::quiet_NaN(), -0.0, 0.0,
                        std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity()};
  for (uint64_t offset : {0, 1, 2, 3}) {
    for (auto [rows, cols] : {std::pair<uint64_t, uint64_t>{513, 1024},
                              {257, 1000},
                              {2200, 1027},
                              {40, 4100},
                              {3000, 12}}) {
      const std::string what =
          std::to_string(rows) + "x" + std::to_string(cols) + " at +" + std::to_string(offset);
      const std::vector<T> sums = random_values<T>(rows * cols, static_cast<uint32_t>(rows + cols));
      expect_row_sums_within_bound(sums, rows, cols,
                                   this->launch(Op::sum_by_row, sums, offset, rows, cols), what);
      const std::vector<T> lines = rule_lines<T>(rows, cols, static_cast<uint32_t>(rows * cols));
      EXPECT_EQ(this->launch(Op::max_by_row, lines, offset, rows, cols),
                words<T>(host_max(lines, rows, cols, true)))
          << what;
      EXPECT_EQ(this->launch(Op::max_by_column, transposed(lines, rows, cols), offset, cols, rows),
                words<T>(host_max(lines, rows, cols, true)))
          << what << ", transposed";
      std::vector<T> x = sums;
      std::mt19937 rng(static_cast<uint32_t>(rows + offset));
      for (size_t k = 0; k < x.size() / 17; ++k) x[rng() % x.size()] = specials[rng() % 5];
      EXPECT_EQ(this->launch(Op::max_by_column, x, offset, rows, cols),
                words<T>(host_max(x, rows, cols, false)))
          << what;
    }
  }
}

#endif  // TLRT_HAVE_CUDA

}  // namespace
