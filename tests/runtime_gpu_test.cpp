// The CUDA device state below the ABI: the one non-blocking stream, library handles created on
// first use and bound to that stream (cuBLAS's workspace from the caching allocator), and the
// device scope that restores the caller's current device.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "runtime/context.h"
#include "runtime/cuda_device.h"

#if TLRT_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace {

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (tlrt::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
    tlrt::cuda::initialize(0);
  }
};

TEST_F(CudaDevice, OneNonBlockingStream) {
  cudaStream_t s = tlrt::cuda::stream(0);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(tlrt::cuda::stream(0), s);
  unsigned flags = 0;
  ASSERT_EQ(cudaStreamGetFlags(s, &flags), cudaSuccess);
  EXPECT_EQ(flags & cudaStreamNonBlocking, cudaStreamNonBlocking);
}

TEST_F(CudaDevice, CublasHandleIsLazyBoundToTheStreamAndUsesTheAllocator) {
  const uint64_t before = tlrt::cuda::allocator(0).stats().allocated_bytes;
  cublasHandle_t h = tlrt::cuda::cublas_handle(0);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(tlrt::cuda::cublas_handle(0), h);
  cudaStream_t bound = nullptr;
  ASSERT_EQ(cublasGetStream(h, &bound), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(bound, tlrt::cuda::stream(0));
  EXPECT_GE(tlrt::cuda::allocator(0).stats().allocated_bytes - before, uint64_t{32} << 20);
  cublasMath_t mode;
  ASSERT_EQ(cublasGetMathMode(h, &mode), CUBLAS_STATUS_SUCCESS);
  // The low bits name the math mode (flags sit above them): pedantic, never TF32 by default.
  EXPECT_EQ(static_cast<int>(mode) & 0xF, static_cast<int>(CUBLAS_PEDANTIC_MATH));
}

#if TLRT_HAVE_CUDNN
TEST_F(CudaDevice, CudnnHandleIsBoundToTheStream) {
  cudnnHandle_t h = tlrt::cuda::cudnn_handle(0);
  ASSERT_NE(h, nullptr);
  cudaStream_t bound = nullptr;
  ASSERT_EQ(cudnnGetStream(h, &bound), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(bound, tlrt::cuda::stream(0));
}
#endif

TEST_F(CudaDevice, DeviceScopeRestoresTheCallersDevice) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  {
    tlrt::cuda::DeviceScope scope(0);
    int current = -1;
    cudaGetDevice(&current);
    EXPECT_EQ(current, 0);
  }
  int current = -1;
  cudaGetDevice(&current);
  EXPECT_EQ(current, 0);
}

TEST_F(CudaDevice, AllocatorStatisticsMoveWithAllocations) {
  tlrt::CachingAllocator& a = tlrt::cuda::allocator(0);
  const tlrt::AllocatorStats s0 = a.stats();
  void* p = a.allocate(3 << 20, "test");
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(cudaMemsetAsync(p, 0, 3 << 20, tlrt::cuda::stream(0)), cudaSuccess);
  const tlrt::AllocatorStats s1 = a.stats();
  EXPECT_GE(s1.allocated_bytes - s0.allocated_bytes, uint64_t{3} << 20);
  EXPECT_LE(s1.allocated_bytes, s1.reserved_bytes);
  a.free(p);
  EXPECT_EQ(a.stats().allocated_bytes, s0.allocated_bytes);
  tlrt::cuda::synchronize(0, "test");
}

}  // namespace
