// A device copy of a host vector placed an element offset past a cudaMalloc'ed base (offset 1:
// never 16-byte aligned, which sends the kernels down their element paths; 0: cudaMalloc's
// alignment), freed at scope exit. For the gpu tests that call CUDA launchers directly.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace gpu_test {

template <class T>
class OffsetDevice {
 public:
  explicit OffsetDevice(const std::vector<T>& host, uint64_t offset = 1)
      : n_(host.size()), offset_(offset) {
    EXPECT_EQ(cudaMalloc(&base_, (n_ + 2) * sizeof(T)), cudaSuccess);
    if (!host.empty()) {
      EXPECT_EQ(cudaMemcpy(data(), host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice),
                cudaSuccess);
    }
  }
  // n zeros.
  OffsetDevice(uint64_t n, uint64_t offset) : OffsetDevice(std::vector<T>(n, T(0)), offset) {}
  ~OffsetDevice() { cudaFree(base_); }
  OffsetDevice(const OffsetDevice&) = delete;
  OffsetDevice& operator=(const OffsetDevice&) = delete;
  T* data() const { return static_cast<T*>(base_) + offset_; }
  // The values after every launch on the device has finished.
  std::vector<T> read() const {
    std::vector<T> host(n_);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    if (n_ != 0) {
      EXPECT_EQ(cudaMemcpy(host.data(), data(), n_ * sizeof(T), cudaMemcpyDeviceToHost),
                cudaSuccess);
    }
    return host;
  }

 private:
  uint64_t n_;
  uint64_t offset_;
  void* base_ = nullptr;
};

}  // namespace gpu_test
