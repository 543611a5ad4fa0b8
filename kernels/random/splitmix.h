// The seeded random stream of SPEC-runtime section 7, shared by host and device code so that both
// backends produce the same draws bit for bit: D(key, j) = low32(M(key + j)) with M the SplitMix64
// finaliser, all arithmetic modulo 2^64.
#pragma once

#include <cstdint>

#include "common/host_device.h"

namespace tlrt::random {

TLRT_HOST_DEVICE uint64_t splitmix64_finalize(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

TLRT_HOST_DEVICE uint32_t draw(uint64_t key, uint64_t j) {
  return static_cast<uint32_t>(splitmix64_finalize(key + j));
}

}  // namespace tlrt::random
