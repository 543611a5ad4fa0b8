// libtlrt_unavailable reproduces TorchLean's no-backend build (SPEC-runtime section 3).
#include <gtest/gtest.h>
#include <lean/lean.h>

#include <cstring>
#include <string>

#include "tlrt/torchlean_abi.h"

namespace {

unsigned error_tag(lean_object* result) {
  EXPECT_TRUE(lean_io_result_is_error(result));
  const unsigned tag = lean_ptr_tag(lean_io_result_get_error(result));
  lean_dec(result);
  return tag;
}

TEST(Unavailable, StatusVersionCountersAndControls) {
  EXPECT_EQ(torchlean_cuda_runtime_status(0), 0u);
  lean_object* v = torchlean_libtorch_version(0);
  EXPECT_STREQ(lean_string_cstr(v), "unavailable");
  lean_dec(v);
  EXPECT_EQ(torchlean_runtime_collect_allocator(0), 1u);
  EXPECT_EQ(torchlean_cuda_allocator_live_bytes(0), 0u);
  EXPECT_EQ(torchlean_cuda_wrapper_live_count(0), 0u);
  EXPECT_EQ(torchlean_libtorch_reserved_bytes(0), 0u);
  EXPECT_EQ(torchlean_libtorch_device_count(0), 0u);
  for (uint32_t id = 0; id <= 8; ++id) {
    lean_object* r = torchlean_libtorch_get_setting(id);
    ASSERT_TRUE(lean_io_result_is_ok(r));
    EXPECT_EQ(lean_unbox_uint32(lean_io_result_get_value(r)), 0u);
    lean_dec(r);
  }
  EXPECT_EQ(error_tag(torchlean_libtorch_get_setting(9)), 18u);
  lean_object* f = torchlean_libtorch_get_memory_fraction(0);
  ASSERT_TRUE(lean_io_result_is_ok(f));
  EXPECT_EQ(lean_unbox_float(lean_io_result_get_value(f)), 0.0);
  lean_dec(f);
}

TEST(Unavailable, IoSymbolsReturnUserErrorsWithARebuildHint) {
  lean_object* r = torchlean_cuda_buffer_zeros_io(4, 0);
  ASSERT_TRUE(lean_io_result_is_error(r));
  lean_object* err = lean_io_result_get_error(r);
  EXPECT_EQ(lean_ptr_tag(err), 18u);
  EXPECT_NE(std::string(lean_string_cstr(lean_ctor_get(err, 0))).find("rebuild"),
            std::string::npos);
  lean_dec(r);
  EXPECT_EQ(error_tag(torchlean_libtorch_synchronize(0)), 18u);
  EXPECT_EQ(error_tag(torchlean_libtorch_set_device(0)), 18u);
  EXPECT_EQ(error_tag(torchlean_libtorch_device_name(0)), 18u);
}

TEST(UnavailableDeathTest, PureBufferSymbolsPanic) {
  EXPECT_EXIT(torchlean_cuda_buffer_zeros(4, 0), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*libtlrt_unavailable");
  EXPECT_EXIT(torchlean_cuda_buffer_size(lean_box(0)), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: .*rebuild");
}

}  // namespace
