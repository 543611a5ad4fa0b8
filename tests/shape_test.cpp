// concat1d and slice1d through the Lean boundary, on the backend TLRT_DEVICE selects (ctest runs
// this binary once with cpu and once with cuda). Both ops are byte copies, so every result is
// compared word for word with the input words: hand fixtures with signalling and quiet NaNs
// carrying payloads, both signed zeros, infinities and subnormals in both dtypes; empty operands
// and results; the whole buffer, aliased operands and unaligned windows; random words at sizes
// from 0 past 2^20. Inputs are made and results read back through of_bytes_io / to_bytes_io in
// the buffer's own dtype, the paths that keep every bit. Also: ownership counters, and each bad
// input's panic with its message.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "abi/boundary.h"
#include "abi_test_support.h"

using namespace abi_test;

namespace {

template <class T>
using Words = std::vector<typename Dt<T>::Bits>;

// A buffer of dtype T holding exactly these words.
template <class T>
Obj make_buffer(const Words<T>& words) {
  std::vector<uint8_t> bytes(words.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), words.data(), bytes.size());
  Io io = take_io(
      torchlean_cuda_buffer_of_bytes_io(byte_array(bytes).get(), Dt<T>::kCode, Dt<T>::kCode));
  EXPECT_TRUE(io.ok) << io.message;
  return std::move(io.value);
}

// The words of a result, after checking its dtype.
template <class T>
Words<T> words_of(lean_object* buffer) {
  EXPECT_EQ(torchlean_cuda_buffer_dtype(buffer), Dt<T>::kCode);
  Io io = take_io(torchlean_cuda_buffer_to_bytes_io(buffer, Dt<T>::kCode));
  EXPECT_TRUE(io.ok) << io.message;
  if (!io.ok) return {};
  const std::vector<uint8_t> bytes = bytes_of(io.value.get());
  Words<T> words(bytes.size() / sizeof(T));
  if (!words.empty()) std::memcpy(words.data(), bytes.data(), words.size() * sizeof(T));
  return words;
}

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

// A buffer record marked encoded, as the library's encoded constructors make them; no ABI symbol
// makes encoded buffers yet, so the death tests build one from alloc's record and the private
// layout. The format object stands for a FloatFormat.
lean_object* encoded_buffer(size_t n) {
  torchlean_cuda_buffer* record = torchlean_cuda_buffer_alloc(n);
  lean_object* format = lean_alloc_ctor(0, 2, 0);
  lean_ctor_set(format, 0, lean_box(5));
  lean_ctor_set(format, 1, lean_box(10));
  record->format = format;
  record->width = 2;
  return torchlean_cuda_buffer_box(record);
}

lean_object* released_buffer(uint32_t n, uint8_t dtype) {
  lean_object* b = torchlean_cuda_buffer_zeros(n, dtype);
  torchlean_cuda_buffer_release(b);
  return b;
}

class Shape : public BackendSuite {};

using ShapeDeathTest = Shape;

// ---------------------------------------------------------------------------------------------
// Hand fixtures: every bit of every word is kept.

TEST_F(Shape, ConcatKeepsEveryBitFloat32) {
  const Words<float> a = special_f32();
  const Words<float> b = {0x80000001u, 0x7FC00001u, 0x80000000u, 0x41200000u, 0x7F800002u};
  EXPECT_EQ(concat_words<float>(make_buffer<float>(a), make_buffer<float>(b)), joined(a, b));
  EXPECT_EQ(concat_words<float>(make_buffer<float>(b), make_buffer<float>(a)), joined(b, a));
}

TEST_F(Shape, ConcatKeepsEveryBitFloat64) {
  const Words<double> a = special_f64();
  const Words<double> b = {0x8000000000000000ull, 0x7FF4000000000000ull, 0x0000000000000002ull};
  EXPECT_EQ(concat_words<double>(make_buffer<double>(a), make_buffer<double>(b)), joined(a, b));
  EXPECT_EQ(concat_words<double>(make_buffer<double>(b), make_buffer<double>(a)), joined(b, a));
}

TEST_F(Shape, ConcatOfABufferWithItself) {
  const Words<float> x = special_f32();
  const Obj b = make_buffer<float>(x);
  EXPECT_EQ(concat_words<float>(b, b), joined(x, x));
}

TEST_F(Shape, ConcatWithEmptyOperands) {
  const Words<float> x = special_f32();
  const Obj f = make_buffer<float>(x);
  const Obj f_empty = make_buffer<float>({});
  EXPECT_EQ(concat_words<float>(f_empty, f), x);
  EXPECT_EQ(concat_words<float>(f, f_empty), x);
  EXPECT_EQ(concat_words<float>(f_empty, f_empty), Words<float>{});
  const Words<double> y = special_f64();
  const Obj d = make_buffer<double>(y);
  const Obj d_empty = make_buffer<double>({});
  EXPECT_EQ(concat_words<double>(d_empty, d), y);
  EXPECT_EQ(concat_words<double>(d, d_empty), y);
  // An empty result keeps the operands' dtype.
  EXPECT_EQ(concat_words<double>(d_empty, d_empty), Words<double>{});
}

TEST_F(Shape, SliceKeepsEveryBit) {
  const Words<float> x = special_f32();
  const Obj f = make_buffer<float>(x);
  const uint32_t n = static_cast<uint32_t>(x.size());
  EXPECT_EQ(slice_words<float>(f, 0, n), x);
  EXPECT_EQ(slice_words<float>(f, 2, 7), window(x, 2, 7));
  EXPECT_EQ(slice_words<float>(f, 4, 3), window(x, 4, 3));  // signalling NaN first
  EXPECT_EQ(slice_words<float>(f, n - 1, 1), window(x, n - 1, 1));
  const Words<double> y = special_f64();
  const Obj d = make_buffer<double>(y);
  const uint32_t dn = static_cast<uint32_t>(y.size());
  EXPECT_EQ(slice_words<double>(d, 0, dn), y);
  EXPECT_EQ(slice_words<double>(d, 3, 6), window(y, 3, 6));
  EXPECT_EQ(slice_words<double>(d, 7, 2), window(y, 7, 2));  // +0, -0
}

TEST_F(Shape, EmptySlicesAreEmptyBuffers) {
  const Obj f = make_buffer<float>(special_f32());
  const uint32_t n = torchlean_cuda_buffer_size(f.get());
  EXPECT_EQ(slice_words<float>(f, 0, 0), Words<float>{});
  EXPECT_EQ(slice_words<float>(f, 5, 0), Words<float>{});
  EXPECT_EQ(slice_words<float>(f, n, 0), Words<float>{});  // start = n is in bounds
  EXPECT_EQ(slice_words<float>(make_buffer<float>({}), 0, 0), Words<float>{});
  EXPECT_EQ(slice_words<double>(make_buffer<double>({}), 0, 0), Words<double>{});
  const Obj d = make_buffer<double>(special_f64());
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
      EXPECT_EQ(concat_words<float>(make_buffer<float>(a), make_buffer<float>(b)), joined(a, b))
          << "n = " << n << ", m = " << m;
    }
    const Words<float> x = random_words<float>(n, ++seed);
    const Obj b = make_buffer<float>(x);
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
      EXPECT_EQ(concat_words<double>(make_buffer<double>(a), make_buffer<double>(b)), joined(a, b))
          << "n = " << n << ", m = " << m;
    }
    const Words<double> x = random_words<double>(n, ++seed);
    const Obj b = make_buffer<double>(x);
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
  const Obj a = make_buffer<float>({0x3F800000u, 0x40000000u, 0x40400000u});
  const Obj b = make_buffer<float>({0x40800000u, 0x40A00000u});
  const Obj d = make_buffer<double>({0x3FF0000000000000ull, 0x4000000000000000ull});
  const Obj empty = make_buffer<float>({});
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
    const uint64_t payloads = c.bytes != 0 ? 1 : 0;
    const Counters before = Counters::read();
    Obj r(c.call(a, b, d, empty));
    const Counters mid = Counters::read();
    EXPECT_EQ(mid.alloc_count - before.alloc_count, payloads) << c.name;
    EXPECT_EQ(mid.live_bytes - before.live_bytes, c.bytes) << c.name;
    EXPECT_EQ(mid.wrapper_alloc - before.wrapper_alloc, 1u) << c.name;
    EXPECT_EQ(mid.wrapper_live - before.wrapper_live, 1u) << c.name;
    EXPECT_EQ(mid.free_count, before.free_count) << c.name;
    // A fresh buffer, never one of the arguments (even the whole-buffer slice).
    for (const Obj* input : {&a, &b, &d, &empty}) EXPECT_NE(r.get(), input->get()) << c.name;
    r.reset();
    const Counters after = Counters::read();
    EXPECT_EQ(after.live_bytes, before.live_bytes) << c.name;
    EXPECT_EQ(after.free_count - before.free_count, payloads) << c.name;
    EXPECT_EQ(after.wrapper_finalize - before.wrapper_finalize, 1u) << c.name;
    EXPECT_EQ(after.wrapper_live, before.wrapper_live) << c.name;
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
              "INTERNAL PANIC: tlrt: concat1d: size\\(a\\) = 5 but n = 4");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(5, 1),
                                             torchlean_cuda_buffer_zeros(2, 1), 5, 3),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: concat1d: size\\(b\\) = 2 but m = 3");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(0, 0),
                                             torchlean_cuda_buffer_zeros(0, 0), 0, 4294967295u),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: concat1d: size\\(b\\) = 0 but m = 4294967295");
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
      "INTERNAL PANIC: tlrt: slice1d: external object is not a tlrt buffer");
}

TEST_F(ShapeDeathTest, EncodedOperandsAreNotSupportedYet) {
  const char* concat_message =
      "INTERNAL PANIC: tlrt: concat1d: incompatible encoded buffers \\(encoded buffers are not "
      "supported yet by tlrt\\)";
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(encoded_buffer(2), encoded_buffer(3), 2, 3),
              ::testing::ExitedWithCode(1), concat_message);
  EXPECT_EXIT(
      torchlean_cuda_buffer_concat1d(encoded_buffer(2), torchlean_cuda_buffer_zeros(3, 0), 2, 3),
      ::testing::ExitedWithCode(1), concat_message);
  EXPECT_EXIT(
      torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(2, 0), encoded_buffer(3), 2, 3),
      ::testing::ExitedWithCode(1), concat_message);
  EXPECT_EXIT(torchlean_cuda_buffer_slice1d(encoded_buffer(4), 4, 1, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: invalid encoded buffer \\(encoded buffers are not "
              "supported yet by tlrt\\)");
}

TEST_F(ShapeDeathTest, SliceSizeMustMatchTheArgument) {
  EXPECT_EXIT(torchlean_cuda_buffer_slice1d(torchlean_cuda_buffer_zeros(5, 0), 4, 0, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: size\\(x\\) = 5 but n = 4");
  EXPECT_EXIT(torchlean_cuda_buffer_slice1d(torchlean_cuda_buffer_zeros(0, 1), 1, 0, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: slice1d: size\\(x\\) = 0 but n = 1");
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
