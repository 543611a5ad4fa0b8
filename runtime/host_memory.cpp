#include "runtime/host_memory.h"

#include <sys/sysinfo.h>

#include <cstdlib>

namespace tlrt {

void* HostMemory::allocate(size_t bytes) {
  // 512-byte alignment matches what the device allocator hands out, so vector paths line up.
  constexpr size_t kAlign = 512;
  const size_t padded = (bytes + kAlign - 1) / kAlign * kAlign;
  return std::aligned_alloc(kAlign, padded);
}

void HostMemory::release(void* ptr, size_t) {
  std::free(ptr);
}

void HostMemory::memory_info(size_t* free_bytes, size_t* total_bytes) {
  struct sysinfo info {};
  if (sysinfo(&info) != 0) {
    *free_bytes = 0;
    *total_bytes = 0;
    return;
  }
  *total_bytes = static_cast<size_t>(info.totalram) * info.mem_unit;
  *free_bytes = static_cast<size_t>(info.freeram + info.bufferram) * info.mem_unit;
}

}  // namespace tlrt
