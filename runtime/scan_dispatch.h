// Diagonal selective scans (SPEC-ops 13), dispatched to the backend that holds the operands.
// Validation (each failure a tlrt::Error naming `op`, nothing counted): every operand live,
// native, on one backend with one dtype; then the sizes in TorchLean's order A, B, X, h0 (and
// out, dY for the backward), each "buffer size does not match shape (size(A) = .. but state =
// ..)". Results are fresh buffers of the operands' dtype. The reference backend always runs the
// literal recurrence; the CUDA backend runs it too (one thread per channel, bit-identical) when
// the deterministic setting is on, and the chunked parallel scan (within the documented bound)
// when it is off. Device work is queued on the device's stream.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/buffer.h"

namespace tlrt {

// h of T*S; T = 0 or S = 0 -> empty.
std::unique_ptr<Buffer> selective_scan_fwd(const Buffer& a, const Buffer& b, const Buffer& x,
                                           const Buffer& h0, uint64_t steps, uint64_t state,
                                           bool variable, const char* op);

struct ScanGradientBuffers {
  std::unique_ptr<Buffer> da, db, dx, dh0;
};

// (dA, dB, dX, dH0); T = 0 or S = 0 -> zeros of the stated shapes (dX empty).
ScanGradientBuffers selective_scan_bwd(const Buffer& a, const Buffer& b, const Buffer& x,
                                       const Buffer& h0, const Buffer& out, const Buffer& dy,
                                       uint64_t steps, uint64_t state, bool variable,
                                       const char* op);

}  // namespace tlrt
