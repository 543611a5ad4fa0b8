// Byte copies of encoded buffers (SPEC-runtime 9; SPEC-ops 8 for the encoded concat1d / slice1d).
// Encoded words are opaque: these launchers move bytes and never read a word, so every NaN payload
// and signed zero of any configured format is kept, on both backends, by construction.
//   encoded_concat   out[0, a_bytes) = a, out[a_bytes, a_bytes + b_bytes) = b
//   encoded_slice    out[0, bytes) = x[offset, offset + bytes)
// Word ranges arrive as byte ranges (words x width, computed and checked by the caller,
// runtime/encoded.cpp); `out` has room for every byte written. An empty part writes nothing and
// its pointers may be null.
#pragma once

#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

// Reference backend (kernels/encoded/encoded_ref.cpp): host memory, memcpy.
void encoded_concat_ref(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes,
                        void* out);
void encoded_slice_ref(const void* x, uint64_t offset, uint64_t bytes, void* out);

// CUDA backend (kernels/encoded/encoded.cu): device memory, device-to-device copies queued on
// `stream` (asynchronous).
void encoded_concat_cuda(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes,
                         void* out, CUstream_st* stream);
void encoded_slice_cuda(const void* x, uint64_t offset, uint64_t bytes, void* out,
                        CUstream_st* stream);

}  // namespace tlrt::kernels
