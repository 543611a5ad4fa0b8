// The memory offset of a row-major index over a list of axes: index i in [0, prod(extent))
// decodes with the last axis fastest into per-axis coordinates, and the offset is
// sum_k coord_k * stride[k]. The outermost axis needs no division (i is below its extent once the
// inner axes are divided out). Shared by the ordered fold's axis lists and the transpose's
// broadcast positions, on the host and on the device.
#pragma once

#include <cstdint>

#include "common/host_device.h"

namespace tlrt::kernels {

TLRT_HOST_DEVICE uint64_t row_major_offset(const uint64_t* extent, const uint64_t* stride,
                                           uint32_t rank, uint64_t i) {
  if (rank == 0) return 0;
  uint64_t offset = 0;
  // A signed counter: with an unsigned one the transpose kernels, which inline this, keep more
  // 64-bit index registers and spill (16-byte groups: 116 bytes instead of 40).
  for (int k = static_cast<int>(rank) - 1; k > 0; --k) {
    const uint64_t q = i / extent[k];
    offset += (i - q * extent[k]) * stride[k];
    i = q;
  }
  return offset + i * stride[0];
}

}  // namespace tlrt::kernels
