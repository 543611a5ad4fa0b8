// Buffer constructors and copies, dispatched to the backend that holds (or will hold) the payload.
// Every function returns a fresh buffer or throws tlrt::Error naming `op`; nothing is counted on
// failure. Device work is queued on the device's stream (asynchronous).
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/buffer.h"

namespace tlrt {

std::unique_ptr<Buffer> make_zeros(Backend backend, Dtype dtype, uint64_t n, const char* op);
// n zero scalars of the same kind as the live buffer `like` (its dtype, or its encoded word width:
// n * width zero bytes, +0 in every encoding) on its backend; released: released_buffer.
std::unique_ptr<Buffer> make_zeros_like(const Buffer& like, uint64_t n, const char* op);
// n copies of RN_dtype(value).
std::unique_ptr<Buffer> make_full(Backend backend, Dtype dtype, uint64_t n, double value,
                                  const char* op);
// SPEC-runtime section 7.
std::unique_ptr<Buffer> make_rand_uniform(Backend backend, Dtype dtype, uint64_t n, uint64_t key,
                                          const char* op);
std::unique_ptr<Buffer> make_rand_normal(Backend backend, Dtype dtype, uint64_t n, double mean,
                                         double deviation, uint64_t key, const char* op);
std::unique_ptr<Buffer> make_bernoulli_mask(Backend backend, Dtype dtype, uint64_t n, double p,
                                            uint64_t key, const char* op);

// Bit-exact copy of a live buffer, native or encoded (released: released_buffer error).
std::unique_ptr<Buffer> copy_buffer(const Buffer& source, const char* op);

}  // namespace tlrt
