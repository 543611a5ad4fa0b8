// The fuzzer's only source of randomness: xoshiro256** seeded through splitmix64, with the
// range and choice helpers implemented here (not <random> distributions, whose results differ
// between standard libraries), so a seed names the same call sequence on every machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/uniform_below.h"

namespace tlrt_fuzz {

inline uint64_t splitmix64_next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A stream keyed by (seed, stream): batch b of seed s always sees the same numbers, whatever
// ran before it, which is what lets a child process replay one batch.
class RandomStream {
 public:
  RandomStream(uint64_t seed, uint64_t stream) {
    uint64_t mix = seed ^ (stream * 0xd1342543de82ef95ULL) ^ 0x5851f42d4c957f2dULL;
    for (uint64_t& word : state_) word = splitmix64_next(mix);
  }

  uint64_t next() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound); 0 when bound is 0. Rejection keeps it unbiased.
  uint64_t below(uint64_t bound) {
    return tlrt::uniform_below([this] { return next(); }, bound);
  }

  // Uniform in [lo, hi].
  uint64_t between(uint64_t lo, uint64_t hi) {
    if (hi <= lo) return lo;
    if (hi - lo == UINT64_MAX) return next();
    return lo + below(hi - lo + 1);
  }

  // True with probability percent/100.
  bool percent(unsigned percent) { return below(100) < percent; }

  // Uniform double in [0, 1) with 53 random bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(below(items.size()))];
  }

  // Index chosen with the given relative weights.
  size_t weighted(const std::vector<unsigned>& weights) {
    uint64_t total = 0;
    for (unsigned w : weights) total += w;
    uint64_t r = below(total);
    for (size_t i = 0; i < weights.size(); ++i) {
      if (r < weights[i]) return i;
      r -= weights[i];
    }
    return weights.size() - 1;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

}  // namespace tlrt_fuzz
