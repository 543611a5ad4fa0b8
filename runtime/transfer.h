// Blocking host transfers (SPEC-runtime sections 6 and 8). Conversions happen on the host while
// data passes through pinned staging, so the device moves only the buffer's own bytes:
//   binary64 -> float32 rounds to nearest even, float32 -> binary64 widens exactly,
//   same-dtype transfers are bit copies (NaN payloads and signed zeros preserved).
// Checkpoint words are little-endian IEEE patterns.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/buffer.h"

namespace tlrt {

// Bytes per pinned staging buffer of the CUDA transfers (two of them per device, double-buffered
// against the DMA): 16 host conversion ranges of 2 MiB (the size of a huge page), so a chunk keeps
// 16 threads busy.
constexpr uint64_t kStagingChunkBytes = uint64_t{32} << 20;

// n binary64 host values -> fresh buffer of `dtype`.
std::unique_ptr<Buffer> upload_f64(Backend backend, Dtype dtype, const double* src, uint64_t n,
                                   const char* op);
// All size() scalars of a live or released buffer (released: nothing) widened to binary64.
void download_f64(const Buffer& src, double* dst, const char* op);

// `count` little-endian words of `source` dtype -> fresh buffer of `dtype`.
std::unique_ptr<Buffer> upload_words(Backend backend, Dtype dtype, const uint8_t* bytes,
                                     uint64_t count, Dtype source, const char* op);
// size() scalars converted to `target` and written as little-endian words.
void download_words(const Buffer& src, uint8_t* dst, Dtype target, const char* op);

}  // namespace tlrt
