// Geometry of the convolution symbols (SPEC-ops 14.1, 14.6), checked in TorchLean's order with its
// messages, 64-bit intermediates. The fixed-layout part (rank and array checks, the three
// output-extent rules, conv, transposed conv and pooling) is what the pooling symbols share.
//
// Fixed-layout symbols (pure: every failure panics), after the arrays are decoded:
//   1. "torchlean conv/pool: spatial rank must be one, two, or three" (size(inSpatial) in 1..3)
//   2. "torchlean conv/pool: array rank mismatch" (kernel, stride, padding of the same length)
//   3. per axis: "torchlean conv/pool: invalid spatial dimension, kernel, stride or padding"
//      (kernel > 0, stride > 0), then that axis's output extent ("LibTorch conv/pool: outDim
//      overflow" / "outDimTranspose overflow" above 2^32-1)
//   4. the spatial products of input, kernel and output ("torchlean conv/pool: dimension product
//      overflow"; a product with a zero factor is 0 without overflow)
// and then, per buffer, C x prod(extents) ("... dimension product overflow", "... tensor size
// exceeds ATen indexing" above 2^63-1) against the buffer ("torchlean conv/pool: buffer size
// mismatch").
#pragma once

#include <cstdint>

#include "common/error.h"
#include "runtime/buffer.h"
#include "runtime/shape_geometry.h"

namespace tlrt {

enum class ConvKind : uint8_t { convolution, transposed, pooling };

// conv: (in + 2p < k) ? 0 : (in + 2p - k) / s + 1.
uint64_t conv_out_dim(uint64_t in, uint64_t k, uint64_t s, uint64_t p, const char* op);
// transposed conv: in == 0 ? 0 : max(0, (in - 1) * s + k - 2p).
uint64_t conv_transpose_out_dim(uint64_t in, uint64_t k, uint64_t s, uint64_t p, const char* op);
// pooling: (in == 0 || p > k / 2) ? 0 : conv_out_dim(in, k, s, p).
uint64_t pool_out_dim(uint64_t in, uint64_t k, uint64_t s, uint64_t p, const char* op);

struct ConvGeometry {
  Dims in, kernel, stride, padding, out;  // spatial, one entry per axis
  uint64_t in_volume = 0, kernel_volume = 0, out_volume = 0;
  uint32_t rank() const { return static_cast<uint32_t>(in.size()); }
};

// Steps 1-4 above on decoded arrays.
ConvGeometry conv_geometry(const Dims& in, const Dims& kernel, const Dims& stride,
                           const Dims& padding, ConvKind kind, const char* op);

// channels x prod(spatial) with TorchLean's overflow messages (see the head of this file).
uint64_t conv_volume(uint64_t channels, const Dims& spatial, const char* op);

// b live and real (require_native), then conv_volume(channels, spatial), then "torchlean
// conv/pool: buffer size mismatch (size(<name>) = .. but <what> = ..)" unless size(b) equals it:
// TorchLean's order for each operand.
void require_conv_size(const Buffer& b, const char* name, uint64_t channels, const Dims& spatial,
                       const char* what, const char* op);
// The same for an explicit leading pair (kernel (a, b, k...)).
void require_conv_kernel_size(const Buffer& b, const char* name, uint64_t a, uint64_t c,
                              const Dims& spatial, const char* what, const char* op);

// conv_io (SPEC-ops 14.6), every failure an IO error (invalid_argument) in TorchLean's order:
//   "LibTorch conv: spatial rank must be one, two, or three", "LibTorch conv: rank mismatch",
//   "LibTorch conv: invalid channel groups", batch ("LibTorch: dimension product overflow",
//   "LibTorch conv: batch exceeds ABI"), per axis "LibTorch conv: kernel, stride and dilation must
//   be positive" then "LibTorch conv: output dimension exceeds ABI", then the output volume
//   ("LibTorch: dimension product overflow", "LibTorch conv: output exceeds ABI").
struct ConvIoGeometry {
  Dims input_dims, kernel_dims;  // as given
  Dims stride, before, after, dilation;
  uint64_t groups = 1, batch = 1, cin = 0, cout = 0;
  Dims in, kernel, out;  // spatial extents
  uint64_t out_total = 0;
  uint32_t rank() const { return static_cast<uint32_t>(stride.size()); }
};
ConvIoGeometry conv_io_geometry(const Dims& input_dims, const Dims& kernel_dims, const Dims& stride,
                                const Dims& before, const Dims& after, const Dims& dilation,
                                uint64_t groups, const char* op);
// The IO product rule: 0 when a factor is 0, "LibTorch: dimension product overflow" above 2^63-1.
uint64_t conv_io_volume(const Dims& dims, const char* op);
// "LibTorch: buffer size mismatch (...)" unless size(b) = conv_io_volume(shape).
void require_conv_io_size(const Buffer& b, const char* name, const Dims& shape, const char* op);

}  // namespace tlrt
