// hard_masked_softmax_by_row and softmax_io through the Lean boundary, on the backend TLRT_DEVICE
// selects (ctest runs this binary once with cpu and once with cuda). Inputs are made and results
// read back as exact words (of_bytes_io / to_bytes_io). Covered: values against a host softmax in
// long double (within a few units in the last place), the exact +0 of blocked entries (mask +0 and
// -0), NaN masks allowed, fully blocked rows (+0 even with NaN scores), NaN and +inf allowed
// scores making the row NaN while its blocked entries stay +0, -inf allowed scores, rows of
// length 1, row lengths that reach every CUDA path (warp, shared memory, online), float64,
// softmax_io on every axis of 3-D shapes, the empty rules, the ownership counters, ten runs giving
// the same bits with the deterministic setting on, every panic of the pure symbol and every IO
// error of softmax_io with its exact message, in TorchLean's check order.
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

using namespace abi_test;

namespace {

using Dims = std::vector<uint64_t>;

template <class T>
using Bits = typename Dt<T>::Bits;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T>
std::vector<T> values_as(const std::vector<double>& v) {
  std::vector<T> r;
  for (double e : v) r.push_back(static_cast<T>(e));
  return r;
}

template <class T>
std::vector<T> masked(const std::vector<T>& scores, const std::vector<T>& mask, uint32_t rows,
                      uint32_t cols) {
  Obj s = make_buffer(scores);
  Obj m = make_buffer(mask);
  Obj r(torchlean_cuda_buffer_hard_masked_softmax_by_row(s.get(), m.get(), rows, cols));
  return read_values<T>(r.get());
}

template <class T>
std::vector<T> along(const std::vector<T>& x, const Dims& dims, uint32_t axis) {
  Obj b = make_buffer(x);
  Io io = take_io(torchlean_cuda_buffer_softmax_io(b.get(), nats(dims).get(), axis));
  EXPECT_TRUE(io.ok) << io.message;
  if (!io.ok) return {};
  return read_values<T>(io.value.get());
}

// Host softmax written from the contract, in long double: one line of `count` values at
// x[k * stride]; mask null allows everything.
template <class T>
void host_line(const T* x, const T* mask, uint64_t count, uint64_t stride, long double* out) {
  auto allowed = [&](uint64_t k) { return mask == nullptr || mask[k * stride] != T(0); };
  bool any = false;
  long double m = -INFINITY;
  bool nan = false;
  for (uint64_t k = 0; k < count; ++k) {
    if (!allowed(k)) continue;
    any = true;
    const long double v = x[k * stride];
    if (std::isnan(v)) nan = true;
    if (v > m) m = v;
  }
  if (nan) m = NAN;
  long double sum = 0;
  for (uint64_t k = 0; k < count; ++k) {
    if (any && allowed(k)) sum += std::exp(static_cast<long double>(x[k * stride]) - m);
  }
  for (uint64_t k = 0; k < count; ++k) {
    out[k * stride] =
        any && allowed(k) ? std::exp(static_cast<long double>(x[k * stride]) - m) / sum : 0.0L;
  }
}

template <class T>
std::vector<long double> host_masked(const std::vector<T>& s, const std::vector<T>& m,
                                     uint64_t rows, uint64_t cols) {
  std::vector<long double> out(rows * cols);
  for (uint64_t r = 0; r < rows; ++r) {
    host_line(s.data() + r * cols, m.data() + r * cols, cols, 1, out.data() + r * cols);
  }
  return out;
}

template <class T>
std::vector<long double> host_along(const std::vector<T>& x, const Dims& dims, size_t axis) {
  uint64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= dims[k];
  for (size_t k = axis + 1; k < dims.size(); ++k) inner *= dims[k];
  std::vector<long double> out(x.size());
  for (uint64_t o = 0; o < outer; ++o) {
    for (uint64_t i = 0; i < inner; ++i) {
      const uint64_t base = o * dims[axis] * inner + i;
      host_line<T>(x.data() + base, nullptr, dims[axis], inner, out.data() + base);
    }
  }
  return out;
}

// Within the family's parity bound (docs/NUMERICS.md, "Softmax") for rows of n allowed entries
// whose scores lie within `spread` of the row's max: ((spread + ln n + 4k + 4) u + (2k + 3)
// gamma_n) |y| + (2k + 2) denorm_min, k the device exp's ULP bound. A host value of 0 (blocked, or
// a fully blocked row) must come back as exactly +0, a host NaN as NaN.
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<long double>& want, uint64_t n,
                  long double spread, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const long double u = std::numeric_limits<T>::epsilon() / 2;
  const long double k = sizeof(T) == 4 ? 2 : 1;
  const long double nu = static_cast<long double>(n) * u;
  const long double rel = (spread + std::log(static_cast<long double>(n)) + 4 * k + 4) * u +
                          (2 * k + 3) * nu / (1 - nu) + 1e-15L * u;
  const long double tiny = (2 * k + 2) * std::numeric_limits<T>::denorm_min();
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
    } else if (want[i] == 0) {
      EXPECT_EQ(bits_of(got[i]), Bits<T>{0}) << what << " at " << i << ": " << got[i];
    } else {
      const long double err = std::fabs(static_cast<long double>(got[i]) - want[i]);
      EXPECT_LE(err, rel * want[i] + tiny)
          << what << " at " << i << ": got " << got[i] << " want " << static_cast<double>(want[i]);
    }
  }
}

template <class T>
std::vector<T> random_values(size_t n, uint32_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-scale, scale);
  std::vector<T> v(n);
  for (auto& e : v) e = static_cast<T>(dist(rng));
  return v;
}

template <class T>
std::vector<T> random_mask(size_t n, uint32_t seed, double density) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  std::vector<T> v(n);
  for (auto& e : v) e = dist(rng) < density ? T(1) : T(0);
  return v;
}

class Softmax : public BackendSuite {};
using SoftmaxDeathTest = Softmax;

template <class T>
class SoftmaxTyped : public BackendSuite {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SoftmaxTyped, Dtypes);

// ---------------------------------------------------------------------------------------------
// Hard-masked rows

TYPED_TEST(SoftmaxTyped, AllowedRowsAgainstTheHostSoftmax) {
  using T = TypeParam;
  const std::vector<T> s = values_as<T>({1, 2, 3, -4, 0.5, 100});
  const std::vector<T> m = values_as<T>({1, 1, 1, 1, 1, 1});
  expect_close(masked(s, m, 2, 3), host_masked(s, m, 2, 3), 3, 104, "2x3");
  expect_close(masked(s, m, 3, 2), host_masked(s, m, 3, 2), 2, 104, "3x2");
  expect_close(masked(s, m, 1, 6), host_masked(s, m, 1, 6), 6, 104, "1x6");
  // Equal scores: exactly 1/n for n a power of two.
  const std::vector<T> y = masked<T>(values_as<T>({7, 7, 7, 7}), values_as<T>({1, 1, 1, 1}), 1, 4);
  for (T v : y) EXPECT_EQ(v, T(0.25));
}

TYPED_TEST(SoftmaxTyped, BlockedEntriesAreExactlyPlusZero) {
  using T = TypeParam;
  // mask +0 and -0 block; NaN, -1 and tiny values allow.
  const std::vector<T> s = values_as<T>({1, 2, 3, 4, 5, 6});
  const std::vector<T> m = values_as<T>({0, kNaN, -0.0, -1, 1e-30, 0});
  const std::vector<T> y = masked(s, m, 1, 6);
  ASSERT_EQ(y.size(), 6u);
  EXPECT_EQ(bits_of(y[0]), Bits<T>{0});
  EXPECT_EQ(bits_of(y[2]), Bits<T>{0});
  EXPECT_EQ(bits_of(y[5]), Bits<T>{0});
  expect_close(y, host_masked(s, m, 1, 6), 6, 5, "nan mask allowed");
  EXPECT_GT(y[1], T(0));
  EXPECT_GT(y[4], y[3]);
}

TYPED_TEST(SoftmaxTyped, FullyBlockedRowsArePlusZero) {
  using T = TypeParam;
  const std::vector<T> s = values_as<T>({kNaN, kInf, -kInf, 1, 2, 3});
  const std::vector<T> m = values_as<T>({0, -0.0, 0, 1, 0, 1});
  const std::vector<T> y = masked(s, m, 2, 3);
  ASSERT_EQ(y.size(), 6u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bits_of(y[i]), Bits<T>{0}) << i;
  EXPECT_EQ(bits_of(y[4]), Bits<T>{0});
  expect_close(y, host_masked(s, m, 2, 3), 3, 2, "fully blocked row");
}

TYPED_TEST(SoftmaxTyped, NonFiniteAllowedScoresKeepTheirArithmetic) {
  using T = TypeParam;
  // Row 0: an allowed NaN makes the row NaN, its blocked entry +0. Row 1: an allowed +inf gives
  // inf - inf = NaN for the whole row. Row 2: a blocked +inf and NaN are ignored. Row 3: allowed
  // -inf gives exactly +0 beside finite scores. Row 4: only -inf allowed: NaN.
  const std::vector<T> s =
      values_as<T>({1, kNaN, 2, kInf, 1, 2, kInf, kNaN, 0, -kInf, 0, 0, -kInf, -kInf, 5});
  const std::vector<T> m = values_as<T>({1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0});
  const std::vector<T> y = masked(s, m, 5, 3);
  ASSERT_EQ(y.size(), 15u);
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
  EXPECT_EQ(bits_of(y[2]), Bits<T>{0});
  EXPECT_TRUE(std::isnan(y[3]) && std::isnan(y[4]));
  EXPECT_EQ(bits_of(y[5]), Bits<T>{0});
  EXPECT_EQ(bits_of(y[6]), Bits<T>{0});
  EXPECT_EQ(bits_of(y[7]), Bits<T>{0});
  EXPECT_EQ(y[8], T(1));
  EXPECT_EQ(bits_of(y[9]), Bits<T>{0});
  EXPECT_EQ(y[10], T(0.5));
  EXPECT_EQ(y[11], T(0.5));
  EXPECT_TRUE(std::isnan(y[12]) && std::isnan(y[13]));
  EXPECT_EQ(bits_of(y[14]), Bits<T>{0});
}

TYPED_TEST(SoftmaxTyped, RowsOfLengthOne) {
  using T = TypeParam;
  const std::vector<T> y =
      masked<T>(values_as<T>({-3, 1e30, 2, kNaN}), values_as<T>({1, 1, 0, 1}), 4, 1);
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0], T(1));
  EXPECT_EQ(y[1], T(1));
  EXPECT_EQ(bits_of(y[2]), Bits<T>{0});
  EXPECT_TRUE(std::isnan(y[3]));
}

// Row lengths that take every CUDA path: lane groups and whole warps (vector and scalar loads),
// the shared-memory kernel, the registers + shared-memory kernel (two blocks per SM, one, and on
// sm_90 with a mask the last lengths before the online kernel: 60000 float32, 30000 float64) and
// the online two-pass kernel (past the shared memory of a block: 66000 float32 with a mask).
TYPED_TEST(SoftmaxTyped, RowLengthsOfEveryPath) {
  using T = TypeParam;
  const std::vector<uint32_t> lengths = {
      1,    2,    3,    4,    8,    16,    31,    32,    33,    64,    127,   128,   256,   1000,
      1024, 1025, 4096, 4097, 8193, 16384, 16385, 20000, 30000, 32768, 40000, 60000, 66000, 70001};
  uint32_t seed = 1;
  for (uint32_t cols : lengths) {
    const uint32_t rows = cols > 4096 ? 3 : 17;
    for (double density : {0.0, 0.5, 1.0}) {
      const std::vector<T> s = random_values<T>(uint64_t{rows} * cols, seed++, 30.0);
      std::vector<T> m = random_mask<T>(uint64_t{rows} * cols, seed++, density);
      const std::vector<T> y = masked(s, m, rows, cols);
      expect_close(y, host_masked(s, m, rows, cols), cols, 60,
                   "cols " + std::to_string(cols) + " density " + std::to_string(density));
    }
  }
}

TEST_F(Softmax, EmptyShapesGiveEmptyBuffers) {
  Obj none = make_buffer<float>({});
  for (auto [rows, cols] : {std::pair<uint32_t, uint32_t>{0, 0}, {0, 5}, {7, 0}}) {
    Obj r(torchlean_cuda_buffer_hard_masked_softmax_by_row(none.get(), none.get(), rows, cols));
    EXPECT_EQ(torchlean_cuda_buffer_size(r.get()), 0u);
    EXPECT_EQ(torchlean_cuda_buffer_dtype(r.get()), 0u);
    EXPECT_NE(r.get(), none.get());
  }
  Obj none64 = make_buffer<double>({});
  Io io = take_io(torchlean_cuda_buffer_softmax_io(none64.get(), nats({2, 0, 3}).get(), 2));
  ASSERT_TRUE(io.ok) << io.message;
  EXPECT_EQ(torchlean_cuda_buffer_size(io.value.get()), 0u);
  EXPECT_EQ(torchlean_cuda_buffer_dtype(io.value.get()), 1u);
  // A zero extent skips the product overflow check, as in the contract's reference.
  Io big = take_io(torchlean_cuda_buffer_softmax_io(
      none.get(), nats({4294967295u, 4294967295u, 4294967295u, 0}).get(), 0));
  EXPECT_TRUE(big.ok) << big.message;
}

// ---------------------------------------------------------------------------------------------
// softmax_io

TYPED_TEST(SoftmaxTyped, SoftmaxIoEveryAxis) {
  using T = TypeParam;
  // Every CUDA path: the axis split over a block (few columns or a long axis), the column in
  // registers (len <= 8, 32, 64 with at least 2^15 columns), the row kernel for the last axis.
  const std::vector<Dims> shapes = {{2, 3, 4},   {5, 1, 7},    {3, 70, 9},     {1, 2, 600},
                                    {130, 2, 2}, {8, 5000, 8}, {20, 2, 20000}, {33, 40, 1024}};
  uint32_t seed = 100;
  for (const Dims& dims : shapes) {
    const uint64_t n = dims[0] * dims[1] * dims[2];
    const std::vector<T> x = random_values<T>(n, seed++, 20.0);
    for (uint32_t axis = 0; axis < 3; ++axis) {
      expect_close(along(x, dims, axis), host_along(x, dims, axis), dims[axis], 40,
                   "dims [" + std::to_string(dims[0]) + ", " + std::to_string(dims[1]) + ", " +
                       std::to_string(dims[2]) + "] axis " + std::to_string(axis));
    }
  }
  // Hand values: rank 1 and rank 2, with non-finite entries.
  const std::vector<T> h = along<T>(values_as<T>({0, 0, kInf, 1, -kInf, kNaN}), {3, 2}, 0);
  ASSERT_EQ(h.size(), 6u);
  EXPECT_TRUE(std::isnan(h[0]) && std::isnan(h[2]) && std::isnan(h[4]));  // column with +inf
  EXPECT_TRUE(std::isnan(h[1]) && std::isnan(h[3]) && std::isnan(h[5]));  // column with NaN
  const std::vector<T> r = along<T>(values_as<T>({3, 3, -kInf}), {3}, 0);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], T(0.5));
  EXPECT_EQ(r[1], T(0.5));
  EXPECT_EQ(bits_of(r[2]), Bits<T>{0});
  const std::vector<T> one = along<T>(values_as<T>({-2, 9}), {2, 1}, 1);
  EXPECT_EQ(one, values_as<T>({1, 1}));
}

std::string io_message(lean_object* input, lean_object* dims, uint32_t axis) {
  Io io = take_io(torchlean_cuda_buffer_softmax_io(input, dims, axis));
  EXPECT_FALSE(io.ok);
  EXPECT_EQ(io.error_tag, kOtherError);
  return io.message;
}

// Out of memory is softmax_io's resource-exhausted IO error (SPEC-ops 1), and it loses nothing: the
// input keeps its values and every counter is where it was. The output cannot fit under a memory
// cap set just above what is reserved once the input exists.
TEST_F(Softmax, SoftmaxIoOutOfMemoryIsResourceExhausted) {
  const double old = memory_fraction();
  ASSERT_GE(old, 0);
  const uint64_t n = uint64_t{1} << 22;  // 16 MiB of float32
  Obj x(torchlean_cuda_buffer_full(static_cast<uint32_t>(n), 0.5, 0));
  ASSERT_TRUE(set_memory_cap(reserved_plus(uint64_t{1} << 20)));
  const Counters before = Counters::read();
  Io io = take_io(torchlean_cuda_buffer_softmax_io(x.get(), nats({n / 4, 4}).get(), 1));
  const Counters after = Counters::read();
  ASSERT_TRUE(take_io(torchlean_libtorch_set_memory_fraction(old)).ok);
  EXPECT_FALSE(io.ok);
  EXPECT_EQ(io.error_tag, kResourceExhausted) << io.message;
  EXPECT_NE(io.message.find("tlrt: softmax_io: "), std::string::npos) << io.message;
  EXPECT_NE(io.message.find("out of memory"), std::string::npos) << io.message;
  EXPECT_EQ(std::memcmp(&before, &after, sizeof(Counters)), 0);
  EXPECT_EQ(values_of(x.get()), std::vector<double>(n, 0.5));
  // With the cap lifted the same call succeeds.
  Io again = take_io(torchlean_cuda_buffer_softmax_io(x.get(), nats({n / 4, 4}).get(), 1));
  ASSERT_TRUE(again.ok) << again.message;
  EXPECT_EQ(values_of(again.value.get()), std::vector<double>(n, 0.25));
}

TEST_F(Softmax, SoftmaxIoErrorsInTorchLeansOrder) {
  Obj x6 = make_buffer<float>({1, 2, 3, 4, 5, 6});
  const std::string p = "tlrt: softmax_io: ";
  EXPECT_EQ(io_message(x6.get(), lean_box(3), 0), p + "LibTorch: expected dimension array");
  Obj str(lean_mk_string("dims"));
  EXPECT_EQ(io_message(x6.get(), str.get(), 0), p + "LibTorch: expected dimension array");
  EXPECT_EQ(io_message(x6.get(), nats({2, 4294967296ull}).get(), 0),
            p + "LibTorch: dimension exceeds UInt32 ABI (dims[1] exceeds UInt32 (4294967296))");
  // The dims come before the axis; the axis before the buffer's size.
  EXPECT_EQ(io_message(x6.get(), nats({4294967296ull}).get(), 7),
            p + "LibTorch: dimension exceeds UInt32 ABI (dims[0] exceeds UInt32 (4294967296))");
  EXPECT_EQ(io_message(x6.get(), nats({2, 3}).get(), 2),
            p + "LibTorch softmax: axis out of range (axis = 2 but dims = [2, 3] has rank 2)");
  EXPECT_EQ(io_message(x6.get(), nats({5, 5}).get(), 2),
            p + "LibTorch softmax: axis out of range (axis = 2 but dims = [5, 5] has rank 2)");
  EXPECT_EQ(io_message(x6.get(), nats({}).get(), 0),
            p + "LibTorch softmax: axis out of range (axis = 0 but dims = [] has rank 0)");
  EXPECT_EQ(io_message(x6.get(), nats({4294967295u, 4294967295u, 4294967295u}).get(), 1),
            p + "LibTorch: dimension product overflow (dims = [4294967295, 4294967295, "
                "4294967295])");
  EXPECT_EQ(io_message(x6.get(), nats({2, 4}).get(), 1),
            p + "LibTorch: buffer size mismatch (size(input) = 6 but prod(dims) = 8 for dims = "
                "[2, 4])");
  EXPECT_EQ(io_message(x6.get(), nats({2, 0}).get(), 0),
            p + "LibTorch: buffer size mismatch (size(input) = 6 but prod(dims) = 0 for dims = "
                "[2, 0])");
  // A released input is an IO error too, after the dims and the axis.
  lean_object* released = torchlean_cuda_buffer_zeros(6, 0);
  torchlean_cuda_buffer_release(released);
  EXPECT_EQ(io_message(released, nats({6}).get(), 0), p + "buffer has been released");
  EXPECT_EQ(io_message(released, nats({6}).get(), 1),
            p + "LibTorch softmax: axis out of range (axis = 1 but dims = [6] has rank 1)");
  lean_dec(released);
}

// ---------------------------------------------------------------------------------------------
// Ownership and repeatability

TEST_F(Softmax, OwnershipOfEveryResult) {
  Obj s = make_buffer<float>({1, 2, 3, 4, 5, 6});
  Obj m = make_buffer<float>({1, 0, 1, 1, 1, 0});
  Obj none = make_buffer<float>({});
  Obj dims = nats({2, 3});
  Obj empty_dims = nats({2, 0});
  struct Case {
    const char* name;
    std::function<lean_object*()> call;
    uint64_t bytes;
  };
  auto io_value = [](lean_object* result) {
    Io io = take_io(result);
    EXPECT_TRUE(io.ok) << io.message;
    lean_object* v = io.value.get();
    lean_inc(v);
    return v;
  };
  const std::vector<Case> cases = {
      {"masked",
       [&] { return torchlean_cuda_buffer_hard_masked_softmax_by_row(s.get(), m.get(), 2, 3); },
       24},
      {"masked same operand",
       [&] { return torchlean_cuda_buffer_hard_masked_softmax_by_row(s.get(), s.get(), 3, 2); },
       24},
      {"masked empty",
       [&] {
         return torchlean_cuda_buffer_hard_masked_softmax_by_row(none.get(), none.get(), 4, 0);
       },
       0},
      {"softmax_io",
       [&] { return io_value(torchlean_cuda_buffer_softmax_io(s.get(), dims.get(), 0)); }, 24},
      {"softmax_io empty",
       [&] { return io_value(torchlean_cuda_buffer_softmax_io(none.get(), empty_dims.get(), 1)); },
       0},
  };
  for (const Case& c : cases) {
    expect_fresh_result(c.name, c.call, fresh_buffer(c.bytes), {s.get(), m.get(), none.get()});
  }
  EXPECT_EQ(read_values<float>(s.get()), std::vector<float>({1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(read_values<float>(m.get()), std::vector<float>({1, 0, 1, 1, 1, 0}));
}

// Ten runs of each path give the same bits with the deterministic setting on (the sums' order is
// fixed by the launch geometry, so they do with it off as well).
TYPED_TEST(SoftmaxTyped, TenRunsGiveTheSameBits) {
  using T = TypeParam;
  Io saved = take_io(torchlean_libtorch_get_setting(2));
  const bool was_on = saved.ok && lean_unbox(saved.value.get()) != 0;
  ASSERT_TRUE(set_deterministic(true));
  uint32_t seed = 500;
  for (uint32_t cols : {100u, 1024u, 5000u, 70001u}) {
    const uint32_t rows = cols > 4096 ? 2 : 33;
    const std::vector<T> s = random_values<T>(uint64_t{rows} * cols, seed++, 50.0);
    const std::vector<T> m = random_mask<T>(uint64_t{rows} * cols, seed++, 0.7);
    const std::vector<T> first = masked(s, m, rows, cols);
    for (int run = 1; run < 10; ++run) {
      const std::vector<T> again = masked(s, m, rows, cols);
      ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(T)), 0)
          << "cols " << cols << " run " << run;
    }
  }
  const Dims dims = {9, 100, 33};
  const std::vector<T> x = random_values<T>(9 * 100 * 33, seed++, 50.0);
  for (uint32_t axis = 0; axis < 3; ++axis) {
    const std::vector<T> first = along(x, dims, axis);
    for (int run = 1; run < 10; ++run) {
      const std::vector<T> again = along(x, dims, axis);
      ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(T)), 0)
          << "axis " << axis << " run " << run;
    }
  }
  set_deterministic(was_on);
}

// ---------------------------------------------------------------------------------------------
// Bad inputs of the pure symbol: panics naming the op and the sizes

lean_object* zeros(uint32_t n, uint8_t dtype = 0) {
  return torchlean_cuda_buffer_zeros(n, dtype);
}

TEST_F(SoftmaxDeathTest, SizesMustMatchTheShape) {
  EXPECT_EXIT(torchlean_cuda_buffer_hard_masked_softmax_by_row(zeros(5), zeros(6), 2, 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: hard_masked_softmax_by_row: buffer size does not match "
              "shape \\(size\\(scores\\) = 5 but prod\\(\\[rows, cols\\]\\) = 6");
  EXPECT_EXIT(torchlean_cuda_buffer_hard_masked_softmax_by_row(zeros(6), zeros(7), 2, 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: hard_masked_softmax_by_row: buffer size does not match "
              "shape \\(size\\(mask\\) = 7 but prod\\(\\[rows, cols\\]\\) = 6");
  EXPECT_EXIT(torchlean_cuda_buffer_hard_masked_softmax_by_row(zeros(3), zeros(3), 0, 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: hard_masked_softmax_by_row: buffer size does not match "
              "shape \\(size\\(scores\\) = 3 but prod\\(\\[rows, cols\\]\\) = 0");
}

TEST_F(SoftmaxDeathTest, MixedDtypesPanic) {
  EXPECT_EXIT(torchlean_cuda_buffer_hard_masked_softmax_by_row(zeros(6, 0), zeros(6, 1), 2, 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: hard_masked_softmax_by_row: dtypes differ \\(float32 vs "
              "float64\\)");
}

TEST_F(SoftmaxDeathTest, ReleasedAndNonBufferOperandsPanic) {
  lean_object* released = zeros(6, 1);
  torchlean_cuda_buffer_release(released);
  EXPECT_EXIT(torchlean_cuda_buffer_hard_masked_softmax_by_row(released, zeros(6, 1), 2, 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: hard_masked_softmax_by_row: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_hard_masked_softmax_by_row(zeros(6, 1), released, 2, 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: hard_masked_softmax_by_row: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_hard_masked_softmax_by_row(lean_box(1), zeros(1), 1, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: hard_masked_softmax_by_row: argument is not a buffer object");
  EXPECT_EXIT(
      torchlean_cuda_buffer_hard_masked_softmax_by_row(zeros(2), byte_array({1, 2}).get(), 1, 2),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: hard_masked_softmax_by_row: argument is not a buffer object");
  lean_dec(released);
}

}  // namespace
