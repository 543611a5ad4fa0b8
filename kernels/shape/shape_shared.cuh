// What the shape ops' CUDA translation units share: kernels/shape/shape.cu (the ops, the
// strided-copy engine's plans and its other kernels) and kernels/shape/shape_transpose.cu (the
// batched transpose): words as 16-byte vectors, 16-byte stores, and the transpose's launch.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/shape/copy_plan.h"

namespace tlrt::kernels::shape_detail {

// One 16-byte global store of v at p (16-byte aligned). Written out because an assignment of a
// uint4 assembled from words is split into four 4-byte stores by the compiler here.
__device__ __forceinline__ void store16(void* p, const uint4& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(p)),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// The same with the streaming cache hint (st.global.cs: the lines are written once and evicted
// first), for outputs that are not read back soon.
__device__ __forceinline__ void store16_cs(void* p, const uint4& v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(p)),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// The input and output offsets of batch `index` over the first `rank` batch axes (extents dims,
// row-major, the last fastest; strides in and out): the sums of its mixed-radix digits times the
// strides. The tile and transpose kernels find their batch's base offsets with it.
struct BatchOffsets {
  uint64_t in = 0, out = 0;
};
template <int N>
__device__ __forceinline__ BatchOffsets batch_offsets(uint64_t index, int rank,
                                                      const uint64_t (&dims)[N],
                                                      const uint64_t (&in)[N],
                                                      const uint64_t (&out)[N]) {
  BatchOffsets b;
  for (int j = rank - 1; j >= 0; --j) {
    const uint64_t q = index / dims[j];
    const uint64_t coord = index - q * dims[j];
    b.in += coord * in[j];
    b.out += coord * out[j];
    index = q;
  }
  return b;
}

// Words of W as 16-byte vectors, packed and unpacked in registers (no instruction for uint32_t and
// uint4; two 32-bit halves per uint64_t).
template <class W>
struct Pack16;
template <>
struct Pack16<uint32_t> {
  static constexpr int kWords = 4;
  static __device__ __forceinline__ uint4 pack(const uint32_t* w) {
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
  static __device__ __forceinline__ void unpack(const uint4& v, uint32_t* w) {
    w[0] = v.x;
    w[1] = v.y;
    w[2] = v.z;
    w[3] = v.w;
  }
};
template <>
struct Pack16<uint64_t> {
  static constexpr int kWords = 2;
  static __device__ __forceinline__ uint4 pack(const uint64_t* w) {
    return make_uint4(static_cast<uint32_t>(w[0]), static_cast<uint32_t>(w[0] >> 32),
                      static_cast<uint32_t>(w[1]), static_cast<uint32_t>(w[1] >> 32));
  }
  static __device__ __forceinline__ void unpack(const uint4& v, uint64_t* w) {
    w[0] = v.x | uint64_t{v.y} << 32;
    w[1] = v.z | uint64_t{v.w} << 32;
  }
};
template <>
struct Pack16<uint4> {
  static constexpr int kWords = 1;
  static __device__ __forceinline__ uint4 pack(const uint4* w) { return w[0]; }
  static __device__ __forceinline__ void unpack(const uint4& v, uint4* w) { w[0] = v; }
};

// Runs the plan on the batched transpose when its group of `unit` words (the run contiguous in both
// input and output) fits a kernel: 4, 8, 12, 16 or 24 bytes, the 8- and 16-byte groups moved as one
// word of V when aligned. Axis k reads input stride `unit`, axis c is the innermost output axis
// before the run. Returns false (nothing queued) for any other geometry. Defined in
// kernels/shape/shape_transpose.cu for words of 4 and 8 bytes (uint32_t, uint64_t).
template <class W>
bool launch_transpose(const W* x, W* out, const CopyPlan& plan, size_t k, size_t c, uint64_t unit,
                      cudaStream_t stream, const char* op);

}  // namespace tlrt::kernels::shape_detail
