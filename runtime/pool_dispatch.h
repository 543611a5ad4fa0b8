// Pooling (SPEC-ops 14.1, 14.3-14.5): geometry validation in the contract's order, buffer checks,
// the empty rules, and dispatch to the backend that holds the operands. Each op returns a fresh
// buffer of the operands' dtype on their backend, or throws tlrt::Error naming `op` with the
// contract's words ("torchlean conv/pool: ...", "torchlean smooth pool: ...") and the sizes
// involved. Device work is queued on the device's stream (asynchronous).
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/pool/pool.h"
#include "runtime/buffer.h"
#include "runtime/shape_geometry.h"

namespace tlrt {

// The geometry arrays as decoded at the ABI (entries <= 2^32-1) and the channel count.
struct PoolArguments {
  Dims in;
  Dims kernel;
  Dims stride;
  Dims padding;
  uint32_t channels = 0;
};

// SPEC-ops 14.1 in the reference's order: "spatial rank must be one, two, or three", "array rank
// mismatch", per axis "invalid spatial dimension, kernel, stride or padding" (kernel or stride 0)
// and the output extent (in == 0 || p > k/2 ? 0 : (in + 2p - k) / s + 1, 64-bit, must fit
// uint32, else "LibTorch conv/pool: outDim overflow"), then the spatial products ("dimension
// product overflow") and the shapes [C, in...] and [C, out...] as conv_volume checks them
// ("dimension product overflow" past 2^64, "tensor size exceeds ATen indexing" past 2^63-1). The
// ops then check each buffer in TorchLean's order (gradOutput before input), each live and real,
// then its size. Rank 1 and 2 get leading unit axes.
kernels::PoolGeometry pool_geometry(const PoolArguments& args, const char* op);

std::unique_ptr<Buffer> maxpool_fwd(const Buffer& x, const PoolArguments& args, const char* op);
std::unique_ptr<Buffer> maxpool_bwd(const Buffer& x, const Buffer& dy, const PoolArguments& args,
                                    const char* op);
std::unique_ptr<Buffer> avgpool_fwd(const Buffer& x, const PoolArguments& args, const char* op);
std::unique_ptr<Buffer> avgpool_bwd(const Buffer& dy, const PoolArguments& args, const char* op);
// beta is rounded to the dtype first; the rounded value must be finite and nonzero (checked after
// the buffer sizes; the forward skips it when its output is empty, the backward never does).
std::unique_ptr<Buffer> smooth_maxpool_fwd(const Buffer& x, double beta, const PoolArguments& args,
                                           const char* op);
std::unique_ptr<Buffer> smooth_maxpool_bwd(const Buffer& x, const Buffer& dy, double beta,
                                           const PoolArguments& args, const char* op);

}  // namespace tlrt
