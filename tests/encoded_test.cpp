// Encoded buffers (SPEC-runtime sections 2, 5, 8 and 9; SPEC-ops 8 for concat1d / slice1d) through
// the Lean boundary, on the backend TLRT_DEVICE selects (ctest runs this binary once with cpu and
// once with cuda). Words are opaque bytes, so every result is compared byte for byte with the input
// bytes: widths 1, 2, 3, 4, 5, 8, 16 and 129; random bytes mixed with NaN-payload, infinity and
// signed-zero patterns; sizes from 0 past two pinned staging chunks of the CUDA transfers. Also:
// the IO errors and panics of every bad input with their messages, the payload and wrapper counters
// at size x width bytes, the format object's reference count (retained once per buffer, dropped
// once by finalisation, never by release), released and native inputs, the 2^32-word limit checked
// on sizes alone, the checkpoint symbols, and numerical ops refusing encoded operands (every op of
// the axis-reduction, shape, gather/scatter, softmax, layer-norm, scan and FFT families by name).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "abi_test_support.h"
#include "runtime/transfer.h"

using namespace abi_test;

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint64_t kWidths[] = {1, 2, 3, 4, 5, 8, 16, 129};

// A stand-in for a FloatFormat: any constructor object (the runtime never reads its fields).
Obj make_format(unsigned exponent_bits, unsigned fraction_bits) {
  lean_object* f = lean_alloc_ctor(0, 2, 0);
  lean_ctor_set(f, 0, lean_box(exponent_bits));
  lean_ctor_set(f, 1, lean_box(fraction_bits));
  return Obj(f);
}

// The reference count of a (single-threaded) Lean object.
int rc(lean_object* o) {
  return o->m_rc;
}

// n words of `width` bytes: random bytes, with special patterns (little-endian, sign in the top
// byte) spread through them: -0 (only the sign bit), all ones (a NaN with a full payload in the
// IEEE-like encodings), 0x7F.. with the low byte 1 (a signalling-NaN-like payload), +inf-like
// 0x7F F0 00.., and +0.
Bytes words(uint64_t n, uint64_t width, uint64_t seed) {
  Bytes b(n * width);
  std::mt19937_64 rng(seed);
  for (auto& v : b) v = static_cast<uint8_t>(rng());
  for (uint64_t i = 0; i < n; i += 7) {
    uint8_t* w = b.data() + i * width;
    std::memset(w, 0, width);
    switch ((i / 7) % 5) {
      case 0:
        w[width - 1] = 0x80;
        break;
      case 1:
        std::memset(w, 0xFF, width);
        break;
      case 2:
        std::memset(w, 0xFF, width);
        w[width - 1] = 0x7F;
        w[0] = width > 1 ? 0x01 : 0x7F;
        break;
      case 3:
        w[width - 1] = 0x7F;
        if (width > 1) w[width - 2] = 0xF0;
        break;
      default:
        break;
    }
  }
  return b;
}

// of_encoded_io, expected to succeed; owned result.
Obj upload(const Bytes& bytes, lean_object* format, uint64_t width) {
  Io io = take_io(torchlean_cuda_buffer_of_encoded_io(byte_array(bytes).get(), format, width));
  EXPECT_TRUE(io.ok) << io.message;
  return std::move(io.value);
}

// to_encoded_io, expected to succeed.
Bytes download(lean_object* buffer) {
  Io io = take_io(torchlean_cuda_buffer_to_encoded_io(buffer));
  EXPECT_TRUE(io.ok) << io.message;
  if (!io.ok) return {};
  return bytes_of(io.value.get());
}

// The format object a buffer reports (format?), or null for none; drops the extra reference.
lean_object* format_of(lean_object* buffer) {
  lean_object* opt = torchlean_cuda_buffer_format(buffer);
  if (lean_is_scalar(opt)) return nullptr;
  lean_object* f = lean_ctor_get(opt, 0);
  lean_dec(opt);  // the some cell goes; its reference to f with it
  return f;
}

bool same_counters(const Counters& a, const Counters& b) {
  return std::memcmp(&a, &b, sizeof(Counters)) == 0;
}

// An IO call expected to fail with otherError and `words` in the message, leaving every counter
// unchanged.
void expect_io_error(lean_object* result, const std::string& words, unsigned tag = kOtherError) {
  Io io = take_io(result);
  EXPECT_FALSE(io.ok);
  EXPECT_EQ(io.error_tag, tag);
  EXPECT_NE(io.message.find(words), std::string::npos) << io.message;
}

class Encoded : public BackendSuite {};
using EncodedDeathTest = Encoded;

// ---------------------------------------------------------------------------------------------
// of_encoded_io / to_encoded_io

TEST_F(Encoded, RoundTripIsVerbatimAtEveryWidth) {
  Obj format = make_format(5, 10);
  for (uint64_t width : kWidths) {
    for (uint64_t n :
         {uint64_t{0}, uint64_t{1}, uint64_t{7}, uint64_t{1000}, (uint64_t{1} << 20) / width + 3}) {
      const Bytes in = words(n, width, 17 * width + n);
      Obj b = upload(in, format.get(), width);
      EXPECT_EQ(torchlean_cuda_buffer_size(b.get()), n) << "width " << width;
      EXPECT_EQ(torchlean_cuda_buffer_dtype(b.get()), 2u);
      EXPECT_EQ(format_of(b.get()), format.get());
      EXPECT_EQ(download(b.get()), in) << "width " << width << ", n " << n;
    }
  }
}

TEST_F(Encoded, RoundTripCrossesStagingChunks) {
  // More than two pinned staging chunks, at widths that do not divide the chunk.
  Obj format = make_format(8, 23);
  for (uint64_t width : {uint64_t{3}, uint64_t{129}}) {
    const uint64_t n = (2 * tlrt::kStagingChunkBytes + (uint64_t{1} << 20)) / width + 5;
    const Bytes in = words(n, width, width);
    Obj b = upload(in, format.get(), width);
    EXPECT_EQ(download(b.get()), in) << "width " << width;
  }
}

TEST_F(Encoded, UploadFailuresAreIoErrorsThatCountNothing) {
  Obj format = make_format(5, 10);
  const int format_rc = rc(format.get());
  const Counters before = Counters::read();
  expect_io_error(torchlean_cuda_buffer_of_encoded_io(byte_array({1, 2, 3}).get(), format.get(), 0),
                  "tlrt: of_encoded_io: encoded buffer: truncated scalar word (3 bytes are not a "
                  "whole number of 0-byte words)");
  expect_io_error(torchlean_cuda_buffer_of_encoded_io(byte_array({}).get(), format.get(), 0),
                  "encoded buffer: truncated scalar word");
  expect_io_error(torchlean_cuda_buffer_of_encoded_io(byte_array({1, 2, 3}).get(), format.get(), 2),
                  "encoded buffer: truncated scalar word (3 bytes are not a whole number of "
                  "2-byte words)");
  expect_io_error(
      torchlean_cuda_buffer_of_encoded_io(byte_array(Bytes(130)).get(), format.get(), 129),
      "encoded buffer: truncated scalar word");
  expect_io_error(torchlean_cuda_buffer_of_encoded_io(byte_array({1}).get(), format.get(), 2),
                  "encoded buffer: truncated scalar word");
  EXPECT_TRUE(same_counters(before, Counters::read()));
  EXPECT_EQ(rc(format.get()), format_rc);
}

// A ByteArray whose header claims `length` bytes over an empty allocation: the word count is
// checked before a byte is read, so no large host or device allocation is needed.
class ClaimedByteArray {
 public:
  explicit ClaimedByteArray(uint64_t length) : array_(lean_alloc_sarray(1, 0, 0)) {
    lean_to_sarray(array_.get())->m_size = length;
  }
  ~ClaimedByteArray() { lean_to_sarray(array_.get())->m_size = 0; }
  lean_object* get() const { return array_.get(); }

 private:
  Obj array_;
};

TEST_F(Encoded, WordCountMustFitUInt32) {
  Obj format = make_format(5, 10);
  const Counters before = Counters::read();
  {
    ClaimedByteArray bytes(uint64_t{1} << 32);
    expect_io_error(torchlean_cuda_buffer_of_encoded_io(bytes.get(), format.get(), 1),
                    "tlrt: of_encoded_io: encoded buffer: scalar count exceeds the tape ABI "
                    "(4294967296 words of 1 bytes, more than 4294967295)");
  }
  {
    ClaimedByteArray bytes(uint64_t{2} << 32);
    expect_io_error(torchlean_cuda_buffer_of_encoded_io(bytes.get(), format.get(), 2),
                    "scalar count exceeds the tape ABI (4294967296 words of 2 bytes");
  }
  {
    // 2^32 words of 129 bytes; a partial word is still reported first.
    ClaimedByteArray bytes((uint64_t{1} << 32) * 129);
    expect_io_error(torchlean_cuda_buffer_of_encoded_io(bytes.get(), format.get(), 129),
                    "scalar count exceeds the tape ABI");
    ClaimedByteArray partial((uint64_t{1} << 32) * 129 + 1);
    expect_io_error(torchlean_cuda_buffer_of_encoded_io(partial.get(), format.get(), 129),
                    "truncated scalar word");
  }
  EXPECT_TRUE(same_counters(before, Counters::read()));
}

TEST_F(Encoded, DownloadRefusesNativeAndReleasedBuffers) {
  Obj native(torchlean_cuda_buffer_zeros(3, 0));
  expect_io_error(torchlean_cuda_buffer_to_encoded_io(native.get()),
                  "tlrt: to_encoded_io: encoded buffer: invalid handle (a float32 buffer)");
  Obj native64(torchlean_cuda_buffer_zeros(0, 1));
  expect_io_error(torchlean_cuda_buffer_to_encoded_io(native64.get()),
                  "encoded buffer: invalid handle (a float64 buffer)");
  Obj format = make_format(5, 10);
  Obj b = upload(words(4, 2, 1), format.get(), 2);
  ASSERT_EQ(torchlean_cuda_buffer_release(b.get()), 1u);
  expect_io_error(torchlean_cuda_buffer_to_encoded_io(b.get()),
                  "tlrt: to_encoded_io: encoded buffer: invalid handle (buffer has been released)");
  // An empty (not released) encoded buffer downloads as an empty array.
  Obj empty = upload({}, format.get(), 5);
  EXPECT_TRUE(download(empty.get()).empty());
}

// ---------------------------------------------------------------------------------------------
// Ownership: counters at size x width bytes, the format's reference count

TEST_F(Encoded, CountersUseSizeTimesWidth) {
  Obj format = make_format(11, 52);
  for (uint64_t width : kWidths) {
    const Counters a = Counters::read();
    Obj b = upload(words(11, width, width), format.get(), width);
    const Counters c = Counters::read();
    EXPECT_EQ(c.live_bytes - a.live_bytes, 11 * width);
    EXPECT_EQ(c.alloc_count - a.alloc_count, 1u);
    EXPECT_EQ(c.wrapper_alloc - a.wrapper_alloc, 1u);
    EXPECT_EQ(c.wrapper_live - a.wrapper_live, 1u);
    EXPECT_GE(c.peak_bytes, c.live_bytes);
    b.reset();
    const Counters d = Counters::read();
    EXPECT_EQ(d.live_bytes, a.live_bytes);
    EXPECT_EQ(d.free_count - a.free_count, 1u);
    EXPECT_EQ(d.wrapper_finalize - a.wrapper_finalize, 1u);
    EXPECT_EQ(d.wrapper_live, a.wrapper_live);
  }
  // Empty: wrapped, no payload.
  const Counters a = Counters::read();
  Obj e = upload({}, format.get(), 8);
  const Counters c = Counters::read();
  EXPECT_EQ(c.alloc_count, a.alloc_count);
  EXPECT_EQ(c.live_bytes, a.live_bytes);
  EXPECT_EQ(c.wrapper_alloc - a.wrapper_alloc, 1u);
  EXPECT_EQ(torchlean_cuda_buffer_release(e.get()), 0u);
}

TEST_F(Encoded, ReleaseRetiresThePayloadOnceAndKeepsTheFormat) {
  Obj format = make_format(5, 10);
  Obj b = upload(words(6, 5, 3), format.get(), 5);
  EXPECT_EQ(rc(format.get()), 2);
  const Counters a = Counters::read();
  EXPECT_EQ(torchlean_cuda_buffer_release(b.get()), 1u);
  const Counters c = Counters::read();
  EXPECT_EQ(a.live_bytes - c.live_bytes, 30u);
  EXPECT_EQ(c.free_count - a.free_count, 1u);
  EXPECT_EQ(c.wrapper_live, a.wrapper_live);
  EXPECT_EQ(rc(format.get()), 2) << "release must not drop the format";
  EXPECT_EQ(torchlean_cuda_buffer_release(b.get()), 0u);
  EXPECT_EQ(torchlean_cuda_buffer_release_with_token(b.get(), 7), 0u);
  EXPECT_TRUE(same_counters(c, Counters::read()));
  // Queries after release (SPEC-runtime 2.3).
  EXPECT_EQ(torchlean_cuda_buffer_size(b.get()), 0u);
  EXPECT_EQ(torchlean_cuda_buffer_size_with_token(b.get(), 1), 0u);
  EXPECT_EQ(format_of(b.get()), format.get());
  EXPECT_TRUE(values_of(b.get()).empty());
  Io fa = take_io(torchlean_cuda_buffer_to_float_array_io(b.get()));
  ASSERT_TRUE(fa.ok);
  EXPECT_EQ(lean_sarray_size(fa.value.get()), 0u);
  // Finalisation: the wrapper goes, the payload counters stay, the format is dropped once.
  b.reset();
  const Counters d = Counters::read();
  EXPECT_EQ(d.free_count, c.free_count);
  EXPECT_EQ(d.live_bytes, c.live_bytes);
  EXPECT_EQ(d.wrapper_finalize - c.wrapper_finalize, 1u);
  EXPECT_EQ(rc(format.get()), 1);
}

TEST_F(Encoded, FormatIsRetainedOncePerBufferAndDroppedOnce) {
  Obj format = make_format(8, 7);
  EXPECT_EQ(rc(format.get()), 1);
  Obj a = upload(words(3, 2, 1), format.get(), 2);
  EXPECT_EQ(rc(format.get()), 2);
  {
    // format? hands out one more reference, dropped with the option.
    lean_object* opt = torchlean_cuda_buffer_format(a.get());
    ASSERT_FALSE(lean_is_scalar(opt));
    EXPECT_EQ(lean_ptr_tag(opt), 1u);
    EXPECT_EQ(lean_ctor_get(opt, 0), format.get());
    EXPECT_EQ(rc(format.get()), 3);
    lean_dec(opt);
    EXPECT_EQ(rc(format.get()), 2);
  }
  Obj z(torchlean_cuda_buffer_zeros_like(a.get(), 4));
  Obj c(torchlean_cuda_buffer_copy(a.get()));
  Obj d(torchlean_cuda_buffer_duplicate(a.get()));
  Obj s(torchlean_cuda_buffer_slice1d(a.get(), 3, 1, 2));
  Obj k(torchlean_cuda_buffer_concat1d(a.get(), a.get(), 3, 3));
  // a, z, c, the two halves of d, s and k: seven buffers, seven references, plus the test's own.
  EXPECT_EQ(rc(format.get()), 8);
  d.reset();
  EXPECT_EQ(rc(format.get()), 6);
  z.reset();
  c.reset();
  s.reset();
  k.reset();
  EXPECT_EQ(rc(format.get()), 2);
  a.reset();
  EXPECT_EQ(rc(format.get()), 1);
  // A native buffer carries no format.
  Obj native(torchlean_cuda_buffer_zeros(2, 0));
  EXPECT_EQ(torchlean_cuda_buffer_format(native.get()), lean_box(0));
}

TEST_F(Encoded, ReleaseThenReleasesTheScratchAndKeepsTheEncodedBuffer) {
  // Lean's copyAndRelease of an encoded buffer: releaseThen b (copy b).
  Obj format = make_format(5, 10);
  const Bytes in = words(9, 3, 4);
  Obj b = upload(in, format.get(), 3);
  Obj copy(torchlean_cuda_buffer_copy(b.get()));
  const Counters a = Counters::read();
  Obj kept(torchlean_cuda_buffer_release_then(b.get(), copy.get()));
  EXPECT_EQ(kept.get(), copy.get());
  const Counters c = Counters::read();
  EXPECT_EQ(a.live_bytes - c.live_bytes, 27u);
  EXPECT_EQ(c.free_count - a.free_count, 1u);
  EXPECT_EQ(torchlean_cuda_buffer_size(b.get()), 0u);
  EXPECT_EQ(download(kept.get()), in);
  EXPECT_EQ(rc(format.get()), 3);
}

// ---------------------------------------------------------------------------------------------
// zeros_like, copy, duplicate

TEST_F(Encoded, ZerosLikeCopyAndDuplicateAtEveryWidth) {
  Obj format = make_format(5, 10);
  Obj other = make_format(8, 23);
  for (uint64_t width : kWidths) {
    for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{13}, uint64_t{4099}}) {
      const Bytes in = words(n, width, width * 31 + n);
      Obj b = upload(in, format.get(), width);
      for (uint32_t count : {0u, 1u, 5u, 1000u}) {
        const Counters a = Counters::read();
        Obj z(torchlean_cuda_buffer_zeros_like(b.get(), count));
        EXPECT_EQ(Counters::read().live_bytes - a.live_bytes, count * width);
        EXPECT_EQ(torchlean_cuda_buffer_size(z.get()), count);
        EXPECT_EQ(torchlean_cuda_buffer_dtype(z.get()), 2u);
        EXPECT_EQ(format_of(z.get()), format.get());
        EXPECT_EQ(download(z.get()), Bytes(count * width, 0)) << "width " << width;
      }
      Obj c(torchlean_cuda_buffer_copy(b.get()));
      EXPECT_NE(c.get(), b.get());
      EXPECT_EQ(format_of(c.get()), format.get());
      EXPECT_EQ(download(c.get()), in);
      Obj d(torchlean_cuda_buffer_duplicate(b.get()));
      ASSERT_EQ(lean_ptr_tag(d.get()), 0u);
      lean_object* first = lean_ctor_get(d.get(), 0);
      lean_object* second = lean_ctor_get(d.get(), 1);
      EXPECT_NE(first, second);
      EXPECT_NE(first, b.get());
      EXPECT_EQ(format_of(first), format.get());
      EXPECT_EQ(format_of(second), format.get());
      EXPECT_EQ(download(first), in);
      EXPECT_EQ(download(second), in);
      // The copies are independent: releasing one leaves the others.
      if (n != 0) {
        EXPECT_EQ(torchlean_cuda_buffer_release(first), 1u);
        EXPECT_EQ(download(second), in);
        EXPECT_EQ(download(c.get()), in);
        EXPECT_EQ(download(b.get()), in);
      }
    }
  }
  // A buffer keeps the format object it was made with.
  Obj b = upload(words(2, 4, 9), other.get(), 4);
  Obj c(torchlean_cuda_buffer_copy(b.get()));
  EXPECT_EQ(format_of(c.get()), other.get());
}

TEST_F(Encoded, CopiesCountOnePayloadEach) {
  Obj format = make_format(5, 10);
  Obj b = upload(words(10, 16, 2), format.get(), 16);
  const Counters a = Counters::read();
  Obj d(torchlean_cuda_buffer_duplicate(b.get()));
  const Counters c = Counters::read();
  EXPECT_EQ(c.alloc_count - a.alloc_count, 2u);
  EXPECT_EQ(c.live_bytes - a.live_bytes, 320u);
  EXPECT_EQ(c.wrapper_alloc - a.wrapper_alloc, 2u);
  d.reset();
  const Counters e = Counters::read();
  EXPECT_EQ(e.live_bytes, a.live_bytes);
  EXPECT_EQ(e.free_count - a.free_count, 2u);
  EXPECT_EQ(e.wrapper_finalize - a.wrapper_finalize, 2u);
}

TEST_F(EncodedDeathTest, CopiesOfReleasedEncodedBuffersPanic) {
  auto released = [] {
    lean_object* f = lean_alloc_ctor(0, 0, 0);
    Io io = take_io(torchlean_cuda_buffer_of_encoded_io(byte_array({1, 2, 3, 4}).get(), f, 2));
    lean_inc(io.value.get());
    torchlean_cuda_buffer_release(io.value.get());
    return io.value.get();
  };
  EXPECT_EXIT(torchlean_cuda_buffer_zeros_like(released(), 2), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: zeros_like: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_copy(released()), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: copy: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_duplicate(released()), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: duplicate: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_dtype(released()), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: dtype: released handle");
  EXPECT_EXIT(torchlean_cuda_buffer_copy_and_release(released()), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: copy_and_release: ");
}

TEST_F(EncodedDeathTest, ZerosLikeByteSizeIsChecked) {
  // An empty encoded buffer may carry any width; zeros_like multiplies it out.
  auto wide = [](uint64_t width) {
    lean_object* f = lean_alloc_ctor(0, 0, 0);
    Io io = take_io(torchlean_cuda_buffer_of_encoded_io(byte_array({}).get(), f, width));
    lean_inc(io.value.get());
    return io.value.get();
  };
  EXPECT_EXIT(torchlean_cuda_buffer_zeros_like(wide(uint64_t{1} << 63), 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: zeros_like: size product overflows 64 bits \\(2 x "
              "9223372036854775808\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_zeros_like(wide(uint64_t{1} << 61), 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: zeros_like: 4 encoded words of 2305843009213693952 bytes "
              "exceed the addressable size");
}

TEST_F(Encoded, EmptyWideBuffersNeedNoPayload) {
  Obj format = make_format(5, 10);
  Obj wide = upload({}, format.get(), uint64_t{1} << 63);
  Obj z(torchlean_cuda_buffer_zeros_like(wide.get(), 0));
  EXPECT_EQ(torchlean_cuda_buffer_size(z.get()), 0u);
  EXPECT_TRUE(download(z.get()).empty());
}

// ---------------------------------------------------------------------------------------------
// concat1d / slice1d (SPEC-ops 8, encoded variants)

TEST_F(Encoded, ConcatJoinsTheBytesAtEveryWidth) {
  Obj fa = make_format(5, 10);
  Obj fb = make_format(8, 23);
  for (uint64_t width : kWidths) {
    for (auto [n, m] : {std::pair<uint32_t, uint32_t>{0, 0},
                        {0, 5},
                        {3, 0},
                        {1, 1},
                        {7, 13},
                        {1000, 333},
                        {65537, 3}}) {
      const Bytes a = words(n, width, width + n);
      const Bytes b = words(m, width, 3 * width + m);
      Obj x = upload(a, fa.get(), width);
      Obj y = upload(b, fb.get(), width);
      const Counters before = Counters::read();
      Obj out(torchlean_cuda_buffer_concat1d(x.get(), y.get(), n, m));
      const Counters after = Counters::read();
      EXPECT_EQ(after.live_bytes - before.live_bytes, uint64_t{n + m} * width);
      EXPECT_EQ(torchlean_cuda_buffer_size(out.get()), n + m);
      EXPECT_EQ(torchlean_cuda_buffer_dtype(out.get()), 2u);
      EXPECT_EQ(format_of(out.get()), fa.get()) << "the result keeps the first operand's format";
      Bytes expected = a;
      expected.insert(expected.end(), b.begin(), b.end());
      EXPECT_EQ(download(out.get()), expected) << "width " << width << ", n " << n << ", m " << m;
    }
  }
}

TEST_F(Encoded, ConcatOfABufferWithItself) {
  Obj format = make_format(5, 10);
  const Bytes a = words(5, 3, 8);
  Obj x = upload(a, format.get(), 3);
  Obj out(torchlean_cuda_buffer_concat1d(x.get(), x.get(), 5, 5));
  Bytes expected = a;
  expected.insert(expected.end(), a.begin(), a.end());
  EXPECT_EQ(download(out.get()), expected);
}

TEST_F(Encoded, SliceTakesWordRangesAtEveryWidth) {
  Obj format = make_format(5, 10);
  for (uint64_t width : kWidths) {
    const uint32_t n = 1031;
    const Bytes in = words(n, width, width * 5);
    Obj x = upload(in, format.get(), width);
    for (auto [start, len] : {std::pair<uint32_t, uint32_t>{0, 0},
                              {0, n},
                              {n, 0},
                              {1, 1},
                              {3, 17},
                              {1, n - 1},
                              {n - 1, 1},
                              {500, 300}}) {
      Obj out(torchlean_cuda_buffer_slice1d(x.get(), n, start, len));
      EXPECT_NE(out.get(), x.get());
      EXPECT_EQ(torchlean_cuda_buffer_size(out.get()), len);
      EXPECT_EQ(format_of(out.get()), format.get());
      const Bytes expected(in.begin() + start * width, in.begin() + (start + len) * width);
      EXPECT_EQ(download(out.get()), expected)
          << "width " << width << ", start " << start << ", len " << len;
    }
  }
  // Slicing an empty buffer.
  Obj e = upload({}, format.get(), 4);
  Obj out(torchlean_cuda_buffer_slice1d(e.get(), 0, 0, 0));
  EXPECT_EQ(torchlean_cuda_buffer_size(out.get()), 0u);
}

// An encoded buffer of n zero words of `width` bytes that nothing releases: an operand for the
// statements of death tests, which end their process.
lean_object* held_encoded(uint64_t n, uint64_t width) {
  lean_object* f = lean_alloc_ctor(0, 0, 0);
  Io io =
      take_io(torchlean_cuda_buffer_of_encoded_io(byte_array(Bytes(n * width)).get(), f, width));
  lean_inc(io.value.get());
  return io.value.get();
}

// The panic of a numerical op given an encoded operand, as a death test's pattern.
std::string refused_by(const char* op) {
  return std::string("INTERNAL PANIC: tlrt: ") + op +
         ": expected a real \\(float32/float64\\) buffer, got an encoded buffer";
}

TEST_F(EncodedDeathTest, ConcatOperandsMustBeCompatible) {
  auto enc = held_encoded;
  auto released = [&](uint64_t n, uint64_t width) {
    lean_object* b = enc(n, width);
    torchlean_cuda_buffer_release(b);
    return b;
  };
  const std::string head = "INTERNAL PANIC: tlrt: concat1d: concat: incompatible encoded buffers ";
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(enc(2, 2), enc(3, 4), 2, 3),
              ::testing::ExitedWithCode(1), head + "\\(word widths differ: 2 vs 4\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(enc(2, 2), enc(3, 2), 3, 3),
              ::testing::ExitedWithCode(1),
              head + "\\(size\\(a\\) = 2, size\\(b\\) = 3 but n = 3, m = 3\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(enc(2, 2), enc(3, 2), 2, 2),
              ::testing::ExitedWithCode(1), head + "\\(size\\(a\\) = 2, size\\(b\\) = 3");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(released(2, 2), enc(3, 2), 2, 3),
              ::testing::ExitedWithCode(1), head + "\\(a has been released\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(enc(2, 2), released(3, 2), 2, 3),
              ::testing::ExitedWithCode(1), head + "\\(b has been released\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(enc(2, 8), torchlean_cuda_buffer_zeros(3, 1), 2, 3),
              ::testing::ExitedWithCode(1),
              head + "\\(a is an encoded buffer of width 8, b is a float64 buffer\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_concat1d(torchlean_cuda_buffer_zeros(2, 0), enc(3, 4), 2, 3),
              ::testing::ExitedWithCode(1),
              head + "\\(a is a float32 buffer, b is an encoded buffer of width 4\\)");
}

TEST_F(EncodedDeathTest, SliceExtentMustBeValid) {
  auto enc = [](uint64_t n) { return held_encoded(n, 3); };
  const std::string head =
      "INTERNAL PANIC: tlrt: slice1d: slice: invalid encoded buffer or extent ";
  EXPECT_EXIT(torchlean_cuda_buffer_slice1d(enc(4), 5, 0, 1), ::testing::ExitedWithCode(1),
              head + "\\(size\\(x\\) = 4, n = 5, start = 0, len = 1\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_slice1d(enc(4), 4, 5, 0), ::testing::ExitedWithCode(1),
              head + "\\(size\\(x\\) = 4, n = 4, start = 5, len = 0\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_slice1d(enc(4), 4, 2, 3), ::testing::ExitedWithCode(1),
              head + "\\(size\\(x\\) = 4, n = 4, start = 2, len = 3\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_slice1d(enc(4), 4, 1, 4294967295u),
              ::testing::ExitedWithCode(1), head + "\\(size\\(x\\) = 4, n = 4, start = 1");
  EXPECT_EXIT(
      {
        lean_object* b = enc(4);
        torchlean_cuda_buffer_release(b);
        torchlean_cuda_buffer_slice1d(b, 4, 0, 1);
      },
      ::testing::ExitedWithCode(1), head + "\\(x has been released\\)");
}

// ---------------------------------------------------------------------------------------------
// Checkpoint transfers, host arrays and numerical ops refuse encoded buffers

TEST_F(Encoded, CheckpointSymbolsRefuseEncodedBuffers) {
  Obj format = make_format(5, 10);
  Obj b = upload(words(4, 4, 1), format.get(), 4);
  const Counters before = Counters::read();
  for (uint8_t code : {0, 1}) {
    expect_io_error(torchlean_cuda_buffer_to_bytes_io(b.get(), code),
                    "tlrt: to_bytes_io: encoded buffers have no checkpoint word format (4 words of "
                    "4 bytes; use to_encoded_io)");
  }
  expect_io_error(torchlean_cuda_buffer_to_bytes_io(b.get(), 2),
                  "unsupported buffer dtype (code 2, encoded");
  expect_io_error(torchlean_cuda_buffer_of_bytes_io(byte_array({0, 0, 0, 0}).get(), 2, 2),
                  "unsupported buffer dtype (code 2, encoded");
  expect_io_error(torchlean_cuda_buffer_of_bytes_io(byte_array({0, 0, 0, 0}).get(), 0, 2),
                  "unsupported buffer dtype (code 2, encoded");
  expect_io_error(torchlean_cuda_buffer_to_float32_bytes_io(b.get()), "encoded");
  expect_io_error(torchlean_cuda_buffer_to_float_array_io(b.get()),
                  "expected a real (float32/float64) buffer, got an encoded buffer");
  EXPECT_TRUE(same_counters(before, Counters::read()));
  // An empty or released encoded buffer has no words: empty arrays, as for any released buffer.
  Obj empty = upload({}, format.get(), 4);
  Obj released = upload(words(3, 4, 2), format.get(), 4);
  ASSERT_EQ(torchlean_cuda_buffer_release(released.get()), 1u);
  for (lean_object* b0 : {empty.get(), released.get()}) {
    Io fa = take_io(torchlean_cuda_buffer_to_float_array_io(b0));
    ASSERT_TRUE(fa.ok) << fa.message;
    EXPECT_EQ(lean_sarray_size(fa.value.get()), 0u);
    for (uint8_t code : {0, 1}) {
      Io by = take_io(torchlean_cuda_buffer_to_bytes_io(b0, code));
      ASSERT_TRUE(by.ok) << by.message;
      EXPECT_EQ(lean_sarray_size(by.value.get()), 0u);
    }
    expect_io_error(torchlean_cuda_buffer_to_bytes_io(b0, 2),
                    "unsupported buffer dtype (code 2, encoded");
  }
}

TEST_F(EncodedDeathTest, NumericalOpsRefuseEncodedOperands) {
  auto enc = held_encoded;
  auto expect_refused = refused_by;
  EXPECT_EXIT(torchlean_cuda_buffer_to_float_array(enc(4, 4)), ::testing::ExitedWithCode(1),
              expect_refused("to_float_array"));
  EXPECT_EXIT(torchlean_cuda_buffer_add(enc(4, 4), enc(4, 4)), ::testing::ExitedWithCode(1),
              expect_refused("add"));
  EXPECT_EXIT(torchlean_cuda_buffer_add(torchlean_cuda_buffer_zeros(4, 0), enc(4, 4)),
              ::testing::ExitedWithCode(1), expect_refused("add"));
  EXPECT_EXIT(torchlean_cuda_buffer_scale(enc(4, 8), 2.0), ::testing::ExitedWithCode(1),
              expect_refused("scale"));
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum(enc(4, 4)), ::testing::ExitedWithCode(1),
              expect_refused("reduce_sum"));
  EXPECT_EXIT(torchlean_cuda_buffer_copy_and_release(enc(4, 4)), ::testing::ExitedWithCode(1),
              expect_refused("copy_and_release"));
  EXPECT_EXIT(torchlean_cuda_buffer_bmm_with_transpose(enc(4, 4), torchlean_cuda_buffer_zeros(4, 0),
                                                       1, 2, 2, 2, 0, 0),
              ::testing::ExitedWithCode(1), expect_refused("bmm"));
  EXPECT_EXIT(torchlean_cuda_buffer_broadcast_vec_to_cols(enc(3, 2), 3, 2),
              ::testing::ExitedWithCode(1), expect_refused("broadcast_vec_to_cols"));
}

// Every numerical op of the axis-reduction, shape, gather/scatter, softmax, layer-norm, scan and
// FFT families refuses an encoded buffer in any buffer operand (SPEC-ops 1), whatever the sizes:
// the operand is checked before the op's geometry, and the message names the op.
TEST_F(EncodedDeathTest, FamilyOpsRefuseEncodedOperandsWithTheirName) {
  auto enc = [](uint64_t n) { return held_encoded(n, 4); };
  auto real = [](uint64_t n) { return torchlean_cuda_buffer_zeros(n, 0); };
  auto refused = refused_by;
  const auto died = ::testing::ExitedWithCode(1);
  Obj d23 = nats({2, 3}), d3 = nats({3}), map = nats({0, 1});
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_by_row(enc(6), 2, 3), died,
              refused("reduce_sum_by_row"));
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_max_by_row(enc(6), 2, 3), died,
              refused("reduce_max_by_row"));
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_max_by_column(enc(6), 2, 3), died,
              refused("reduce_max_by_column"));
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_sum_axis(enc(6), d23.get(), 0), died,
              refused("reduce_sum_axis"));
  EXPECT_EXIT(torchlean_cuda_buffer_reduce_from_broadcast(enc(6), d3.get(), d23.get(), map.get()),
              died, refused("reduce_from_broadcast"));
  EXPECT_EXIT(torchlean_cuda_buffer_broadcast_to(enc(3), d3.get(), d23.get(), map.get()), died,
              refused("broadcast_to"));
  EXPECT_EXIT(torchlean_cuda_buffer_swap_adjacent_at_depth(enc(6), d23.get(), 0), died,
              refused("swap_adjacent_at_depth"));
  EXPECT_EXIT(torchlean_cuda_buffer_gather_rows(enc(6), 2, 3, nats({1}).get(), 1), died,
              refused("gather_rows"));
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add_rows(real(6), enc(3), 2, 3, nats({1}).get(), 1),
              died, refused("scatter_add_rows"));
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add(real(3), enc(1), 3, nats({1}).get(), 1), died,
              refused("scatter_add"));
  EXPECT_EXIT(torchlean_cuda_buffer_gather_at(real(3), 3, enc(2), 2), died, refused("gather_at"));
  EXPECT_EXIT(torchlean_cuda_buffer_scatter_add_at(3, real(2), enc(2), 2), died,
              refused("scatter_add_at"));
  EXPECT_EXIT(torchlean_cuda_buffer_hard_masked_softmax_by_row(real(6), enc(6), 2, 3), died,
              refused("hard_masked_softmax_by_row"));
  EXPECT_EXIT(torchlean_cuda_buffer_layer_norm_fwd(real(6), enc(3), real(3), 2, 3, 1.0 / 3, 1e-5),
              died, refused("layer_norm_fwd"));
  EXPECT_EXIT(
      torchlean_cuda_buffer_layer_norm_bwd(real(6), real(6), enc(2), real(3), 2, 3, 3.0, 1.0 / 3),
      died, refused("layer_norm_bwd"));
  EXPECT_EXIT(
      torchlean_cuda_buffer_selective_scan_diag_fwd(real(3), real(3), enc(6), real(3), 2, 3), died,
      refused("selective_scan_diag_fwd"));
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_bwd(real(3), real(3), real(6), real(3),
                                                            real(6), enc(6), 2, 3),
              died, refused("selective_scan_diag_bwd"));
  EXPECT_EXIT(
      torchlean_cuda_buffer_selective_scan_diag_var_fwd(enc(6), real(6), real(6), real(3), 2, 3),
      died, refused("selective_scan_diag_var_fwd"));
  EXPECT_EXIT(torchlean_cuda_buffer_selective_scan_diag_var_bwd(real(6), real(6), real(6), enc(3),
                                                                real(6), real(6), 2, 3),
              died, refused("selective_scan_diag_var_bwd"));
  EXPECT_EXIT(torchlean_cuda_buffer_rfft1d_packed(enc(8), 2, 4), died, refused("rfft1d_packed"));
  EXPECT_EXIT(torchlean_cuda_buffer_irfft1d_packed(enc(12), 2, 4), died, refused("irfft1d_packed"));
  EXPECT_EXIT(torchlean_cuda_buffer_irfft1d_packed_unnormalized(enc(12), 2, 4), died,
              refused("irfft1d_packed_unnormalized"));
  EXPECT_EXIT(torchlean_cuda_buffer_spectral_conv1d_rfft_fwd(real(8), enc(4), real(4), 8, 1, 2),
              died, refused("spectral_conv1d_rfft_fwd"));
  EXPECT_EXIT(
      torchlean_cuda_buffer_spectral_conv1d_rfft_bwd(real(8), real(4), real(4), enc(8), 8, 1, 2),
      died, refused("spectral_conv1d_rfft_bwd"));
}

// softmax_io is IO: an encoded input is an IO error (otherError) with the same refusal.
TEST_F(Encoded, SoftmaxIoRefusesAnEncodedInputAsAnIoError) {
  const Obj format = make_format(8, 23);
  Io made =
      take_io(torchlean_cuda_buffer_of_encoded_io(byte_array(Bytes(24)).get(), format.get(), 4));
  ASSERT_TRUE(made.ok);
  Io io = take_io(torchlean_cuda_buffer_softmax_io(made.value.get(), nats({2, 3}).get(), 1));
  EXPECT_FALSE(io.ok);
  EXPECT_EQ(io.error_tag, kOtherError);
  EXPECT_EQ(io.message,
            "tlrt: softmax_io: expected a real (float32/float64) buffer, got an encoded buffer");
}

}  // namespace
