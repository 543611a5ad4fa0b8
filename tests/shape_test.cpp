// The shape ops (concat1d, slice1d, broadcast_vec_to_cols, broadcast_to, swap_adjacent_at_depth)
// through the Lean boundary, on the backend TLRT_DEVICE selects (ctest runs this binary once with
// cpu and once with cuda). All are byte copies, so every result is compared word for word with the
// input words: hand fixtures with signalling and quiet NaNs
// carrying payloads, both signed zeros, infinities and subnormals in both dtypes; empty operands
// and results; the whole buffer, aliased operands and unaligned windows; random words at sizes
// from 0 past 2^20. Inputs are made and results read back through of_bytes_io / to_bytes_io in
// the buffer's own dtype, the paths that keep every bit. Also: ownership counters, and each bad
// input's panic with its message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "abi/boundary.h"
#include "abi_test_support.h"
#include "kernels/shape/copy_plan.h"

using namespace abi_test;

namespace {

template <class T>
Words<T> concat_words(const Obj& a, const Obj& b) {
  const uint32_t n = torchlean_cuda_buffer_size(a.get());
  const uint32_t m = torchlean_cuda_buffer_size(b.get());
  Obj r(torchlean_cuda_buffer_concat1d(a.get(), b.get(), n, m));
  EXPECT_EQ(torchlean_cuda_buffer_size(r.get()), uint64_t{n} + m);
  return words_of<T>(r.get());
}

template <class T>
Words<T> slice_words(const Obj& x, uint32_t start, uint32_t len) {
  const uint32_t n = torchlean_cuda_buffer_size(x.get());
  Obj r(torchlean_cuda_buffer_slice1d(x.get(), n, start, len));
  EXPECT_EQ(torchlean_cuda_buffer_size(r.get()), len);
  return words_of<T>(r.get());
}

template <class W>
W joined(const W& a, const W& b) {
  W out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

template <class W>
W window(const W& x, uint64_t start, uint64_t len) {
  return W(x.begin() + static_cast<ptrdiff_t>(start),
           x.begin() + static_cast<ptrdiff_t>(start + len));
}

// Special words: quiet and signalling NaNs with payloads and both signs, +-0, +-inf, the extreme
// subnormals, the largest finite values, and a few ordinary numbers.
Words<float> special_f32() {
  return {0x7FC00000u, 0xFFC00000u, 0x7FC12345u, 0xFFD0BEEFu, 0x7F800001u, 0xFF80DEADu,
          0x7FBFFFFFu, 0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x00000001u,
          0x807FFFFFu, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u, 0xC0490FDBu};
}

Words<double> special_f64() {
  return {
      0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF80000DEADBEEFull, 0xFFFC000000000123ull,
      0x7FF0000000000001ull, 0xFFF00000CAFEF00Dull, 0x7FF7FFFFFFFFFFFFull, 0x0000000000000000ull,
      0x8000000000000000ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x0000000000000001ull,
      0x800FFFFFFFFFFFFFull, 0x7FEFFFFFFFFFFFFFull, 0x3FF0000000000000ull, 0xC00921FB54442D18ull};
}

template <class T>
Words<T> random_words(uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Words<T> w(n);
  for (auto& v : w) v = static_cast<typename Dt<T>::Bits>(rng());
  return w;
}

// An encoded buffer of n zero words of 2 bytes (of_encoded_io); the format object stands for a
// FloatFormat. Returns an owned reference.
lean_object* encoded_buffer(size_t n) {
  Obj format(lean_alloc_ctor(0, 2, 0));
  lean_ctor_set(format.get(), 0, lean_box(5));
  lean_ctor_set(format.get(), 1, lean_box(10));
  Io io = take_io(torchlean_cuda_buffer_of_encoded_io(byte_array(std::vector<uint8_t>(2 * n)).get(),
                                                      format.get(), 2));
  EXPECT_TRUE(io.ok) << io.message;
  lean_inc(io.value.get());
  return io.value.get();
}

class Shape : public BackendSuite {};

using ShapeDeathTest = Shape;

// ---------------------------------------------------------------------------------------------
// Hand fixtures: every bit of every word is kept.

TEST_F(Shape, ConcatKeepsEveryBitFloat32) {
  const Words<float> a = special_f32();
  const Words<float> b = {0x80000001u, 0x7FC00001u, 0x80000000u, 0x41200000u, 0x7F800002u};
  EXPECT_EQ(concat_words<float>(make_words<float>(a), make_words<float>(b)), joined(a, b));
  EXPECT_EQ(concat_words<float>(make_words<float>(b), make_words<float>(a)), joined(b, a));
}

TEST_F(Shape, ConcatKeepsEveryBitFloat64) {
  const Words<double> a = special_f64();
  const Words<double> b = {0x8000000000000000ull, 0x7FF4000000000000ull, 0x0000000000000002ull};
  EXPECT_EQ(concat_words<double>(make_words<double>(a), make_words<double>(b)), joined(a, b));
  EXPECT_EQ(concat_words<double>(make_words<double>(b), make_words<double>(a)), joined(b, a));
}

TEST_F(Shape, ConcatOfABufferWithItself) {
  const Words<float> x = special_f32();
  const Obj b = make_words<float>(x);
  EXPECT_EQ(concat_words<float>(b, b), joined(x, x));
}

TEST_F(Shape, ConcatWithEmptyOperands) {
  const Words<float> x = special_f32();
  const Obj f = make_words<float>(x);
  const Obj f_empty = make_words<float>({});
  EXPECT_EQ(concat_words<float>(f_empty, f), x);
  EXPECT_EQ(concat_words<float>(f, f_empty), x);
  EXPECT_EQ(concat_words<float>(f_empty, f_empty), Words<float>{});
  const Words<double> y = special_f64();
  const Obj d = make_words<double>(y);
  const Obj d_empty = make_words<double>({});
  EXPECT_EQ(concat_words<double>(d_empty, d), y);
  EXPECT_EQ(concat_words<double>(d, d_empty), y);
  // An empty result keeps the operands' dtype.
  EXPECT_EQ(concat_words<double>(d_empty, d_empty), Words<double>{});
}

TEST_F(Shape, SliceKeepsEveryBit) {
  const Words<float> x = special_f32();
  const Obj f = make_words<float>(x);
  const uint32_t n = static_cast<uint32_t>(x.size());
  EXPECT_EQ(slice_words<float>(f, 0, n), x);
  EXPECT_EQ(slice_words<float>(f, 2, 7), window(x, 2, 7));
  EXPECT_EQ(slice_words<float>(f, 4, 3), window(x, 4, 3));  // signalling NaN first
  EXPECT_EQ(slice_words<float>(f, n - 1, 1), window(x, n - 1, 1));
  const Words<double> y = special_f64();
  const Obj d = make_words<double>(y);
  const uint32_t dn = static_cast<uint32_t>(y.size());
  EXPECT_EQ(slice_words<double>(d, 0, dn), y);
  EXPECT_EQ(slice_words<double>(d, 3, 6), window(y, 3, 6));
  EXPECT_EQ(slice_words<double>(d, 7, 2), window(y, 7, 2));  // +0, -0
}

TEST_F(Shape, EmptySlicesAreEmptyBuffers) {
  const Obj f = make_words<float>(special_f32());
  const uint32_t n = torchlean_cuda_buffer_size(f.get());
  EXPECT_EQ(slice_words<float>(f, 0, 0), Words<float>{});
  EXPECT_EQ(slice_words<float>(f, 5, 0), Words<float>{});
  EXPECT_EQ(slice_words<float>(f, n, 0), Words<float>{});  // start = n is in bounds
  EXPECT_EQ(slice_words<float>(make_words<float>({}), 0, 0), Words<float>{});
  EXPECT_EQ(slice_words<double>(make_words<double>({}), 0, 0), Words<double>{});
  const Obj d = make_words<double>(special_f64());
  EXPECT_EQ(slice_words<double>(d, torchlean_cuda_buffer_size(d.get()), 0), Words<double>{});
}

// ---------------------------------------------------------------------------------------------
// Random words at many sizes, odd offsets included (the device copies handle any alignment).

TEST_F(Shape, RandomWordsFloat32) {
  uint64_t seed = 1;
  const uint64_t sizes[] = {0, 1, 2, 3, 5, 31, 256, 1023, 4097, (uint64_t{1} << 20) + 3};
  for (uint64_t n : sizes) {
    for (uint64_t m : {uint64_t{0}, uint64_t{1}, uint64_t{7}, n}) {
      const Words<float> a = random_words<float>(n, ++seed), b = random_words<float>(m, ++seed);
      EXPECT_EQ(concat_words<float>(make_words<float>(a), make_words<float>(b)), joined(a, b))
          << "n = " << n << ", m = " << m;
    }
    const Words<float> x = random_words<float>(n, ++seed);
    const Obj b = make_words<float>(x);
    std::mt19937_64 rng(++seed);
    for (int k = 0; k < 4; ++k) {
      const uint64_t start = n == 0 ? 0 : rng() % (n + 1);
      const uint64_t len = n == start ? 0 : rng() % (n - start + 1);
      EXPECT_EQ(slice_words<float>(b, static_cast<uint32_t>(start), static_cast<uint32_t>(len)),
                window(x, start, len))
          << "n = " << n << ", start = " << start << ", len = " << len;
    }
  }
}

TEST_F(Shape, RandomWordsFloat64) {
  uint64_t seed = 1000;
  const uint64_t sizes[] = {0, 1, 3, 17, 1001, (uint64_t{1} << 19) + 1};
  for (uint64_t n : sizes) {
    for (uint64_t m : {uint64_t{0}, uint64_t{3}, n}) {
      const Words<double> a = random_words<double>(n, ++seed), b = random_words<double>(m, ++seed);
      EXPECT_EQ(concat_words<double>(make_words<double>(a), make_words<double>(b)), joined(a, b))
          << "n = " << n << ", m = " << m;
    }
    const Words<double> x = random_words<double>(n, ++seed);
    const Obj b = make_words<double>(x);
    if (n >= 2) {
      EXPECT_EQ(slice_words<double>(b, 1, static_cast<uint32_t>(n - 2)), window(x, 1, n - 2))
          << "n = " << n;
    }
    EXPECT_EQ(slice_words<double>(b, 0, static_cast<uint32_t>(n)), x) << "n = " << n;
  }
}

// ---------------------------------------------------------------------------------------------
// Ownership

TEST_F(Shape, EachCallCreatesOneFreshBufferAndLeaksNothing) {
  const Obj a = make_words<float>({0x3F800000u, 0x40000000u, 0x40400000u});
  const Obj b = make_words<float>({0x40800000u, 0x40A00000u});
  const Obj d = make_words<double>({0x3FF0000000000000ull, 0x4000000000000000ull});
  const Obj empty = make_words<float>({});
  struct Case {
    const char* name;
    lean_object* (*call)(const Obj&, const Obj&, const Obj&, const Obj&);
    uint64_t bytes;  // payload of the result; 0: an empty result has no payload
  };
  const Case cases[] = {
      {"concat f32",
       [](const Obj& a, const Obj& b, const Obj&, const Obj&) {
         return torchlean_cuda_buffer_concat1d(a.get(), b.get(), 3, 2);
       },
       20},
      {"concat f64 with itself",
       [](const Obj&, const Obj&, const Obj& d, const Obj&) {
         return torchlean_cuda_buffer_concat1d(d.get(), d.get(), 2, 2);
       },
       32},
      {"concat of empties",
       [](const Obj&, const Obj&, const Obj&, const Obj& e) {
         return torchlean_cuda_buffer_concat1d(e.get(), e.get(), 0, 0);
       },
       0},
      {"slice of the whole buffer",
       [](const Obj& a, const Obj&, const Obj&, const Obj&) {
         return torchlean_cuda_buffer_slice1d(a.get(), 3, 0, 3);
       },
       12},
      {"slice f64",
       [](const Obj&, const Obj&, const Obj& d, const Obj&) {
         return torchlean_cuda_buffer_slice1d(d.get(), 2, 1, 1);
       },
       8},
      {"empty slice",
       [](const Obj& a, const Obj&, const Obj&, const Obj&) {
         return torchlean_cuda_buffer_slice1d(a.get(), 3, 3, 0);
       },
       0},
  };
  for (const Case& c : cases) {
    // A fresh buffer, never one of the arguments (even the whole-buffer slice).
    expect_fresh_result(c.name, [&] { return c.call(a, b, d, empty); }, fresh_buffer(c.bytes),
                        {a.get(), b.get(), d.get(), empty.get()});
  }
  // The arguments are borrowed: still alive and unchanged.
  EXPECT_EQ(words_of<float>(a.get()), (Words<float>{0x3F800000u, 0x40000000u, 0x40400000u}));
  EXPECT_EQ(words_of<float>(b.get()), (Words<float>{0x40800000u, 0x40A00000u}));
  EXPECT_EQ(words_of<double>(d.get()),
            (Words<double>{0x3FF0000000000000ull, 0x4000000000000000ull}));
}

// ---------------------------------------------------------------------------------------------
// Bad inputs: pure symbols panic, naming the op and the sizes

TEST_F(ShapeDeathTest, ConcatSizesMustMatchTheArguments) {
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(5, 0),
                                             torchlean_cuda_buffer_zeros(2, 0), 4, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: concat1d: buffer size does not match shape \\(size\\(a\\) = 5 "
              "but n = 4\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(5, 1),
                                             torchlean_cuda_buffer_zeros(2, 1), 5, 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: concat1d: buffer size does not match shape \\(size\\(b\\) = 2 "
              "but m = 3\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(0, 0),
                                             torchlean_cuda_buffer_zeros(0, 0), 0, 4294967295u),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: concat1d: buffer size does not match shape \\(size\\(b\\) = 0 "
              "but m = 4294967295\\)");
}

TEST_F(ShapeDeathTest, ConcatDtypesMustAgree) {
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(2, 0),
                                             torchlean_cuda_buffer_zeros(2, 1), 2, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: concat1d: dtypes differ \\(float32 vs float64\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(0, 1),
                                             torchlean_cuda_buffer_zeros(0, 0), 0, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: concat1d: dtypes differ \\(float64 vs float32\\)");
}

TEST_F(ShapeDeathTest, ReleasedOperandsPanic) {
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(released_buffer(3, 0),
                                             torchlean_cuda_buffer_zeros(2, 0), 3, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: concat1d: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(3, 0),
                                             released_buffer(2, 0), 3, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: concat1d: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_slice1d(released_buffer(4, 1), 4, 0, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: buffer has been released");
}

TEST_F(ShapeDeathTest, NonBufferArgumentsPanic) {
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(lean_box(3), torchlean_cuda_buffer_zeros(1, 0), 0, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: concat1d: argument is not a buffer object");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(1, 0),
                                             float_array({1}).get(), 1, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: concat1d: argument is not a buffer object");
  EXPECT_EXIT(torchlean_cuda_buffer_slice1d(byte_array({1, 2, 3, 4}).get(), 1, 0, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: argument is not a buffer object");
  EXPECT_EXIT(
      {
        lean_external_class* other = lean_register_external_class([](void*) {}, nullptr);
        torchlean_cuda_buffer_slice1d(lean_alloc_external(other, nullptr), 0, 0, 0);
      },
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: slice1d: external object is not a tensor buffer");
}

// Encoded concat1d / slice1d themselves are tested in encoded_test.cpp; here, the mixed operands.
TEST_F(ShapeDeathTest, EncodedOperandsFollowTheEncodedRules) {
  EXPECT_EXIT(
      torchlean_cuda_buffer_concat1d(encoded_buffer(2), torchlean_cuda_buffer_zeros(3, 0), 2, 3),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: concat1d: concat: incompatible encoded buffers \\(a is an encoded "
      "buffer of "
      "width 2, b is a float32 buffer\\)");
  EXPECT_EXIT(
      torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(2, 1), encoded_buffer(3), 2, 3),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: concat1d: concat: incompatible encoded buffers \\(a is a float64 "
      "buffer, b "
      "is an encoded buffer of width 2\\)");
  EXPECT_EXIT(
      torchlean_cuda_buffer_slice1d(encoded_buffer(4), 4, 3, 2), ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: slice1d: slice: invalid encoded buffer or extent \\(size\\(x\\) = "
      "4, n = 4, start = 3, len = 2\\)");
}

TEST_F(ShapeDeathTest, SliceSizeMustMatchTheArgument) {
  EXPECT_EXIT(torchlean_cuda_buffer_slice1d(torchlean_cuda_buffer_zeros(5, 0), 4, 0, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: buffer size does not match shape \\(size\\(x\\) = 5 "
              "but n = 4\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_slice1d(torchlean_cuda_buffer_zeros(0, 1), 1, 0, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: buffer size does not match shape \\(size\\(x\\) = 0 "
              "but n = 1\\)");
}

TEST_F(ShapeDeathTest, SliceOutOfBoundsPanics) {
  auto slice = [](uint32_t n, uint32_t start, uint32_t len) {
    torchlean_cuda_buffer_slice1d(torchlean_cuda_buffer_zeros(n, 0), n, start, len);
  };
  EXPECT_EXIT(slice(4, 5, 0), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: slice out of bounds \\(n = 4, start = 5, len = 0\\)");
  EXPECT_EXIT(slice(4, 3, 2), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: slice out of bounds \\(n = 4, start = 3, len = 2\\)");
  EXPECT_EXIT(slice(0, 0, 1), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: slice out of bounds \\(n = 0, start = 0, len = 1\\)");
  // start + len wraps around in 32 bits: still out of bounds.
  EXPECT_EXIT(slice(4, 2, 4294967295u), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: slice out of bounds \\(n = 4, start = 2, len = "
              "4294967295\\)");
  EXPECT_EXIT(slice(4, 4294967295u, 1), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: slice out of bounds \\(n = 4, start = 4294967295, "
              "len = 1\\)");
}

}  // namespace

// =============================================================================================
// broadcast_vec_to_cols, broadcast_to, swap_adjacent_at_depth

namespace {

using Nats = std::vector<uint64_t>;

std::string text(const Nats& dims) {
  std::string t = "[";
  for (size_t i = 0; i < dims.size(); ++i) t += (i ? ", " : "") + std::to_string(dims[i]);
  return t + "]";
}

uint64_t product(const Nats& dims) {
  uint64_t p = 1;
  for (uint64_t d : dims) p *= d;
  return p;
}

// The spec's formula, element by element: out[o] = x[i], i_a = 0 if inDims[a] = 1, else o_j for
// the j with axisMap[j] = a + 1.
template <class W>
W broadcast_expected(const W& x, const Nats& in, const Nats& out, const Nats& map) {
  W r(product(out));
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
    r[e] = x[from];
  }
  return r;
}

template <class W>
W swap_expected(const W& x, const Nats& dims, size_t depth) {
  Nats out = dims;
  std::swap(out[depth], out[depth + 1]);
  Nats map(dims.size());
  for (size_t j = 0; j < dims.size(); ++j) map[j] = j + 1;
  std::swap(map[depth], map[depth + 1]);
  return broadcast_expected(x, dims, out, map);
}

template <class T>
Words<T> broadcast_words(const Obj& x, const Nats& in, const Nats& out, const Nats& map) {
  Obj r(torchlean_cuda_buffer_broadcast_to(x.get(), nats(in).get(), nats(out).get(),
                                           nats(map).get()));
  EXPECT_EQ(torchlean_cuda_buffer_size(r.get()), product(out));
  return words_of<T>(r.get());
}

template <class T>
Words<T> swap_words(const Obj& x, const Nats& dims, uint32_t depth) {
  Obj r(torchlean_cuda_buffer_swap_adjacent_at_depth(x.get(), nats(dims).get(), depth));
  EXPECT_EQ(torchlean_cuda_buffer_size(r.get()), product(dims));
  return words_of<T>(r.get());
}

template <class T>
Words<T> vec_to_cols_words(const Obj& v, uint32_t rows, uint32_t cols) {
  Obj r(torchlean_cuda_buffer_broadcast_vec_to_cols(v.get(), rows, cols));
  EXPECT_EQ(torchlean_cuda_buffer_size(r.get()), uint64_t{rows} * cols);
  return words_of<T>(r.get());
}

// Special words first, then random words.
template <class T>
Words<T> operand_words(uint64_t n, uint64_t seed) {
  Words<T> w = random_words<T>(n, seed);
  Words<T> special;
  if constexpr (sizeof(T) == 4) {
    special = special_f32();
  } else {
    special = special_f64();
  }
  for (uint64_t i = 0; i < n && i < special.size(); ++i) w[i] = special[i];
  return w;
}

template <class T>
void check_broadcast(const Nats& in, const Nats& out, const Nats& map, uint64_t seed) {
  const Words<T> x = operand_words<T>(product(in), seed);
  EXPECT_EQ(broadcast_words<T>(make_words<T>(x), in, out, map), broadcast_expected(x, in, out, map))
      << "inDims = " << text(in) << ", outDims = " << text(out) << ", axisMap = " << text(map);
}

template <class T>
void check_swap(const Nats& dims, uint32_t depth, uint64_t seed) {
  const Words<T> x = operand_words<T>(product(dims), seed);
  EXPECT_EQ(swap_words<T>(make_words<T>(x), dims, depth), swap_expected(x, dims, depth))
      << "dims = " << text(dims) << ", depth = " << depth;
}

template <class T>
void check_vec_to_cols(uint32_t rows, uint32_t cols, uint64_t seed) {
  const Words<T> v = operand_words<T>(rows, seed);
  Words<T> want(uint64_t{rows} * cols);
  for (uint64_t i = 0; i < want.size(); ++i) want[i] = v[i / cols];
  EXPECT_EQ(vec_to_cols_words<T>(make_words<T>(v), rows, cols), want)
      << "rows = " << rows << ", cols = " << cols;
}

template <class T>
void vec_to_cols_fixtures() {
  uint64_t seed = 50;
  for (uint32_t rows : {1u, 2u, 17u, 33u, 300u}) {
    for (uint32_t cols : {1u, 2u, 3u, 4u, 5u, 8u, 65u, 1024u})
      check_vec_to_cols<T>(rows, cols, ++seed);
  }
  check_vec_to_cols<T>(0, 5, ++seed);
  check_vec_to_cols<T>(3, 0, ++seed);
  check_vec_to_cols<T>(0, 0, ++seed);
}

struct BroadcastCase {
  Nats in, out, map;
};

const BroadcastCase kBroadcastCases[] = {
    {{}, {}, {}},                        // rank 0
    {{}, {2, 3}, {0, 0}},                // a scalar everywhere
    {{1}, {5}, {1}},                     // an extent-1 axis broadcast
    {{2, 3}, {2, 3}, {1, 2}},            // identity
    {{3}, {2, 3}, {0, 1}},               // inserted leading axis
    {{3}, {3, 2}, {1, 0}},               // inserted trailing axis
    {{3, 1}, {3, 4}, {1, 2}},            // extent 1 broadcast innermost
    {{1, 3}, {4, 3}, {1, 2}},            // extent 1 broadcast outermost
    {{2, 3}, {3, 2}, {2, 1}},            // transpose
    {{5, 4}, {4, 3, 5}, {2, 0, 1}},      // TorchLean's attention map, small
    {{33, 65}, {65, 3, 33}, {2, 0, 1}},  // tile edges
    {{65, 33}, {33, 65}, {2, 1}},        // tile edges, plain transpose
    {{2, 3, 4}, {4, 2, 5, 3}, {3, 1, 0, 2}},
    {{4, 1, 6}, {6, 7, 4, 2}, {3, 2, 1, 0}},
    {{70, 9}, {9, 2, 70}, {2, 0, 1}},     // short k axis: no tile
    {{40, 3}, {3, 40, 64}, {2, 1, 0}},    // runs of 3 words: a unit tile
    {{8, 64}, {3, 8, 64}, {0, 1, 2}},     // contiguous, merged
    {{8, 1, 64}, {8, 5, 64}, {1, 2, 3}},  // broadcast middle axis, vector rows
    {{64, 1}, {64, 3, 130}, {1, 0, 2}},   // broadcast rows of 130
    {{0, 3}, {0, 3}, {1, 2}},             // empty
    {{1}, {0}, {1}},                      // extent 1 broadcast to 0
    {{2, 3}, {2, 0, 3}, {1, 0, 2}},       // an inserted zero extent
    {{1, 1, 1}, {1, 1, 1}, {3, 1, 2}},    // all ones, permuted
};

template <class T>
void broadcast_fixtures() {
  uint64_t seed = 300;
  for (const BroadcastCase& c : kBroadcastCases) check_broadcast<T>(c.in, c.out, c.map, ++seed);
}

template <class T>
void swap_fixtures() {
  uint64_t seed = 700;
  const std::pair<Nats, uint32_t> cases[] = {
      {{2, 3}, 0},         {{33, 65}, 0},       {{2, 3, 4}, 0},          {{2, 3, 4}, 1},
      {{33, 65, 3}, 0},    {{33, 65, 3}, 1},    {{4, 33, 65}, 1},        {{3, 33, 65, 1}, 1},
      {{1, 5, 1}, 0},      {{1, 5, 1}, 1},      {{5, 1, 7, 1}, 0},       {{5, 1, 7, 1}, 2},
      {{2, 40, 50, 8}, 1}, {{2, 64, 48, 5}, 1}, {{3, 130, 70}, 1},       {{2, 3, 4, 5, 6}, 3},
      {{3, 0, 2}, 1},      {{0, 4}, 0},         {{2, 2, 2, 2, 2, 2}, 2}, {{9, 17, 2}, 0},
  };
  for (const auto& c : cases) check_swap<T>(c.first, c.second, ++seed);
}

// Random geometries: ranks 0-5 for the input, inserted axes, permutations, extent-1 broadcasts.
template <class T>
void random_broadcasts(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  for (int k = 0; k < count; ++k) {
    const size_t in_rank = rng() % 6;
    const size_t inserted = rng() % 3;
    Nats in(in_rank);
    for (uint64_t& d : in) d = 1 + rng() % 9;
    std::vector<size_t> order(in_rank + inserted);
    std::iota(order.begin(), order.end(), size_t{0});
    std::shuffle(order.begin(), order.end(), rng);
    Nats out(order.size()), map(order.size());
    for (size_t j = 0; j < order.size(); ++j) {
      if (order[j] < in_rank) {
        map[j] = order[j] + 1;
        const uint64_t d = in[order[j]];
        out[j] = d == 1 ? 1 + rng() % 4 : d;
      } else {
        map[j] = 0;
        out[j] = 1 + rng() % 5;
      }
    }
    check_broadcast<T>(in, out, map, rng());
  }
}

template <class T>
void random_swaps(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  for (int k = 0; k < count; ++k) {
    const size_t rank = 2 + rng() % 4;
    Nats dims(rank);
    for (uint64_t& d : dims) d = 1 + rng() % 12;
    check_swap<T>(dims, static_cast<uint32_t>(rng() % (rank - 1)), rng());
  }
}

}  // namespace

TEST_F(Shape, BroadcastVecToColsKeepsEveryBitFloat32) {
  vec_to_cols_fixtures<float>();
}
TEST_F(Shape, BroadcastVecToColsKeepsEveryBitFloat64) {
  vec_to_cols_fixtures<double>();
}
TEST_F(Shape, BroadcastToFixturesFloat32) {
  broadcast_fixtures<float>();
}
TEST_F(Shape, BroadcastToFixturesFloat64) {
  broadcast_fixtures<double>();
}
TEST_F(Shape, BroadcastToRandomGeometries) {
  random_broadcasts<float>(11, 300);
  random_broadcasts<double>(12, 150);
}
TEST_F(Shape, SwapAdjacentFixturesFloat32) {
  swap_fixtures<float>();
}
TEST_F(Shape, SwapAdjacentFixturesFloat64) {
  swap_fixtures<double>();
}
TEST_F(Shape, SwapAdjacentRandomShapes) {
  random_swaps<float>(21, 200);
  random_swaps<double>(22, 100);
}

// Sizes past the 16-byte chunking and the 32-word tiles in every direction, on the paths the
// device picks: vector rows, broadcast rows, tiles with a unit, plain tiles with a batch axis.
TEST_F(Shape, LargerGeometries) {
  check_swap<float>({8, 1000, 16, 64}, 1, 1);  // rows of 64 words
  check_swap<float>({3, 300, 257}, 1, 2);      // plain transpose with batch, odd edges
  check_swap<double>({2, 129, 97, 3}, 1, 3);   // runs of 3 doubles: unit tiles
  check_swap<float>({5, 100, 60, 7}, 1, 4);    // runs of 7 floats
  check_swap<double>({6, 50, 40, 9}, 1, 5);    // rows of 9 doubles: scalar rows
  check_broadcast<float>({1024, 64}, {64, 16, 1024}, {2, 0, 1}, 6);
  check_broadcast<double>({100, 37}, {37, 5, 100}, {2, 0, 1}, 7);
  check_broadcast<float>({1000, 1}, {1000, 300}, {1, 2}, 8);
  check_vec_to_cols<float>(4099, 257, 9);
  check_vec_to_cols<double>(1000, 1000, 10);
}

// Row copies whose rows sit on 4 to 6 axes that do not merge (the row kernel divides each out of
// the row index): outer axes permuted, with and without a broadcast axis among them, contiguous
// runs of 64 and 96 words (chunks of 16 bytes) and of 5 words.
TEST_F(Shape, RowCopiesOfFewAndManyAxes) {
  uint64_t seed = 700;
  check_broadcast<float>({2, 3, 5, 7, 64}, {7, 5, 3, 2, 64}, {4, 3, 2, 1, 5}, ++seed);
  check_broadcast<float>({2, 3, 5, 7, 11, 64}, {11, 7, 5, 3, 2, 64}, {5, 4, 3, 2, 1, 6}, ++seed);
  check_broadcast<float>({2, 3, 5, 7, 64}, {7, 4, 5, 3, 2, 64}, {4, 0, 3, 2, 1, 5}, ++seed);
  check_broadcast<double>({2, 3, 5, 7, 11, 5}, {11, 7, 5, 3, 2, 5}, {5, 4, 3, 2, 1, 6}, ++seed);
  check_broadcast<double>({3, 5, 7, 11, 5}, {11, 7, 5, 3, 5}, {4, 3, 2, 1, 5}, ++seed);
  check_broadcast<float>({2, 3, 2, 3, 2, 3, 2, 48}, {3, 2, 3, 2, 3, 2, 2, 48},
                         {2, 1, 4, 3, 6, 5, 7, 8}, ++seed);
}

// Both sides of the device engine's small-permutation border (at most 4096 elements: one gathered
// word per element; beyond, the tiles) and of the slice's kernel copy (at most 1 MiB; beyond, the
// copy engine), at aligned and misaligned starts.
TEST_F(Shape, SmallAndLargePathsMeetAtTheirBorder) {
  check_swap<float>({64, 64}, 0, 31);
  check_swap<float>({64, 65}, 0, 32);
  check_swap<double>({2, 32, 64}, 1, 33);
  check_swap<double>({2, 33, 64}, 1, 34);
  check_swap<float>({4, 32, 16, 2}, 1, 35);  // 8-byte groups
  check_swap<float>({4, 33, 16, 2}, 1, 36);
  check_broadcast<float>({30, 40}, {40, 3, 30}, {2, 0, 1}, 37);
  check_broadcast<float>({30, 40}, {40, 4, 30}, {2, 0, 1}, 38);
  for (uint32_t n : {262144u, 262145u, 262150u}) {
    const Words<float> x = random_words<float>(n + 8, n);
    const Obj f = make_words<float>(x);
    for (uint32_t start : {0u, 1u, 4u}) {
      EXPECT_EQ(slice_words<float>(f, start, n), window(x, start, n)) << n << " from " << start;
    }
  }
  for (uint32_t n : {131072u, 131073u}) {
    const Words<double> y = random_words<double>(n + 4, n);
    const Obj d = make_words<double>(y);
    for (uint32_t start : {0u, 1u, 2u}) {
      EXPECT_EQ(slice_words<double>(d, start, n), window(y, start, n)) << n << " from " << start;
    }
  }
}

// The batched transpose of the device engine: tile edges in both directions (extents not
// multiples of the 64- and 32-group tiles), batches, groups of 1, 2, 3 and 4 words (the 8- and
// 16-byte groups as vector words), more batches than a grid dimension holds, and broadcast axes
// written from one loaded tile, split into chunks with a short last chunk.
TEST_F(Shape, TransposeTiles) {
  check_swap<float>({5, 200, 67}, 1, 1);     // 4-byte words, 64-group tiles
  check_swap<float>({130, 70}, 0, 2);        // no batch
  check_swap<float>({3, 45, 77, 2}, 1, 3);   // 8-byte groups
  check_swap<float>({4, 70, 33, 3}, 1, 4);   // 12-byte groups
  check_swap<float>({2, 65, 97, 4}, 1, 5);   // 16-byte groups
  check_swap<double>({3, 100, 37}, 1, 6);    // 8-byte words
  check_swap<double>({2, 33, 70, 2}, 1, 7);  // 16-byte groups
  check_swap<double>({3, 40, 35, 3}, 1, 8);  // 24-byte groups
  check_swap<float>({70000, 8, 9}, 1, 9);    // batches past 65535 grid rows
  check_broadcast<float>({3, 40, 45}, {45, 3, 3, 251, 40}, {3, 0, 1, 0, 2}, 10);
  check_broadcast<double>({20, 50, 3}, {50, 7, 20, 3}, {2, 0, 1, 3}, 11);
  check_broadcast<float>({20, 50, 2}, {50, 700, 20, 2}, {2, 0, 1, 3}, 12);
  check_broadcast<float>({9, 130, 33}, {33, 4, 9, 130}, {3, 0, 1, 2}, 13);
}

// The batched transpose's interior paths (16-byte vector loads when the input rows are 16-byte
// aligned, 16-byte vector stores when the output rows are, word loads and stores otherwise) beside
// its bounds-checked edge tiles: extents 64 k + 4 and 64 k - 4 (rows of whole vectors, edge tiles
// on both axes), 64 k + 1 and 64 k - 1 (rows of whole vectors on neither side or on one), inner
// extents 1023 and 1365 * 3 words (input rows at every alignment, output rows aligned), every
// group size (4, 8, 12, 16 and 24 bytes) in both dtypes. The buffers' own base addresses cannot be
// misaligned through the ABI (every buffer is a fresh allocation aligned to 512 bytes; slices are
// copies), so the misaligned rows come from the strides. Broadcast positions written from one tile:
// interior tiles with chunks of several positions (a short last chunk), and three broadcast axes
// around a batch axis whose chunks cross the last broadcast axis's wrap (on a device of 132 SMs:
// chunks of 2 positions; fewer SMs give longer chunks).
TEST_F(Shape, TransposeFastPaths) {
  uint64_t seed = 100;
  // 4-byte words, 64 x 64 tiles: vector in and out, vector in only, vector out only, neither.
  check_swap<float>({2, 196, 124}, 1, ++seed);
  check_swap<float>({2, 193, 124}, 1, ++seed);
  check_swap<float>({2, 196, 127}, 1, ++seed);
  check_swap<float>({2, 193, 127}, 1, ++seed);
  check_swap<float>({128, 192}, 0, ++seed);      // interior tiles only, no batch
  check_swap<float>({3, 256, 1023}, 1, ++seed);  // input rows of 1023 words, output rows of 256
  check_swap<float>({2, 1023, 256}, 1, ++seed);  // and the other way round
  // 8-byte groups, 64 x 64 tiles: doubles, pairs of floats.
  check_swap<double>({2, 196, 124}, 1, ++seed);
  check_swap<double>({2, 193, 127}, 1, ++seed);
  check_swap<double>({2, 130, 67}, 1, ++seed);
  check_swap<float>({2, 130, 66, 2}, 1, ++seed);
  check_swap<float>({2, 129, 67, 2}, 1, ++seed);
  // 12-byte groups, 64 x 64 tiles: input rows of 1365 * 3 words (every alignment), aligned rows.
  check_swap<float>({1, 128, 1365, 3}, 1, ++seed);
  check_swap<float>({2, 128, 132, 3}, 1, ++seed);
  check_swap<float>({2, 129, 131, 3}, 1, ++seed);
  // 16-byte groups, 32 x 32 tiles.
  check_swap<float>({3, 96, 130, 4}, 1, ++seed);
  check_swap<double>({2, 97, 63, 2}, 1, ++seed);
  // 24-byte groups, 32 x 32 tiles.
  check_swap<double>({2, 64, 96, 3}, 1, ++seed);
  check_swap<double>({2, 66, 97, 3}, 1, ++seed);
  // Broadcast positions: a 64 x 64 tile written to 2113 positions (more than 16 blocks per SM of
  // tiles), in chunks (the double rows of 512 bytes run on the gathered rows instead; the second
  // double case puts the broadcast axis outermost, which keeps the tile).
  check_broadcast<float>({64, 64}, {64, 2113, 64}, {2, 0, 1}, ++seed);
  check_broadcast<double>({64, 64}, {64, 300, 64}, {2, 0, 1}, ++seed);
  check_broadcast<double>({64, 64}, {300, 64, 64}, {0, 2, 1}, ++seed);
  // Three broadcast axes around a batch axis, edge tiles: out [3, l, 3, p, 133, c].
  check_broadcast<float>({2, 10, 9}, {3, 2, 3, 9, 133, 10}, {0, 1, 0, 3, 0, 2}, ++seed);
  // 12-byte groups broadcast from interior tiles, input rows of 65 * 3 words (misaligned).
  check_broadcast<float>({64, 65, 3}, {65, 5, 64, 3}, {2, 0, 1, 3}, ++seed);
}

// The 128 x 128 tile of 4-byte words, which the device engine takes when both tile axes hold at
// least 128 words, no batch axis is a broadcast and the copy has at least 2 such tiles per SM (the
// copies meant for it have 300 or more tiles: 2 per SM on devices of up to 150 SMs): vector loads
// and stores, vector loads only, vector stores only and neither, edge tiles on both axes, interior
// tiles only at the threshold extent, extent-1 axes, two batch axes. Beside them the copies that
// just miss a condition and keep the 64 x 64 tile: an axis of 127, too few tiles, a broadcast axis.
TEST_F(Shape, LargeTransposeTiles) {
  uint64_t seed = 900;
  check_swap<float>({50, 196, 260}, 1, ++seed);  // rows of whole vectors on both sides
  check_swap<float>({50, 193, 260}, 1, ++seed);  // output rows of 193 words
  check_swap<float>({50, 196, 259}, 1, ++seed);  // input rows of 259 words
  check_swap<float>({50, 193, 259}, 1, ++seed);  // neither
  check_swap<float>({150, 128, 256}, 1, ++seed);
  check_swap<float>({50, 1, 196, 260, 1}, 2, ++seed);
  // out [6, 10, 260, 196] from x [6, 196, 10, 260]: batch axes 6 and 10 that do not merge.
  check_broadcast<float>({6, 196, 10, 260}, {6, 10, 260, 196}, {1, 3, 4, 2}, ++seed);
  check_swap<float>({40, 127, 300}, 1, ++seed);
  check_swap<float>({40, 300, 127}, 1, ++seed);
  check_swap<float>({2, 256, 200}, 1, ++seed);
  check_broadcast<float>({200, 300}, {20, 300, 200}, {0, 2, 1}, ++seed);
}

// Permuting broadcasts on the gathered-rows kernel, which the device engine takes when the
// innermost output axis gathers words (input stride above 1) right inside a broadcast axis of at
// least 16 positions, with rows of whole 16-byte vectors and at least 512 bytes: rows at the
// 512-byte threshold in both dtypes, rows whose pieces do not fill a block (75 vectors: a partial
// last warp; 275 and 300 vectors: two blocks a row), broadcast extents of 16, 17 and 40 (a short
// last block of rows), outer axes [3, 2, 5] with a broadcast among them, extent-1 axes. Beside them
// the broadcasts that just miss a condition and keep the transpose: 15 positions, rows of 496
// bytes, rows of 130 floats and of 63 doubles (a partial vector).
TEST_F(Shape, GatheredBroadcastRows) {
  uint64_t seed = 950;
  check_broadcast<float>({128, 9}, {9, 16, 128}, {2, 0, 1}, ++seed);
  check_broadcast<float>({128, 9}, {9, 17, 128}, {2, 0, 1}, ++seed);
  check_broadcast<double>({64, 9}, {9, 16, 64}, {2, 0, 1}, ++seed);
  check_broadcast<float>({300, 5}, {5, 40, 300}, {2, 0, 1}, ++seed);
  check_broadcast<float>({1100, 4}, {4, 33, 1100}, {2, 0, 1}, ++seed);
  check_broadcast<double>({600, 7}, {7, 20, 600}, {2, 0, 1}, ++seed);
  check_broadcast<float>({128, 3, 5}, {3, 2, 5, 20, 128}, {2, 0, 3, 0, 1}, ++seed);
  check_broadcast<float>({128, 1, 3}, {3, 16, 1, 128}, {3, 2, 0, 1}, ++seed);
  check_broadcast<float>({128, 9}, {9, 15, 128}, {2, 0, 1}, ++seed);
  check_broadcast<float>({124, 9}, {9, 16, 124}, {2, 0, 1}, ++seed);
  check_broadcast<float>({130, 9}, {9, 16, 130}, {2, 0, 1}, ++seed);
  check_broadcast<double>({63, 9}, {9, 16, 63}, {2, 0, 1}, ++seed);
}

// Random swaps with extents around the tile sizes, every group size and both dtypes.
TEST_F(Shape, TransposeRandomTileShapes) {
  std::mt19937_64 rng(31);
  const uint64_t extents[] = {8, 31, 32, 33, 63, 64, 65, 100, 128, 131, 196};
  for (int k = 0; k < 24; ++k) {
    const uint64_t outer = 1 + rng() % 3, inner = 1 + rng() % 4;
    const Nats dims = {outer, extents[rng() % 11], extents[rng() % 11], inner};
    if (k % 2 == 0) {
      check_swap<float>(dims, 1, rng());
    } else {
      check_swap<double>(dims, 1, rng());
    }
  }
}

// The copies are deterministic: ten runs give the same words.
TEST_F(Shape, RepeatedCallsGiveTheSameWords) {
  const Words<float> x = operand_words<float>(3 * 300 * 257, 77);
  const Obj b = make_words<float>(x);
  const Words<float> first = swap_words<float>(b, {3, 300, 257}, 1);
  const Words<float> bfirst = broadcast_words<float>(b, {3 * 300, 257}, {257, 4, 900}, {2, 0, 1});
  for (int run = 0; run < 10; ++run) {
    EXPECT_EQ(swap_words<float>(b, {3, 300, 257}, 1), first) << "run " << run;
    EXPECT_EQ(broadcast_words<float>(b, {3 * 300, 257}, {257, 4, 900}, {2, 0, 1}), bfirst)
        << "run " << run;
  }
}

// The device engine's plan (kernels/shape/copy_plan.h), run on the host: the collapsed geometry
// walks the same input offsets as the uncollapsed one, also for plans longer than the axes a plan
// holds in place (PlanAxes::kInline), and the 32-bit division is exact.
TEST_F(Shape, CopyPlanKeepsTheOffsets) {
  std::mt19937_64 rng(5);
  size_t longest = 0;
  for (int k = -1; k < 2000; ++k) {
    const size_t rank = k < 0 ? 11 : rng() % 14;
    Nats dims(rank), strides(rank);
    if (k < 0) {  // 11 axes of which none merges: strides 3^10 .. 1, extents 2
      for (size_t j = rank; j-- > 0;) {
        dims[j] = 2;
        strides[j] = j + 1 == rank ? 1 : 3 * strides[j + 1];
      }
    } else {
      for (size_t j = 0; j < rank; ++j) {
        dims[j] = 1 + rng() % (rank > 6 ? 2 : 4);  // at most 2^13 elements
        strides[j] = rng() % 3 == 0 ? 0 : rng() % 40;
      }
      // Make some axes contiguous with their inner neighbour.
      for (size_t j = rank; j-- > 1;) {
        if (rng() % 2 == 0) strides[j - 1] = strides[j] * dims[j];
      }
    }
    const tlrt::kernels::CopyPlan plan =
        tlrt::kernels::plan_copy(dims.data(), strides.data(), rank);
    ASSERT_EQ(plan.size, product(dims));
    for (uint64_t d : plan.dims) EXPECT_GE(d, 2u);
    ASSERT_EQ(plan.strides.size(), plan.dims.size());
    longest = std::max(longest, plan.dims.size());
    auto offsets = [](const auto& ds, const auto& ss, uint64_t size) {
      std::vector<uint64_t> r(size);
      for (uint64_t e = 0; e < size; ++e) {
        uint64_t rest = e, off = 0;
        for (size_t j = ds.size(); j-- > 0;) {
          off += (rest % ds[j]) * ss[j];
          rest /= ds[j];
        }
        r[e] = off;
      }
      return r;
    };
    EXPECT_EQ(offsets(plan.dims, plan.strides, plan.size), offsets(dims, strides, plan.size))
        << "dims = " << text(dims) << ", strides = " << text(strides);
  }
  EXPECT_GT(longest, tlrt::kernels::PlanAxes::kInline) << "no plan went past the inline axes";
  std::mt19937_64 r2(6);
  const uint32_t limit = 0x7FFFFFFFu;
  for (uint32_t d : {1u, 2u, 3u, 7u, 64u, 1000u, 65537u, 1u << 30, limit - 1, limit}) {
    const tlrt::kernels::FastDiv32 f(d);
    for (uint32_t n : {0u, 1u, d - 1, d, d + 1, limit - 1, limit}) {
      if (n > limit) continue;
      EXPECT_EQ(f.div(n), n / d) << n << " / " << d;
    }
    for (int i = 0; i < 20000; ++i) {
      const uint32_t n = static_cast<uint32_t>(r2() % (uint64_t{limit} + 1));
      ASSERT_EQ(f.div(n), n / d) << n << " / " << d;
    }
  }
}

TEST_F(Shape, NewOpsCreateOneFreshBufferAndLeakNothing) {
  const Obj v = make_words<float>({0x3F800000u, 0x40000000u, 0x40400000u});
  const Obj d =
      make_words<double>({0x3FF0000000000000ull, 0x4000000000000000ull, 0x4008000000000000ull,
                          0x8000000000000000ull, 0x7FF4000000000001ull, 0x0000000000000001ull});
  struct Case {
    const char* name;
    std::function<lean_object*()> call;
    uint64_t bytes;
  };
  const Case cases[] = {
      {"vec_to_cols", [&] { return torchlean_cuda_buffer_broadcast_vec_to_cols(v.get(), 3, 2); },
       24},
      {"vec_to_cols, one column",
       [&] { return torchlean_cuda_buffer_broadcast_vec_to_cols(v.get(), 3, 1); }, 12},
      {"vec_to_cols, empty",
       [&] { return torchlean_cuda_buffer_broadcast_vec_to_cols(v.get(), 3, 0); }, 0},
      {"broadcast_to identity",
       [&] {
         return torchlean_cuda_buffer_broadcast_to(d.get(), nats({2, 3}).get(), nats({2, 3}).get(),
                                                   nats({1, 2}).get());
       },
       48},
      {"broadcast_to empty",
       [&] {
         return torchlean_cuda_buffer_broadcast_to(d.get(), nats({2, 3}).get(),
                                                   nats({0, 2, 3}).get(), nats({0, 1, 2}).get());
       },
       0},
      {"swap",
       [&] {
         return torchlean_cuda_buffer_swap_adjacent_at_depth(d.get(), nats({2, 3}).get(), 0);
       },
       48},
      {"swap of extent-1 axes",
       [&] {
         return torchlean_cuda_buffer_swap_adjacent_at_depth(v.get(), nats({1, 1, 3}).get(), 0);
       },
       12},
  };
  for (const Case& c : cases) {
    expect_fresh_result(c.name, c.call, fresh_buffer(c.bytes), {v.get(), d.get()});
  }
  EXPECT_EQ(words_of<float>(v.get()), (Words<float>{0x3F800000u, 0x40000000u, 0x40400000u}));
}

TEST_F(ShapeDeathTest, BroadcastVecToColsPanics) {
  // Overflow of rows * cols comes first, even before the buffer is looked at.
  EXPECT_EXIT(
      torchlean_cuda_buffer_broadcast_vec_to_cols(released_buffer(3, 0), 4294967295u, 4294967295u),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: broadcast_vec_to_cols: shape size overflow");
  EXPECT_EXIT(torchlean_cuda_buffer_broadcast_vec_to_cols(torchlean_cuda_buffer_zeros(5, 0), 4, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: broadcast_vec_to_cols: buffer size does not match shape "
              "\\(size\\(v\\) = 5 but rows = 4\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_broadcast_vec_to_cols(torchlean_cuda_buffer_zeros(0, 1), 1, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: broadcast_vec_to_cols: buffer size does not match shape");
  EXPECT_EXIT(torchlean_cuda_buffer_broadcast_vec_to_cols(released_buffer(3, 0), 3, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: broadcast_vec_to_cols: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_broadcast_vec_to_cols(encoded_buffer(3), 3, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: broadcast_vec_to_cols: expected a real");
  EXPECT_EXIT(torchlean_cuda_buffer_broadcast_vec_to_cols(lean_box(1), 3, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: broadcast_vec_to_cols: argument is not a buffer object");
}

TEST_F(ShapeDeathTest, BroadcastToPanics) {
  auto call = [](lean_object* x, const Nats& in, const Nats& out, const Nats& map) {
    torchlean_cuda_buffer_broadcast_to(x, nats(in).get(), nats(out).get(), nats(map).get());
  };
  const char* p = "INTERNAL PANIC: tlrt: broadcast_to: ";
  auto re = [&](const std::string& tail) { return std::string(p) + tail; };
  EXPECT_EXIT(torchlean_cuda_buffer_broadcast_to(torchlean_cuda_buffer_zeros(1, 0), lean_box(1),
                                                 nats({}).get(), nats({}).get()),
              ::testing::ExitedWithCode(1), re("expected Array Nat inDims"));
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(1, 0), {4294967296u}, {1}, {1}),
              ::testing::ExitedWithCode(1), re("inDims\\[0\\] exceeds UInt32"));
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(1, 0), {1}, {1}, {4294967296u}),
              ::testing::ExitedWithCode(1), re("axisMap\\[0\\] exceeds UInt32"));
  // A heap object in place of a scalar entry stands for a bignum (SPEC-ops 1).
  EXPECT_EXIT(
      {
        Obj map = nats({1, 0});
        lean_array_set_core(map.get(), 0, lean_box_uint64(uint64_t{1} << 40));
        torchlean_cuda_buffer_broadcast_to(torchlean_cuda_buffer_zeros(1, 0), nats({1}).get(),
                                           nats({1, 2}).get(), map.get());
      },
      ::testing::ExitedWithCode(1), re("axisMap\\[0\\] exceeds UInt32 \\(a bignum\\)"));
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(1, 0), {4294967295u, 4294967295u, 2}, {1}, {1}),
              ::testing::ExitedWithCode(1), re("shape size overflow \\(inDims = "));
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(1, 0), {1}, {4294967295u, 4294967295u, 2}, {1}),
              ::testing::ExitedWithCode(1), re("shape size overflow \\(outDims = "));
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(6, 0), {2, 3}, {2, 3}, {1}),
              ::testing::ExitedWithCode(1), re("axis map rank mismatch"));
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(6, 0), {2, 3}, {2, 3}, {1, 3}),
              ::testing::ExitedWithCode(1), re("broadcast axis out of range"));
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(6, 0), {2, 3}, {2, 3, 2}, {1, 2, 1}),
              ::testing::ExitedWithCode(1), re("repeated broadcast input axis"));
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(6, 0), {2, 3}, {2, 4}, {1, 2}),
              ::testing::ExitedWithCode(1), re("incompatible broadcast dimension"));
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(6, 0), {2, 3}, {2, 5}, {1, 0}),
              ::testing::ExitedWithCode(1), re("broadcast omits an input axis"));
  // The geometry is checked before the buffer: a released x with a bad map reports the map.
  EXPECT_EXIT(call(released_buffer(6, 0), {2, 3}, {2, 3}, {1, 1}), ::testing::ExitedWithCode(1),
              re("repeated broadcast input axis"));
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(5, 0), {2, 3}, {3, 2}, {2, 1}),
              ::testing::ExitedWithCode(1),
              re("buffer size does not match shape \\(size\\(x\\) = 5 but prod\\(inDims\\) = 6"));
  EXPECT_EXIT(call(released_buffer(6, 1), {2, 3}, {3, 2}, {2, 1}), ::testing::ExitedWithCode(1),
              re("buffer has been released"));
  EXPECT_EXIT(call(encoded_buffer(6), {2, 3}, {3, 2}, {2, 1}), ::testing::ExitedWithCode(1),
              re("expected a real"));
}

TEST_F(ShapeDeathTest, SwapAdjacentPanics) {
  auto call = [](lean_object* x, const Nats& dims, uint32_t depth) {
    torchlean_cuda_buffer_swap_adjacent_at_depth(x, nats(dims).get(), depth);
  };
  const std::string p = "INTERNAL PANIC: tlrt: swap_adjacent_at_depth: ";
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(1, 0), {}, 0), ::testing::ExitedWithCode(1),
              p + "swapAdjacentAtDepth: invalid depth \\(depth = 0 for dims = \\[\\] of rank 0\\)");
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(3, 0), {3}, 0), ::testing::ExitedWithCode(1),
              p + "swapAdjacentAtDepth: invalid depth");
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(6, 0), {2, 3}, 1), ::testing::ExitedWithCode(1),
              p + "swapAdjacentAtDepth: invalid depth");
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(6, 0), {2, 3}, 4294967295u),
              ::testing::ExitedWithCode(1), p + "swapAdjacentAtDepth: invalid depth");
  // The depth is checked before the buffer size; the product before the depth.
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(5, 0), {2, 3}, 1), ::testing::ExitedWithCode(1),
              p + "swapAdjacentAtDepth: invalid depth");
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(5, 0), {4294967295u, 4294967295u, 3}, 7),
              ::testing::ExitedWithCode(1), p + "shape size overflow \\(dims = ");
  EXPECT_EXIT(call(torchlean_cuda_buffer_zeros(5, 0), {2, 3}, 0), ::testing::ExitedWithCode(1),
              p + "buffer size does not match shape \\(size\\(x\\) = 5 but prod\\(dims\\) = 6");
  EXPECT_EXIT(torchlean_cuda_buffer_swap_adjacent_at_depth(torchlean_cuda_buffer_zeros(6, 0),
                                                           byte_array({1}).get(), 0),
              ::testing::ExitedWithCode(1), p + "expected Array Nat dims");
  EXPECT_EXIT(call(released_buffer(6, 0), {2, 3}, 0), ::testing::ExitedWithCode(1),
              p + "buffer has been released");
  EXPECT_EXIT(call(encoded_buffer(6), {2, 3}, 0), ::testing::ExitedWithCode(1),
              p + "expected a real");
}
