// Host data and buffers for the runtime-level gpu tests: reproducible values from a key, and
// uploads of host vectors into buffers of either backend.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/buffer.h"
#include "runtime/transfer.h"

namespace gpu_test {

template <class T>
constexpr tlrt::Dtype dtype_of() {
  return sizeof(T) == 4 ? tlrt::Dtype::f32 : tlrt::Dtype::f64;
}

// count values offset + scale * (2u - 1), u uniform on [0, 1) with 53 bits, element i drawn from
// key + i: the same vector for the same key on every machine.
template <class T>
std::vector<T> random_values(uint64_t count, uint64_t key, double scale = 1.0,
                             double offset = 0.0) {
  std::vector<T> v(count);
  for (uint64_t i = 0; i < count; ++i) {
    const double u =
        static_cast<double>(tlrt::random::splitmix64_finalize(key + i) >> 11) * 0x1p-53;
    v[i] = static_cast<T>(offset + scale * (2 * u - 1));
  }
  return v;
}

template <class T>
std::unique_ptr<tlrt::Buffer> upload(tlrt::Backend backend, const std::vector<T>& v,
                                     const char* op = "gpu test") {
  return tlrt::upload_words(backend, dtype_of<T>(), reinterpret_cast<const uint8_t*>(v.data()),
                            v.size(), dtype_of<T>(), op);
}

}  // namespace gpu_test
