// What the indexing family's CUDA translation units share: kernels/indexing/indexing.cu (the
// gathers) and kernels/indexing/indexing_scatter.cu (the ordered scatters): the index lists a
// kernel takes (a device pointer, or short host lists as kernel parameters) and their checks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "kernels/common/launch.cuh"
#include "kernels/indexing/indexing.h"

namespace tlrt::kernels::indexing_detail {

// The index list of a gather or a short scatter: a device pointer, or (short host lists) the words
// themselves as a kernel parameter, read in place through __grid_constant__ (no local copy).
struct PtrIdx {
  const uint32_t* p;
  TLRT_DEVICE_INLINE const uint32_t* get() const { return p; }
};
template <uint32_t N>
struct ParamIdx {
  uint32_t v[N];
  TLRT_DEVICE_INLINE const uint32_t* get() const { return v; }
};
// Two sizes, so that a list of a few entries does not ship 4 KiB of parameters per launch.
constexpr uint32_t kParamSmall = 64;
constexpr uint32_t kParamLarge = static_cast<uint32_t>(kParamIndices);
// CUDA 12.1+ on sm_70+ takes up to 32764 bytes of kernel parameters.
static_assert(sizeof(ParamIdx<kParamLarge>) + 256 <= 32764, "kernel parameter space");

inline void require_param_count(uint64_t k, const char* op) {
  if (k <= kParamIndices) return;
  fail(ErrorKind::invalid_argument, op,
       "a parameter index list holds at most " + std::to_string(kParamIndices) +
           " entries (k = " + std::to_string(k) + ")");
}

template <uint32_t N>
ParamIdx<N> param_list(const uint32_t* host_idx, uint64_t k) {
  ParamIdx<N> list{};
  std::copy(host_idx, host_idx + k, list.v);
  return list;
}

}  // namespace tlrt::kernels::indexing_detail
