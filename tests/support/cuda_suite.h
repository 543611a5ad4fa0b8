// The fixture of a suite of CUDA-backend checks: every test skips, saying why, when no CUDA device
// is visible or TLRT_DEVICE selects the reference backend, and otherwise runs on an initialised
// runtime. Base is ::testing::Test or a ::testing::TestWithParam.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "runtime/context.h"

namespace gpu_test {

template <class Base = ::testing::Test>
class CudaSuite : public Base {
 protected:
  // checks: what the suite holds, as the skip message names it ("GPU checks of convolution").
  explicit CudaSuite(std::string checks) : checks_(std::move(checks)) {}

  void SetUp() override {
    if (tlrt::cuda_device_count() == 0) {
      GTEST_SKIP() << "no CUDA device visible: " << checks_ << " cannot run here";
    }
    if (tlrt::default_backend() != tlrt::Backend::cuda) {
      GTEST_SKIP()
          << "TLRT_DEVICE selects the reference backend: the CUDA backend is not initialised";
    }
    tlrt::ensure_initialized();
  }

 private:
  std::string checks_;
};

}  // namespace gpu_test
