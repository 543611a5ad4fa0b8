// Uniform integers from a stream of 64 random bits, shared by the tools' seeded generators
// (tlrt-fuzz's RandomStream, tlrt-parity's ShapeDraw): the same draws on every machine, unlike
// <random>'s distributions, whose results differ between standard libraries.
#pragma once

#include <cstdint>

namespace tlrt {

// Uniform in [0, bound) from `next()` (64 random bits a call); 0 when bound is 0. Draws at or
// above the largest multiple of bound are rejected, so every value is equally likely.
template <class Next>
uint64_t uniform_below(Next&& next, uint64_t bound) {
  if (bound == 0) return 0;
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t v;
  do {
    v = next();
  } while (v >= limit);
  return v % bound;
}

}  // namespace tlrt
