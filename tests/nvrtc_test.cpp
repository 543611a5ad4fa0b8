// Generated-kernel runs (SPEC-runtime 10) through the Lean boundary, on the backend TLRT_DEVICE
// selects: the reference backend really runs the sources on the host (system C++ compiler), the
// cuda pass through NVRTC. Sources are written in the Lean generator's dialects (10.7): the fixed
// entry text, checked reads, native round-to-nearest intrinsics, bit-pattern literals, guarded
// index division and remainder, counted loops, branches; the configured dialect through
// kernel_run_bytes format 2 and kernel_run_encoded (encoded buffers in and out).
// Failure paths: formats and widths, input extents, released / float64 / encoded inputs, sources
// over 16 MiB, compile errors with the log, out-of-range reads with the exact message and no
// buffer or counter change, compile at count = 0, eviction after 17 distinct sources.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "abi/boundary.h"
#include "abi_test_support.h"
#include "nvrtc_sources.h"
#include "tests/support/same_bits.h"

using namespace abi_test;

namespace {

using namespace nvrtc_sources;

// ---- Lean objects
// ---------------------------------------------------------------------------------

Obj lean_text(const std::string& s) {
  return Obj(lean_mk_string_from_bytes(s.data(), s.size()));
}

template <class T>
std::vector<T> from_bytes(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
  return v;
}

Io run_buffer(const std::string& source, const std::vector<const Obj*>& inputs, uint64_t count) {
  Obj text = lean_text(source);
  Obj arr = array_of(inputs);
  return take_io(torchlean_kernel_run_buffer(text.get(), arr.get(), count));
}

Io run_bytes(const std::string& source, uint32_t format, uint64_t width,
             const std::vector<std::vector<uint8_t>>& inputs, uint64_t count) {
  std::vector<Obj> arrays;
  for (const auto& b : inputs) arrays.push_back(byte_array(b));
  std::vector<const Obj*> items;
  for (const Obj& o : arrays) items.push_back(&o);
  Obj text = lean_text(source);
  Obj arr = array_of(items);
  return take_io(torchlean_kernel_run_bytes(text.get(), format, width, arr.get(), count));
}

Io run_host(const std::string& source, uint32_t format,
            const std::vector<std::vector<double>>& inputs, uint64_t count) {
  std::vector<Obj> arrays;
  for (const auto& v : inputs) arrays.push_back(float_array(v));
  std::vector<const Obj*> items;
  for (const Obj& o : arrays) items.push_back(&o);
  Obj text = lean_text(source);
  Obj arr = array_of(items);
  return take_io(torchlean_kernel_run_host(text.get(), format, arr.get(), count));
}

uint32_t bits32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
std::vector<float> sample_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, 1e-45f, -1e-45f, 3.4e38f, 1.0f};
  for (size_t i = 0; i < n; ++i) {
    if (i % 17 < 8) {
      v[i] = specials[i % 17];
    } else {
      uint32_t u = rng();
      std::memcpy(&v[i], &u, 4);
      if (std::isnan(v[i])) v[i] = 0.5f;  // NaN payloads are free through arithmetic
    }
  }
  return v;
}

class Nvrtc : public BackendSuite {};

bool equal_counters(const Counters& a, const Counters& b) {
  return a.live_bytes == b.live_bytes && a.peak_bytes == b.peak_bytes &&
         a.alloc_count == b.alloc_count && a.free_count == b.free_count &&
         a.wrapper_live == b.wrapper_live && a.wrapper_peak == b.wrapper_peak &&
         a.wrapper_alloc == b.wrapper_alloc && a.wrapper_finalize == b.wrapper_finalize;
}

}  // namespace

// ---- native dialect through kernel_run_buffer
// ------------------------------------------------------

TEST_F(Nvrtc, AddMulMatchesStagedRoundingBitForBit) {
  const size_t n = 5000;  // more than one block and a partial last block
  const std::vector<float> a = sample_floats(n, 1), b = sample_floats(n, 2);
  const float c = 0.3f;
  Obj A = make_buffer(a), B = make_buffer(b);
  Io io = run_buffer(add_mul_source(c), {&A, &B}, n);
  ASSERT_TRUE(io.ok) << io.message;
  EXPECT_EQ(torchlean_cuda_buffer_size(io.value.get()), n);
  const std::vector<float> out = read_values<float>(io.value.get());
  ASSERT_EQ(out.size(), n);
  for (size_t i = 0; i < n; ++i) {
    volatile float sum = a[i] + b[i];
    volatile float want = sum * c;
    ASSERT_TRUE(test_bits::same_bits_or_nan(out[i], want)) << i << ": " << out[i] << " vs " << want;
  }
}

TEST_F(Nvrtc, ResultIsAFreshBufferWithItsPayloadCounted) {
  const std::vector<float> a = {1, 2, 3, 4};
  Obj A = make_buffer(a), B = make_buffer(a);
  const Counters before = Counters::read();
  Io io = run_buffer(add_mul_source(2.0f), {&A, &B}, 4);
  ASSERT_TRUE(io.ok) << io.message;
  const Counters after = Counters::read();
  EXPECT_NE(io.value.get(), A.get());
  EXPECT_EQ(after.alloc_count, before.alloc_count + 1);
  EXPECT_EQ(after.live_bytes, before.live_bytes + 16);
  EXPECT_EQ(after.wrapper_alloc, before.wrapper_alloc + 1);
  EXPECT_EQ(read_values<float>(io.value.get()), (std::vector<float>{4, 8, 12, 16}));
}

TEST_F(Nvrtc, GuardedDivisionAndRemainderOnIndices) {
  // v1 = index / 3 (guarded), v2 = index % 0 (guarded: index), v3 = index % 5 (guarded).
  const std::string src = signature("float", 2) +
                          "unsigned long long v1 = 3ULL == 0ULL ? 0ULL : (index / 3ULL);\n"
                          "unsigned long long v2 = 0ULL == 0ULL ? index : (index % 0ULL);\n"
                          "unsigned long long v3 = 5ULL == 0ULL ? index : (index % 5ULL);\n"
                          "unsigned long long v4 = 0ULL == 0ULL ? 0ULL : (index / 0ULL);\n" +
                          read("float", 0, "v1", "v5") + read("float", 1, "v3", "v6") +
                          "float v7 = __fsub_rn(v5, v6);\n"
                          "float v8 = __fdiv_rn(v7, " +
                          f32_literal(3.0f) +
                          ");\n"
                          "float v9 = v2 < 10ULL ? v8 : __fadd_rn(v8, " +
                          f32_literal(1.0f) + ");\n" + "float v10 = v4 == 0ULL ? v9 : v5;\n" +
                          finish("v10");
  const size_t n = 30;
  std::vector<float> a(10), b(5);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.1f * static_cast<float>(i) + 1.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = -0.7f * static_cast<float>(i);
  Obj A = make_buffer(a), B = make_buffer(b);
  Io io = run_buffer(src, {&A, &B}, n);
  ASSERT_TRUE(io.ok) << io.message;
  const std::vector<float> out = read_values<float>(io.value.get());
  ASSERT_EQ(out.size(), n);
  for (size_t i = 0; i < n; ++i) {
    volatile float d = a[i / 3] - b[i % 5];
    volatile float q = d / 3.0f;
    volatile float r = i < 10 ? q : q + 1.0f;
    EXPECT_EQ(bits32(out[i]), bits32(r)) << i;
  }
}

TEST_F(Nvrtc, CountedLoopAccumulatesInOrder) {
  // out[i] = ((0 + x[4i]) + x[4i+1]) + ... in the loop's order.
  const std::string src = signature("float", 1) + "float v1 = " + f32_literal(0.0f) + ";\n" +
                          "for (unsigned long long v2 = 0ULL; v2 < 4ULL; ++v2) {\n"
                          "unsigned long long v3 = index * 4ULL + v2;\n" +
                          read("float", 0, "v3", "v4") + "v1 = __fadd_rn(v1, v4);\n}\n" +
                          finish("v1");
  const size_t n = 777;
  const std::vector<float> x = sample_floats(4 * n, 7);
  Obj X = make_buffer(x);
  Io io = run_buffer(src, {&X}, n);
  ASSERT_TRUE(io.ok) << io.message;
  const std::vector<float> out = read_values<float>(io.value.get());
  ASSERT_EQ(out.size(), n);
  for (size_t i = 0; i < n; ++i) {
    volatile float s = 0.0f;
    for (size_t j = 0; j < 4; ++j) s = s + x[4 * i + j];
    ASSERT_TRUE(test_bits::same_bits_or_nan(out[i], s)) << i;
  }
}

TEST_F(Nvrtc, BranchesComparisonsAndNegation) {
  // v3 = a < b ? a : -b through an if/else whose result is declared without an initialiser.
  const std::string src =
      signature("float", 2) + read("float", 0, "index", "v1") + read("float", 1, "index", "v2") +
      "bool v4 = v1 < v2;\nbool v5 = v1 == v2;\nbool v6 = v1 <= v2;\n"
      "float v3;\nif (v4) {\nv3 = v1;\n} else {\nif (v5) {\nv3 = " +
      f32_literal(7.0f) + ";\n} else {\nv3 = (-v2);\n}\n}\n" +
      "float v7 = v6 ? v3 : __fmul_rn(v3, " + f32_literal(2.0f) + ");\n" + finish("v7");
  const std::vector<float> a = {1, 5, -0.0f, NAN, 3, 2, INFINITY};
  const std::vector<float> b = {2, 4, 0.0f, 1, NAN, 2, -INFINITY};
  Obj A = make_buffer(a), B = make_buffer(b);
  Io io = run_buffer(src, {&A, &B}, a.size());
  ASSERT_TRUE(io.ok) << io.message;
  const std::vector<float> out = read_values<float>(io.value.get());
  ASSERT_EQ(out.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    float v3 = a[i] < b[i] ? a[i] : (a[i] == b[i] ? 7.0f : -b[i]);
    float want = a[i] <= b[i] ? v3 : v3 * 2.0f;
    EXPECT_TRUE(test_bits::same_bits_or_nan(out[i], want)) << i << ": " << out[i] << " vs " << want;
  }
}

TEST_F(Nvrtc, NoInputsAndIndexOnly) {
  // A kernel without inputs: out[i] = i % 2 == 0 ? 1.5 : -2.25.
  const std::string src = signature("float", 0) +
                          "unsigned long long v1 = 2ULL == 0ULL ? index : (index % 2ULL);\n" +
                          "float v2 = v1 == 0ULL ? " + f32_literal(1.5f) + " : " +
                          f32_literal(-2.25f) + ";\n" + finish("v2");
  Io io = run_buffer(src, {}, 513);
  ASSERT_TRUE(io.ok) << io.message;
  const std::vector<float> out = read_values<float>(io.value.get());
  ASSERT_EQ(out.size(), 513u);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], i % 2 == 0 ? 1.5f : -2.25f) << i;
}

// ---- kernel_run_bytes and kernel_run_host
// ----------------------------------------------------------

TEST_F(Nvrtc, BytesFloat64WithDoubleIntrinsics) {
  const std::string src =
      signature("double", 2) + read("double", 0, "index", "v1") + read("double", 1, "index", "v2") +
      "double v3 = __dmul_rn(v1, v2);\ndouble v4 = __dadd_rn(v3, " + f64_literal(0.1) +
      ");\ndouble v5 = __ddiv_rn(v4, v2);\n" + "double v6 = __dsub_rn(v5, v1);\n" + finish("v6");
  std::vector<double> a(300), b(300);
  std::mt19937_64 rng(3);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = std::ldexp(static_cast<double>(rng() >> 11), -40) - 4000.0;
    b[i] = std::ldexp(static_cast<double>(rng() >> 11), -50) + 1e-300;
  }
  b[5] = 0.0;
  b[6] = -0.0;
  Io io = run_bytes(src, 1, 8, {bytes_from(a), bytes_from(b)}, a.size());
  ASSERT_TRUE(io.ok) << io.message;
  const std::vector<double> out = from_bytes<double>(bytes_of(io.value.get()));
  ASSERT_EQ(out.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    volatile double p = a[i] * b[i];
    volatile double s = p + 0.1;
    volatile double q = s / b[i];
    volatile double r = q - a[i];
    EXPECT_TRUE(test_bits::same_bits_or_nan(out[i], static_cast<double>(r))) << i;
  }
}

TEST_F(Nvrtc, BytesFloat32CopyKeepsEveryBit) {
  // A copy through the kernel keeps signalling NaN payloads and signed zeros.
  const std::string src = signature("float", 1) + read("float", 0, "index", "v1") + finish("v1");
  const std::vector<uint32_t> words = {0x7F800001u, 0xFFBFFFFFu, 0x7FC12345u, 0x80000000u,
                                       0x00000001u, 0x3F800000u, 0xFF800000u};
  Io io = run_bytes(src, 0, 4, {bytes_from(words)}, words.size());
  ASSERT_TRUE(io.ok) << io.message;
  EXPECT_EQ(from_bytes<uint32_t>(bytes_of(io.value.get())), words);
}

TEST_F(Nvrtc, BytesEmptyOutputAndEmptyInputs) {
  const std::string src = signature("float", 1) + read("float", 0, "index", "v1") + finish("v1");
  Io io = run_bytes(src, 0, 4, {{}}, 0);
  ASSERT_TRUE(io.ok) << io.message;
  EXPECT_TRUE(bytes_of(io.value.get()).empty());
}

TEST_F(Nvrtc, HostLegacyFormats) {
  const std::string f32 = add_mul_source(0.5f);
  Io io = run_host(f32, 0, {{1.0, 2.0, 0.1}, {3.0, -2.0, 0.2}}, 3);
  ASSERT_TRUE(io.ok) << io.message;
  const std::vector<double> out = doubles_of(io.value.get());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], 2.0);
  EXPECT_EQ(out[1], 0.0);
  volatile float s = 0.1f + 0.2f;
  volatile float m = s * 0.5f;
  EXPECT_EQ(out[2], static_cast<double>(m));

  const std::string f64 = signature("double", 1) + read("double", 0, "index", "v1") +
                          "double v2 = __dmul_rn(v1, " + f64_literal(3.0) + ");\n" + finish("v2");
  Io io64 = run_host(f64, 1, {{0.1, -1.5}}, 2);
  ASSERT_TRUE(io64.ok) << io64.message;
  const std::vector<double> out64 = doubles_of(io64.value.get());
  ASSERT_EQ(out64.size(), 2u);
  volatile double p = 0.1 * 3.0;
  EXPECT_EQ(out64[0], p);
  EXPECT_EQ(out64[1], -4.5);

  Io bad = run_host(f64, 2, {{1.0}}, 1);
  ASSERT_FALSE(bad.ok);
  EXPECT_NE(bad.message.find("kernel: invalid encoded scalar layout"), std::string::npos)
      << bad.message;
}

// ---- failures
// --------------------------------------------------------------------------------------

TEST_F(Nvrtc, OutOfRangeReadFailsWithTheExactMessageAndNoOutput) {
  const std::vector<float> a = {1, 2, 3, 4, 5};
  const std::vector<float> b = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  Obj A = make_buffer(a), B = make_buffer(b);
  const Counters before = Counters::read();
  Io io = run_buffer(add_mul_source(1.0f), {&B, &A}, 10);
  ASSERT_FALSE(io.ok);
  EXPECT_EQ(io.error_tag, kOtherError);
  // The first failing thread wins; every failing thread reads input 1 at an index in [5, 10).
  EXPECT_NE(io.message.find("kernel: input 1 index "), std::string::npos) << io.message;
  EXPECT_NE(io.message.find(" is outside size 5"), std::string::npos) << io.message;
  EXPECT_TRUE(equal_counters(before, Counters::read()));

  // One failing index: the record names it exactly.
  const std::string src = signature("float", 1) +
                          "unsigned long long v1 = index == 3ULL ? 1000ULL : index;\n" +
                          read("float", 0, "v1", "v2") + finish("v2");
  Io one = run_buffer(src, {&A}, 5);
  ASSERT_FALSE(one.ok);
  EXPECT_NE(one.message.find("kernel: input 0 index 1000 is outside size 5"), std::string::npos)
      << one.message;
  EXPECT_TRUE(equal_counters(before, Counters::read()));

  Io bytes = run_bytes(src, 0, 4, {bytes_from(a)}, 5);
  ASSERT_FALSE(bytes.ok);
  EXPECT_NE(bytes.message.find("kernel: input 0 index 1000 is outside size 5"), std::string::npos)
      << bytes.message;
  Io host = run_host(src, 0, {{1, 2, 3, 4, 5}}, 5);
  ASSERT_FALSE(host.ok);
  EXPECT_NE(host.message.find("kernel: input 0 index 1000 is outside size 5"), std::string::npos)
      << host.message;
  EXPECT_TRUE(equal_counters(before, Counters::read()));
}

TEST_F(Nvrtc, CompileErrorReportsTheLog) {
  const std::string src =
      signature("float", 0) + "float v1 = tlrt_undeclared_name;\n" + finish("v1");
  const Counters before = Counters::read();
  Io io = run_buffer(src, {}, 4);
  ASSERT_FALSE(io.ok);
  EXPECT_EQ(io.error_tag, kOtherError);
  EXPECT_NE(io.message.find("compilation failed"), std::string::npos) << io.message;
  EXPECT_NE(io.message.find("tlrt_undeclared_name"), std::string::npos) << io.message;
  EXPECT_TRUE(equal_counters(before, Counters::read()));
}

TEST_F(Nvrtc, CompilesEvenWhenCountIsZero) {
  const std::string bad =
      signature("float", 0) + "float v1 = tlrt_missing_at_zero;\n" + finish("v1");
  Io io = run_buffer(bad, {}, 0);
  ASSERT_FALSE(io.ok);
  EXPECT_NE(io.message.find("tlrt_missing_at_zero"), std::string::npos) << io.message;
  Io bytes = run_bytes(bad, 0, 4, {}, 0);
  ASSERT_FALSE(bytes.ok);
  EXPECT_NE(bytes.message.find("compilation failed"), std::string::npos) << bytes.message;

  const Counters before = Counters::read();
  const std::string constant = signature("float", 0) + finish(f32_literal(1.0f));
  Io good = run_buffer(constant, {}, 0);
  ASSERT_TRUE(good.ok) << good.message;
  EXPECT_EQ(torchlean_cuda_buffer_size(good.value.get()), 0u);
  const Counters after = Counters::read();
  EXPECT_EQ(after.alloc_count, before.alloc_count);  // an empty result has no payload
  EXPECT_EQ(after.wrapper_alloc, before.wrapper_alloc + 1);
}

TEST_F(Nvrtc, SourceOver16MiBIsRejectedBeforeCompiling) {
  std::string src = add_mul_source(1.0f);
  src += "//";
  src.resize((size_t{16} << 20) + 1, 'x');
  src += "\n";
  Io io = run_buffer(src, {}, 1);
  ASSERT_FALSE(io.ok);
  EXPECT_NE(io.message.find("kernel: generated source exceeds 16 MiB"), std::string::npos)
      << io.message.substr(0, 200);
  Io bytes = run_bytes(src, 0, 4, {}, 1);
  ASSERT_FALSE(bytes.ok);
  EXPECT_NE(bytes.message.find("exceeds 16 MiB"), std::string::npos);
  Io host = run_host(src, 0, {}, 1);
  ASSERT_FALSE(host.ok);
  EXPECT_NE(host.message.find("exceeds 16 MiB"), std::string::npos);
  // Exactly 16 MiB is allowed (and compiles: the tail is a comment).
  // (The host wrapper passes as many inputs as the call has, as Lean's generator does.)
  std::string limit = signature("float", 0) + finish(f32_literal(1.0f)) + "//";
  limit.resize(size_t{16} << 20, 'y');
  Io ok = run_buffer(limit, {}, 0);
  EXPECT_TRUE(ok.ok) << ok.message.substr(0, 300);
}

// Lean strings are read as NUL-terminated text (SPEC-runtime 1; TorchLean compiles
// lean_string_cstr): what follows a NUL is neither compiled nor counted against the 16 MiB limit,
// on either backend.
TEST_F(Nvrtc, SourceEndsAtItsFirstNul) {
  const std::string kernel = signature("float", 0) + finish(f32_literal(2.5f));
  std::string tail = std::string(1, '\0') + "this is not C++ ;";
  Io io = run_buffer(kernel + tail, {}, 3);
  ASSERT_TRUE(io.ok) << io.message;
  EXPECT_EQ(read_values<float>(io.value.get()), std::vector<float>(3, 2.5f));
  tail.resize((size_t{16} << 20) + 16, 'z');
  Io long_tail = run_buffer(kernel + tail, {}, 1);
  ASSERT_TRUE(long_tail.ok) << long_tail.message.substr(0, 300);
}

TEST_F(Nvrtc, BytesFormatsWidthsAndExtents) {
  const std::string src = signature("float", 1) + read("float", 0, "index", "v1") + finish("v1");
  struct Case {
    uint32_t format;
    uint64_t width;
    size_t input_bytes;
    const char* message;
  };
  const Case cases[] = {
      {3, 4, 4, "kernel: invalid encoded scalar layout"},
      {2, 0, 4, "kernel: invalid encoded scalar layout"},
      {0, 0, 4, "kernel: invalid encoded scalar layout"},
      {0, 8, 8, "kernel: native scalar width mismatch"},
      {1, 4, 8, "kernel: native scalar width mismatch"},
      {0, 4, 6, "kernel: invalid input byte extent"},
      {1, 8, 12, "kernel: invalid input byte extent"},
      {2, 3, 7, "kernel: invalid input byte extent"},
  };
  for (const Case& c : cases) {
    Io io = run_bytes(src, c.format, c.width, {std::vector<uint8_t>(c.input_bytes)}, 1);
    ASSERT_FALSE(io.ok) << c.format << "/" << c.width;
    EXPECT_EQ(io.error_tag, kOtherError);
    EXPECT_NE(io.message.find(c.message), std::string::npos) << io.message;
    EXPECT_NE(io.message.find("kernel_run_bytes"), std::string::npos) << io.message;
  }
  Io huge = run_bytes(src, 2, 1024, {}, uint64_t{1} << 60);
  ASSERT_FALSE(huge.ok);
  EXPECT_NE(huge.message.find("kernel: host byte size overflow"), std::string::npos)
      << huge.message;
}

TEST_F(Nvrtc, BufferInputsMustBeLiveFloat32) {
  const std::string src = signature("float", 1) + read("float", 0, "index", "v1") + finish("v1");
  Obj released(torchlean_cuda_buffer_zeros(4, 0));
  torchlean_cuda_buffer_release(released.get());
  Io r = run_buffer(src, {&released}, 1);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.message.find("released"), std::string::npos) << r.message;

  Obj f64(torchlean_cuda_buffer_zeros(4, 1));
  Io d = run_buffer(src, {&f64}, 1);
  ASSERT_FALSE(d.ok);
  EXPECT_NE(d.message.find("kernel: input device, dtype or layout mismatch"), std::string::npos)
      << d.message;
  EXPECT_NE(d.message.find("float64"), std::string::npos) << d.message;

  torchlean_cuda_buffer* record = torchlean_cuda_buffer_alloc(4);
  lean_object* format = lean_alloc_ctor(0, 2, 0);
  lean_ctor_set(format, 0, lean_box(5));
  lean_ctor_set(format, 1, lean_box(10));
  record->format = format;
  record->width = 2;
  Obj encoded(torchlean_cuda_buffer_box(record));
  const Counters before = Counters::read();
  Io e = run_buffer(src, {&encoded}, 1);
  ASSERT_FALSE(e.ok);
  EXPECT_NE(e.message.find("encoded"), std::string::npos) << e.message;
  EXPECT_TRUE(equal_counters(before, Counters::read()));
}

TEST_F(Nvrtc, SeventeenDistinctSourcesEvictAndRecompile) {
  // 17 distinct sources fill the 16 entries and evict the first; running it again recompiles and
  // still gives its own result.
  const std::vector<float> a = {1, 2, 3};
  Obj A = make_buffer(a), B = make_buffer(a);
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < 17; ++k) {
      const float c = 1.0f + static_cast<float>(k);
      Io io = run_buffer(add_mul_source(c), {&A, &B}, 3);
      ASSERT_TRUE(io.ok) << io.message;
      EXPECT_EQ(read_values<float>(io.value.get()), (std::vector<float>{2 * c, 4 * c, 6 * c}))
          << "round " << round << " source " << k;
    }
  }
}

// On the reference backend a missing host compiler fails as TorchLean's build without CUDA does;
// the CUDA backend compiles through NVRTC and needs none.
TEST_F(Nvrtc, MissingHostCompilerFailsOnlyOnTheReferenceBackend) {
  const char* path = std::getenv("PATH");
  const std::string saved_path = path != nullptr ? path : "";
  const char* cxx = std::getenv("TLRT_HOST_CXX");
  const std::string saved_cxx = cxx != nullptr ? cxx : "";
  setenv("PATH", "/nonexistent-tlrt-path", 1);
  unsetenv("TLRT_HOST_CXX");
  Io io = run_buffer(add_mul_source(9.0f), {}, 0);
  Io bytes = run_bytes(add_mul_source(9.0f), 0, 4, {}, 0);
  Io host = run_host(add_mul_source(9.0f), 0, {}, 0);
  setenv("PATH", saved_path.c_str(), 1);
  if (cxx != nullptr) setenv("TLRT_HOST_CXX", saved_cxx.c_str(), 1);
  for (const Io* r : {&io, &bytes, &host}) {
    if (cuda_requested()) {
      EXPECT_TRUE(r->ok) << r->message;
      continue;
    }
    ASSERT_FALSE(r->ok);
    EXPECT_EQ(r->error_tag, kUserError);
    EXPECT_NE(r->message.find("host C++ compiler"), std::string::npos) << r->message;
  }
}

// ---- configured dialect (kernel_run_bytes format 2)
// ------------------------------------------------

std::string configured_source(int e, int f, long long bias, int enc, size_t inputs,
                              const std::string& body, const std::string& result) {
  return configured_head(e, f, bias, enc) + signature("scalar", inputs) + body + finish(result);
}

TEST_F(Nvrtc, ConfiguredBinary16AddMulAndBranch) {
  // binary16: 1.0 = 0x3C00, 2.0 = 0x4000, 3.0 = 0x4200, 0.5 = 0x3800, 6.0 = 0x4600.
  const std::string body = read("scalar", 0, "index", "v1") + read("scalar", 1, "index", "v2") +
                           "scalar v3 = tl_add(v1, v2);\n"
                           "scalar v4 = tl_mul(v3, scalar{{0, 64}});\n"
                           "scalar v5;\nif (v1 < v2) {\nv5 = v4;\n} else {\nv5 = (-v4);\n}\n";
  const std::string src = configured_source(5, 10, 15, 0, 2, body, "v5");
  const std::vector<uint16_t> a = {0x3C00, 0x4000, 0x3800};
  const std::vector<uint16_t> b = {0x4000, 0x3C00, 0x3800};
  Io io = run_bytes(src, 2, 2, {bytes_from(a), bytes_from(b)}, 3);
  ASSERT_TRUE(io.ok) << io.message;
  // (1+2)*2 = 6; -(2+1)*2 = -6; -(0.5+0.5)*2 = -2.
  EXPECT_EQ(from_bytes<uint16_t>(bytes_of(io.value.get())),
            (std::vector<uint16_t>{0x4600, 0xC600, 0xC000}));
}

TEST_F(Nvrtc, ConfiguredWideWordsAndOddWidth) {
  // E 8, F 15 (3-byte words, IEEE encoding): 1.0 has exponent field 127 -> bits 0x3F8000.
  const std::string body = read("scalar", 0, "index", "v1") + "scalar v2 = tl_add(v1, v1);\n";
  const std::string src = configured_source(8, 15, 127, 0, 1, body, "v2");
  const std::vector<uint8_t> one = {0x00, 0x80, 0x3F};
  Io io = run_bytes(src, 2, 3, {one}, 1);
  ASSERT_TRUE(io.ok) << io.message;
  // 2.0: exponent field 128 -> 0x400000.
  EXPECT_EQ(bytes_of(io.value.get()), (std::vector<uint8_t>{0x00, 0x00, 0x40}));
  // A 7-byte input is not a whole number of 3-byte words.
  Io bad = run_bytes(src, 2, 3, {std::vector<uint8_t>(7)}, 1);
  ASSERT_FALSE(bad.ok);
  EXPECT_NE(bad.message.find("kernel: invalid input byte extent"), std::string::npos);
}

// ---- configured dialect on encoded buffers (kernel_run_encoded)
// ------------------------------------

namespace {

// A stand-in for a FloatFormat: any constructor object (the runtime never reads its fields).
Obj make_format() {
  lean_object* f = lean_alloc_ctor(0, 2, 0);
  lean_ctor_set(f, 0, lean_box(5));
  lean_ctor_set(f, 1, lean_box(10));
  return Obj(f);
}

Obj encoded(const std::vector<uint8_t>& bytes, const Obj& format, uint64_t width) {
  Io io =
      take_io(torchlean_cuda_buffer_of_encoded_io(byte_array(bytes).get(), format.get(), width));
  EXPECT_TRUE(io.ok) << io.message;
  return std::move(io.value);
}

std::vector<uint8_t> encoded_bytes(lean_object* buffer) {
  Io io = take_io(torchlean_cuda_buffer_to_encoded_io(buffer));
  EXPECT_TRUE(io.ok) << io.message;
  return io.ok ? bytes_of(io.value.get()) : std::vector<uint8_t>{};
}

lean_object* run_encoded(const std::string& source, const std::vector<const Obj*>& inputs,
                         const Obj& format, uint64_t width, uint64_t count) {
  Obj text = lean_text(source);
  Obj arr = array_of(inputs);
  return torchlean_kernel_run_encoded(text.get(), arr.get(), format.get(), width, count);
}

// binary16 (a + b) * 2 with a branch on a < b, as ConfiguredBinary16AddMulAndBranch.
std::string binary16_add_mul() {
  const std::string body = read("scalar", 0, "index", "v1") + read("scalar", 1, "index", "v2") +
                           "scalar v3 = tl_add(v1, v2);\n"
                           "scalar v4 = tl_mul(v3, scalar{{0, 64}});\n"
                           "scalar v5;\nif (v1 < v2) {\nv5 = v4;\n} else {\nv5 = (-v4);\n}\n";
  return configured_source(5, 10, 15, 0, 2, body, "v5");
}

}  // namespace

TEST_F(Nvrtc, EncodedRunGivesAFreshEncodedBufferRetainingTheFormat) {
  Obj format = make_format();
  Obj a = encoded(bytes_from(std::vector<uint16_t>{0x3C00, 0x4000, 0x3800}), format, 2);
  Obj b = encoded(bytes_from(std::vector<uint16_t>{0x4000, 0x3C00, 0x3800}), format, 2);
  const std::string src = binary16_add_mul();
  Obj r(run_encoded(src, {&a, &b}, format, 2, 3));
  EXPECT_EQ(torchlean_cuda_buffer_size(r.get()), 3u);
  EXPECT_EQ(from_bytes<uint16_t>(encoded_bytes(r.get())),
            (std::vector<uint16_t>{0x4600, 0xC600, 0xC000}));
  Obj some(torchlean_cuda_buffer_format(r.get()));
  ASSERT_FALSE(lean_is_scalar(some.get()));
  EXPECT_EQ(lean_ctor_get(some.get(), 0), format.get());
  // One fresh buffer of 3 two-byte words, never an input; the inputs are unchanged.
  expect_fresh_result("kernel_run_encoded",
                      [&] {
                        return run_encoded(src, {&a, &b}, format, 2, 3);
                      },
                      fresh_buffer(6), {a.get(), b.get()});
  EXPECT_EQ(from_bytes<uint16_t>(encoded_bytes(a.get())),
            (std::vector<uint16_t>{0x3C00, 0x4000, 0x3800}));
  // count = 0: an empty encoded buffer with the format, no payload.
  Obj empty(run_encoded(src, {&a, &b}, format, 2, 0));
  EXPECT_EQ(torchlean_cuda_buffer_size(empty.get()), 0u);
  Obj some_empty(torchlean_cuda_buffer_format(empty.get()));
  EXPECT_FALSE(lean_is_scalar(some_empty.get()));
  EXPECT_TRUE(encoded_bytes(empty.get()).empty());
}

// The format is retained once by the result and dropped once when the result goes.
TEST_F(Nvrtc, EncodedRunRetainsTheFormatOnce) {
  Obj format = make_format();
  Obj a = encoded(bytes_from(std::vector<uint16_t>{0x3C00}), format, 2);
  Obj b = encoded(bytes_from(std::vector<uint16_t>{0x3C00}), format, 2);
  const int before = format.get()->m_rc;
  Obj r(run_encoded(binary16_add_mul(), {&a, &b}, format, 2, 1));
  EXPECT_EQ(format.get()->m_rc, before + 1);
  r.reset();
  EXPECT_EQ(format.get()->m_rc, before);
}

using NvrtcDeathTest = Nvrtc;

// Pure: an out-of-range read, an input of another width, a native or released input panic.
TEST_F(NvrtcDeathTest, EncodedRunFailuresPanic) {
  Obj format = make_format();
  Obj a = encoded(bytes_from(std::vector<uint16_t>{0x3C00, 0x4000}), format, 2);
  Obj b = encoded(bytes_from(std::vector<uint16_t>{0x4000}), format, 2);
  Obj wide = encoded(std::vector<uint8_t>(8), format, 4);
  Obj native(torchlean_cuda_buffer_zeros(2, 0));
  const std::string src = binary16_add_mul();
  EXPECT_EXIT(run_encoded(src, {&a, &b}, format, 2, 2), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*kernel_run_encoded.*kernel: input 1 index 1 is outside size 1");
  EXPECT_EXIT(run_encoded(src, {&a, &wide}, format, 2, 1), ::testing::ExitedWithCode(1),
              "kernel_run_encoded.*encoded buffer: incompatible input storage \\(input 1");
  EXPECT_EXIT(
      run_encoded(src, {&native, &a}, format, 2, 1), ::testing::ExitedWithCode(1),
      "kernel_run_encoded.*encoded buffer: incompatible input storage \\(input 0 is float32");
  EXPECT_EXIT(
      {
        torchlean_cuda_buffer_release(b.get());
        run_encoded(src, {&a, &b}, format, 2, 1);
      },
      ::testing::ExitedWithCode(1), "incompatible input storage \\(input 1 is released");
  // An encoded result holds at most 2^32 - 1 words, refused before any work.
  EXPECT_EXIT(run_encoded(src, {&a, &a}, format, 2, uint64_t{1} << 32),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: kernel_run_encoded: encoded buffer: scalar count exceeds the "
              "tape ABI \\(count = 4294967296 words");
}
