// The runtime half of the ABI through the Lean boundary, on the backend TLRT_DEVICE selects
// (ctest runs this binary once with cpu and once with cuda). Covers ownership counters on every
// path, use after release (SPEC-runtime 2.3), each bad input and its failure kind (section 3),
// settings, memory fraction and accounting (4.4-4.7, 11), the random stream's test vectors (7.5)
// and checkpoint round trips (8).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "abi_test_support.h"
#include "kernels/random/splitmix.h"
#include "runtime/transfer.h"

using namespace abi_test;

namespace {

constexpr uint8_t kF32 = 0;
constexpr uint8_t kF64 = 1;

class Abi : public BackendSuite {};

using AbiDeathTest = Abi;

float as_f32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double as_f64(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

std::vector<uint8_t> le_words32(const std::vector<uint32_t>& words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words) {
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<uint8_t>(w >> (8 * k)));
  }
  return out;
}

std::vector<uint8_t> le_words64(const std::vector<uint64_t>& words) {
  std::vector<uint8_t> out;
  for (uint64_t w : words) {
    for (int k = 0; k < 8; ++k) out.push_back(static_cast<uint8_t>(w >> (8 * k)));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Status, version, devices

TEST_F(Abi, StatusVersionAndDeviceKind) {
  EXPECT_EQ(torchlean_cuda_runtime_status(0), 1u);
  EXPECT_EQ(torchlean_libtorch_device_kind(0), cuda_requested() ? 1u : 0u);
  Obj v(torchlean_libtorch_version(0));
  const std::string text = lean_string_cstr(v.get());
  EXPECT_EQ(text.rfind("tlrt ", 0), 0u) << text;
  if (cuda_requested()) {
    EXPECT_NE(text.find("CUDA runtime"), std::string::npos) << text;
  }
  EXPECT_GE(torchlean_libtorch_device_count(0), 1u);
  EXPECT_EQ(torchlean_libtorch_get_device(0), 0u);
  EXPECT_EQ(torchlean_runtime_collect_allocator(0), 1u);
}

TEST_F(Abi, DeviceInformationByIndex) {
  Io name = take_io(torchlean_libtorch_device_name(0));
  ASSERT_TRUE(name.ok) << name.message;
  EXPECT_GT(std::strlen(lean_string_cstr(name.value.get())), 0u);
  Io sms = take_io(torchlean_libtorch_device_sm_count(0));
  ASSERT_TRUE(sms.ok);
  EXPECT_GT(lean_unbox_uint32(sms.value.get()), 0u);
  Io total = take_io(torchlean_libtorch_device_total_bytes(0));
  ASSERT_TRUE(total.ok);
  EXPECT_GT(lean_unbox_uint64(total.value.get()), 0u);
  for (auto* query :
       {torchlean_libtorch_device_capability, torchlean_libtorch_device_clock_khz,
        torchlean_libtorch_device_mem_clock_khz, torchlean_libtorch_device_mem_bus_width}) {
    Io r = take_io(query(0));
    ASSERT_TRUE(r.ok) << r.message;
    if (cuda_requested()) {
      EXPECT_GT(lean_unbox_uint32(r.value.get()), 0u);
    }
  }
  Io drv = take_io(torchlean_libtorch_driver_version(0));
  Io rt = take_io(torchlean_libtorch_runtime_version(0));
  ASSERT_TRUE(drv.ok && rt.ok);
  if (cuda_requested()) {
    EXPECT_GE(lean_unbox_uint32(drv.value.get()), 12000u);
    EXPECT_GE(lean_unbox_uint32(rt.value.get()), 12000u);
  }
  const uint32_t past = torchlean_libtorch_device_count(0);
  Io bad = take_io(torchlean_libtorch_device_name(past));
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.error_tag, kOtherError);
  EXPECT_NE(bad.message.find("outside"), std::string::npos) << bad.message;
}

// ---------------------------------------------------------------------------------------------
// Ownership counters (SPEC-runtime 2.5)

TEST_F(Abi, ConstructorMovesPayloadAndWrapperCountersOnce) {
  const Counters c0 = Counters::read();
  {
    Obj b(torchlean_cuda_buffer_zeros(1000, kF32));
    const Counters c1 = Counters::read();
    EXPECT_EQ(c1.live_bytes - c0.live_bytes, 4000u);
    EXPECT_EQ(c1.alloc_count - c0.alloc_count, 1u);
    EXPECT_EQ(c1.wrapper_live - c0.wrapper_live, 1u);
    EXPECT_EQ(c1.wrapper_alloc - c0.wrapper_alloc, 1u);
    EXPECT_GE(c1.peak_bytes, c1.live_bytes);
    EXPECT_GE(c1.wrapper_peak, c1.wrapper_live);
  }
  const Counters c2 = Counters::read();
  EXPECT_EQ(c2.live_bytes, c0.live_bytes);
  EXPECT_EQ(c2.free_count - c0.free_count, 1u);
  EXPECT_EQ(c2.wrapper_live, c0.wrapper_live);
  EXPECT_EQ(c2.wrapper_finalize - c0.wrapper_finalize, 1u);
}

TEST_F(Abi, EveryConstructorCountsItsPayloadBytes) {
  struct Case {
    const char* name;
    lean_object* (*make)();
    uint64_t bytes;
  };
  static const std::vector<double> host = {1.0, 2.0, 3.0};
  const Case cases[] = {
      {"zeros f64", [] { return torchlean_cuda_buffer_zeros(10, kF64); }, 80},
      {"full", [] { return torchlean_cuda_buffer_full(7, 2.5, kF32); }, 28},
      {"rand_uniform", [] { return torchlean_cuda_buffer_rand_uniform(9, 1, kF64); }, 72},
      {"rand_normal", [] { return torchlean_cuda_buffer_rand_normal(5, 0, 1, 3, kF32); }, 20},
      {"bernoulli", [] { return torchlean_cuda_buffer_bernoulli_mask(6, 0.5, 4, kF32); }, 24},
      {"of_float_array",
       [] { return torchlean_cuda_buffer_of_float_array(float_array(host).get(), kF64); }, 24},
  };
  for (const Case& c : cases) {
    const Counters a = Counters::read();
    Obj b(c.make());
    const Counters m = Counters::read();
    EXPECT_EQ(m.live_bytes - a.live_bytes, c.bytes) << c.name;
    EXPECT_EQ(m.alloc_count - a.alloc_count, 1u) << c.name;
    EXPECT_EQ(m.wrapper_alloc - a.wrapper_alloc, 1u) << c.name;
    b.reset();
    const Counters z = Counters::read();
    EXPECT_EQ(z.live_bytes, a.live_bytes) << c.name;
    EXPECT_EQ(z.free_count - a.free_count, 1u) << c.name;
    EXPECT_EQ(z.wrapper_finalize - a.wrapper_finalize, 1u) << c.name;
  }
}

TEST_F(Abi, IoConstructorsCountLikePureOnes) {
  const Counters a = Counters::read();
  Io z = take_io(torchlean_cuda_buffer_zeros_io(16, kF32));
  Io f = take_io(torchlean_cuda_buffer_full_io(16, 1.0, kF64));
  Io u = take_io(torchlean_cuda_buffer_rand_uniform_io(16, 9, kF32));
  Io m = take_io(torchlean_cuda_buffer_bernoulli_mask_io(16, 0.25, 9, kF64));
  Io o = take_io(torchlean_cuda_buffer_of_float_array_io(float_array({1, 2}).get(), kF32));
  ASSERT_TRUE(z.ok && f.ok && u.ok && m.ok && o.ok);
  const Counters b = Counters::read();
  EXPECT_EQ(b.live_bytes - a.live_bytes, 64u + 128u + 64u + 128u + 8u);
  EXPECT_EQ(b.alloc_count - a.alloc_count, 5u);
  EXPECT_EQ(b.wrapper_live - a.wrapper_live, 5u);
}

TEST_F(Abi, EmptyBuffersMoveOnlyWrapperCounters) {
  const Counters a = Counters::read();
  {
    Obj z(torchlean_cuda_buffer_zeros(0, kF32));
    Obj o(torchlean_cuda_buffer_of_float_array(float_array({}).get(), kF64));
    Io b = take_io(torchlean_cuda_buffer_of_bytes_io(byte_array({}).get(), kF32, kF32));
    ASSERT_TRUE(b.ok);
    EXPECT_EQ(torchlean_cuda_buffer_size(z.get()), 0u);
    EXPECT_EQ(torchlean_cuda_buffer_dtype(o.get()), kF64);
    EXPECT_TRUE(values_of(z.get()).empty());
    const Counters m = Counters::read();
    EXPECT_EQ(m.alloc_count, a.alloc_count);
    EXPECT_EQ(m.live_bytes, a.live_bytes);
    EXPECT_EQ(m.wrapper_live - a.wrapper_live, 3u);
    EXPECT_EQ(torchlean_cuda_buffer_release(z.get()), 0u);  // empty: nothing retired
  }
  const Counters z = Counters::read();
  EXPECT_EQ(z.free_count, a.free_count);
  EXPECT_EQ(z.wrapper_finalize - a.wrapper_finalize, 3u);
}

TEST_F(Abi, CopiesCountFreshPayloads) {
  Obj src(torchlean_cuda_buffer_full(32, 3.0, kF32));
  const Counters a = Counters::read();
  Obj copy(torchlean_cuda_buffer_copy(src.get()));
  Obj pair(torchlean_cuda_buffer_duplicate(src.get()));
  Obj zl(torchlean_cuda_buffer_zeros_like(src.get(), 5));
  const Counters b = Counters::read();
  EXPECT_EQ(b.live_bytes - a.live_bytes, 128u * 3 + 20u);
  EXPECT_EQ(b.alloc_count - a.alloc_count, 4u);
  EXPECT_EQ(b.wrapper_live - a.wrapper_live, 4u);
  ASSERT_EQ(lean_ptr_tag(pair.get()), 0u);
  lean_object* first = lean_ctor_get(pair.get(), 0);
  lean_object* second = lean_ctor_get(pair.get(), 1);
  EXPECT_NE(first, second);
  EXPECT_NE(torchlean_cuda_buffer_unbox(first), torchlean_cuda_buffer_unbox(second));
  EXPECT_EQ(values_of(first), std::vector<double>(32, 3.0));
  EXPECT_EQ(values_of(second), std::vector<double>(32, 3.0));
  EXPECT_EQ(values_of(copy.get()), std::vector<double>(32, 3.0));
  EXPECT_EQ(values_of(zl.get()), std::vector<double>(5, 0.0));
  EXPECT_EQ(torchlean_cuda_buffer_dtype(zl.get()), kF32);
  // Releasing one copy leaves the others intact.
  EXPECT_EQ(torchlean_cuda_buffer_release(first), 1u);
  EXPECT_EQ(values_of(second), std::vector<double>(32, 3.0));
  EXPECT_EQ(values_of(src.get()), std::vector<double>(32, 3.0));
}

TEST_F(Abi, CopyAndReleaseCountsNewPayloadThenRetiresOld) {
  Obj src(torchlean_cuda_buffer_full(8, -1.5, kF64));
  const Counters a = Counters::read();
  Obj out(torchlean_cuda_buffer_copy_and_release(src.get()));
  const Counters b = Counters::read();
  EXPECT_EQ(b.alloc_count - a.alloc_count, 1u);
  EXPECT_EQ(b.free_count - a.free_count, 1u);
  EXPECT_EQ(b.live_bytes, a.live_bytes);
  EXPECT_GE(b.peak_bytes, a.live_bytes + 64u);  // new payload counted before the old one retired
  EXPECT_EQ(b.wrapper_live - a.wrapper_live, 1u);
  EXPECT_EQ(torchlean_cuda_buffer_size(src.get()), 0u);
  EXPECT_EQ(values_of(out.get()), std::vector<double>(8, -1.5));
  EXPECT_EQ(torchlean_cuda_buffer_dtype(out.get()), kF64);
}

TEST_F(Abi, ReleaseRetiresOnceAndKeepsTheWrapper) {
  Obj b(torchlean_cuda_buffer_zeros(8, kF32));
  const Counters a = Counters::read();
  EXPECT_EQ(torchlean_cuda_buffer_release(b.get()), 1u);
  const Counters r = Counters::read();
  EXPECT_EQ(a.live_bytes - r.live_bytes, 32u);
  EXPECT_EQ(r.free_count - a.free_count, 1u);
  EXPECT_EQ(r.wrapper_live, a.wrapper_live);
  EXPECT_EQ(torchlean_cuda_buffer_size(b.get()), 0u);
  EXPECT_EQ(torchlean_cuda_buffer_release(b.get()), 0u);
  EXPECT_EQ(torchlean_cuda_buffer_release_with_token(b.get(), 77), 0u);
  const Counters r2 = Counters::read();
  EXPECT_EQ(r2.free_count, r.free_count);
  b.reset();  // the finaliser counts only the wrapper retirement
  const Counters f = Counters::read();
  EXPECT_EQ(f.free_count, r.free_count);
  EXPECT_EQ(f.wrapper_finalize - r.wrapper_finalize, 1u);
}

TEST_F(Abi, ReleaseWithTokenAndSizeWithToken) {
  Obj b(torchlean_cuda_buffer_zeros(8, kF32));
  EXPECT_EQ(torchlean_cuda_buffer_size_with_token(b.get(), 123), 8u);
  EXPECT_EQ(torchlean_cuda_buffer_release_with_token(b.get(), 5), 1u);
  EXPECT_EQ(torchlean_cuda_buffer_size_with_token(b.get(), 124), 0u);
}

TEST_F(Abi, ReleaseThenReturnsKeepWithOneMoreReference) {
  Obj scratch(torchlean_cuda_buffer_zeros(4, kF32));
  Obj keep(torchlean_cuda_buffer_full(4, 2.0, kF32));
  const int rc = keep.get()->m_rc;
  Obj same(torchlean_cuda_buffer_release_then(scratch.get(), keep.get()));
  EXPECT_EQ(same.get(), keep.get());
  EXPECT_EQ(keep.get()->m_rc, rc + 1);
  EXPECT_EQ(torchlean_cuda_buffer_size(scratch.get()), 0u);
  EXPECT_EQ(values_of(same.get()), std::vector<double>(4, 2.0));
}

TEST_F(Abi, UnwrappedRecordsTouchOnlyPayloadCounters) {
  const Counters a = Counters::read();
  torchlean_cuda_buffer* rec = torchlean_cuda_buffer_alloc(16);
  ASSERT_NE(rec, nullptr);
  const Counters b = Counters::read();
  EXPECT_EQ(b.live_bytes - a.live_bytes, 64u);
  EXPECT_EQ(b.wrapper_alloc, a.wrapper_alloc);
  torchlean_cuda_buffer_drop_unboxed(rec);
  torchlean_cuda_buffer_drop_unboxed(nullptr);
  const Counters c = Counters::read();
  EXPECT_EQ(c.live_bytes, a.live_bytes);
  EXPECT_EQ(c.free_count - a.free_count, 1u);
  EXPECT_EQ(c.wrapper_finalize, a.wrapper_finalize);
  // Wrapping takes ownership: the finaliser retires it.
  Obj boxed(torchlean_cuda_buffer_box(torchlean_cuda_buffer_alloc(3)));
  EXPECT_EQ(torchlean_cuda_buffer_size(boxed.get()), 3u);
  EXPECT_EQ(torchlean_cuda_buffer_dtype(boxed.get()), kF32);
  EXPECT_EQ(torchlean_cuda_buffer_unbox(boxed.get()),
            static_cast<torchlean_cuda_buffer*>(lean_get_external_data(boxed.get())));
}

TEST_F(Abi, TransfersDoNotMoveCounters) {
  Obj b(torchlean_cuda_buffer_rand_uniform(64, 11, kF32));
  const Counters a = Counters::read();
  (void)values_of(b.get());
  Io bytes = take_io(torchlean_cuda_buffer_to_bytes_io(b.get(), kF64));
  ASSERT_TRUE(bytes.ok);
  const Counters c = Counters::read();
  EXPECT_EQ(std::memcmp(&a, &c, sizeof(Counters)), 0);
}

TEST_F(Abi, ManyShortLivedWrappersReturnToStartingCount) {
  const Counters a = Counters::read();
  for (int i = 0; i < 4096; ++i) {
    Obj x(torchlean_cuda_buffer_zeros(4, kF32));
    Obj y(torchlean_cuda_buffer_copy(x.get()));
    if (i % 3 == 0) torchlean_cuda_buffer_release(y.get());
  }
  const Counters b = Counters::read();
  EXPECT_EQ(b.wrapper_alloc - a.wrapper_alloc, 8192u);
  EXPECT_EQ(b.wrapper_finalize - a.wrapper_finalize, 8192u);
  EXPECT_EQ(b.wrapper_live, a.wrapper_live);
  EXPECT_EQ(b.live_bytes, a.live_bytes);
  EXPECT_EQ(b.alloc_count - a.alloc_count, b.free_count - a.free_count);
}

// ---------------------------------------------------------------------------------------------
// Use after release (SPEC-runtime 2.3)

TEST_F(Abi, ReleasedBufferQueriesAndTransfers) {
  Obj b(torchlean_cuda_buffer_full(6, 1.0, kF64));
  ASSERT_EQ(torchlean_cuda_buffer_release(b.get()), 1u);
  EXPECT_EQ(torchlean_cuda_buffer_size(b.get()), 0u);
  EXPECT_EQ(torchlean_cuda_buffer_format(b.get()), lean_box(0));
  EXPECT_TRUE(values_of(b.get()).empty());
  Io fa = take_io(torchlean_cuda_buffer_to_float_array_io(b.get()));
  ASSERT_TRUE(fa.ok);
  EXPECT_EQ(lean_sarray_size(fa.value.get()), 0u);
  Io by = take_io(torchlean_cuda_buffer_to_bytes_io(b.get(), kF64));
  ASSERT_TRUE(by.ok);
  EXPECT_EQ(lean_sarray_size(by.value.get()), 0u);
  Io enc = take_io(torchlean_cuda_buffer_to_encoded_io(b.get()));
  EXPECT_FALSE(enc.ok);
  EXPECT_EQ(enc.error_tag, kOtherError);
}

TEST_F(AbiDeathTest, ReleasedBufferPanicsInPureSymbols) {
  EXPECT_EXIT(torchlean_cuda_buffer_dtype(released_buffer(4)), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*released");
  EXPECT_EXIT(torchlean_cuda_buffer_zeros_like(released_buffer(4), 3), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*zeros_like.*released");
  EXPECT_EXIT(torchlean_cuda_buffer_copy(released_buffer(4)), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*copy.*released");
  EXPECT_EXIT(torchlean_cuda_buffer_duplicate(released_buffer(4)), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*duplicate.*released");
  EXPECT_EXIT(torchlean_cuda_buffer_copy_and_release(released_buffer(4)),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*copy_and_release.*released");
}

TEST_F(Abi, EmptyButNotReleasedBufferStillAnswersDtype) {
  Obj b(torchlean_cuda_buffer_zeros(0, kF64));
  EXPECT_EQ(torchlean_cuda_buffer_dtype(b.get()), kF64);
  Obj c(torchlean_cuda_buffer_copy(b.get()));
  EXPECT_EQ(torchlean_cuda_buffer_size(c.get()), 0u);
}

// ---------------------------------------------------------------------------------------------
// Bad inputs and their failure kinds (SPEC-runtime 3)

TEST_F(Abi, UnknownDtypeCodesAreIoErrors) {
  const Counters a = Counters::read();
  for (uint8_t code : {uint8_t{2}, uint8_t{3}, uint8_t{255}}) {
    for (lean_object* r :
         {torchlean_cuda_buffer_zeros_io(4, code), torchlean_cuda_buffer_full_io(4, 1.0, code),
          torchlean_cuda_buffer_rand_uniform_io(4, 1, code),
          torchlean_cuda_buffer_bernoulli_mask_io(4, 0.5, 1, code),
          torchlean_cuda_buffer_of_float_array_io(float_array({1}).get(), code),
          torchlean_cuda_buffer_of_bytes_io(byte_array({0, 0, 0, 0}).get(), code, kF32),
          torchlean_cuda_buffer_of_bytes_io(byte_array({0, 0, 0, 0}).get(), kF32, code)}) {
      Io io = take_io(r);
      EXPECT_FALSE(io.ok);
      EXPECT_EQ(io.error_tag, kOtherError) << io.message;
      EXPECT_EQ(io.os_code, 0u);
      EXPECT_NE(io.message.find("dtype"), std::string::npos) << io.message;
    }
  }
  Obj b(torchlean_cuda_buffer_zeros(2, kF32));
  const Counters mid = Counters::read();
  for (uint8_t code : {uint8_t{2}, uint8_t{9}}) {
    Io io = take_io(torchlean_cuda_buffer_to_bytes_io(b.get(), code));
    EXPECT_FALSE(io.ok);
    EXPECT_EQ(io.error_tag, kOtherError);
  }
  EXPECT_EQ(mid.alloc_count - a.alloc_count, 1u);  // only b itself was counted
  const Counters c = Counters::read();
  EXPECT_EQ(c.alloc_count, mid.alloc_count);
  EXPECT_EQ(c.wrapper_alloc, mid.wrapper_alloc);
}

TEST_F(AbiDeathTest, UnknownDtypeCodesPanicInPureConstructors) {
  EXPECT_EXIT(torchlean_cuda_buffer_zeros(4, 2), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*zeros.*unsupported buffer dtype");
  EXPECT_EXIT(torchlean_cuda_buffer_full(4, 1.0, 7), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*unsupported buffer dtype");
  EXPECT_EXIT(torchlean_cuda_buffer_rand_normal(4, 0, 1, 1, 3), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*rand_normal.*dtype");
  EXPECT_EXIT(torchlean_cuda_buffer_of_float_array(float_array({1}).get(), 2),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*of_float_array.*dtype");
}

TEST_F(AbiDeathTest, NonBufferArgumentsPanic) {
  EXPECT_EXIT(torchlean_cuda_buffer_size(lean_box(3)), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*not a buffer");
  EXPECT_EXIT(torchlean_cuda_buffer_copy(float_array({1}).get()), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*not a buffer");
  EXPECT_EXIT(
      {
        lean_external_class* other = lean_register_external_class([](void*) {}, nullptr);
        torchlean_cuda_buffer_dtype(lean_alloc_external(other, nullptr));
      },
      ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*not a tensor buffer");
  EXPECT_EXIT(torchlean_cuda_buffer_alloc(SIZE_MAX), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*alloc.*INT64_MAX");
  EXPECT_EXIT(torchlean_cuda_buffer_fail(lean_mk_string("configured arithmetic failed")),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: configured arithmetic failed");
}

TEST_F(Abi, NonBufferArgumentInIoSymbolIsAnIoErrorForForeignClasses) {
  lean_external_class* other = lean_register_external_class([](void*) {}, nullptr);
  Obj foreign(lean_alloc_external(other, nullptr));
  Io io = take_io(torchlean_cuda_buffer_to_float_array_io(foreign.get()));
  EXPECT_FALSE(io.ok);
  EXPECT_EQ(io.error_tag, kOtherError);
}

TEST_F(Abi, CheckpointLengthNotAMultipleOfTheWidth) {
  const Counters a = Counters::read();
  Io f32 =
      take_io(torchlean_cuda_buffer_of_bytes_io(byte_array({1, 2, 3, 4, 5}).get(), kF32, kF32));
  Io f64 = take_io(
      torchlean_cuda_buffer_of_bytes_io(byte_array(std::vector<uint8_t>(12)).get(), kF32, kF64));
  Io legacy = take_io(torchlean_cuda_buffer_of_float32_bytes_io(byte_array({1, 2, 3}).get()));
  for (const Io* io : {&f32, &f64, &legacy}) {
    EXPECT_FALSE(io->ok);
    EXPECT_EQ(io->error_tag, kOtherError);
    EXPECT_NE(io->message.find("does not match its dtype"), std::string::npos) << io->message;
  }
  const Counters b = Counters::read();
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(Counters)), 0);
}

// Encoded buffers themselves: encoded_test.cpp.
TEST_F(Abi, EncodedAndKernelSymbolsReportNotSupportedYet) {
  Obj native(torchlean_cuda_buffer_zeros(2, kF32));
  Io to_enc = take_io(torchlean_cuda_buffer_to_encoded_io(native.get()));
  EXPECT_FALSE(to_enc.ok);
  // Kernel runs exist (tests/nvrtc_test.cpp); a source that does not compile is an IO error.
  Obj src(lean_mk_string("not a kernel"));
  Obj inputs(lean_alloc_array(0, 0));
  Io run = take_io(torchlean_kernel_run_buffer(src.get(), inputs.get(), 4));
  EXPECT_FALSE(run.ok);
  EXPECT_NE(run.message.find("kernel_run_buffer"), std::string::npos) << run.message;
  Io bytes = take_io(torchlean_kernel_run_bytes(src.get(), 0, 4, inputs.get(), 4));
  EXPECT_FALSE(bytes.ok);
  Io host = take_io(torchlean_kernel_run_host(src.get(), 0, inputs.get(), 4));
  EXPECT_FALSE(host.ok);
}

// kernel_run_encoded is pure: a source that does not compile ends the process, naming the op.
TEST_F(AbiDeathTest, EncodedKernelRunPanicsOnACompileFailure) {
  EXPECT_EXIT(
      {
        lean_object* src = lean_mk_string("x");
        torchlean_kernel_run_encoded(src, lean_alloc_array(0, 0), lean_box(0), 2, 4);
      },
      ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*kernel_run_encoded");
}

// ---------------------------------------------------------------------------------------------
// Settings (SPEC-runtime 4.4)

uint32_t setting(uint32_t id) {
  Io io = take_io(torchlean_libtorch_get_setting(id));
  EXPECT_TRUE(io.ok) << io.message;
  return io.ok ? lean_unbox_uint32(io.value.get()) : 99;
}

bool set_setting(uint32_t id, uint32_t v) {
  Io io = take_io(torchlean_libtorch_set_setting(id, v));
  return io.ok;
}

TEST_F(Abi, SettingDefaultsAndRoundTrips) {
  const char* env = std::getenv("TORCHLEAN_CUDA_DETERMINISTIC_REDUCTIONS");
  const bool det_env = env != nullptr && env[0] != '\0' && std::strcmp(env, "0") != 0;
  const uint32_t expected[9] = {0, 0, det_env ? 1u : 0u, 0, 1, 1, 1, 1, 1};
  uint32_t saved[9];
  for (uint32_t id = 0; id < 9; ++id) saved[id] = setting(id);
  for (uint32_t id = 0; id < 9; ++id) EXPECT_EQ(saved[id], expected[id]) << "setting " << id;
  ASSERT_TRUE(set_setting(2, 0));
  for (uint32_t id = 0; id < 9; ++id) {
    for (uint32_t v : {1u, 0u}) {
      ASSERT_TRUE(set_setting(id, v)) << id;
      EXPECT_EQ(setting(id), v) << "setting " << id;
    }
  }
  for (uint32_t id = 0; id < 9; ++id) ASSERT_TRUE(set_setting(id, saved[id]));
}

TEST_F(Abi, SettingErrors) {
  for (uint32_t id : {9u, 10u, 0xFFFFFFFFu}) {
    Io g = take_io(torchlean_libtorch_get_setting(id));
    EXPECT_FALSE(g.ok);
    EXPECT_EQ(g.error_tag, kOtherError);
    EXPECT_NE(g.message.find("unknown runtime setting"), std::string::npos) << g.message;
    Io s = take_io(torchlean_libtorch_set_setting(id, 0));
    EXPECT_FALSE(s.ok);
  }
  for (uint32_t v : {2u, 7u, 0xFFFFFFFFu}) {
    Io s = take_io(torchlean_libtorch_set_setting(0, v));
    EXPECT_FALSE(s.ok);
    EXPECT_EQ(s.error_tag, kOtherError);
    EXPECT_NE(s.message.find("zero or one"), std::string::npos) << s.message;
  }
  EXPECT_EQ(setting(0), 0u);
}

TEST_F(Abi, DeterministicAndBenchmarkInterplay) {
  const uint32_t det = setting(2), bench = setting(3);
  ASSERT_TRUE(set_setting(2, 0));
  ASSERT_TRUE(set_setting(3, 1));
  EXPECT_EQ(setting(3), 1u);
  ASSERT_TRUE(set_setting(2, 1));  // enabling determinism turns benchmarking off
  EXPECT_EQ(setting(2), 1u);
  EXPECT_EQ(setting(3), 0u);
  Io refused = take_io(torchlean_libtorch_set_setting(3, 1));
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.error_tag, kOtherError);
  EXPECT_NE(refused.message.find("disable deterministic mode"), std::string::npos);
  EXPECT_EQ(setting(3), 0u);
  EXPECT_TRUE(set_setting(3, 0));  // disabling is always allowed
  ASSERT_TRUE(set_setting(2, 0));
  ASSERT_TRUE(set_setting(3, bench));
  ASSERT_TRUE(set_setting(2, det));
}

// ---------------------------------------------------------------------------------------------
// Devices, memory fraction, synchronisation (SPEC-runtime 4.2, 4.5, 4.6)

TEST_F(Abi, SetDeviceRefusedWhileWrappersLiveOrPastTheCount) {
  {
    Obj b(torchlean_cuda_buffer_zeros(0, kF32));  // an empty wrapper still counts
    Io io = take_io(torchlean_libtorch_set_device(0));
    EXPECT_FALSE(io.ok);
    EXPECT_EQ(io.error_tag, kOtherError);
    EXPECT_NE(io.message.find("select the device before creating"), std::string::npos);
    torchlean_cuda_buffer_release(b.get());
    Io again = take_io(torchlean_libtorch_set_device(0));
    EXPECT_FALSE(again.ok) << "a released wrapper is still alive";
  }
  const uint32_t count = torchlean_libtorch_device_count(0);
  Io past = take_io(torchlean_libtorch_set_device(count));
  EXPECT_FALSE(past.ok);
  EXPECT_NE(past.message.find("does not exist"), std::string::npos) << past.message;
  Io ok = take_io(torchlean_libtorch_set_device(0));
  EXPECT_TRUE(ok.ok) << ok.message;
  EXPECT_EQ(torchlean_libtorch_get_device(0), 0u);
}

TEST_F(Abi, MemoryFractionValidationAndReadBack) {
  const double old = memory_fraction();
  EXPECT_GT(old, 0.0);
  EXPECT_LE(old, 1.0);
  for (double bad : {0.0, -0.5, 1.5, std::nan(""), std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()}) {
    Io io = take_io(torchlean_libtorch_set_memory_fraction(bad));
    EXPECT_FALSE(io.ok) << bad;
    EXPECT_EQ(io.error_tag, kOtherError);
    EXPECT_NE(io.message.find("memory fraction"), std::string::npos) << io.message;
  }
  EXPECT_EQ(memory_fraction(), old);
  for (double f : {0.5, 0.123456789, 1.0}) {
    ASSERT_TRUE(take_io(torchlean_libtorch_set_memory_fraction(f)).ok);
    EXPECT_NEAR(memory_fraction(), f, 1e-9);
  }
  ASSERT_TRUE(take_io(torchlean_libtorch_set_memory_fraction(old)).ok);
  EXPECT_NEAR(memory_fraction(), old, 1e-9);
}

TEST_F(Abi, SynchronizeAndEmptyCache) {
  Obj b(torchlean_cuda_buffer_rand_uniform(1 << 16, 5, kF32));
  EXPECT_TRUE(take_io(torchlean_libtorch_synchronize(0)).ok);
  const uint64_t live = torchlean_cuda_allocator_live_bytes(0);
  const uint64_t allocated = torchlean_libtorch_allocated_bytes(0);
  const uint64_t reserved = torchlean_libtorch_reserved_bytes(0);
  const uint64_t peak_a = torchlean_libtorch_peak_allocated_bytes(0);
  const uint64_t peak_r = torchlean_libtorch_peak_reserved_bytes(0);
  EXPECT_TRUE(take_io(torchlean_libtorch_empty_cache(0)).ok);
  EXPECT_EQ(torchlean_cuda_allocator_live_bytes(0), live);
  EXPECT_EQ(torchlean_libtorch_allocated_bytes(0), allocated);
  EXPECT_LE(torchlean_libtorch_reserved_bytes(0), reserved);
  EXPECT_EQ(torchlean_libtorch_peak_allocated_bytes(0), peak_a);
  EXPECT_EQ(torchlean_libtorch_peak_reserved_bytes(0), peak_r);
  EXPECT_EQ(values_of(b.get()).size(), size_t{1} << 16);
}

// ---------------------------------------------------------------------------------------------
// Memory accounting and controlled out-of-memory (SPEC-runtime 4.7, 11)

TEST_F(Abi, AccountingInvariants) {
  const uint64_t allocated0 = torchlean_libtorch_allocated_bytes(0);
  const uint64_t live0 = torchlean_cuda_allocator_live_bytes(0);
  {
    std::vector<Obj> held;
    uint64_t bytes = 0;
    for (uint32_t n : {1u, 100u, 1000u, 4096u, 300000u, 1u << 20}) {
      held.emplace_back(torchlean_cuda_buffer_zeros(n, kF32));
      bytes += 4ull * n;
    }
    EXPECT_EQ(torchlean_cuda_allocator_live_bytes(0) - live0, bytes);
    EXPECT_GE(torchlean_libtorch_allocated_bytes(0) - allocated0, bytes);
    EXPECT_LE(torchlean_libtorch_allocated_bytes(0), torchlean_libtorch_reserved_bytes(0));
    EXPECT_GE(torchlean_libtorch_peak_allocated_bytes(0), torchlean_libtorch_allocated_bytes(0));
    EXPECT_GE(torchlean_libtorch_peak_reserved_bytes(0), torchlean_libtorch_reserved_bytes(0));
    EXPECT_GE(torchlean_cuda_allocator_peak_bytes(0), torchlean_cuda_allocator_live_bytes(0));
    EXPECT_GT(torchlean_cuda_allocator_device_total_bytes(0), 0u);
    EXPECT_LE(torchlean_cuda_allocator_device_free_bytes(0),
              torchlean_cuda_allocator_device_total_bytes(0));
  }
  EXPECT_EQ(torchlean_libtorch_allocated_bytes(0), allocated0);
  EXPECT_EQ(torchlean_cuda_allocator_live_bytes(0), live0);
}

TEST_F(Abi, CapBeyondReservedFailsWithResourceExhaustedAndRecovers) {
  const double old = memory_fraction();
  Obj survivor(torchlean_cuda_buffer_full(1000, 7.0, kF32));
  const uint64_t cap = reserved_plus(uint64_t{32} << 20);
  ASSERT_TRUE(set_memory_cap(cap));
  const uint64_t want = 2 * cap;
  const Counters a = Counters::read();
  const uint64_t allocated = torchlean_libtorch_allocated_bytes(0);
  auto expect_exhausted = [&](lean_object* result, const char* what) {
    Io io = take_io(result);
    EXPECT_FALSE(io.ok) << what;
    EXPECT_EQ(io.error_tag, kResourceExhausted) << what << ": " << io.message;
    EXPECT_EQ(io.os_code, 0u);
    EXPECT_NE(io.message.find("out of memory"), std::string::npos) << io.message;
  };
  expect_exhausted(torchlean_cuda_buffer_zeros_io(static_cast<uint32_t>(want / 4), kF32), "zeros");
  expect_exhausted(torchlean_cuda_buffer_full_io(static_cast<uint32_t>(want / 8), 1.0, kF64),
                   "full");
  {
    Obj host = float_array(std::vector<double>(want / 4, 0.5));
    expect_exhausted(torchlean_cuda_buffer_of_float_array_io(host.get(), kF32), "of_float_array");
  }
  // The largest UInt32 count is refused the same way.
  expect_exhausted(torchlean_cuda_buffer_zeros_io(UINT32_MAX, kF64), "zeros UINT32_MAX");
  const Counters b = Counters::read();
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(Counters)), 0);
  EXPECT_EQ(torchlean_libtorch_allocated_bytes(0), allocated);
  EXPECT_EQ(values_of(survivor.get()), std::vector<double>(1000, 7.0));
  {
    Io small = take_io(torchlean_cuda_buffer_zeros_io(1 << 20, kF32));
    EXPECT_TRUE(small.ok) << small.message;
  }
  ASSERT_TRUE(take_io(torchlean_libtorch_set_memory_fraction(old)).ok);
  EXPECT_NEAR(memory_fraction(), old, 1e-9);
}

// ---------------------------------------------------------------------------------------------
// Constructors' values and the random stream (SPEC-runtime 6, 7)

TEST_F(Abi, ZerosAndFullRoundOnce) {
  EXPECT_EQ(values_of(Obj(torchlean_cuda_buffer_zeros(5, kF64)).get()), std::vector<double>(5, 0));
  const double v = 0.1;
  const auto f32 = values_of(Obj(torchlean_cuda_buffer_full(3, v, kF32)).get());
  for (double x : f32) EXPECT_EQ(x, static_cast<double>(static_cast<float>(v)));
  const auto f64 = values_of(Obj(torchlean_cuda_buffer_full(3, v, kF64)).get());
  for (double x : f64) EXPECT_EQ(x, v);
  const auto nz = values_of(Obj(torchlean_cuda_buffer_full(2, -0.0, kF32)).get());
  EXPECT_TRUE(std::signbit(nz[0]));
  const auto big = values_of(Obj(torchlean_cuda_buffer_full(1, 1e300, kF32)).get());
  EXPECT_TRUE(std::isinf(big[0]));
  const auto nan = values_of(Obj(torchlean_cuda_buffer_full(1, std::nan(""), kF64)).get());
  EXPECT_TRUE(std::isnan(nan[0]));
}

TEST_F(Abi, UniformTestVectors) {
  const uint64_t key = 0x25114ED53327345Aull;
  EXPECT_EQ(tlrt::random::draw(key, 0), 0xFFFFFFFFu);
  const auto u = values_of(Obj(torchlean_cuda_buffer_rand_uniform(8, key, kF32)).get());
  const double want[8] = {1.0,       0.96530467, 0.45733455, 0.6927225,
                          0.7249875, 0.29389992, 0.09515917, 0.25270227};
  ASSERT_EQ(u.size(), 8u);
  EXPECT_EQ(u[0], 1.0);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(u[i], want[i], 1e-7) << i;
  const uint64_t key2 = 0x0123456789ABCDEFull;
  const uint32_t draws[4] = {0xA48FAA9Du, 0xC374CA1Au, 0x3BECCAA2u, 0x912DCEF8u};
  for (int j = 0; j < 4; ++j) EXPECT_EQ(tlrt::random::draw(key2, j), draws[j]);
  const auto d = values_of(Obj(torchlean_cuda_buffer_rand_uniform(4, key2, kF64)).get());
  const double want64[4] = {0.6428171761799604, 0.7635008157230914, 0.2340819020755589,
                            0.5671052318066359};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(d[i], draws[i] / 4294967296.0) << i;
    EXPECT_NEAR(d[i], want64[i], 1e-16) << i;
  }
  const auto s = values_of(Obj(torchlean_cuda_buffer_rand_uniform(4, key2, kF32)).get());
  const double want32[4] = {0.6428172, 0.7635008, 0.23408191, 0.56710523};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(s[i], want32[i], 1e-7) << i;
}

TEST_F(Abi, UniformIsBitExactAcrossStagingChunksAndPrefixes) {
  // One and a half pinned staging chunks of float32 values (+ 5) cross a chunk boundary of the
  // CUDA backend's download.
  const auto n = static_cast<uint32_t>(3 * (tlrt::kStagingChunkBytes / sizeof(float)) / 2 + 5);
  const uint64_t key = 0xDEADBEEFCAFEF00Dull;
  const auto u = values_of(Obj(torchlean_cuda_buffer_rand_uniform(n, key, kF32)).get());
  ASSERT_EQ(u.size(), n);
  uint64_t mismatches = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const float want = static_cast<float>(tlrt::random::draw(key, i)) * 0x1p-32f;
    mismatches += f32_bits(u[i]) != f32_bits(want);
  }
  EXPECT_EQ(mismatches, 0u);
  const auto prefix = values_of(Obj(torchlean_cuda_buffer_rand_uniform(7, key, kF32)).get());
  for (int i = 0; i < 7; ++i) EXPECT_EQ(prefix[i], u[i]);
  const auto d = values_of(Obj(torchlean_cuda_buffer_rand_uniform(1 << 20, key, kF64)).get());
  for (uint32_t i = 0; i < d.size(); ++i) {
    ASSERT_EQ(d[i], tlrt::random::draw(key, i) * 0x1p-32) << i;
  }
}

TEST_F(Abi, BernoulliTestVectorsAndEndpoints) {
  const uint64_t key = 0x25114ED53327345Aull;
  EXPECT_EQ(values_of(Obj(torchlean_cuda_buffer_bernoulli_mask(8, 0.0, key, kF32)).get()),
            std::vector<double>(8, 0.0));
  EXPECT_EQ(values_of(Obj(torchlean_cuda_buffer_bernoulli_mask(8, 1.0, key, kF32)).get()),
            std::vector<double>(8, 1.0));
  EXPECT_EQ(values_of(Obj(torchlean_cuda_buffer_bernoulli_mask(8, 0.5, key, kF32)).get()),
            (std::vector<double>{0, 0, 1, 0, 0, 1, 1, 1}));
  EXPECT_EQ(values_of(Obj(torchlean_cuda_buffer_bernoulli_mask(8, std::nan(""), key, kF64)).get()),
            std::vector<double>(8, 0.0));
  EXPECT_EQ(values_of(Obj(torchlean_cuda_buffer_bernoulli_mask(8, -3, key, kF64)).get()),
            std::vector<double>(8, 0.0));
  EXPECT_EQ(values_of(Obj(torchlean_cuda_buffer_bernoulli_mask(8, 7, key, kF64)).get()),
            std::vector<double>(8, 1.0));
  // p rounds to float32 first: 1 - 2^-30 becomes 1.0, which keeps every element.
  EXPECT_EQ(values_of(Obj(torchlean_cuda_buffer_bernoulli_mask(8, 1 - 0x1p-30, key, kF32)).get()),
            std::vector<double>(8, 1.0));
  const uint32_t n = 100000;
  const double p = 0.3;
  const auto m = values_of(Obj(torchlean_cuda_buffer_bernoulli_mask(n, p, key, kF32)).get());
  const float pf = static_cast<float>(p);
  for (uint32_t i = 0; i < n; ++i) {
    const float u = static_cast<float>(tlrt::random::draw(key, i)) * 0x1p-32f;
    ASSERT_EQ(m[i], u < pf ? 1.0 : 0.0) << i;
  }
}

double box_muller64(uint64_t key, uint64_t i, double mean, double deviation) {
  const double r1 = tlrt::random::draw(key, 2 * i), r2 = tlrt::random::draw(key, 2 * i + 1);
  const double u1 = (r1 + 1.0) / 4294967297.0;
  const double u2 = r2 / 4294967296.0;
  return mean + deviation * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

TEST_F(Abi, NormalWithinToleranceAndRepeatable) {
  const uint64_t key = 0x0123456789ABCDEFull;
  const uint32_t n = 4096;
  const auto a = values_of(Obj(torchlean_cuda_buffer_rand_normal(n, 0.0, 1.0, key, kF32)).get());
  const auto b = values_of(Obj(torchlean_cuda_buffer_rand_normal(n, 0.0, 1.0, key, kF32)).get());
  const auto c = values_of(Obj(torchlean_cuda_buffer_rand_normal(n, 2.0, 0.5, key, kF64)).get());
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(f32_bits(a[i]), f32_bits(b[i])) << i;
    EXPECT_NEAR(a[i], box_muller64(key, i, 0.0, 1.0), 5e-5) << i;
    EXPECT_NEAR(c[i], box_muller64(key, i, 2.0, 0.5), 1e-9) << i;
    EXPECT_TRUE(std::isfinite(a[i]) && std::isfinite(c[i]));
  }
}

// ---------------------------------------------------------------------------------------------
// Host transfers and checkpoint bytes (SPEC-runtime 6, 8)

TEST_F(Abi, FloatArrayRoundTripsAndNarrowing) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v = {0.0,
                                 -0.0,
                                 1.0,
                                 -2.5,
                                 inf,
                                 -inf,
                                 4.9e-324,
                                 2.2250738585072014e-308,
                                 1.7976931348623157e308,
                                 0.1,
                                 1 + 0x1p-24,
                                 1 + 3 * 0x1p-24,
                                 1e-46,
                                 3.4028235677973366e38};
  const auto d =
      values_of(Obj(torchlean_cuda_buffer_of_float_array(float_array(v).get(), kF64)).get());
  ASSERT_EQ(d.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(f64_bits(d[i]), f64_bits(v[i])) << i;
  const auto f =
      values_of(Obj(torchlean_cuda_buffer_of_float_array(float_array(v).get(), kF32)).get());
  ASSERT_EQ(f.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(f64_bits(f[i]), f64_bits(static_cast<double>(static_cast<float>(v[i])))) << i;
  }
  EXPECT_EQ(f[10], 1.0);            // ties to even
  EXPECT_EQ(f[11], 1 + 0x1p-22);    // rounds up
  EXPECT_TRUE(std::signbit(f[1]));  // -0 kept
  EXPECT_EQ(f[12], 0.0);            // below half the smallest subnormal
  EXPECT_TRUE(std::isinf(f[13]));   // rounds past FLT_MAX
  const auto nan = values_of(
      Obj(torchlean_cuda_buffer_of_float_array(float_array({std::nan("")}).get(), kF32)).get());
  EXPECT_TRUE(std::isnan(nan[0]));
}

TEST_F(Abi, LargeFloatArrayRoundTripCrossesStagingChunks) {
  std::vector<double> v((5u << 20) + 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) * 0.25 - 1e6;
  for (uint8_t dt : {kF32, kF64}) {
    const auto back =
        values_of(Obj(torchlean_cuda_buffer_of_float_array(float_array(v).get(), dt)).get());
    ASSERT_EQ(back.size(), v.size());
    size_t bad = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      const double want = dt == kF32 ? static_cast<double>(static_cast<float>(v[i])) : v[i];
      bad += back[i] != want;
    }
    EXPECT_EQ(bad, 0u) << "dtype " << int(dt);
  }
}

TEST_F(Abi, CheckpointRoundTripFloat32KeepsEveryBit) {
  const std::vector<uint32_t> words = {0x00000000, 0x80000000, 0x7FC00001, 0xFFA00000,
                                       0x7F800001, 0x00000001, 0x807FFFFF, 0x7F800000,
                                       0xFF800000, 0x7F7FFFFF, 0x3F800000, 0x00800000};
  const auto bytes = le_words32(words);
  Io b = take_io(torchlean_cuda_buffer_of_bytes_io(byte_array(bytes).get(), kF32, kF32));
  ASSERT_TRUE(b.ok) << b.message;
  EXPECT_EQ(torchlean_cuda_buffer_size(b.value.get()), words.size());
  EXPECT_EQ(torchlean_cuda_buffer_dtype(b.value.get()), kF32);
  Io out = take_io(torchlean_cuda_buffer_to_bytes_io(b.value.get(), kF32));
  ASSERT_TRUE(out.ok);
  EXPECT_EQ(bytes_of(out.value.get()), bytes);
  Io legacy = take_io(torchlean_cuda_buffer_to_float32_bytes_io(b.value.get()));
  ASSERT_TRUE(legacy.ok);
  EXPECT_EQ(bytes_of(legacy.value.get()), bytes);
  // Copies are bit clones as well.
  Obj copy(torchlean_cuda_buffer_copy(b.value.get()));
  Io copied = take_io(torchlean_cuda_buffer_to_bytes_io(copy.get(), kF32));
  EXPECT_EQ(bytes_of(copied.value.get()), bytes);
}

TEST_F(Abi, CheckpointRoundTripFloat64KeepsEveryBit) {
  const std::vector<uint64_t> words = {0,
                                       0x8000000000000000ull,
                                       0x7FF8000000000001ull,
                                       0xFFF4000000000000ull,
                                       0x0000000000000001ull,
                                       0x800FFFFFFFFFFFFFull,
                                       0x7FF0000000000000ull,
                                       0x7FEFFFFFFFFFFFFFull,
                                       0x3FF0000000000000ull};
  const auto bytes = le_words64(words);
  Io b = take_io(torchlean_cuda_buffer_of_bytes_io(byte_array(bytes).get(), kF64, kF64));
  ASSERT_TRUE(b.ok) << b.message;
  Io out = take_io(torchlean_cuda_buffer_to_bytes_io(b.value.get(), kF64));
  ASSERT_TRUE(out.ok);
  EXPECT_EQ(bytes_of(out.value.get()), bytes);
  const auto vals = values_of(b.value.get());
  for (size_t i = 0; i < words.size(); ++i) {
    if (!std::isnan(as_f64(words[i]))) {
      EXPECT_EQ(f64_bits(vals[i]), words[i]) << i;
    }
  }
}

TEST_F(Abi, CheckpointCrossDtypeConversions) {
  // Legacy float32 words loaded into float64 storage widen exactly.
  const std::vector<uint32_t> w32 = {0x3DCCCCCD, 0x80000000, 0x00000001, 0x7F800000, 0xC0490FDB};
  Io wide =
      take_io(torchlean_cuda_buffer_of_bytes_io(byte_array(le_words32(w32)).get(), kF64, kF32));
  ASSERT_TRUE(wide.ok) << wide.message;
  EXPECT_EQ(torchlean_cuda_buffer_dtype(wide.value.get()), kF64);
  const auto v = values_of(wide.value.get());
  for (size_t i = 0; i < w32.size(); ++i) {
    EXPECT_EQ(f64_bits(v[i]), f64_bits(static_cast<double>(as_f32(w32[i])))) << i;
  }
  // float64 storage written as float32 words narrows to nearest even.
  Io back = take_io(torchlean_cuda_buffer_to_bytes_io(wide.value.get(), kF32));
  ASSERT_TRUE(back.ok);
  EXPECT_EQ(bytes_of(back.value.get()), le_words32(w32));
  Obj d(torchlean_cuda_buffer_of_float_array(float_array({0.1, 1 + 0x1p-24, -0.0}).get(), kF64));
  Io narrowed = take_io(torchlean_cuda_buffer_to_bytes_io(d.get(), kF32));
  ASSERT_TRUE(narrowed.ok);
  EXPECT_EQ(bytes_of(narrowed.value.get()), le_words32({0x3DCCCCCD, 0x3F800000, 0x80000000}));
  Io widened = take_io(
      torchlean_cuda_buffer_to_bytes_io(Obj(torchlean_cuda_buffer_full(1, 0.1, kF32)).get(), kF64));
  ASSERT_TRUE(widened.ok);
  EXPECT_EQ(bytes_of(widened.value.get()), le_words64({f64_bits(static_cast<double>(0.1f))}));
}

TEST_F(Abi, LegacyHostHelpers) {
  Obj words(torchlean_float_array_to_float32_bytes(float_array({1.0, -0.0, 0.1}).get()));
  EXPECT_EQ(bytes_of(words.get()), le_words32({0x3F800000, 0x80000000, 0x3DCCCCCD}));
  Obj back(torchlean_float32_bytes_to_float_array(words.get()));
  EXPECT_EQ(doubles_of(back.get()), (std::vector<double>{1.0, -0.0, static_cast<double>(0.1f)}));
}

TEST_F(AbiDeathTest, LegacyBytesToFloatArrayPanicsOnPartialWord) {
  EXPECT_EXIT(torchlean_float32_bytes_to_float_array(byte_array({1, 2, 3}).get()),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: .*multiple of 4");
}

}  // namespace
