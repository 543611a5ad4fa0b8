// Host memory under the reference backend's caching allocator. The reference backend keeps the
// same allocator as the CUDA backend so that statistics, the memory-fraction cap and the
// out-of-memory path behave identically on a machine without a GPU.
#pragma once

#include "runtime/caching_allocator.h"

namespace tlrt {

class HostMemory final : public MemorySource {
 public:
  void* allocate(size_t bytes) override;
  void release(void* ptr, size_t bytes) override;
  void synchronize() override {}
  void memory_info(size_t* free_bytes, size_t* total_bytes) override;
};

}  // namespace tlrt
