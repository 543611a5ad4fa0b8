// The legacy attention pair (symbols-ops.tsv, legacy rows; kernels/attention/attention.h for the
// arithmetic). The forward returns its output with an attention context attached: copies of q (its
// blocked rows +0), k and v, the probabilities, the blocked-row flags, the scale, whether a mask
// was given and the deterministic setting, all in workspaces of the backend's caching allocator
// (not payloads: the ownership counters do not see them), held until the output is released or
// finalised. The backward reads only that context and its cotangent. Every failure is a
// tlrt::Error naming `op` with TorchLean's words ("LibTorch attention: ...") and the sizes; nothing
// is counted on failure. Device work is queued on the device's stream (asynchronous).
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/buffer.h"

namespace tlrt {

// Checks, in TorchLean's order: has_mask 0 or 1; scale finite and within the float32 range;
// batch * n * d (and batch * n * n with a mask) within int64 and its bytes addressable; Q, K, V
// (and the mask) live, native, of one dtype, each of batch * n * d (batch * n * n) scalars; an
// attention provider enabled (runtime settings 6, math, or 5, memory-efficient, for float32).
// batch * n * d = 0 gives an empty output (with an empty context) and queues nothing.
std::unique_ptr<Buffer> attention_fwd(const Buffer& q, const Buffer& k, const Buffer& v,
                                      const Buffer* mask, uint32_t has_mask, uint64_t batch,
                                      uint64_t n, uint64_t d, double scale, const char* op);

struct AttentionGrads {
  std::unique_ptr<Buffer> dq, dk, dv;
};

// `out` must carry the context of attention_fwd (released or other buffers: "backward requires
// the original, unreleased forward buffer"); the deterministic setting must be what it was at the
// forward; dout live, of out's dtype and size.
AttentionGrads attention_bwd(const Buffer& out, const Buffer& dout, const char* op);

}  // namespace tlrt
