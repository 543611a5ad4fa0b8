// The memory offset of a row-major index over a list of axes: index i in [0, prod(extent))
// decodes with the last axis fastest into per-axis coordinates, and the offset is
// sum_k coord_k * stride[k]. The outermost axis needs no division (i is below its extent once the
// inner axes are divided out). Shared by the ordered fold's axis lists and the transpose's
// broadcast positions, on the host and on the device.
#pragma once

#include <cstdint>

#include "common/host_device.h"

namespace tlrt::kernels {

// rank >= 0 axes; the axis counter has rank's type. The fold's loaders pass a uint32_t; the
// batched transpose kernels pass an int, with which they keep fewer 64-bit index registers (with an
// unsigned counter their 16-byte-group kernel spills 116 bytes instead of 40 and runs at 72% of
// the copy bandwidth instead of 85%).
template <class Rank>
TLRT_HOST_DEVICE uint64_t row_major_offset(const uint64_t* extent, const uint64_t* stride,
                                           Rank rank, uint64_t i) {
  if (rank == 0) return 0;
  uint64_t offset = 0;
  for (Rank k = rank - 1; k > 0; --k) {
    const uint64_t q = i / extent[k];
    offset += (i - q * extent[k]) * stride[k];
    i = q;
  }
  return offset + i * stride[0];
}

}  // namespace tlrt::kernels
