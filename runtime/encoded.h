// Encoded buffers (SPEC-runtime section 9; SPEC-ops 8 for concat1d / slice1d): `size` opaque words
// of `width` bytes, moved only as bytes. Nothing here reads a word's value: uploads, downloads,
// copies, concatenations and slices are byte copies, so every NaN payload and signed zero of any
// configured format survives. The format object a buffer retains is the ABI's business
// (abi/boundary.h, wrap_encoded); the runtime sees only Dtype::encoded and the width.
//
// Failures throw tlrt::Error naming `op` with the sizes involved and the reference's words
// ("encoded buffer: truncated scalar word", "encoded buffer: scalar count exceeds the tape ABI",
// "concat: incompatible encoded buffers", "slice: invalid encoded buffer or extent"); a failed
// call allocates and counts nothing. Device work is queued on the device's stream; transfers are
// blocking.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/buffer.h"

namespace tlrt {

// The number of words in `length` bytes of `width`-byte words: width > 0 and width dividing length
// ("encoded buffer: truncated scalar word"), and a count that fits UInt32 ("encoded buffer: scalar
// count exceeds the tape ABI"); both invalid_argument.
uint64_t encoded_word_count(uint64_t length, uint64_t width, const char* op);

// A fresh encoded buffer holding `length` host bytes verbatim as length / width words (checked by
// encoded_word_count first); blocking (through pinned staging on the CUDA backend).
std::unique_ptr<Buffer> upload_encoded(Backend backend, uint64_t width, const uint8_t* bytes,
                                       uint64_t length, const char* op);

// Writes the size() * width() payload bytes of a live encoded buffer to `dst`; blocking.
void download_encoded(const Buffer& src, uint8_t* dst, const char* op);

// [a; b] of two live encoded buffers of one width and backend with size(a) = n, size(b) = m
// ("concat: incompatible encoded buffers" otherwise); the result, of n + m words of that width,
// must fit UInt32 words.
std::unique_ptr<Buffer> concat_encoded(const Buffer& a, const Buffer& b, uint64_t n, uint64_t m,
                                       const char* op);

// Words [start, start + len) of a live encoded buffer with size(x) = n, start <= n and
// len <= n - start ("slice: invalid encoded buffer or extent" otherwise).
std::unique_ptr<Buffer> slice_encoded(const Buffer& x, uint64_t n, uint64_t start, uint64_t len,
                                      const char* op);

}  // namespace tlrt
