// Runtime pieces below the ABI that need no device: the settings' environment rule and
// interplay, the CUDA paths' environment switches, dtype codes, overflow-checked sizes, and the
// reference backend's buffers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "common/error.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/counters.h"
#include "runtime/env_switch.h"
#include "runtime/settings.h"

namespace {

// Outlives main(): constructed before any function-local static of the runtime, so destroyed after
// them, as a Lean global or a C++ static holding a buffer would be.
struct LateBuffer {
  std::unique_ptr<tlrt::Buffer> buffer;
};
LateBuffer g_late_buffer;

TEST(HostAllocatorDeathTest, BufferDroppedByAStaticDestructorFreesIntoALiveAllocator) {
  EXPECT_EXIT(
      {
        alarm(20);  // a free into a destroyed allocator may block on its mutex instead of crashing
        g_late_buffer.buffer =
            tlrt::Buffer::allocate(tlrt::Backend::reference, tlrt::Dtype::f32, 1000, "test");
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Settings, EnvironmentRuleForDeterminism) {
  EXPECT_FALSE(tlrt::deterministic_from_environment(nullptr));
  EXPECT_FALSE(tlrt::deterministic_from_environment(""));
  EXPECT_FALSE(tlrt::deterministic_from_environment("0"));
  EXPECT_TRUE(tlrt::deterministic_from_environment("1"));
  EXPECT_TRUE(tlrt::deterministic_from_environment("00"));
  EXPECT_TRUE(tlrt::deterministic_from_environment("false"));
  EXPECT_TRUE(tlrt::deterministic_from_environment(" 0"));
}

// The rule of each kind of switch, read on first use, and set() overriding it afterwards.
bool switch_reads(const char* value, bool on_by_default) {
  const char* name = "TLRT_ENV_SWITCH_TEST";
  if (value == nullptr) {
    unsetenv(name);
  } else {
    setenv(name, value, 1);
  }
  tlrt::EnvSwitch s(name, on_by_default);
  return s.on();
}

TEST(EnvSwitch, OnByDefaultTurnsOffOnlyOnZero) {
  EXPECT_TRUE(switch_reads(nullptr, true));
  EXPECT_TRUE(switch_reads("", true));
  EXPECT_FALSE(switch_reads("0", true));
  EXPECT_TRUE(switch_reads("1", true));
  EXPECT_TRUE(switch_reads("00", true));
}

TEST(EnvSwitch, OffByDefaultTurnsOnOnAnyOtherValue) {
  EXPECT_FALSE(switch_reads(nullptr, false));
  EXPECT_FALSE(switch_reads("", false));
  EXPECT_FALSE(switch_reads("0", false));
  EXPECT_TRUE(switch_reads("1", false));
  EXPECT_TRUE(switch_reads("yes", false));
}

TEST(EnvSwitch, ReadsTheEnvironmentOnceAndSetOverrides) {
  const char* name = "TLRT_ENV_SWITCH_TEST";
  setenv(name, "0", 1);
  tlrt::EnvSwitch s(name, true);
  EXPECT_FALSE(s.on());
  setenv(name, "1", 1);
  EXPECT_FALSE(s.on()) << "the variable is read on first use only";
  s.set(true);
  EXPECT_TRUE(s.on());
  s.set(false);
  EXPECT_FALSE(s.on());
  unsetenv(name);
}

TEST(Settings, ErrorsAreInvalidArguments) {
  try {
    tlrt::get_setting(9);
    FAIL() << "id 9 accepted";
  } catch (const tlrt::Error& e) {
    EXPECT_EQ(e.kind(), tlrt::ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("unknown runtime setting 9"), std::string::npos);
  }
  EXPECT_THROW(tlrt::set_setting(1, 2), tlrt::Error);
  const uint32_t det = tlrt::get_setting(2);
  tlrt::set_setting(2, 1);
  EXPECT_THROW(tlrt::set_setting(3, 1), tlrt::Error);
  tlrt::set_setting(2, det);
}

TEST(Dtype, OnlyNativeCodesConstruct) {
  EXPECT_EQ(tlrt::native_dtype_from_code(0, "t"), tlrt::Dtype::f32);
  EXPECT_EQ(tlrt::native_dtype_from_code(1, "t"), tlrt::Dtype::f64);
  for (uint8_t code : {uint8_t{2}, uint8_t{3}, uint8_t{200}}) {
    EXPECT_THROW(tlrt::native_dtype_from_code(code, "t"), tlrt::Error) << int(code);
  }
}

TEST(Sizes, OverflowIsAnErrorNamingTheOp) {
  EXPECT_EQ(tlrt::checked_mul(1u << 20, 1u << 20, "t"), uint64_t{1} << 40);
  try {
    tlrt::checked_mul(UINT64_MAX / 2, 3, "zeros");
    FAIL() << "overflow accepted";
  } catch (const tlrt::Error& e) {
    EXPECT_EQ(e.kind(), tlrt::ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("tlrt: zeros:"), std::string::npos);
  }
  EXPECT_THROW(tlrt::checked_add(UINT64_MAX, 1, "t"), tlrt::Error);
  // A scalar count whose byte size overflows is refused before any allocation.
  const uint64_t created = tlrt::payload_counter().created();
  EXPECT_THROW(
      tlrt::Buffer::allocate(tlrt::Backend::reference, tlrt::Dtype::f64, UINT64_MAX / 4, "zeros"),
      tlrt::Error);
  EXPECT_EQ(tlrt::payload_counter().created(), created);
}

TEST(ReferenceBuffers, ReleaseIsIdempotentAndCountedOnce) {
  const uint64_t live = tlrt::payload_counter().live();
  auto b = tlrt::Buffer::allocate(tlrt::Backend::reference, tlrt::Dtype::f32, 10, "t");
  b->publish();
  b->publish();
  EXPECT_EQ(tlrt::payload_counter().live() - live, 40u);
  EXPECT_TRUE(b->release());
  EXPECT_FALSE(b->release());
  EXPECT_TRUE(b->released());
  EXPECT_EQ(b->size(), 0u);
  EXPECT_EQ(tlrt::payload_counter().live(), live);
  EXPECT_THROW(tlrt::require_live(*b, "copy"), tlrt::Error);
  auto empty = tlrt::Buffer::allocate(tlrt::Backend::reference, tlrt::Dtype::f64, 0, "t");
  EXPECT_FALSE(empty->release());
}

// The word width of encoded buffers (the interface the NVRTC kernel runs allocate through).
TEST(ReferenceBuffers, EncodedBuffersCountSizeTimesWidth) {
  const uint64_t live = tlrt::payload_counter().live();
  auto b = tlrt::Buffer::allocate_encoded(tlrt::Backend::reference, 3, 7, "t");
  b->publish();
  EXPECT_TRUE(b->encoded());
  EXPECT_EQ(b->dtype(), tlrt::Dtype::encoded);
  EXPECT_EQ(b->width(), 3u);
  EXPECT_EQ(b->size(), 7u);
  EXPECT_EQ(b->bytes(), 21u);
  EXPECT_EQ(tlrt::payload_counter().live() - live, 21u);
  auto like = tlrt::Buffer::allocate_like(*b, 2, "t");
  like->publish();
  EXPECT_TRUE(like->encoded());
  EXPECT_EQ(like->width(), 3u);
  EXPECT_EQ(tlrt::payload_counter().live() - live, 27u);
  EXPECT_TRUE(b->release());
  EXPECT_EQ(b->width(), 3u) << "a released buffer keeps its width";
  like.reset();
  EXPECT_EQ(tlrt::payload_counter().live(), live);
  auto empty = tlrt::Buffer::allocate_encoded(tlrt::Backend::reference, uint64_t{1} << 63, 0, "t");
  EXPECT_EQ(empty->data(), nullptr);
  EXPECT_EQ(empty->width(), uint64_t{1} << 63);
  EXPECT_EQ(tlrt::Buffer::allocate(tlrt::Backend::reference, tlrt::Dtype::f64, 1, "t")->width(),
            8u);
}

// SPEC-runtime 2.5: a failed constructor or kernel run leaves the counters unchanged. A payload
// counts from publish() (the ABI's record of a result) on; the outputs of a call that fails after
// allocating them, and temporaries, are dropped unpublished and move no counter.
TEST(ReferenceBuffers, OnlyPublishedPayloadsCount) {
  const uint64_t live = tlrt::payload_counter().live();
  const uint64_t peak = tlrt::payload_counter().peak();
  const uint64_t created = tlrt::payload_counter().created();
  const uint64_t retired = tlrt::payload_counter().retired();
  {
    // Large enough to raise the peak if it counted, unless the peak is above 32 MiB.
    const uint64_t n = std::min<uint64_t>((peak - live) / 8 + 1024, uint64_t{1} << 22);
    auto dropped = tlrt::Buffer::allocate(tlrt::Backend::reference, tlrt::Dtype::f64, n, "t");
    EXPECT_FALSE(dropped->published());
    auto released = tlrt::Buffer::allocate(tlrt::Backend::reference, tlrt::Dtype::f32, 5, "t");
    EXPECT_TRUE(released->release());
    released->publish();  // a released buffer has nothing left to count
    EXPECT_FALSE(released->published());
    auto empty = tlrt::Buffer::allocate(tlrt::Backend::reference, tlrt::Dtype::f32, 0, "t");
    empty->publish();
    EXPECT_FALSE(empty->published());
  }
  EXPECT_EQ(tlrt::payload_counter().live(), live);
  EXPECT_EQ(tlrt::payload_counter().peak(), peak) << "an unpublished payload raised the peak";
  EXPECT_EQ(tlrt::payload_counter().created(), created);
  EXPECT_EQ(tlrt::payload_counter().retired(), retired);
  auto kept = tlrt::Buffer::allocate(tlrt::Backend::reference, tlrt::Dtype::f32, 3, "t");
  kept->publish();
  EXPECT_TRUE(kept->published());
  EXPECT_EQ(tlrt::payload_counter().created(), created + 1);
  kept.reset();
  EXPECT_EQ(tlrt::payload_counter().retired(), retired + 1);
  EXPECT_EQ(tlrt::payload_counter().live(), live);
}

TEST(ReferenceBuffers, EncodedAllocationFailuresNameTheSizes) {
  const uint64_t created = tlrt::payload_counter().created();
  auto message = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const tlrt::Error& e) {
      EXPECT_EQ(e.kind(), tlrt::ErrorKind::invalid_argument);
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message([] { tlrt::Buffer::allocate_encoded(tlrt::Backend::reference, 0, 5, "op"); }),
            "tlrt: op: encoded word width is 0 (5 words requested)");
  EXPECT_EQ(message([] {
              tlrt::Buffer::allocate_encoded(tlrt::Backend::reference, uint64_t{1} << 40,
                                             uint64_t{1} << 30, "op");
            }),
            "tlrt: op: size product overflows 64 bits (1073741824 x 1099511627776)");
  EXPECT_EQ(message([] {
              tlrt::Buffer::allocate_encoded(tlrt::Backend::reference, uint64_t{1} << 40,
                                             uint64_t{1} << 23, "op");
            }),
            "tlrt: op: 8388608 encoded words of 1099511627776 bytes exceed the addressable size");
  EXPECT_EQ(message([] {
              tlrt::Buffer::allocate(tlrt::Backend::reference, tlrt::Dtype::encoded, 1, "op");
            }),
            "tlrt: op: encoded buffers need a word width (allocate_encoded)");
  EXPECT_EQ(tlrt::payload_counter().created(), created);
}

TEST(Version, NamesTlrtAndItsBackend) {
  const std::string v = tlrt::version_string();
  EXPECT_EQ(v.rfind("tlrt ", 0), 0u) << v;
  EXPECT_NE(v.find("backend"), std::string::npos) << v;
}

}  // namespace
