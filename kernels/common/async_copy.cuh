// Asynchronous global-to-shared copies (cp.async, sm_80 and later) for the kernels that keep the
// next rows' loads in flight while they work on the current ones. Each helper falls back to a
// plain copy (and the waits to nothing) when compiled for an older architecture, so a kernel that
// uses them stays correct there, only without the overlap.
//
// A thread's copies become visible to that thread after the wait that covers their commit group;
// other threads need a barrier on top. The kernels that use these copy and read back only their
// own slots.
#pragma once

#include <cuda_runtime.h>

#include "common/host_device.h"

namespace tlrt::kernels {

#if defined(__CUDACC__)
// 16 bytes from global src to shared dst (both 16-byte aligned), bypassing L1.
TLRT_DEVICE_INLINE void copy16_async(void* dst, const void* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
#else
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
#endif
}

// One chunk of V elements: 16 bytes (aligned) when V > 1, one element otherwise.
template <class T, int V>
TLRT_DEVICE_INLINE void copy_chunk_async(T* dst, const T* src) {
  if constexpr (V > 1) {
    copy16_async(dst, src);
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    if constexpr (sizeof(T) == 4) {
      asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
    } else {
      asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(d), "l"(src) : "memory");
    }
#else
    dst[0] = src[0];
#endif
  }
}

// Closes the calling thread's current group of copies (an empty group is fine).
TLRT_DEVICE_INLINE void copy_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most kPending of the calling thread's committed groups, the newest ones, are
// still in flight (0: all of them have landed).
template <int kPending>
TLRT_DEVICE_INLINE void copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}
#endif

}  // namespace tlrt::kernels
