// The public header as a user sees it: compiled as C (public_header_test.c) and C++, linked against
// libtlrt.so. The C translation unit lists every elementwise export through the header alone.
#include <gtest/gtest.h>
#include <tlrt/torchlean_abi.h>

extern "C" size_t tlrt_header_elementwise_count(void);
extern "C" void (*tlrt_header_elementwise_export(size_t k))(void);

namespace {

#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64) +1
constexpr size_t kRows = 0
#include "ops/elementwise_ops.def"
    ;
#undef TLRT_ELEMENTWISE

TEST(PublicHeader, DeclaresEveryElementwiseExport) {
  ASSERT_EQ(tlrt_header_elementwise_count(), kRows);
  for (size_t k = 0; k < kRows; ++k) EXPECT_NE(tlrt_header_elementwise_export(k), nullptr) << k;
}

TEST(PublicHeader, CxxSeesTheSameDeclarations) {
  EXPECT_NE(&torchlean_cuda_buffer_adam_step, nullptr);
  EXPECT_NE(&torchlean_cuda_buffer_reduce_sum, nullptr);
}

}  // namespace
