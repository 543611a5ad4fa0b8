// The seed of one parity case: a stable 64-bit key for (run seed, op, dtype), so one op replays
// alone with --only and gets the same inputs as in a full run; and uniform draws from a key.
#pragma once

#include <cstdint>

#include "kernels/random/splitmix.h"

namespace tlrt::parity {

inline uint64_t case_key(uint64_t seed, const char* op_name, bool f32) {
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a of the name
  for (const char* p = op_name; *p != '\0'; ++p) {
    h = (h ^ static_cast<unsigned char>(*p)) * 0x100000001B3ull;
  }
  using tlrt::random::splitmix64_finalize;
  return splitmix64_finalize(seed ^ splitmix64_finalize(h + (f32 ? 0 : 1)));
}

// A draw in [0, 1) from a key and an index: the top 53 bits of splitmix64_finalize(key + i).
inline double unit_draw(uint64_t key, uint64_t i) {
  return static_cast<double>(tlrt::random::splitmix64_finalize(key + i) >> 11) * 0x1p-53;
}

}  // namespace tlrt::parity
