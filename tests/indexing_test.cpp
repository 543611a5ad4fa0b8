// Gather and scatter through the Lean boundary, on the backend TLRT_DEVICE selects (ctest runs this
// binary once with cpu and once with cuda). Results are read back as words and compared with
// expectations built here: gathers word for word (NaN payloads and -0 kept, out-of-range rows +0),
// scatters against the ordered fold of SPEC-ops 11 written out literally on the host (base first
// as -0 + base, then sources in increasing source index, one rounding each), so the cuda pass
// checks the device's sort-and-fold against the contract bit for bit. Also: the spec fixtures, the
// deterministic setting on and off (the same ordered result), 10-run repeatability, long runs of
// one target, ownership counters, and each bad input's panic with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "abi_test_support.h"

using namespace abi_test;

namespace {

// The contract's ordered fold, literally: per touched row, fl(-0 + base), then the sources in
// increasing index.
template <class T>
Words<T> expected_scatter(const Words<T>& mat, const Words<T>& values, uint64_t rows, uint64_t cols,
                          const std::vector<uint64_t>& idx) {
  std::vector<T> out(mat.size());
  for (size_t i = 0; i < mat.size(); ++i) out[i] = value_of<T>(mat[i]);
  std::vector<bool> touched(rows, false);
  for (size_t r = 0; r < idx.size(); ++r) {
    if (idx[r] >= rows) continue;
    T* row = out.data() + idx[r] * cols;
    volatile T negative_zero = static_cast<T>(-0.0);
    if (!touched[idx[r]]) {
      for (uint64_t c = 0; c < cols; ++c) row[c] = negative_zero + row[c];
    }
    touched[idx[r]] = true;
    for (uint64_t c = 0; c < cols; ++c) row[c] = row[c] + value_of<T>(values[r * cols + c]);
  }
  Words<T> w(out.size());
  for (size_t i = 0; i < out.size(); ++i) w[i] = bits_of(out[i]);
  // Untouched rows are bit copies (a signalling NaN stays signalling).
  for (uint64_t t = 0; t < rows; ++t) {
    if (!touched[t]) {
      for (uint64_t c = 0; c < cols; ++c) w[t * cols + c] = mat[t * cols + c];
    }
  }
  return w;
}

// Equal words, except that two NaNs of any payload agree (SPEC-ops 2.4).
template <class T>
void expect_same(const Words<T>& got, const Words<T>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(same_bits_or_nan(value_of<T>(got[i]), value_of<T>(want[i])))
        << "at " << i << ": " << value_of<T>(got[i]) << " vs " << value_of<T>(want[i]);
  }
}

template <class T>
Words<T> gather_rows(const Obj& mat, uint32_t rows, uint32_t cols,
                     const std::vector<uint64_t>& idx) {
  Obj list(nat_list(idx));
  Obj r(torchlean_cuda_buffer_gather_rows(mat.get(), rows, cols, list.get(),
                                          static_cast<uint32_t>(idx.size())));
  EXPECT_EQ(torchlean_cuda_buffer_size(r.get()), idx.size() * cols);
  return words_of<T>(r.get());
}

template <class T>
Words<T> scatter_rows(const Obj& mat, const Obj& values, uint32_t rows, uint32_t cols,
                      const std::vector<uint64_t>& idx) {
  Obj list(nat_list(idx));
  Obj r(torchlean_cuda_buffer_scatter_add_rows(mat.get(), values.get(), rows, cols, list.get(),
                                               static_cast<uint32_t>(idx.size())));
  EXPECT_EQ(torchlean_cuda_buffer_size(r.get()), uint64_t{rows} * cols);
  return words_of<T>(r.get());
}

template <class T>
Words<T> random_values(uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mag(-30.0, 30.0);
  Words<T> w(n);
  for (auto& v : w) {
    const double x = std::ldexp(static_cast<double>(rng() % 100000) - 50000.0, 0) *
                     std::exp2(std::floor(mag(rng)));
    v = bits_of(static_cast<T>(x));
  }
  return w;
}

std::vector<uint64_t> random_indices(uint64_t k, uint64_t range, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> idx(k);
  for (auto& i : idx) i = rng() % range;
  return idx;
}

class Indexing : public BackendSuite {
 protected:
  void TearDown() override {
    if (!IsSkipped()) {
      EXPECT_TRUE(set_deterministic(false));
    }
    BackendSuite::TearDown();
  }
};
using IndexingDeathTest = Indexing;

// ---------------------------------------------------------------------------------------------
// gather_rows

template <class T>
void gather_fixture() {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  // 4 x 3; the last row (where a clamped index would land) is all NaN.
  const std::vector<T> m = {1, -0.0, 2.5,  -3,  4,   std::numeric_limits<T>::infinity(),
                            0, 7,    -0.0, nan, nan, nan};
  Words<T> mw(m.size());
  for (size_t i = 0; i < m.size(); ++i) mw[i] = bits_of(m[i]);
  mw[1] = bits_of(static_cast<T>(-0.0));
  const Obj mat = make_words<T>(mw);
  const std::vector<uint64_t> idx = {2, 7, 0, 2, 4, 4294967295ull, 3, 1};
  const Words<T> got = gather_rows<T>(mat, 4, 3, idx);
  Words<T> want;
  for (uint64_t i : idx) {
    for (uint64_t c = 0; c < 3; ++c) want.push_back(i < 4 ? mw[i * 3 + c] : 0);
  }
  EXPECT_EQ(got, want);  // word for word: -0 kept, out-of-range rows exactly +0, NaN rows copied
}

TEST_F(Indexing, GatherRowsSelectsRowsAndZeroesOutOfRangeFloat32) {
  gather_fixture<float>();
}
TEST_F(Indexing, GatherRowsSelectsRowsAndZeroesOutOfRangeFloat64) {
  gather_fixture<double>();
}

TEST_F(Indexing, GatherRowsKeepsNaNPayloads) {
  const Words<float> mw = {0x7FC12345u, 0xFF800001u, 0x80000000u, 0x00000001u};
  const Obj mat = make_words<float>(mw);
  EXPECT_EQ(
      gather_rows<float>(mat, 2, 2, {1, 0, 1}),
      (Words<float>{0x80000000u, 0x00000001u, 0x7FC12345u, 0xFF800001u, 0x80000000u, 0x00000001u}));
}

TEST_F(Indexing, GatherRowsZeroExtents) {
  const Obj empty = make_words<float>({});
  EXPECT_EQ(gather_rows<float>(empty, 0, 3, {0, 5}), Words<float>(6, 0u));  // rows = 0: zeros
  EXPECT_TRUE(gather_rows<float>(empty, 4, 0, {0, 1, 9}).empty());          // cols = 0
  const Obj mat = make_buffer<double>({1, 2, 3, 4});
  EXPECT_TRUE(gather_rows<double>(mat, 2, 2, {}).empty());  // k = 0
}

TEST_F(Indexing, GatherRowsRandomShapes) {
  for (uint32_t cols : {1u, 2u, 3u, 4u, 5u, 8u, 33u, 64u, 100u, 257u}) {
    const uint32_t rows = 37;
    const Words<float> mw = random_values<float>(uint64_t{rows} * cols, cols);
    const Obj mat = make_words<float>(mw);
    const std::vector<uint64_t> idx = random_indices(300, rows + 5, cols + 1);
    Words<float> want;
    for (uint64_t i : idx) {
      for (uint64_t c = 0; c < cols; ++c) want.push_back(i < rows ? mw[i * cols + c] : 0);
    }
    EXPECT_EQ(gather_rows<float>(mat, rows, cols, idx), want) << "cols " << cols;
    const Words<double> dw = random_values<double>(uint64_t{rows} * cols, cols + 7);
    Words<double> dwant;
    for (uint64_t i : idx) {
      for (uint64_t c = 0; c < cols; ++c) dwant.push_back(i < rows ? dw[i * cols + c] : 0);
    }
    EXPECT_EQ(gather_rows<double>(make_words<double>(dw), rows, cols, idx), dwant)
        << "cols " << cols;
  }
}

// ---------------------------------------------------------------------------------------------
// scatter_add / scatter_add_rows

TEST_F(Indexing, ScatterAddSpecFixtureBaseFirstThenSourceOrder) {
  for (bool deterministic : {true, false}) {
    EXPECT_TRUE(set_deterministic(deterministic));
    const Obj x = make_buffer<float>({1e8f, -0.0f});
    const Obj v = make_buffer<float>({-1e8f, 1.0f});
    Obj list(nat_list({0, 0}));
    Obj r(torchlean_cuda_buffer_scatter_add(x.get(), v.get(), 2, list.get(), 2));
    EXPECT_EQ(words_of<float>(r.get()), (Words<float>{bits_of(1.0f), 0x80000000u}))
        << "deterministic " << deterministic;
  }
}

template <class T>
void scatter_fixture() {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  // 4 x 2 base: row 0 -0 entries, row 2 NaN (untouched), row 3 -0 and +0.
  const std::vector<T> base = {-0.0, -0.0, 1, 2, nan, nan, -0.0, 0};
  const std::vector<T> vals = {-0.0, 0, 10, 20, 5, 6, 100, 200, -0.0, -0.0, 7, 8};
  const std::vector<uint64_t> idx = {0, 1, 9, 1, 3, 4};  // 9 and 4 out of range, 1 repeated
  const Obj mat = make_buffer<T>(base);
  const Obj values = make_buffer<T>(vals);
  Words<T> bw, vw;
  for (T b : base) bw.push_back(bits_of(b));
  for (T v : vals) vw.push_back(bits_of(v));
  const Words<T> got = scatter_rows<T>(mat, values, 4, 2, idx);
  expect_same<T>(got, expected_scatter<T>(bw, vw, 4, 2, idx));
  EXPECT_EQ(got[0], bits_of(static_cast<T>(-0.0)));  // -0 + -0 + -0
  EXPECT_EQ(got[1], bits_of(static_cast<T>(0.0)));   // -0 + -0 + +0
  EXPECT_EQ(got[2], bits_of(static_cast<T>(1 + 10 + 100)));
  EXPECT_EQ(got[6], bits_of(static_cast<T>(-0.0)));  // -0 + -0 + -0
  EXPECT_EQ(got[7], bits_of(static_cast<T>(0.0)));
  EXPECT_TRUE(std::isnan(value_of<T>(got[4])));
}

TEST_F(Indexing, ScatterAddRowsFixtureFloat32) {
  scatter_fixture<float>();
}
TEST_F(Indexing, ScatterAddRowsFixtureFloat64) {
  scatter_fixture<double>();
}

TEST_F(Indexing, UntouchedRowsAreBitCopies) {
  const Words<float> mw = {0x7FA00001u, 0x80000000u, 0xFFC0BEEFu, 0x00000001u};
  const Obj mat = make_words<float>(mw);
  const Obj values = make_buffer<float>({1, 2, 3, 4});
  // Only out-of-range targets: the result is the base, word for word.
  EXPECT_EQ(scatter_rows<float>(mat, values, 2, 2, {2, 7}), mw);
  Obj list(nat_list({}));
  Obj r(
      torchlean_cuda_buffer_scatter_add(mat.get(), make_words<float>({}).get(), 4, list.get(), 0));
  EXPECT_EQ(words_of<float>(r.get()), mw);
}

// The 1-column symbol itself (SPEC-ops 11: the 1-column case of scatter_add_rows): untouched
// entries are bit copies (a NaN payload among them), out-of-range targets are ignored, repeats
// accumulate base first then in source order (one rounding per add), and a -0 base keeps its sign
// under -0 sources; with the deterministic setting on and off.
template <class T>
void scatter_add_column_fixture() {
  const T big = static_cast<T>(std::is_same_v<T, float> ? 1e8 : 1e17);
  using Bits = typename Dt<T>::Bits;
  // A NaN with a payload of its own, which an untouched entry keeps bit for bit.
  const Bits nan_payload =
      static_cast<Bits>(std::is_same_v<T, float> ? 0x7FA00001ull : 0x7FF4000000000001ull);
  const Words<T> xw = {bits_of(static_cast<T>(-0.0)), bits_of(big), nan_payload,
                       bits_of(static_cast<T>(-0.0)), bits_of(static_cast<T>(-0.0))};
  const std::vector<T> vals = {-0.0, 1, 5, -big, 0.0, 7, -0.0};
  const std::vector<uint64_t> idx = {0, 1, 9, 1, 3, 5, 4};  // 9 and 5 out of range, 1 repeated
  // Base first, then the sources in order: fl(fl(big + 1) - big) is 0 (fl(big + 1) = big), where
  // the sources summed first would give 1.
  const T e1 = static_cast<T>(static_cast<T>(big + static_cast<T>(1)) - big);
  ASSERT_EQ(e1, static_cast<T>(0));
  const Words<T> want = {bits_of(static_cast<T>(-0.0)), bits_of(e1), nan_payload,
                         bits_of(static_cast<T>(0.0)), bits_of(static_cast<T>(-0.0))};
  for (bool deterministic : {true, false}) {
    const DeterministicScope setting(deterministic);
    const Obj x = make_words<T>(xw);
    const Obj values = make_buffer<T>(vals);
    Obj list(nat_list(idx));
    Obj r(torchlean_cuda_buffer_scatter_add(x.get(), values.get(), 5, list.get(),
                                            static_cast<uint32_t>(idx.size())));
    ASSERT_EQ(torchlean_cuda_buffer_size(r.get()), 5u);
    EXPECT_EQ(words_of<T>(r.get()), want) << "deterministic " << deterministic;
  }
}

TEST_F(Indexing, ScatterAddColumnSymbolFollowsTheRowRulesFloat32) {
  scatter_add_column_fixture<float>();
}
TEST_F(Indexing, ScatterAddColumnSymbolFollowsTheRowRulesFloat64) {
  scatter_add_column_fixture<double>();
}

TEST_F(Indexing, ScatterZeroExtents) {
  const Obj empty = make_words<double>({});
  EXPECT_TRUE(scatter_rows<double>(empty, make_buffer<double>({1, 2}), 0, 1, {0, 0}).empty());
  EXPECT_TRUE(scatter_rows<double>(empty, empty, 3, 0, {0, 1}).empty());
}

template <class T>
void random_scatter(uint32_t rows, uint32_t cols, uint64_t k, uint64_t range, uint64_t seed) {
  const Words<T> mw = random_values<T>(uint64_t{rows} * cols, seed);
  const Words<T> vw = random_values<T>(k * cols, seed + 1);
  const std::vector<uint64_t> idx = random_indices(k, range, seed + 2);
  const Obj mat = make_words<T>(mw);
  const Obj values = make_words<T>(vw);
  expect_same<T>(scatter_rows<T>(mat, values, rows, cols, idx),
                 expected_scatter<T>(mw, vw, rows, cols, idx));
}

TEST_F(Indexing, ScatterAddRowsMatchesTheOrderedFold) {
  EXPECT_TRUE(set_deterministic(true));
  for (uint32_t cols : {1u, 2u, 7u, 31u, 32u, 33u, 96u, 300u}) {
    SCOPED_TRACE(cols);
    random_scatter<float>(50, cols, 2000, 60, cols);  // many repeats, some out of range
    random_scatter<double>(50, cols, 2000, 60, cols + 100);
    random_scatter<float>(1000, cols, 100, 1000, cols + 200);  // mostly single sources
  }
}

TEST_F(Indexing, LongRunsOnOneTarget) {
  // Every source on one or two targets: runs far past the per-thread length.
  for (uint32_t cols : {1u, 3u, 40u}) {
    SCOPED_TRACE(cols);
    random_scatter<float>(2, cols, 5000, 2, 11 + cols);
    random_scatter<double>(1, cols, 4099, 1, 12 + cols);
  }
  random_scatter<float>(1, 1, 300000, 1, 13);
  random_scatter<float>(3, 1, 300000, 4, 14);
}

// One column: the sorted sources are folded in tiles of 2048 positions, runs crossing the tiles'
// ends finish past them, runs longer than 32 sources go to the long list; out-of-range targets sort
// last, inside or after a tile.
TEST_F(Indexing, SingleColumnRunsAcrossTiles) {
  EXPECT_TRUE(set_deterministic(true));
  random_scatter<float>(100000, 1, 300000, 100000, 51);  // runs of about 3, many tiles
  random_scatter<float>(5000, 1, 200000, 5500, 52);      // runs of about 40: both sides of 32
  random_scatter<double>(3000, 1, 100000, 3100, 53);     // about 33 per target
  random_scatter<float>(64, 1, 70001, 64, 54);           // every run on the long list
  random_scatter<double>(20000, 1, 4097, 40000, 55);     // half out of range, a short last tile
}

// Host lists of at most 1024 entries travel as kernel parameters (two sizes: up to 64, up to 1024)
// and scatter in one kernel that tiles the base (4096 elements, or a 4096-column slice of a longer
// row; bases over 2^20 elements copied first); lists of up to 64 into bases of up to 2^14 elements
// take the tiny kernel (a thread per element). Both sides of each threshold, same bits.
TEST_F(Indexing, ShortAndLongIndexListsGiveTheSameFold) {
  EXPECT_TRUE(set_deterministic(true));
  struct Shape {
    uint32_t rows, cols;
  };
  for (Shape sh : {Shape{32, 32}, Shape{50, 1}, Shape{3000, 3}, Shape{3, 5000}, Shape{2, 9000},
                   Shape{128, 128}, Shape{129, 128}, Shape{1100, 1000}}) {
    for (uint64_t k : {1u, 8u, 64u, 65u, 1000u, 1024u, 1025u}) {
      SCOPED_TRACE(std::to_string(sh.rows) + "x" + std::to_string(sh.cols) + " k " +
                   std::to_string(k));
      random_scatter<float>(sh.rows, sh.cols, k, sh.rows + sh.rows / 8 + 1, k + sh.cols);
      if (sh.rows * uint64_t{sh.cols} <= 100000) {
        random_scatter<double>(sh.rows, sh.cols, k, sh.rows, k + sh.cols + 7);
      }
    }
  }
  // Every short source on one target: a chain of 1024 adds.
  random_scatter<float>(4, 1, 1024, 1, 41);
  random_scatter<double>(7, 33, 1024, 2, 42);
}

TEST_F(Indexing, ShortAndLongGatherListsSelectTheSameRows) {
  for (uint32_t cols : {1u, 3u, 32u, 5000u}) {
    const uint32_t rows = 40;
    const Words<float> mw = random_values<float>(uint64_t{rows} * cols, cols);
    const Obj mat = make_words<float>(mw);
    for (uint64_t k : {1u, 64u, 65u, 1024u, 1025u}) {
      SCOPED_TRACE(std::to_string(cols) + " k " + std::to_string(k));
      const std::vector<uint64_t> idx = random_indices(k, rows + 5, k + cols);
      Words<float> want;
      for (uint64_t i : idx) {
        for (uint64_t c = 0; c < cols; ++c) want.push_back(i < rows ? mw[i * cols + c] : 0u);
      }
      EXPECT_EQ(gather_rows<float>(mat, rows, cols, idx), want);
    }
  }
}

TEST_F(Indexing, DeterministicSettingOffGivesTheOrderedResultToo) {
  EXPECT_TRUE(set_deterministic(false));
  random_scatter<float>(64, 1, 20000, 70, 21);
  random_scatter<float>(64, 48, 3000, 70, 22);
}

TEST_F(Indexing, TenRunsAreBitIdentical) {
  EXPECT_TRUE(set_deterministic(true));
  const uint32_t rows = 512;
  for (uint32_t cols : {1u, 64u}) {
    const Words<float> mw = random_values<float>(uint64_t{rows} * cols, 31);
    const uint64_t k = 20000;
    const Words<float> vw = random_values<float>(k * cols, 32);
    const std::vector<uint64_t> idx = random_indices(k, rows + 8, 33);
    const Obj mat = make_words<float>(mw);
    const Obj values = make_words<float>(vw);
    const Words<float> first = scatter_rows<float>(mat, values, rows, cols, idx);
    for (int run = 1; run < 10; ++run) {
      EXPECT_EQ(scatter_rows<float>(mat, values, rows, cols, idx), first) << "run " << run;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// gather_at / scatter_add_at

template <class T>
void gather_at_fixture() {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  const Obj table = make_buffer<T>({10, 11, 12, 13, 14});
  const Obj positions = make_buffer<T>({-3, 7, 2.75, nan, -0.5, inf, -inf, 3.999, 1, -0.0});
  Obj r(torchlean_cuda_buffer_gather_at(table.get(), 5, positions.get(), 10));
  const Words<T> got = words_of<T>(r.get());
  Words<T> want;
  for (T v : std::vector<T>{10, 14, 12, 10, 10, 14, 10, 13, 11, 10}) want.push_back(bits_of(v));
  EXPECT_EQ(got, want);
}

TEST_F(Indexing, GatherAtAddressingFloat32) {
  gather_at_fixture<float>();
}
TEST_F(Indexing, GatherAtAddressingFloat64) {
  gather_at_fixture<double>();
}

TEST_F(Indexing, GatherAtCopiesWords) {
  const Words<float> tw = {0x7FC12345u, 0x80000000u};
  const Obj table = make_words<float>(tw);
  const Obj positions = make_buffer<float>({0, 1, 5, 0.5f});
  Obj r(torchlean_cuda_buffer_gather_at(table.get(), 2, positions.get(), 4));
  EXPECT_EQ(words_of<float>(r.get()), (Words<float>{tw[0], tw[1], tw[1], tw[0]}));
  Obj e(torchlean_cuda_buffer_gather_at(table.get(), 2, make_words<float>({}).get(), 0));
  EXPECT_EQ(torchlean_cuda_buffer_size(e.get()), 0u);
}

template <class T>
void scatter_at_fixture() {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const Obj positions = make_buffer<T>({-3, 7, 2.75, nan, -0.5, 2, 1.5});
  const Obj values = make_buffer<T>({1e8, 1, -1e8, 4, 0.25, 3, -0.0});
  Obj r(torchlean_cuda_buffer_scatter_add_at(5, positions.get(), values.get(), 7));
  // Targets: 0,4,2,0,0,2,1. Entry 0: ((0 + 1e8) + 4) + 0.25; entry 2: (0 + -1e8) + 3;
  // entry 1: +0 + -0 = +0; entry 3 untouched +0; entry 4: 1.
  const T e0 = static_cast<T>(static_cast<T>(static_cast<T>(1e8) + static_cast<T>(4)) +
                              static_cast<T>(0.25));
  const T e2 = static_cast<T>(static_cast<T>(-1e8) + static_cast<T>(3));
  const Words<T> want = {bits_of(e0), bits_of(static_cast<T>(0)), bits_of(e2),
                         bits_of(static_cast<T>(0)), bits_of(static_cast<T>(1))};
  EXPECT_EQ(words_of<T>(r.get()), want);
}

TEST_F(Indexing, ScatterAddAtZerosThenSourceOrderFloat32) {
  scatter_at_fixture<float>();
}
TEST_F(Indexing, ScatterAddAtZerosThenSourceOrderFloat64) {
  scatter_at_fixture<double>();
}

// scatter_add_at addresses as gather_at does: +inf at the last entry, -inf at the first.
template <class T>
void scatter_at_infinities() {
  const T inf = std::numeric_limits<T>::infinity();
  const Obj positions = make_buffer<T>({inf, -inf, inf, 1});
  const Obj values = make_buffer<T>({1, 2, 4, 8});
  Obj r(torchlean_cuda_buffer_scatter_add_at(3, positions.get(), values.get(), 4));
  const Words<T> want = {bits_of(static_cast<T>(2)), bits_of(static_cast<T>(8)),
                         bits_of(static_cast<T>(5))};
  EXPECT_EQ(words_of<T>(r.get()), want);
}

TEST_F(Indexing, ScatterAddAtAddressesInfinitiesAtTheEndsFloat32) {
  scatter_at_infinities<float>();
}
TEST_F(Indexing, ScatterAddAtAddressesInfinitiesAtTheEndsFloat64) {
  scatter_at_infinities<double>();
}

TEST_F(Indexing, ScatterAddAtManySourcesIsReproducible) {
  EXPECT_TRUE(set_deterministic(true));
  const uint64_t count = 50000;
  const Words<float> pw = [&] {
    std::mt19937_64 rng(5);
    Words<float> w(count);
    for (auto& p : w) p = bits_of(static_cast<float>(static_cast<double>(rng() % 4000) / 37.0 - 3));
    return w;
  }();
  const Words<float> vw = random_values<float>(count, 6);
  const Obj positions = make_words<float>(pw);
  const Obj values = make_words<float>(vw);
  Words<float> base(100, 0u);
  std::vector<uint64_t> idx(count);
  for (uint64_t i = 0; i < count; ++i) {
    const float p = value_of<float>(pw[i]);
    idx[i] = p <= 0 ? 0 : (p >= 99 ? 99 : static_cast<uint64_t>(p));
  }
  const Words<float> want = expected_scatter<float>(base, vw, 100, 1, idx);
  for (int run = 0; run < 10; ++run) {
    Obj r(torchlean_cuda_buffer_scatter_add_at(100, positions.get(), values.get(), count));
    expect_same<float>(words_of<float>(r.get()), want);
  }
}

// count <= 1024: one kernel reading the positions on the device (count <= 64 into tables of at
// most 2^14 entries: the tiny kernel); above: the sorted path. Tables past 2^20 entries are
// zero-filled before the short kernel.
TEST_F(Indexing, ScatterAddAtShortAndLongCountsAgree) {
  for (uint32_t size : {1u, 37u, 5000u, 16384u, 16385u, 1100000u}) {
    for (uint64_t count : {1u, 64u, 65u, 1024u, 1025u}) {
      SCOPED_TRACE(std::to_string(size) + " count " + std::to_string(count));
      std::mt19937_64 rng(size + count);
      Words<double> pw(count);
      std::vector<uint64_t> idx(count);
      const uint64_t span = std::min<uint64_t>(size, 300);
      for (uint64_t i = 0; i < count; ++i) {
        const double p = static_cast<double>(rng() % (4 * span + 8)) / 4.0 - 1.0;
        pw[i] = bits_of(p);
        idx[i] = p <= 0 ? 0 : (p >= size - 1 ? size - 1 : static_cast<uint64_t>(p));
      }
      const Words<double> vw = random_values<double>(count, size + 3 * count);
      const Obj positions = make_words<double>(pw);
      const Obj values = make_words<double>(vw);
      const Words<double> want =
          expected_scatter<double>(Words<double>(size, 0u), vw, size, 1, idx);
      Obj r(torchlean_cuda_buffer_scatter_add_at(size, positions.get(), values.get(),
                                                 static_cast<uint32_t>(count)));
      expect_same<double>(words_of<double>(r.get()), want);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Ownership

TEST_F(Indexing, EachCallCreatesOneFreshBufferAndLeaksNothing) {
  const Obj mat = make_buffer<float>({1, 2, 3, 4, 5, 6});
  const Obj values = make_buffer<float>({1, 1, 1, 1});
  const Obj positions = make_buffer<float>({0, 1});
  auto check = [&](auto call) {
    const Counters before = Counters::read();
    lean_object* r = call();
    const Counters mid = Counters::read();
    EXPECT_EQ(mid.wrapper_live, before.wrapper_live + 1);
    EXPECT_EQ(mid.live_bytes > before.live_bytes, torchlean_cuda_buffer_size(r) > 0);
    EXPECT_NE(r, mat.get());
    EXPECT_NE(r, values.get());
    lean_dec(r);
    const Counters after = Counters::read();
    EXPECT_EQ(after.wrapper_live, before.wrapper_live);
    EXPECT_EQ(after.live_bytes, before.live_bytes);
  };
  Obj two(nat_list({2, 0}));
  Obj one(nat_list({1}));
  Obj none(nat_list({}));
  check([&] { return torchlean_cuda_buffer_gather_rows(mat.get(), 3, 2, two.get(), 2); });
  check([&] { return torchlean_cuda_buffer_gather_rows(mat.get(), 3, 2, none.get(), 0); });
  check([&] {
    return torchlean_cuda_buffer_scatter_add_rows(mat.get(), values.get(), 3, 2, two.get(), 2);
  });
  check([&] {
    return torchlean_cuda_buffer_scatter_add_rows(mat.get(), make_words<float>({}).get(), 3, 2,
                                                  none.get(), 0);
  });
  check([&] {
    return torchlean_cuda_buffer_scatter_add(values.get(), positions.get(), 4, two.get(), 2);
  });
  check([&] { return torchlean_cuda_buffer_gather_at(mat.get(), 6, positions.get(), 2); });
  check(
      [&] { return torchlean_cuda_buffer_scatter_add_at(3, positions.get(), positions.get(), 2); });
  // An identity-looking call still returns a fresh buffer.
  check([&] {
    return torchlean_cuda_buffer_scatter_add(mat.get(), make_words<float>({}).get(), 6, none.get(),
                                             0);
  });
}

// ---------------------------------------------------------------------------------------------
// Panics

lean_object* zeros(uint32_t n, uint8_t dtype) {
  return torchlean_cuda_buffer_zeros(n, dtype);
}

TEST_F(IndexingDeathTest, IndexListMustBeAnArrayNatOfLengthK) {
  EXPECT_EXIT(torchlean_cuda_buffer_gather_rows(zeros(6, 0), 3, 2, lean_box(1), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: gather_rows: expected Array Nat indices");
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add_rows(zeros(6, 0), zeros(2, 0), 3, 2,
                                                     byte_array({1}).get(), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: scatter_add_rows: expected Array Nat indices");
  EXPECT_EXIT(torchlean_cuda_buffer_gather_rows(zeros(6, 0), 3, 2, nat_list({0, 1}), 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: gather_rows: indices.size mismatch \\(indices.size = 2 but "
              "k = 3\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add(zeros(3, 1), zeros(1, 1), 3, nat_list({0, 1}), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: scatter_add: indices.size mismatch \\(indices.size = 2 but "
              "k = 1\\)");
}

TEST_F(IndexingDeathTest, IndexEntriesMustFitUInt32) {
  EXPECT_EXIT(torchlean_cuda_buffer_gather_rows(zeros(6, 0), 3, 2,
                                                nat_list({0, 4294967295ull, 4294967296ull}), 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: gather_rows: index exceeds UInt32 \\(indices\\[2\\] = "
              "4294967296\\)");
  // A heap object in place of a scalar entry stands for a bignum.
  EXPECT_EXIT(
      {
        lean_object* list = nat_list({1, 2});
        lean_array_set_core(list, 1, lean_box_uint64(uint64_t{1} << 40));
        torchlean_cuda_buffer_scatter_add(zeros(3, 0), zeros(2, 0), 3, list, 2);
      },
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: scatter_add: index exceeds UInt32 \\(indices\\[1\\] = a bignum\\)");
  // A bad entry far into a large list (the conversion runs on several threads).
  EXPECT_EXIT(
      {
        std::vector<uint64_t> entries(3000000, 1);
        entries[2999999] = uint64_t{1} << 33;
        entries[1234567] = uint64_t{1} << 32;
        torchlean_cuda_buffer_scatter_add(zeros(3, 0), zeros(3000000, 0), 3, nat_list(entries),
                                          3000000);
      },
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: scatter_add: index exceeds UInt32 \\(indices\\[1234567\\] = "
      "4294967296\\)");
}

TEST_F(IndexingDeathTest, BufferSizesMustMatchTheShapes) {
  EXPECT_EXIT(
      torchlean_cuda_buffer_gather_rows(zeros(5, 0), 3, 2, nat_list({0}), 1),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: gather_rows: buffer size does not match shape \\(size\\(mat\\) "
      "= 5 but prod\\(\\[rows, cols\\]\\) = 6");
  EXPECT_EXIT(
      torchlean_cuda_buffer_scatter_add_rows(zeros(6, 0), zeros(3, 0), 3, 2, nat_list({0, 1}), 2),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: scatter_add_rows: buffer size does not match shape "
      "\\(size\\(values\\) = 3 but prod\\(\\[k, cols\\]\\) = 4");
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add(zeros(4, 0), zeros(1, 0), 3, nat_list({0}), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: scatter_add: buffer size does not match shape "
              "\\(size\\(x\\) = 4 but n = 3\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add(zeros(3, 0), zeros(1, 0), 3, nat_list({0, 2}), 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: scatter_add: buffer size does not match shape "
              "\\(size\\(values\\) = 1 but k = 2\\)");
  // The buffers are checked before the index list.
  EXPECT_EXIT(torchlean_cuda_buffer_gather_rows(zeros(5, 0), 3, 2, lean_box(0), 1),
              ::testing::ExitedWithCode(1), "buffer size does not match shape");
}

TEST_F(IndexingDeathTest, DtypesMustAgree) {
  EXPECT_EXIT(
      torchlean_cuda_buffer_scatter_add_rows(zeros(4, 0), zeros(2, 1), 2, 2, nat_list({1}), 1),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: scatter_add_rows: dtypes differ \\(float32 vs float64\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_gather_at(zeros(4, 1), 4, zeros(2, 0), 2),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: tlrt: gather_at: dtypes differ");
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add_at(4, zeros(2, 0), zeros(2, 1), 2),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: tlrt: scatter_add_at: dtypes differ");
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add(zeros(3, 1), zeros(2, 0), 3, nat_list({0, 2}), 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: scatter_add: dtypes differ \\(float64 vs float32\\)");
}

TEST_F(IndexingDeathTest, TablesMustBeNonempty) {
  EXPECT_EXIT(torchlean_cuda_buffer_gather_at(zeros(0, 0), 0, zeros(2, 0), 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: gather_at: gather_at needs a nonempty table");
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add_at(0, zeros(0, 1), zeros(0, 1), 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: scatter_add_at: scatter_add_at needs a nonempty table");
  // size = 0 is the spec's first condition: it is reported even when the sizes disagree too.
  EXPECT_EXIT(torchlean_cuda_buffer_gather_at(zeros(3, 0), 0, zeros(2, 0), 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: gather_at: gather_at needs a nonempty table \\(size = 0\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add_at(0, zeros(3, 1), zeros(2, 1), 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: scatter_add_at: scatter_add_at needs a nonempty table");
}

TEST_F(IndexingDeathTest, AtSizesMustMatch) {
  EXPECT_EXIT(torchlean_cuda_buffer_gather_at(zeros(4, 0), 5, zeros(2, 0), 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: gather_at: buffer size does not match shape "
              "\\(size\\(table\\) = 4 but size = 5\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_gather_at(zeros(4, 0), 4, zeros(2, 0), 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: gather_at: buffer size does not match shape "
              "\\(size\\(positions\\) = 2 but count = 3\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add_at(4, zeros(2, 0), zeros(3, 0), 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: scatter_add_at: buffer size does not match shape "
              "\\(size\\(values\\) = 3 but count = 2\\)");
}

TEST_F(IndexingDeathTest, ReleasedAndNonBufferOperandsPanic) {
  const char* gone = "buffer has been released";
  EXPECT_EXIT(torchlean_cuda_buffer_gather_rows(released_buffer(4), 2, 2, nat_list({0}), 1),
              ::testing::ExitedWithCode(1),
              std::string("INTERNAL PANIC: tlrt: gather_rows: ") + gone);
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add_rows(zeros(4, 0), released_buffer(2), 2, 2,
                                                     nat_list({0}), 1),
              ::testing::ExitedWithCode(1),
              std::string("INTERNAL PANIC: tlrt: scatter_add_rows: ") + gone);
  EXPECT_EXIT(
      torchlean_cuda_buffer_scatter_add(released_buffer(3), zeros(1, 0), 3, nat_list({0}), 1),
      ::testing::ExitedWithCode(1), std::string("INTERNAL PANIC: tlrt: scatter_add: ") + gone);
  EXPECT_EXIT(torchlean_cuda_buffer_gather_at(zeros(3, 0), 3, released_buffer(1), 1),
              ::testing::ExitedWithCode(1),
              std::string("INTERNAL PANIC: tlrt: gather_at: ") + gone);
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add_at(3, zeros(1, 0), released_buffer(1), 1),
              ::testing::ExitedWithCode(1),
              std::string("INTERNAL PANIC: tlrt: scatter_add_at: ") + gone);
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add_at(2, lean_box(3), zeros(1, 0), 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: scatter_add_at: argument is not a buffer object");
}

}  // namespace
