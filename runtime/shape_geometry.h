// Shape arguments shared by the families that view a flat buffer through dims (SPEC-ops 8):
// checked products, the buffer-against-shape check, and the validated geometry of an axis map
// (broadcast_to and its adjoint reduce_from_broadcast). Every failure is a tlrt::Error
// (invalid_argument) naming the op and the values involved, with the spec's words in it.
#pragma once

#include <cstdint>
#include <memory_resource>
#include <string>
#include <vector>

#include "runtime/buffer.h"

namespace tlrt {

using Dims = std::vector<uint64_t>;

// "[2, 3, 4]".
std::string dims_text(const Dims& dims);

// Product of the extents, checked in signed 64-bit as the contract does; throws
// "shape size overflow (<name> = [..])". The empty product is 1.
uint64_t shape_size(const Dims& dims, const char* name, const char* op);

// Throws "buffer size does not match shape (size(<name>) = 6 but prod(<dims_name>) = 8 for
// <dims_name> = [2, 4])" unless size(b) == shape_size(dims).
void require_shape(const Buffer& b, const char* name, const Dims& dims, const char* dims_name,
                   const char* op);

// A validated axis map: output axis j reads input axis source[j] (or nothing: -1 for an inserted
// axis, map entry 0). Input axes may be permuted; an input extent of 1 is broadcast.
// Scratch for the per-call planning of shape arguments: std::pmr containers built on it live on
// the stack (4 KiB: a few lists of about a hundred axes; longer ones spill to the heap), so that a
// small call allocates no host memory for them.
class PlanArena {
 public:
  std::pmr::memory_resource* get() { return &resource_; }

 private:
  alignas(16) unsigned char bytes_[4096];
  std::pmr::monotonic_buffer_resource resource_{bytes_, sizeof bytes_};
};

struct BroadcastGeometry {
  Dims in_dims;
  Dims out_dims;
  std::vector<int64_t> source;  // per output axis: input axis, or -1
  uint64_t in_size = 0;
  uint64_t out_size = 0;

  // Row-major element stride of input axis a.
  uint64_t in_stride(size_t a) const;
  // Per output axis: the input stride that axis walks (0 for inserted and broadcast axes).
  std::vector<uint64_t> read_strides() const;
  // Whether output axis j is summed over by the adjoint (inserted, or read from an extent-1
  // input axis).
  bool reduced(size_t j) const;
};

// The checks of SPEC-ops 8 in the contract's order: both shapes' products (overflow), then
// "axis map rank mismatch", and per output axis "broadcast axis out of range", "repeated
// broadcast input axis", "incompatible broadcast dimension"; last "broadcast omits an input
// axis". Buffer sizes are the caller's to check (require_shape).
// The shapes move into the geometry.
BroadcastGeometry broadcast_geometry(Dims in_dims, Dims out_dims,
                                     const std::vector<uint64_t>& axis_map, const char* op);

}  // namespace tlrt
