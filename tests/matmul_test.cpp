// bmm_with_transpose and dgemm_cuda through the Lean boundary, on the backend TLRT_DEVICE selects
// (ctest runs this binary once with cpu and once with cuda). Products of small integers are exact
// in any summation order, so every tA/tB combination is compared bit for bit with an integer
// evaluation; zero extents (n = 0 gives +0 everywhere, batch, m or p = 0 an empty buffer without
// payload); ownership counters; every bad input's panic with its message. The cuda pass also
// checks that float32 products are strict by default (a product that TF32 would round) and that
// the TF32 setting (runtime setting 0) is accepted and turned off again.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "abi_test_support.h"

using namespace abi_test;

namespace {

// A buffer of dtype T holding exactly these values (exact: small integers and dyadic values).
// Logical operands A' (batch, m, n) and B' (batch, n, p) of small integers, their stored layouts
// for the flags, and the exact product.
struct Product {
  uint32_t batch, m, n, p;
  std::vector<int64_t> a, b;  // logical, row-major
  int64_t a_at(uint32_t bb, uint32_t i, uint32_t k) const {
    return a[(uint64_t{bb} * m + i) * n + k];
  }
  int64_t b_at(uint32_t bb, uint32_t k, uint32_t j) const {
    return b[(uint64_t{bb} * n + k) * p + j];
  }

  Product(uint32_t batch_, uint32_t m_, uint32_t n_, uint32_t p_, uint64_t seed)
      : batch(batch_), m(m_), n(n_), p(p_) {
    uint64_t s = seed;
    auto next = [&] {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int64_t>((s >> 33) % 17) - 8;  // -8 .. 8
    };
    a.resize(uint64_t{batch} * m * n);
    b.resize(uint64_t{batch} * n * p);
    for (auto& v : a) v = next();
    for (auto& v : b) v = next();
  }

  template <class T>
  std::vector<T> stored_a(bool transpose) const {
    std::vector<T> out(a.size());
    for (uint32_t bb = 0; bb < batch; ++bb)
      for (uint32_t i = 0; i < m; ++i)
        for (uint32_t k = 0; k < n; ++k) {
          const uint64_t at =
              transpose ? (uint64_t{bb} * n + k) * m + i : (uint64_t{bb} * m + i) * n + k;
          out[at] = static_cast<T>(a_at(bb, i, k));
        }
    return out;
  }
  template <class T>
  std::vector<T> stored_b(bool transpose) const {
    std::vector<T> out(b.size());
    for (uint32_t bb = 0; bb < batch; ++bb)
      for (uint32_t k = 0; k < n; ++k)
        for (uint32_t j = 0; j < p; ++j) {
          const uint64_t at =
              transpose ? (uint64_t{bb} * p + j) * n + k : (uint64_t{bb} * n + k) * p + j;
          out[at] = static_cast<T>(b_at(bb, k, j));
        }
    return out;
  }
  template <class T>
  std::vector<T> expected() const {
    std::vector<T> c(uint64_t{batch} * m * p);
    for (uint32_t bb = 0; bb < batch; ++bb)
      for (uint32_t i = 0; i < m; ++i)
        for (uint32_t j = 0; j < p; ++j) {
          int64_t sum = 0;
          for (uint32_t k = 0; k < n; ++k) sum += a_at(bb, i, k) * b_at(bb, k, j);
          c[(uint64_t{bb} * m + i) * p + j] = static_cast<T>(sum);
        }
    return c;
  }
};

template <class T>
std::vector<T> bmm_values(const Product& pr, bool ta, bool tb) {
  Obj a = make_buffer<T>(pr.stored_a<T>(ta));
  Obj b = make_buffer<T>(pr.stored_b<T>(tb));
  Obj c(torchlean_cuda_buffer_bmm_with_transpose(a.get(), b.get(), pr.batch, pr.m, pr.n, pr.p,
                                                 ta ? 1 : 0, tb ? 1 : 0));
  EXPECT_EQ(torchlean_cuda_buffer_size(c.get()), uint64_t{pr.batch} * pr.m * pr.p);
  return read_values<T>(c.get());
}

template <class T>
std::vector<uint64_t> bits_of(const std::vector<T>& v) {
  std::vector<uint64_t> out;
  for (T x : v) {
    typename Dt<T>::Bits w;
    std::memcpy(&w, &x, sizeof(T));
    out.push_back(w);
  }
  return out;
}

class Matmul : public BackendSuite {};
using MatmulDeathTest = Matmul;

template <class T>
void check_every_flag_combination() {
  const uint32_t shapes[][4] = {{1, 1, 1, 1}, {1, 3, 4, 5},  {2, 3, 4, 5},    {3, 7, 1, 2},
                                {1, 1, 9, 1}, {4, 2, 33, 6}, {1, 17, 19, 13}, {2, 64, 65, 3}};
  uint64_t seed = 1;
  for (const auto& s : shapes) {
    const Product pr(s[0], s[1], s[2], s[3], seed++);
    const std::vector<T> want = pr.expected<T>();
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        // Values, not bits: the sign of an exact zero sum is not part of the contract.
        EXPECT_EQ(bmm_values<T>(pr, ta, tb), want)
            << "batch " << s[0] << ", m " << s[1] << ", n " << s[2] << ", p " << s[3] << ", tA "
            << ta << ", tB " << tb;
      }
    }
  }
}

TEST_F(Matmul, EveryTransposeCombinationIsExactOnIntegersFloat32) {
  check_every_flag_combination<float>();
}

TEST_F(Matmul, EveryTransposeCombinationIsExactOnIntegersFloat64) {
  check_every_flag_combination<double>();
}

TEST_F(Matmul, HandFixture) {
  // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]]: AB, A^T B, A B^T, A^T B^T.
  const std::vector<double> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  Obj da = make_buffer<double>(a), db = make_buffer<double>(b);
  auto run = [&](uint32_t ta, uint32_t tb) {
    Obj c(torchlean_cuda_buffer_bmm_with_transpose(da.get(), db.get(), 1, 2, 2, 2, ta, tb));
    return read_values<double>(c.get());
  };
  EXPECT_EQ(run(0, 0), (std::vector<double>{19, 22, 43, 50}));
  EXPECT_EQ(run(1, 0), (std::vector<double>{26, 30, 38, 44}));
  EXPECT_EQ(run(0, 1), (std::vector<double>{17, 23, 39, 53}));
  EXPECT_EQ(run(1, 1), (std::vector<double>{23, 31, 34, 46}));
}

TEST_F(Matmul, NoContractionGivesPositiveZeros) {
  for (uint32_t ta = 0; ta < 2; ++ta) {
    for (uint32_t tb = 0; tb < 2; ++tb) {
      Obj a(torchlean_cuda_buffer_zeros(0, 0)), b(torchlean_cuda_buffer_zeros(0, 0));
      Obj c(torchlean_cuda_buffer_bmm_with_transpose(a.get(), b.get(), 2, 3, 0, 5, ta, tb));
      const std::vector<float> got = read_values<float>(c.get());
      ASSERT_EQ(got.size(), 30u);
      for (float v : got) EXPECT_EQ(bits_of<float>({v})[0], 0u);
      Obj a64(torchlean_cuda_buffer_zeros(0, 1)), b64(torchlean_cuda_buffer_zeros(0, 1));
      Obj c64(torchlean_cuda_buffer_bmm_with_transpose(a64.get(), b64.get(), 1, 4, 0, 1, ta, tb));
      const std::vector<double> got64 = read_values<double>(c64.get());
      ASSERT_EQ(got64.size(), 4u);
      for (double v : got64) EXPECT_EQ(bits_of<double>({v})[0], 0u);
    }
  }
}

TEST_F(Matmul, EmptyExtentsGiveEmptyBuffers) {
  struct Case {
    uint32_t batch, m, n, p;
  };
  for (const Case c : {Case{0, 3, 4, 5}, Case{2, 0, 4, 5}, Case{2, 3, 4, 0}, Case{0, 0, 0, 0},
                       Case{4294967295u, 0, 0, 4294967295u}}) {
    for (uint8_t dt : {uint8_t{0}, uint8_t{1}}) {
      Obj a(torchlean_cuda_buffer_zeros(c.batch * c.m * c.n, dt));
      Obj b(torchlean_cuda_buffer_zeros(static_cast<uint32_t>(uint64_t{c.batch} * c.n * c.p), dt));
      const Counters before = Counters::read();
      Obj r(
          torchlean_cuda_buffer_bmm_with_transpose(a.get(), b.get(), c.batch, c.m, c.n, c.p, 0, 0));
      const Counters after = Counters::read();
      EXPECT_EQ(torchlean_cuda_buffer_size(r.get()), 0u);
      EXPECT_EQ(torchlean_cuda_buffer_dtype(r.get()), dt);
      EXPECT_EQ(after.alloc_count, before.alloc_count) << "an empty result has no payload";
      EXPECT_EQ(after.wrapper_alloc - before.wrapper_alloc, 1u);
    }
  }
}

TEST_F(Matmul, OperandsMayBeTheSameBuffer) {
  // A A^T with one buffer for both operands.
  Obj a = make_buffer<float>({1, 2, 3, 4, 5, 6});  // (2, 3)
  Obj c(torchlean_cuda_buffer_bmm_with_transpose(a.get(), a.get(), 1, 2, 3, 2, 0, 1));
  EXPECT_EQ(read_values<float>(c.get()), (std::vector<float>{14, 32, 32, 77}));
}

TEST_F(Matmul, OwnershipFreshResultAndBorrowedOperands) {
  Obj a = make_buffer<float>({1, 2, 3, 4, 5, 6});
  Obj b = make_buffer<float>({1, 0, 0, 1, 1, 1});
  for (int repeat = 0; repeat < 3; ++repeat) {
    expect_fresh_result("bmm",
                        [&] {
                          return torchlean_cuda_buffer_bmm_with_transpose(a.get(), b.get(), 1, 2, 3,
                                                                          2, 0, 0);
                        },
                        fresh_buffer(4 * sizeof(float)), {a.get(), b.get()});
  }
  EXPECT_EQ(read_values<float>(a.get()), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(read_values<float>(b.get()), (std::vector<float>{1, 0, 0, 1, 1, 1}));
}

// 1 + 2^-20 has more significand bits than TF32 keeps: a strict float32 product of it with 1,
// summed 16 times, is exact (16 + 2^-16); TF32 would give 16. 2^21 multiply-adds: past the
// small-product kernel, so that the CUDA pass runs on cuBLAS.
TEST_F(Matmul, Float32IsStrictByDefaultAndTf32SettingRoundTrips) {
  constexpr uint32_t m = 512, n = 16, p = 256;
  const float x = 1.0f + std::ldexp(1.0f, -20);
  Obj a = make_buffer<float>(std::vector<float>(m * n, x));
  Obj b = make_buffer<float>(std::vector<float>(n * p, 1.0f));
  const float exact = 16.0f + std::ldexp(1.0f, -16);
  auto product = [&] {
    Obj c(torchlean_cuda_buffer_bmm_with_transpose(a.get(), b.get(), 1, m, n, p, 0, 0));
    return read_values<float>(c.get());
  };
  for (float v : product()) ASSERT_EQ(v, exact) << "float32 product not strict by default";
  Io on = take_io(torchlean_libtorch_set_setting(0, 1));
  ASSERT_TRUE(on.ok) << on.message;
  for (float v : product()) ASSERT_TRUE(v == exact || v == 16.0f) << v;
  Io off = take_io(torchlean_libtorch_set_setting(0, 0));
  ASSERT_TRUE(off.ok) << off.message;
  for (float v : product()) ASSERT_EQ(v, exact) << "TF32 still used after the setting was cleared";
}

// ---------------------------------------------------------------------------------------------
// dgemm: host FloatArrays in and out

TEST_F(Matmul, DgemmMatchesIntegerProduct) {
  const Product pr(1, 5, 7, 3, 99);
  const std::vector<double> a = pr.stored_a<double>(false), b = pr.stored_b<double>(false);
  Obj c(torchlean_dgemm_cuda(float_array(a).get(), float_array(b).get(), 5, 7, 3));
  EXPECT_EQ(doubles_of(c.get()), pr.expected<double>());
  Obj c2(torchlean_dgemm_cuda(float_array({1, 2, 3, 4}).get(), float_array({5, 6, 7, 8}).get(), 2,
                              2, 2));
  EXPECT_EQ(doubles_of(c2.get()), (std::vector<double>{19, 22, 43, 50}));
  const Product big(1, 65, 130, 33, 7);
  Obj c3(torchlean_dgemm_cuda(float_array(big.stored_a<double>(false)).get(),
                              float_array(big.stored_b<double>(false)).get(), 65, 130, 33));
  EXPECT_EQ(doubles_of(c3.get()), big.expected<double>());
}

TEST_F(Matmul, DgemmZeroExtents) {
  Obj c(torchlean_dgemm_cuda(float_array({}).get(), float_array({}).get(), 3, 0, 2));
  const std::vector<double> zeros = doubles_of(c.get());
  ASSERT_EQ(zeros.size(), 6u);
  for (double v : zeros) EXPECT_EQ(f64_bits(v), 0u);
  Obj e(torchlean_dgemm_cuda(float_array({}).get(), float_array({1, 2, 3}).get(), 0, 3, 1));
  EXPECT_TRUE(doubles_of(e.get()).empty());
  Obj f(torchlean_dgemm_cuda(float_array({1, 2}).get(), float_array({}).get(), 2, 1, 0));
  EXPECT_TRUE(doubles_of(f.get()).empty());
}

TEST_F(Matmul, DgemmLeavesItsArgumentsAlone) {
  Obj a = float_array({1, 2, 3, 4});
  Obj b = float_array({-1, 0.5, 2, 8});
  const Counters before = Counters::read();
  Obj c(torchlean_dgemm_cuda(a.get(), b.get(), 2, 2, 2));
  const Counters after = Counters::read();
  EXPECT_NE(c.get(), a.get());
  EXPECT_NE(c.get(), b.get());
  EXPECT_EQ(doubles_of(c.get()), (std::vector<double>{3, 16.5, 5, 33.5}));
  EXPECT_EQ(doubles_of(a.get()), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(doubles_of(b.get()), (std::vector<double>{-1, 0.5, 2, 8}));
  // Device staging buffers are returned before the call ends; no wrapper is made.
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_EQ(after.wrapper_alloc, before.wrapper_alloc);
}

// ---------------------------------------------------------------------------------------------
// Bad inputs: pure symbols panic, naming the op and the sizes

TEST_F(MatmulDeathTest, TransposeFlagsMustBeZeroOrOne) {
  EXPECT_EXIT(
      torchlean_cuda_buffer_bmm_with_transpose(torchlean_cuda_buffer_zeros(6, 0),
                                               torchlean_cuda_buffer_zeros(6, 0), 1, 2, 3, 2, 2, 0),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: bmm: transpose flag must be zero or one \\(transposeA = 2, "
      "transposeB = 0\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_bmm_with_transpose(torchlean_cuda_buffer_zeros(6, 0),
                                                       torchlean_cuda_buffer_zeros(6, 0), 1, 2, 3,
                                                       2, 0, 4294967295u),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: transpose flag must be zero or one");
  // The flags come first: before the operands are looked at.
  EXPECT_EXIT(torchlean_cuda_buffer_bmm_with_transpose(released_buffer(6, 0), lean_box(1), 1, 2, 3,
                                                       2, 1, 7),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: transpose flag must be zero or one");
}

TEST_F(MatmulDeathTest, OperandSizesMustMatchTheShape) {
  auto bmm = [](uint32_t a_size, uint32_t b_size, uint32_t batch, uint32_t m, uint32_t n,
                uint32_t p, uint32_t ta, uint32_t tb, uint8_t dt = 0) {
    torchlean_cuda_buffer_bmm_with_transpose(torchlean_cuda_buffer_zeros(a_size, dt),
                                             torchlean_cuda_buffer_zeros(b_size, dt), batch, m, n,
                                             p, ta, tb);
  };
  EXPECT_EXIT(bmm(5, 6, 1, 2, 3, 2, 0, 0), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: buffer size does not match shape \\(size\\(A\\) = 5 but "
              "prod\\(\\[batch, m, n\\]\\) = 6 for \\[batch, m, n\\] = \\[1, 2, 3\\]\\)");
  EXPECT_EXIT(bmm(5, 6, 1, 2, 3, 2, 1, 0, 1), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: buffer size does not match shape \\(size\\(A\\) = 5 but "
              "prod\\(\\[batch, n, m\\]\\) = 6 for \\[batch, n, m\\] = \\[1, 3, 2\\]\\)");
  EXPECT_EXIT(bmm(6, 7, 1, 2, 3, 2, 0, 0), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: buffer size does not match shape \\(size\\(B\\) = 7 but "
              "prod\\(\\[batch, n, p\\]\\) = 6 for \\[batch, n, p\\] = \\[1, 3, 2\\]\\)");
  EXPECT_EXIT(bmm(6, 7, 1, 2, 3, 2, 0, 1), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: buffer size does not match shape \\(size\\(B\\) = 7 but "
              "prod\\(\\[batch, p, n\\]\\) = 6 for \\[batch, p, n\\] = \\[1, 2, 3\\]\\)");
  // A is checked before B.
  EXPECT_EXIT(bmm(1, 1, 2, 2, 2, 2, 0, 0), ::testing::ExitedWithCode(1), "size\\(A\\) = 1 but");
  // Transposed operands of a non-square shape: the stored layout, not the logical one.
  EXPECT_EXIT(bmm(0, 6, 1, 2, 0, 3, 1, 1), ::testing::ExitedWithCode(1),
              "size\\(B\\) = 6 but prod\\(\\[batch, p, n\\]\\) = 0");
}

TEST_F(MatmulDeathTest, ShapeSizeOverflowPanics) {
  constexpr uint32_t big = 4294967295u;
  auto bmm = [](uint32_t batch, uint32_t m, uint32_t n, uint32_t p) {
    torchlean_cuda_buffer_bmm_with_transpose(
        torchlean_cuda_buffer_zeros(0, 0), torchlean_cuda_buffer_zeros(0, 0), batch, m, n, p, 0, 0);
  };
  EXPECT_EXIT(bmm(big, big, big, 0), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: shape size overflow \\(\\[batch, m, n\\] = "
              "\\[4294967295, 4294967295, 4294967295\\]\\)");
  EXPECT_EXIT(bmm(big, 0, big, big), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: shape size overflow \\(\\[batch, n, p\\] = "
              "\\[4294967295, 4294967295, 4294967295\\]\\)");
  // Both operands empty (n = 0), the output's batch*m*p overflows.
  EXPECT_EXIT(bmm(big, 1, 0, big), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: shape size overflow \\(\\[batch, m, p\\] = "
              "\\[4294967295, 1, 4294967295\\]\\)");
  // Products are checked left to right in signed 64 bits, as TorchLean's element_count does: a
  // zero after two large extents does not save the shape.
  EXPECT_EXIT(bmm(big, big, 0, 0), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: shape size overflow \\(\\[batch, m, n\\] = "
              "\\[4294967295, 4294967295, 0\\]\\)");
}

TEST_F(MatmulDeathTest, DtypesMustAgree) {
  EXPECT_EXIT(
      torchlean_cuda_buffer_bmm_with_transpose(torchlean_cuda_buffer_zeros(6, 0),
                                               torchlean_cuda_buffer_zeros(6, 1), 1, 2, 3, 2, 0, 0),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: bmm: dtypes differ \\(float32 vs float64\\)");
  EXPECT_EXIT(
      torchlean_cuda_buffer_bmm_with_transpose(torchlean_cuda_buffer_zeros(0, 1),
                                               torchlean_cuda_buffer_zeros(0, 0), 0, 2, 3, 2, 1, 1),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: bmm: dtypes differ \\(float64 vs float32\\)");
}

TEST_F(MatmulDeathTest, ReleasedAndNonBufferOperandsPanic) {
  EXPECT_EXIT(torchlean_cuda_buffer_bmm_with_transpose(
                  released_buffer(6, 0), torchlean_cuda_buffer_zeros(6, 0), 1, 2, 3, 2, 0, 0),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: tlrt: bmm: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_bmm_with_transpose(torchlean_cuda_buffer_zeros(6, 0),
                                                       released_buffer(6, 0), 1, 2, 3, 2, 0, 0),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: tlrt: bmm: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_bmm_with_transpose(
                  lean_box(3), torchlean_cuda_buffer_zeros(1, 0), 1, 1, 1, 1, 0, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: argument is not a buffer object");
  EXPECT_EXIT(torchlean_cuda_buffer_bmm_with_transpose(torchlean_cuda_buffer_zeros(1, 0),
                                                       float_array({1}).get(), 1, 1, 1, 1, 0, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: bmm: argument is not a buffer object");
}

TEST_F(MatmulDeathTest, DgemmSizesMustMatch) {
  EXPECT_EXIT(
      torchlean_dgemm_cuda(float_array({1, 2, 3}).get(), float_array({1, 2}).get(), 2, 2, 1),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: dgemm: A size mismatch \\(size\\(A\\) = 3 but m \\* n = 4 "
      "for m = 2, n = 2\\)");
  EXPECT_EXIT(
      torchlean_dgemm_cuda(float_array({1, 2, 3, 4}).get(), float_array({1}).get(), 2, 2, 1),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: dgemm: B size mismatch \\(size\\(B\\) = 1 but n \\* p = 2 "
      "for n = 2, p = 1\\)");
  // A is checked before B.
  EXPECT_EXIT(torchlean_dgemm_cuda(float_array({}).get(), float_array({}).get(), 1, 1, 1),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: tlrt: dgemm: A size mismatch");
  EXPECT_EXIT(torchlean_dgemm_cuda(float_array({}).get(), float_array({}).get(), 0, 4294967295u,
                                   4294967295u),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: tlrt: dgemm: B size mismatch");
}

TEST_F(MatmulDeathTest, DgemmOutputTooLargePanics) {
  // n = 0 makes both operands empty; (2^32 - 1)^2 binary64 values do not fit in 64-bit bytes.
  EXPECT_EXIT(torchlean_dgemm_cuda(float_array({}).get(), float_array({}).get(), 4294967295u, 0,
                                   4294967295u),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: dgemm: output byte size overflow \\(m \\* p = "
              "18446744065119617025 binary64 values\\)");
  // 2^20 * 2^20 values are 8 TiB: more than the host has.
  EXPECT_EXIT(
      torchlean_dgemm_cuda(float_array({}).get(), float_array({}).get(), 1u << 20, 0, 1u << 20),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: dgemm: output of 8796093022208 bytes exceeds the host's "
      "memory");
}

TEST_F(MatmulDeathTest, DgemmNeedsFloatArrays) {
  EXPECT_EXIT(torchlean_dgemm_cuda(byte_array({1, 2, 3, 4}).get(), float_array({}).get(), 0, 0, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: dgemm: expected a FloatArray for A");
  EXPECT_EXIT(torchlean_dgemm_cuda(float_array({}).get(), lean_box(0), 0, 0, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: dgemm: expected a FloatArray for B");
}

}  // namespace
