// Shape ops, CUDA backend. Every op is a selection, so every kernel moves words (uint32_t for
// float32, uint64_t for float64, uint4 for 16 bytes) and never touches a floating-point value:
// the results are the input bits, bit-exact with the reference backend (NaN payloads included).
//
//   slice1d                the concat kernel over one part up to kKernelCopyBytes (a launch costs
//                          the host less than a copy-engine call), a device-to-device
//                          cudaMemcpyAsync on the op's stream beyond.
//   concat1d               one kernel over 16-byte output chunks: a chunk inside a, or inside b
//                          when b's part of the output is 16-byte aligned, is one vector load and
//                          one vector store; chunks that straddle the seam, or come from a
//                          misaligned b, gather their words one by one and still store 16 bytes.
//   broadcast_vec_to_cols, broadcast_to, swap_adjacent
//                          one strided-copy engine on the plan of kernels/shape/copy_plan.h
//                          (extent-1 axes dropped, axes contiguous in both merged), which picks:
//     * rows: the innermost output axis reads input stride 1 (runs contiguous on both sides, the
//       runs at least 32 bytes or no transpose axis) or stride 0 (every output row one value):
//       each thread writes 16 bytes of one row (one vector load and store, or one load and a
//       splatted store) when the rows and strides allow it, else single words; the row's input
//       offset is divided out of the row index per chunk;
//     * gathered rows: the innermost output axis reads a non-unit input stride right inside a
//       broadcast axis (a permuting broadcast: consecutive output rows hold the same words), rows
//       of whole 16-byte vectors and at least 512 bytes, at least 16 of them alike: a block
//       gathers 16-byte pieces of one row once and stores each to up to 16 consecutive rows;
//     * transpose: the innermost output axis reads a non-unit input stride (a permutation), or the
//       contiguous runs (groups) are shorter than 32 bytes, and a group is 4, 8, 12, 16 or 24
//       bytes: a batched transpose through a swizzled shared-memory tile (64 x 64 groups of 4, 8
//       and 12 bytes, 128 x 128 of 4 bytes on large copies without broadcast axes, 32 x 32 of 16
//       and 24 bytes; 8- and 16-byte groups moved as one word),
//       every load of a thread issued before its shared-memory stores. Interior tiles move
//       16-byte vectors on each side whose rows are 16-byte aligned (transposed in registers on
//       the way in), with per-tile 64-bit base pointers and constant offsets, no division and no
//       bounds check; edge tiles and misaligned sides move single words. Broadcast batch axes are
//       written from the one loaded tile (its words held in registers, one add per position),
//       split over the grid in chunks when the tiles alone do not fill the device;
//     * tile: the same geometry with any other group (or more than 8 batch axes of one kind): a
//       [32 x 32 unit] tile over the output axis that reads input stride `unit` (k) and the
//       innermost output axis (c) is loaded through shared memory along k (coalesced input) and
//       stored along c (coalesced output), the other axes walked per tile;
//     * small permutations (at most kLightGatherElements elements): one gathered word per output
//       element, no tile;
//     * a plain copy when the plan is one contiguous run.
//   Index arithmetic is 32-bit (multiply-high division, FastDiv32) when every output index and
//   input offset is below 2^31, 64-bit otherwise.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/common/row_major.h"
#include "kernels/shape/copy_plan.h"
#include "kernels/shape/shape.h"

namespace tlrt::kernels {
namespace {

// 16 bytes of one word repeated.
__device__ __forceinline__ uint4 splat16(uint32_t w) {
  return make_uint4(w, w, w, w);
}
__device__ __forceinline__ uint4 splat16(uint64_t w) {
  const uint32_t lo = static_cast<uint32_t>(w), hi = static_cast<uint32_t>(w >> 32);
  return make_uint4(lo, hi, lo, hi);
}

// ---------------------------------------------------------------------------------------------
// concat1d

// kWide = 16 / sizeof(W) words per chunk; a and out are 16-byte aligned; b_wide: b's part starts
// on a chunk boundary and b is 16-byte aligned.
template <class W>
__global__ void concat_wide_kernel(const W* __restrict__ a, uint64_t n, const W* __restrict__ b,
                                   uint64_t m, W* __restrict__ out, bool b_wide) {
  constexpr uint64_t kWide = 16 / sizeof(W);
  const uint64_t total = n + m;
  const uint64_t chunks = (total + kWide - 1) / kWide;
  for (uint64_t q = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; q < chunks;
       q += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t e = q * kWide;
    if (e + kWide <= n) {
      *reinterpret_cast<uint4*>(out + e) = __ldg(reinterpret_cast<const uint4*>(a + e));
    } else if (b_wide && e >= n && e + kWide <= total) {
      *reinterpret_cast<uint4*>(out + e) = __ldg(reinterpret_cast<const uint4*>(b + (e - n)));
    } else if (e + kWide <= total) {
      union {
        uint4 v;
        W w[kWide];
      } chunk;
#pragma unroll
      for (uint64_t i = 0; i < kWide; ++i) {
        const uint64_t k = e + i;
        chunk.w[i] = k < n ? a[k] : b[k - n];
      }
      *reinterpret_cast<uint4*>(out + e) = chunk.v;
    } else {
      for (uint64_t k = e; k < total; ++k) out[k] = k < n ? a[k] : b[k - n];
    }
  }
}

// Any alignment: one word per thread.
template <class W>
__global__ void concat_words_kernel(const W* __restrict__ a, uint64_t n, const W* __restrict__ b,
                                    uint64_t m, W* __restrict__ out) {
  const uint64_t total = n + m;
  for (uint64_t k = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; k < total;
       k += uint64_t{gridDim.x} * blockDim.x) {
    out[k] = k < n ? a[k] : b[k - n];
  }
}

// out[0, n) = a, out[n, n + m) = b: the 16-byte kernel where out and a are 16-byte aligned, else
// one word per thread. Nothing for an empty output (its pointers may be null).
template <class W>
void launch_concat(const W* a, uint64_t n, const W* b, uint64_t m, W* out, cudaStream_t stream,
                   const char* op) {
  const uint64_t total = n + m;
  if (total == 0) return;
  constexpr uint64_t kWide = 16 / sizeof(W);
  if (aligned16(out) && (n == 0 || aligned16(a))) {
    const bool b_wide = n % kWide == 0 && (m == 0 || aligned16(b));
    const uint64_t chunks = (total + kWide - 1) / kWide;
    concat_wide_kernel<W>
        <<<grid_for(chunks, kThreads), kThreads, 0, stream>>>(a, n, b, m, out, b_wide);
  } else {
    concat_words_kernel<W><<<grid_for(total, kThreads), kThreads, 0, stream>>>(a, n, b, m, out);
  }
  check_launch(op);
}

// Copies up to this many bytes run as a kernel, whose launch costs the host less than a
// copy-engine call (docs/BENCH.md, abi-ops); longer ones go to the copy engine, which moves a
// misaligned source at full speed.
constexpr uint64_t kKernelCopyBytes = uint64_t{1} << 20;

// Queues the copy of `count` words; nothing for an empty part (its pointers may be null).
template <class W>
void copy_elements(W* to, const W* from, uint64_t count, cudaStream_t stream, const char* op) {
  if (count == 0) return;
  if (count * sizeof(W) <= kKernelCopyBytes) {
    launch_concat<W>(from, count, nullptr, 0, to, stream, op);
    return;
  }
  check_cuda(cudaMemcpyAsync(to, from, count * sizeof(W), cudaMemcpyDeviceToDevice, stream), op,
             "cudaMemcpyAsync device to device");
}

// ---------------------------------------------------------------------------------------------
// The strided-copy engine

constexpr int kMaxAxes = 64;  // a plan has at most 63 axes: each extent >= 2, size < 2^63

template <class I>
struct Divider;
template <>
struct Divider<uint32_t> {
  FastDiv32 f;
  Divider() = default;
  explicit Divider(uint64_t d) : f(static_cast<uint32_t>(d)) {}
  __device__ __forceinline__ uint32_t div(uint32_t n) const { return f.div(n); }
  __device__ __forceinline__ uint32_t d() const { return f.d; }
};
template <>
struct Divider<uint64_t> {
  uint64_t dv = 1;
  Divider() = default;
  explicit Divider(uint64_t d) : dv(d) {}
  __device__ __forceinline__ uint64_t div(uint64_t n) const { return n / dv; }
  __device__ __forceinline__ uint64_t d() const { return dv; }
};

// Axes whose coordinates are divided out of a row index: extents and input strides, row-major.
template <class I>
struct Axes {
  int rank = 0;
  Divider<I> dims[kMaxAxes];
  I strides[kMaxAxes];

  __device__ __forceinline__ I offset(I index) const {
    I off = 0;
    for (int j = rank - 1; j >= 0; --j) {
      const I q = dims[j].div(index);
      off += (index - q * dims[j].d()) * strides[j];
      index = q;
    }
    return off;
  }
};

// The output as [rows, len]; row r starts at input offset rows_axes.offset(r). Each thread writes
// one chunk of kChunk words of one row (len % kChunk == 0). kBroadcast: the row is one value
// x[offset(r)]; else the row is the contiguous run x[offset(r) + col]. With kChunk > 1, out and
// (unless kBroadcast) x and every row offset are 16-byte aligned.
template <class W, class I, int kChunk, bool kBroadcast>
__global__ void rows_kernel(const W* __restrict__ x, W* __restrict__ out, Axes<I> rows_axes,
                            Divider<I> chunks_per_row, I chunks) {
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I q = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; q < chunks; q += step) {
    const I row = chunks_per_row.div(q);
    const I col = (q - row * chunks_per_row.d()) * kChunk;
    const I from = rows_axes.offset(row);
    W* to = out + static_cast<uint64_t>(q) * kChunk;
    if constexpr (kChunk == 1) {
      *to = kBroadcast ? x[from] : x[from + col];
    } else if constexpr (kBroadcast) {
      *reinterpret_cast<uint4*>(to) = splat16(__ldg(x + from));
    } else {
      *reinterpret_cast<uint4*>(to) = __ldg(reinterpret_cast<const uint4*>(x + from + col));
    }
  }
}

constexpr uint32_t kTile = 32;  // units per tile side

// Axes walked per tile, with both strides.
struct TileBatch {
  int rank = 0;
  uint64_t dims[kMaxAxes];
  uint64_t in_strides[kMaxAxes];
  uint64_t out_strides[kMaxAxes];
};

struct TileGeometry {
  uint64_t k_extent;   // K: the output axis that reads input stride `unit`
  uint64_t c_extent;   // C: the innermost output axis before the unit run
  uint64_t c_stride;   // input stride of c
  uint64_t k_out;      // output stride of k
  uint32_t unit;       // words contiguous in both input and output (1: a plain transpose)
  FastDiv32 unit_div;  // division by unit
  uint64_t tiles_k, tiles_c, items;
};

// One tile: input element (k, c, i) at k * unit + c * c_stride + i, output at k * k_out +
// c * unit + i (plus the batch offsets). Shared memory holds kTile rows (one per c) of
// kTile * unit words (padded by one): loaded along k (contiguous in the input), stored along c
// (contiguous in the output).
template <class W>
__global__ void tile_kernel(const W* __restrict__ x, W* __restrict__ out, TileGeometry g,
                            TileBatch batch) {
  extern __shared__ unsigned char shared_bytes[];
  W* tile = reinterpret_cast<W*>(shared_bytes);
  const uint32_t row_words = kTile * g.unit + 1;
  const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (uint64_t item = blockIdx.x; item < g.items; item += gridDim.x) {
    uint64_t rest = item / (g.tiles_k * g.tiles_c);
    const uint64_t in_tile = item - rest * (g.tiles_k * g.tiles_c);
    const uint64_t tk = in_tile / g.tiles_c, tc = in_tile - tk * g.tiles_c;
    uint64_t in_base = 0, out_base = 0;
    for (int j = batch.rank - 1; j >= 0; --j) {
      const uint64_t q = rest / batch.dims[j];
      const uint64_t coord = rest - q * batch.dims[j];
      in_base += coord * batch.in_strides[j];
      out_base += coord * batch.out_strides[j];
      rest = q;
    }
    const uint64_t k0 = tk * kTile, c0 = tc * kTile;
    const uint32_t k_valid =
        static_cast<uint32_t>(g.k_extent - k0 < kTile ? g.k_extent - k0 : kTile);
    const uint32_t c_valid =
        static_cast<uint32_t>(g.c_extent - c0 < kTile ? g.c_extent - c0 : kTile);
    const uint32_t k_words = k_valid * g.unit, c_words = c_valid * g.unit;
    __syncthreads();  // the previous item's stores have read the tile
    for (uint32_t c = warp; c < c_valid; c += warps) {
      const W* from = x + in_base + k0 * g.unit + (c0 + c) * g.c_stride;
      for (uint32_t t = lane; t < k_words; t += 32) tile[c * row_words + t] = from[t];
    }
    __syncthreads();
    for (uint32_t k = warp; k < k_valid; k += warps) {
      W* to = out + out_base + (k0 + k) * g.k_out + c0 * g.unit;
      for (uint32_t t = lane; t < c_words; t += 32) {
        const uint32_t c = g.unit_div.div(t);
        const uint32_t i = t - c * g.unit;
        to[t] = tile[c * row_words + k * g.unit + i];
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The batched transpose: output element (batch, p, c, i) reads input offset
// in_base(batch) + p * G + c * c_stride + i and is written at out_base(batch) + p * p_out + c * G +
// i (i < G, the group of words contiguous on both sides; p the output axis that walks the input's
// contiguous groups, c the innermost output axis). A block of 256 threads moves a [kT x kT] tile of
// groups through shared memory (64 x 64 groups of 4, 8 and 12 bytes, 32 x 32 of 16 and 24 bytes,
// and 128 x 128 groups of 4 bytes where launch_transpose picks it): read along p (kT * G contiguous
// input words per tile row c), written along c (kT * G contiguous output words per tile row p).
// Tiles up to 48 KB sit in static shared memory; the 64 KB tile of 128 x 128 4-byte groups in
// dynamic shared memory (its limit raised once per device), at 2 resident blocks per SM.
//
// Shared memory holds the tile in output order, one row of kT * G words per p (a multiple of 8
// 16-byte vectors, so every row starts on bank 0), vector v of row p in slot v ^ swizzle(p) with
// swizzle(p) = (p ^ (p >> 3)) & 7: a permutation of the vectors inside each aligned run of 8 (128
// bytes, all 32 banks). A warp's 16-byte shared access runs in quarter-warps (8 consecutive lanes)
// and is conflict-free when each quarter-warp hits 8 different 16-byte bank groups; an access of
// 32 consecutive words of one row, aligned to 32 words, is conflict-free whatever the swizzle
// (each 128 bytes of it are whole runs of 8 vectors). The four ways in and out of the tile
// (kV = 16 / sizeof(W) words per vector):
//   * vector loads: a thread owns kV x kV blocks of groups: kV input rows c, G vectors (kV groups)
//     of each, loaded as 16-byte vectors, transposed in registers and stored as G vectors of each
//     of kV rows p. Block columns Q run along the lanes, so a quarter-warp stores rows
//     p = kV * Q + m (one m, 8 consecutive Q aligned to 8) at one unswizzled slot; swizzle(p) takes
//     8 different values over those rows for kV = 1, 2 and 4 (for kV = 4, swizzle(4 Q + m) =
//     4 ((Q ^ (Q >> 3)) & 1) + (m ^ ((Q >> 1) & 3)); for kV = 2 likewise with the bits regrouped).
//   * word loads: a thread owns units of one p and kV groups c: kV input rows, G words each
//     (lanes run along p, so each load instruction of the warp reads consecutive groups), stored
//     as G vectors of row p. A quarter-warp stores 8 consecutive rows p (aligned to 8) at one
//     unswizzled slot: 8 different swizzles.
//   * vector stores: 16 lanes read 16 consecutive vectors of one row (aligned to 16), each
//     quarter-warp a run of 8 that the swizzle only permutes; each store instruction of the warp
//     writes two runs of 256 contiguous output bytes.
//   * word stores: 32 lanes read and write 32 consecutive words of one row.
// All of a thread's global loads are issued before its first shared-memory store (in the source
// they precede the barrier that orders the previous tile's shared reads; the compiler keeps the
// vector loads there and may issue the word loads right after it), so a block keeps
// kT * kT * G words in flight. Per element the interior paths execute no division and no bounds
// check; a thread computes one 64-bit base pointer per tile and side, its rows and vectors are
// fixed offsets from it (16-byte vectors: 4 loads, 4 shared stores, 4 shared loads and 4 stores of
// 16 bytes per thread for a 64 x 64 tile of 4-byte words, 16 of each for a 128 x 128 one).
//
// Interior tiles (kT x kT groups) take the vector loads when the input rows are 16-byte aligned (x,
// c_stride and the batch input strides: kVecIn) and the vector stores when the output rows are
// (out, p_out, the batch and broadcast output strides: kVecOut), otherwise word loads and word
// stores; edge tiles take word loads (groups outside the tile read the tile's first group instead)
// and word stores with bounds checks. The batch axes are split
// in two: axes the input walks (stride != 0), one per grid z index, and broadcast axes (input
// stride 0) walked inside the block: the tile's words are read from shared memory into registers
// once and stored to every broadcast position of the block's chunk, the position's output offset
// advanced by one add (a recomputation when the last broadcast axis wraps, with a division only
// past two broadcast axes).

// threadIdx.x, read where it is used: the transpose's tile loops then recompute the few
// thread-constant offsets of the path a tile takes (a handful of integer instructions per tile)
// instead of holding those of every path in registers across the loops.
__device__ __forceinline__ uint32_t thread_index() {
  uint32_t t;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
  return t;
}

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

constexpr int kTransposeThreads = 256;
constexpr int kMaxBatchAxes = 8;

struct TransposeGeometry {
  uint64_t p_extent = 0, c_extent = 0;  // in groups
  uint64_t c_stride = 0;                // input stride of c, in words
  uint64_t p_out = 0;                   // output stride of p, in words
  uint64_t tiles_p = 0, tiles_c = 0;
  int load_rank = 0;  // batch axes the input walks, row-major
  uint64_t load_dims[kMaxBatchAxes], load_in[kMaxBatchAxes], load_out[kMaxBatchAxes];
  uint64_t loads = 1;  // product of load_dims
  int rep_rank = 0;    // broadcast batch axes, row-major
  uint64_t rep_dims[kMaxBatchAxes], rep_out[kMaxBatchAxes];
  uint64_t rep_last = 1;      // extent of the last broadcast axis (1 when there is none)
  uint64_t rep_last_out = 0;  // its output stride
  uint64_t reps = 1;          // product of rep_dims
  uint64_t chunk = 1;         // broadcast positions per block
  uint64_t chunks = 1;        // ceil(reps / chunk)
};

// Words of W as 16-byte vectors, packed and unpacked in registers (no instruction for uint32_t and
// uint4; two 32-bit halves per uint64_t).
template <class W>
struct Vec16;
template <>
struct Vec16<uint32_t> {
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
struct Vec16<uint64_t> {
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
struct Vec16<uint4> {
  static constexpr int kWords = 1;
  static __device__ __forceinline__ uint4 pack(const uint4* w) { return w[0]; }
  static __device__ __forceinline__ void unpack(const uint4& v, uint4* w) { w[0] = v; }
};

// The tile of kT x kT groups of G words of W, and each thread's share of it (see above).
template <class W, int G, int kT>
struct TransposeTile {
  static constexpr int kG = G;
  static constexpr int kV = Vec16<W>::kWords;  // words per 16-byte vector
  static constexpr int kRowWords = kT * G;     // words of a tile row
  static constexpr int kRowVecs = kRowWords / kV;
  static constexpr int kWords = kT * kRowWords / kTransposeThreads;  // words per thread
  // Vector loads: kV x kV blocks, block column t % kBlockCols, block rows t / kBlockCols +
  // b * kBlockStep for b < kBlocks.
  static constexpr int kBlockCols = kT / kV;
  static constexpr int kBlockStep = kTransposeThreads / kBlockCols;
  static constexpr int kBlocks = kBlockCols / kBlockStep;
  // Word loads: units of one p and kV groups c, p = t % 32 + 32 e for e < kUnitCols, unit rows
  // t / 32 + 8 b for b < kUnitRows (the units of one b share their input rows).
  static constexpr int kUnitCols = kT / 32, kUnitRows = kBlockCols / 8;
  // Vector stores: rows t / 16 + 16 j, vectors t % 16 + 16 s; word stores: rows t / 32 + 8 j,
  // words t % 32 + 32 s.
  static constexpr int kVecRows = kT / 16, kVecCols = kRowVecs / 16;
  static constexpr int kWordRows = kT / 8, kWordCols = kRowWords / 32;
  // Resident blocks asked of the compiler (__launch_bounds__), from the registers the thread's
  // words fill: up to 16, 4 blocks (at most 64 registers a thread); up to 32, 3 (80); more (the
  // 48 words of the 12-byte groups, the 64 of the 128 x 128 tile), 2 (128). Every case keeps at
  // least 96 KB of loads in flight per SM.
  static constexpr int kMinBlocks = kWords * sizeof(W) <= 64    ? 4
                                    : kWords * sizeof(W) <= 128 ? 3
                                                                : 2;
  // The tile's shared memory: static up to 48 KB (the static limit), dynamic past it.
  static constexpr int kTileVecs = kT * kRowVecs;
  static constexpr size_t kTileBytes = size_t{kTileVecs} * sizeof(uint4);
  static constexpr bool kDynamicShared = kTileBytes > 48 * 1024;

  static_assert(kRowWords % kV == 0 && kRowVecs % 16 == 0 && kRowWords % 32 == 0 && kT % 32 == 0,
                "tile rows of whole runs of 16 vectors and 32 words");
  static_assert(kTransposeThreads % kBlockCols == 0 && kBlockCols % kBlockStep == 0 &&
                    kBlockCols % 8 == 0,
                "whole blocks and units per thread");
  static_assert(kBlocks * kV * kV * G == kWords && kUnitRows * kUnitCols * kV * G == kWords &&
                    kVecRows * kVecCols * kV == kWords && kWordRows * kWordCols == kWords,
                "every path moves the whole tile");

  // Shared slot of vector v of row p. The swizzle changes the low 3 bits of v only, so
  // slot(p, v + 8 k) = slot(p, v) + 8 k: the paths below compute one slot per row and reach the
  // others through constant offsets.
  static __device__ __forceinline__ uint32_t slot(uint32_t p, uint32_t v) {
    return p * kRowVecs + (v ^ ((p ^ (p >> 3)) & 7u));
  }
};

// The shared tile of L: a static array, or the block's dynamic shared memory (L::kTileBytes of it,
// given at launch) for a tile past the static limit.
template <class L>
__device__ __forceinline__ uint4* transpose_tile_memory() {
  if constexpr (L::kDynamicShared) {
    extern __shared__ uint4 transpose_dynamic_tile[];
    return transpose_dynamic_tile;
  } else {
    __shared__ uint4 tile[L::kTileVecs];
    return tile;
  }
}

// Vector loads of the thread's blocks (block column bq, first block row br) from the tile at `in`:
// v holds block b's input row j at words (b * kV + j) * kV * G.
template <class L, class W>
__device__ __forceinline__ void load_blocks(W* v, const W* in, uint64_t c_stride, uint32_t bq,
                                            uint32_t br) {
  constexpr int kV = L::kV, G = L::kG;
  const W* row = in + uint64_t{kV} * br * c_stride + uint64_t{kV} * G * bq;
#pragma unroll
  for (int b = 0; b < L::kBlocks; ++b) {
#pragma unroll
    for (int j = 0; j < kV; ++j) {
      const uint4* from = reinterpret_cast<const uint4*>(row);
#pragma unroll
      for (int s = 0; s < G; ++s) {
        Vec16<W>::unpack(__ldg(from + s), v + ((b * kV + j) * G + s) * kV);
      }
      row += j + 1 < kV ? c_stride : (L::kBlockStep * kV - kV + 1) * c_stride;
    }
  }
}

// The blocks of load_blocks, transposed, into shared memory: block b's output row p = kV * bq + m
// takes word i of group j from input row j, group m, as word j * G + i of its G vectors.
template <class L, class W>
__device__ __forceinline__ void put_blocks(uint4* tile, const W* v, uint32_t bq, uint32_t br) {
  constexpr int kV = L::kV, G = L::kG;
  static_assert(G * L::kBlockStep % 8 == 0, "whole runs of 8 vectors between blocks");
#pragma unroll
  for (int b = 0; b < L::kBlocks; ++b) {
#pragma unroll
    for (int m = 0; m < kV; ++m) {
#pragma unroll
      for (int s = 0; s < G; ++s) {
        W w[kV];
#pragma unroll
        for (int e = 0; e < kV; ++e) {
          const int u = s * kV + e;  // word j * G + i of the output run
          w[e] = v[(b * kV + u / G) * kV * G + m * G + u % G];
        }
        tile[L::slot(kV * bq + m, G * br + s) + G * L::kBlockStep * b] = Vec16<W>::pack(w);
      }
    }
  }
}

// Word loads of the thread's units (p = up + 32 e, unit rows ur + 8 b) from the tile at `in`: v
// holds unit (b, e)'s word i of input row j at ((b * kUnitCols + e) * kV + j) * G + i, which is the
// order of its output row. A unit outside [0, p_valid) x [0, c_valid) reads the tile's first group
// instead (in bounds; those words are never stored): the loads stay unconditional, which also keeps
// the compiler from moving them below the barrier that follows.
template <class L, class W>
__device__ __forceinline__ void load_units(W* v, const W* in, uint64_t c_stride, uint32_t up,
                                           uint32_t ur, uint32_t p_valid, uint32_t c_valid) {
  constexpr int kV = L::kV, G = L::kG;
  const W* row = in + uint64_t{kV} * ur * c_stride + uint64_t{G} * up;
#pragma unroll
  for (int b = 0; b < L::kUnitRows; ++b) {
#pragma unroll
    for (int j = 0; j < kV; ++j) {
      const bool row_ok = kV * (ur + 8 * b) + j < c_valid;
#pragma unroll
      for (int e = 0; e < L::kUnitCols; ++e) {
        const W* from = row_ok && up + 32 * e < p_valid ? row + 32 * G * e : in;
#pragma unroll
        for (int i = 0; i < G; ++i) v[((b * L::kUnitCols + e) * kV + j) * G + i] = __ldg(from + i);
      }
      row += j + 1 < kV ? c_stride : (7 * kV + 1) * c_stride;
    }
  }
}

template <class L, class W>
__device__ __forceinline__ void put_units(uint4* tile, const W* v, uint32_t up, uint32_t ur) {
  constexpr int kV = L::kV, G = L::kG;
#pragma unroll
  for (int b = 0; b < L::kUnitRows; ++b) {
#pragma unroll
    for (int e = 0; e < L::kUnitCols; ++e) {
#pragma unroll
      for (int s = 0; s < G; ++s) {
        tile[L::slot(up + 32 * e, G * ur + s) + 8 * G * b] =
            Vec16<W>::pack(v + ((b * L::kUnitCols + e) * G + s) * kV);
      }
    }
  }
}

// The thread's vectors of the output tile (rows sr + 16 j, vectors sc + 16 s) from shared memory.
template <class L, class W>
__device__ __forceinline__ void get_vectors(W* v, const uint4* tile, uint32_t sc, uint32_t sr) {
#pragma unroll
  for (int j = 0; j < L::kVecRows; ++j) {
#pragma unroll
    for (int s = 0; s < L::kVecCols; ++s) {
      Vec16<W>::unpack(tile[L::slot(sr + 16 * j, sc) + 16 * s], v + (j * L::kVecCols + s) * L::kV);
    }
  }
}

// Stores them at `to` (the thread's first vector in the output).
template <class L, class W>
__device__ __forceinline__ void put_vectors(W* to, const W* v, uint64_t p_out) {
#pragma unroll
  for (int j = 0; j < L::kVecRows; ++j) {
#pragma unroll
    for (int s = 0; s < L::kVecCols; ++s) {
      store16(to + 16 * L::kV * s, Vec16<W>::pack(v + (j * L::kVecCols + s) * L::kV));
    }
    to += 16 * p_out;
  }
}

// The thread's words of the output tile (rows wr + 8 j, words wc + 32 s) from shared memory.
template <class L, class W>
__device__ __forceinline__ void get_words(W* v, const uint4* tile, uint32_t wc, uint32_t wr) {
  constexpr int kV = L::kV;
  const W* words = reinterpret_cast<const W*>(tile);
#pragma unroll
  for (int j = 0; j < L::kWordRows; ++j) {
#pragma unroll
    for (int s = 0; s < L::kWordCols; ++s) {
      v[j * L::kWordCols + s] = words[L::slot(wr + 8 * j, wc / kV) * kV + wc % kV + 32 * s];
    }
  }
}

// Stores the words inside [0, p_valid) x [0, c_words) at `to` (the thread's first output word).
template <class L, class W>
__device__ __forceinline__ void put_words(W* to, const W* v, uint64_t p_out, uint32_t wc,
                                          uint32_t wr, uint32_t p_valid, uint32_t c_words) {
#pragma unroll
  for (int j = 0; j < L::kWordRows; ++j) {
    if (wr + 8 * j < p_valid) {
#pragma unroll
      for (int s = 0; s < L::kWordCols; ++s) {
        if (wc + 32 * s < c_words) to[32 * s] = v[j * L::kWordCols + s];
      }
    }
    to += 8 * p_out;
  }
}

// Output offset of the first broadcast position of row-major index q over the broadcast axes
// before the last one (the first of them needs no division: q is below its extent).
__device__ __forceinline__ uint64_t rep_outer_offset(const TransposeGeometry& g, uint64_t q) {
  return g.rep_rank < 2
             ? 0
             : row_major_offset(g.rep_dims, g.rep_out, static_cast<int>(g.rep_rank - 1), q);
}

// The broadcast positions of a chunk in row-major order, from `rep`.
struct RepWalk {
  uint64_t last;   // coordinate along the last broadcast axis
  uint64_t outer;  // index over the broadcast axes before it
  uint64_t off;    // output offset of the position

  __device__ __forceinline__ RepWalk(const TransposeGeometry& g, uint64_t rep)
      : last(0), outer(rep / g.rep_last), off(0) {
    last = rep - outer * g.rep_last;
    off = rep_outer_offset(g, outer) + last * g.rep_last_out;
  }
  __device__ __forceinline__ void next(const TransposeGeometry& g) {
    if (++last < g.rep_last) {
      off += g.rep_last_out;
    } else {
      last = 0;
      off = rep_outer_offset(g, ++outer);
    }
  }
};

template <class W, int G, int kT, bool kVecIn, bool kVecOut>
__global__ void __launch_bounds__(kTransposeThreads, (TransposeTile<W, G, kT>::kMinBlocks))
    transpose_kernel(const W* __restrict__ x, W* __restrict__ out, TransposeGeometry g) {
  using L = TransposeTile<W, G, kT>;
  constexpr int kV = L::kV;
  uint4* const tile = transpose_tile_memory<L>();
  const uint64_t zs = g.loads * g.chunks;
  for (uint64_t z = blockIdx.z; z < zs; z += gridDim.z) {
    const uint64_t batch = z / g.chunks;
    const uint64_t chunk = z - batch * g.chunks;
    uint64_t in_base = 0, out_base = 0, rest = batch;
    for (int j = g.load_rank - 1; j >= 0; --j) {
      const uint64_t q = rest / g.load_dims[j];
      const uint64_t coord = rest - q * g.load_dims[j];
      in_base += coord * g.load_in[j];
      out_base += coord * g.load_out[j];
      rest = q;
    }
    const uint64_t rep_begin = chunk * g.chunk;
    const uint64_t rep_count = g.reps - rep_begin < g.chunk ? g.reps - rep_begin : g.chunk;
    const RepWalk first(g, rep_begin);
    for (uint64_t tp = blockIdx.y; tp < g.tiles_p; tp += gridDim.y) {
      const uint64_t p0 = tp * kT;
      const uint32_t p_valid =
          static_cast<uint32_t>(g.p_extent - p0 < uint64_t{kT} ? g.p_extent - p0 : uint64_t{kT});
      for (uint64_t tc = blockIdx.x; tc < g.tiles_c; tc += gridDim.x) {
        const uint64_t c0 = tc * kT;
        const uint32_t c_valid =
            static_cast<uint32_t>(g.c_extent - c0 < uint64_t{kT} ? g.c_extent - c0 : uint64_t{kT});
        const bool interior = p_valid == kT && c_valid == kT;  // the same for the whole block
        const uint32_t t = thread_index();
        const uint32_t bq = t % L::kBlockCols, br = t / L::kBlockCols;  // vector loads
        const uint32_t up = t % 32, ur = t / 32;                        // word loads
        const uint32_t sc = t % 16, sr = t / 16;                        // vector stores
        const uint32_t wc = t % 32, wr = t / 32;                        // word stores
        const W* in = x + (in_base + p0 * G + c0 * g.c_stride);
        W* to = out + (out_base + p0 * g.p_out + c0 * G);
        W v[L::kWords];
        if (kVecIn && interior) {
          load_blocks<L>(v, in, g.c_stride, bq, br);
        } else {
          load_units<L>(v, in, g.c_stride, up, ur, p_valid, c_valid);
        }
        __syncthreads();  // the previous tile's shared reads are done
        if (kVecIn && interior) {
          put_blocks<L>(tile, v, bq, br);
        } else {
          put_units<L>(tile, v, up, ur);
        }
        __syncthreads();
        RepWalk walk = first;
        if (kVecOut && interior) {
          get_vectors<L>(v, tile, sc, sr);
          to += sr * g.p_out + sc * kV;
          for (uint64_t n = rep_count;; walk.next(g)) {
            put_vectors<L>(to + walk.off, v, g.p_out);
            if (--n == 0) break;
          }
        } else {
          get_words<L>(v, tile, wc, wr);
          to += wr * g.p_out + wc;
          for (uint64_t n = rep_count;; walk.next(g)) {
            put_words<L>(to + walk.off, v, g.p_out, wc, wr, p_valid, c_valid * G);
            if (--n == 0) break;
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Gathered rows (a permuting broadcast): the output as [outer, rows, len] where output row (o, r)
// is the gathered row x[offset(o) + i * stride] (i < len) for every r: the axis outside the
// innermost one is a broadcast. A block owns up to kGatherRows consecutive rows of one o (grid y
// over row blocks, z over o) and blockDim.x 16-byte pieces of them (grid x): each thread gathers
// its piece's kV words once (word loads; every row block of o reads the same words again, and
// neighbouring o the same sectors, mostly from L2) and stores the 16 bytes to each of the rows, so
// each store instruction of a warp writes up to 512 contiguous bytes of one row and the blocks of
// one row block together write kGatherRows * len contiguous words. The stores carry the streaming
// hint: the output is many times the input and is not read back here. len is a multiple of kV and
// out 16-byte aligned; offsets are 64-bit.

constexpr uint32_t kGatherRows = 16;

struct GatherRowsGeometry {
  uint64_t len = 0;         // words per output row
  uint64_t stride = 0;      // input stride between a row's words
  uint64_t rows = 0;        // consecutive output rows with the same words
  uint64_t row_blocks = 0;  // ceil(rows / kGatherRows)
  uint64_t outer = 1;       // product of outer_dims
  uint32_t outer_rank = 0;  // axes outside the broadcast axis, row-major
  uint64_t outer_dims[kMaxAxes], outer_strides[kMaxAxes];
};

// At least 6 resident blocks of 256 threads per SM (at most 40 registers a thread, what both word
// sizes need without spilling), each thread issuing its kGatherRows stores back to back.
template <class W>
__global__ void __launch_bounds__(kThreads, 6)
    gathered_rows_kernel(const W* __restrict__ x, W* __restrict__ out, GatherRowsGeometry g) {
  constexpr int kV = Vec16<W>::kWords;
  const uint64_t vecs = g.len / kV;
  for (uint64_t o = blockIdx.z; o < g.outer; o += gridDim.z) {
    const W* row = x + row_major_offset(g.outer_dims, g.outer_strides, g.outer_rank, o);
    for (uint64_t rb = blockIdx.y; rb < g.row_blocks; rb += gridDim.y) {
      const uint64_t r0 = rb * kGatherRows;
      const uint32_t count =
          static_cast<uint32_t>(g.rows - r0 < kGatherRows ? g.rows - r0 : kGatherRows);
      W* to = out + (o * g.rows + r0) * g.len;
      for (uint64_t v = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; v < vecs;
           v += uint64_t{gridDim.x} * blockDim.x) {
        const W* from = row + v * kV * g.stride;
        W w[kV];
#pragma unroll
        for (int e = 0; e < kV; ++e) w[e] = __ldg(from + e * g.stride);
        const uint4 piece = Vec16<W>::pack(w);
        W* dst = to + v * kV;
        if (count == kGatherRows) {
#pragma unroll
          for (uint32_t r = 0; r < kGatherRows; ++r, dst += g.len) store16_cs(dst, piece);
        } else {
          for (uint32_t r = 0; r < count; ++r, dst += g.len) store16_cs(dst, piece);
        }
      }
    }
  }
}

// The batched transpose's geometry for `plan` in words of V (`scale` plan words each; `unit` plan
// words per group, axis k reading input stride `unit`, axis c the innermost output axis before the
// run), the broadcast positions split into chunks so that the grid has at least `target` blocks
// where the tiles alone do not. Returns false when there are more than kMaxBatchAxes batch axes of
// one kind.
bool transpose_geometry(const CopyPlan& plan, size_t k, size_t c, uint64_t scale, uint64_t tile,
                        uint64_t target, TransposeGeometry& g) {
  const size_t r = plan.dims.size();
  std::vector<uint64_t> out_strides(r, 1);
  for (size_t j = r - 1; j-- > 0;) out_strides[j] = out_strides[j + 1] * plan.dims[j + 1];
  g = TransposeGeometry();
  g.p_extent = plan.dims[k];
  g.c_extent = plan.dims[c];
  g.c_stride = plan.strides[c] / scale;
  g.p_out = out_strides[k] / scale;
  g.tiles_p = (g.p_extent + tile - 1) / tile;
  g.tiles_c = (g.c_extent + tile - 1) / tile;
  for (size_t j = 0; j < c; ++j) {
    if (j == k) continue;
    if (plan.strides[j] == 0) {
      if (g.rep_rank == kMaxBatchAxes) return false;
      g.rep_dims[g.rep_rank] = plan.dims[j];
      g.rep_out[g.rep_rank] = out_strides[j] / scale;
      g.reps *= plan.dims[j];
      ++g.rep_rank;
    } else {
      if (g.load_rank == kMaxBatchAxes) return false;
      g.load_dims[g.load_rank] = plan.dims[j];
      g.load_in[g.load_rank] = plan.strides[j] / scale;
      g.load_out[g.load_rank] = out_strides[j] / scale;
      g.loads *= plan.dims[j];
      ++g.load_rank;
    }
  }
  if (g.rep_rank > 0) {
    g.rep_last = g.rep_dims[g.rep_rank - 1];
    g.rep_last_out = g.rep_out[g.rep_rank - 1];
  }
  const uint64_t base = g.tiles_p * g.tiles_c * g.loads;
  uint64_t chunks = base >= target ? 1 : (target + base - 1) / base;
  if (chunks > g.reps) chunks = g.reps;
  g.chunk = (g.reps + chunks - 1) / chunks;
  g.chunks = (g.reps + g.chunk - 1) / g.chunk;
  return true;
}

template <class V, int G, int kT, bool kVecIn, bool kVecOut>
void launch_transpose_kernel(const V* x, V* out, const TransposeGeometry& g, cudaStream_t stream,
                             const char* op) {
  constexpr uint64_t kMaxX = 0x7fffffffu, kMaxYZ = 65535;
  const uint64_t zs = g.loads * g.chunks;
  const dim3 grid(static_cast<unsigned>(g.tiles_c < kMaxX ? g.tiles_c : kMaxX),
                  static_cast<unsigned>(g.tiles_p < kMaxYZ ? g.tiles_p : kMaxYZ),
                  static_cast<unsigned>(zs < kMaxYZ ? zs : kMaxYZ));
  using L = TransposeTile<V, G, kT>;
  constexpr auto kernel = transpose_kernel<V, G, kT, kVecIn, kVecOut>;
  size_t shared = 0;
  if constexpr (L::kDynamicShared) {
    shared = L::kTileBytes;
    allow_dynamic_shared<kernel>(shared, op);
  }
  kernel<<<grid, kTransposeThreads, shared, stream>>>(x, out, g);
  check_launch(op);
}

// Runs the plan on the batched transpose in words of V, groups of G of them, kT x kT tiles; the
// vector paths are chosen from the alignment of both buffers and of every stride in words of V.
// Returns false (nothing queued) when the batch axes do not fit the kernel.
template <class V, int G, int kT, class W>
bool launch_transpose_as(const W* x, W* out, const CopyPlan& plan, size_t k, size_t c,
                         uint64_t unit, cudaStream_t stream, const char* op) {
  TransposeGeometry g;
  const uint64_t target = 16 * uint64_t{current_sm_count(op)};
  if (!transpose_geometry(plan, k, c, unit / G, kT, target, g)) return false;
  const V* xv = reinterpret_cast<const V*>(x);
  V* ov = reinterpret_cast<V*>(out);
  constexpr uint64_t kV = Vec16<V>::kWords;
  if constexpr (kV == 1) {
    launch_transpose_kernel<V, G, kT, true, true>(xv, ov, g, stream, op);
  } else {
    bool vec_in = aligned16(x) && g.c_stride % kV == 0;
    bool vec_out = aligned16(out) && g.p_out % kV == 0;
    for (int j = 0; j < g.load_rank; ++j) {
      vec_in = vec_in && g.load_in[j] % kV == 0;
      vec_out = vec_out && g.load_out[j] % kV == 0;
    }
    for (int j = 0; j < g.rep_rank; ++j) vec_out = vec_out && g.rep_out[j] % kV == 0;
    if (vec_in && vec_out) {
      launch_transpose_kernel<V, G, kT, true, true>(xv, ov, g, stream, op);
    } else if (vec_in) {
      launch_transpose_kernel<V, G, kT, true, false>(xv, ov, g, stream, op);
    } else if (vec_out) {
      launch_transpose_kernel<V, G, kT, false, true>(xv, ov, g, stream, op);
    } else {
      launch_transpose_kernel<V, G, kT, false, false>(xv, ov, g, stream, op);
    }
  }
  return true;
}

// Whether the 4-byte groups of the plan (axes k and c, batch axes before c) take the 128 x 128 tile
// rather than the 64 x 64 one: both tile axes hold at least 128 groups (so most tiles are interior
// ones of the larger size), no batch axis is a broadcast (a loaded tile written to several
// positions keeps the 64 x 64 tile), and the 128 x 128 tiles fill the device's resident blocks
// (2 per SM) at least once, so that a copy too small for that spreads over more SMs in smaller
// tiles instead.
bool large_transpose_tiles(const CopyPlan& plan, size_t k, size_t c, const char* op) {
  constexpr uint64_t kLarge = 128;
  if (plan.dims[k] < kLarge || plan.dims[c] < kLarge) return false;
  uint64_t tiles = ((plan.dims[k] + kLarge - 1) / kLarge) * ((plan.dims[c] + kLarge - 1) / kLarge);
  for (size_t j = 0; j < c; ++j) {
    if (j == k) continue;
    if (plan.strides[j] == 0) return false;
    tiles *= plan.dims[j];
  }
  return tiles >= 2 * uint64_t{current_sm_count(op)};
}

// Runs the plan on the batched transpose when its group of `unit` words (the run contiguous in both
// input and output) fits a kernel: 4, 8, 12, 16 or 24 bytes, the 8- and 16-byte groups moved as one
// word of V when aligned. Axis k reads input stride `unit`, axis c is the innermost output axis
// before the run. Returns false (nothing queued) for any other geometry.
template <class W>
bool launch_transpose(const W* x, W* out, const CopyPlan& plan, size_t k, size_t c, uint64_t unit,
                      cudaStream_t stream, const char* op) {
  const uint64_t bytes = unit * sizeof(W);
  // Vector words need every stride a multiple of the group and both buffers aligned to it.
  bool whole = true;
  for (size_t j = 0; j <= c; ++j) whole = whole && plan.strides[j] % unit == 0;
  const auto aligned = [&](uintptr_t a) {
    return whole && (reinterpret_cast<uintptr_t>(x) % a) == 0 &&
           (reinterpret_cast<uintptr_t>(out) % a) == 0;
  };
  if (bytes == 4) {
    if (large_transpose_tiles(plan, k, c, op)) {
      return launch_transpose_as<uint32_t, 1, 128>(x, out, plan, k, c, unit, stream, op);
    }
    return launch_transpose_as<uint32_t, 1, 64>(x, out, plan, k, c, unit, stream, op);
  }
  if (bytes == 8 && aligned(8)) {
    return launch_transpose_as<uint64_t, 1, 64>(x, out, plan, k, c, unit, stream, op);
  }
  if (bytes == 16 && aligned(16)) {
    return launch_transpose_as<uint4, 1, 32>(x, out, plan, k, c, unit, stream, op);
  }
  if (bytes == 12 && sizeof(W) == 4) {
    return launch_transpose_as<uint32_t, 3, 64>(x, out, plan, k, c, unit, stream, op);
  }
  if (bytes == 24 && sizeof(W) == 8) {
    return launch_transpose_as<uint64_t, 3, 32>(x, out, plan, k, c, unit, stream, op);
  }
  return false;
}

template <class W, class I, int kChunk, bool kBroadcast>
void launch_rows(const W* x, W* out, const CopyPlan& plan, size_t row_axes, uint64_t len,
                 cudaStream_t stream, const char* op) {
  Axes<I> axes;
  axes.rank = static_cast<int>(row_axes);
  for (size_t j = 0; j < row_axes; ++j) {
    axes.dims[j] = Divider<I>(plan.dims[j]);
    axes.strides[j] = static_cast<I>(plan.strides[j]);
  }
  const uint64_t chunks = plan.size / kChunk;
  rows_kernel<W, I, kChunk, kBroadcast><<<grid_for(chunks, kThreads), kThreads, 0, stream>>>(
      x, out, axes, Divider<I>(len / kChunk), static_cast<I>(chunks));
  check_launch(op);
}

template <class W, int kChunk, bool kBroadcast>
void launch_rows_indexed(const W* x, W* out, const CopyPlan& plan, size_t row_axes, uint64_t len,
                         bool narrow, cudaStream_t stream, const char* op) {
  if (narrow) {
    launch_rows<W, uint32_t, kChunk, kBroadcast>(x, out, plan, row_axes, len, stream, op);
  } else {
    launch_rows<W, uint64_t, kChunk, kBroadcast>(x, out, plan, row_axes, len, stream, op);
  }
}

// Whether strided_copy runs the plan on gathered_rows_kernel: the innermost output axis reads an
// input stride other than 0 and 1 (its words are gathered), the axis outside it is a broadcast of
// at least kGatherRows positions (so every gathered piece is stored to kGatherRows rows, apart from
// a last short block of rows), the rows are whole 16-byte vectors and at least 512 bytes long (a
// warp's worth of 16-byte pieces), and out is 16-byte aligned. Anything else (a short broadcast,
// short rows, rows of a partial vector) keeps the paths below: the transpose, which reads the input
// in coalesced tiles and stores each tile to every broadcast position, where a tile fits.
template <class W>
bool gathered_rows_apply(const W* out, const CopyPlan& plan) {
  constexpr uint64_t kV = Vec16<W>::kWords;
  const size_t r = plan.dims.size();
  if (r < 2) return false;
  const uint64_t len = plan.dims[r - 1], inner = plan.strides[r - 1];
  return inner > 1 && plan.strides[r - 2] == 0 && plan.dims[r - 2] >= kGatherRows &&
         len % kV == 0 && len * sizeof(W) >= 512 && aligned16(out);
}

template <class W>
void launch_gathered_rows(const W* x, W* out, const CopyPlan& plan, cudaStream_t stream,
                          const char* op) {
  constexpr uint64_t kV = Vec16<W>::kWords, kMaxX = 0x7fffffffu, kMaxYZ = 65535;
  const size_t r = plan.dims.size();
  GatherRowsGeometry g;
  g.len = plan.dims[r - 1];
  g.stride = plan.strides[r - 1];
  g.rows = plan.dims[r - 2];
  g.row_blocks = (g.rows + kGatherRows - 1) / kGatherRows;
  g.outer_rank = static_cast<uint32_t>(r - 2);
  for (size_t j = 0; j + 2 < r; ++j) {
    g.outer_dims[j] = plan.dims[j];
    g.outer_strides[j] = plan.strides[j];
    g.outer *= plan.dims[j];
  }
  const uint64_t vecs = g.len / kV;
  const uint64_t warps = (vecs + 31) / 32;
  const uint64_t threads = warps * 32 < uint64_t{kThreads} ? warps * 32 : uint64_t{kThreads};
  const uint64_t pieces = (vecs + threads - 1) / threads;
  const dim3 grid(static_cast<unsigned>(pieces < kMaxX ? pieces : kMaxX),
                  static_cast<unsigned>(g.row_blocks < kMaxYZ ? g.row_blocks : kMaxYZ),
                  static_cast<unsigned>(g.outer < kMaxYZ ? g.outer : kMaxYZ));
  gathered_rows_kernel<W><<<grid, static_cast<unsigned>(threads), 0, stream>>>(x, out, g);
  check_launch(op);
}

// Tiles over output axes k and c (c = the last axis, or the one before the unit run); the unit run
// is the last axis when unit > 1.
template <class W>
void launch_tiles(const W* x, W* out, const CopyPlan& plan, size_t k, size_t c, uint64_t unit,
                  cudaStream_t stream, const char* op) {
  const size_t r = plan.dims.size();
  std::vector<uint64_t> out_strides(r, 1);
  for (size_t j = r - 1; j-- > 0;) out_strides[j] = out_strides[j + 1] * plan.dims[j + 1];
  TileBatch batch;
  uint64_t batches = 1;
  for (size_t j = 0; j < c; ++j) {
    if (j == k) continue;
    batch.dims[batch.rank] = plan.dims[j];
    batch.in_strides[batch.rank] = plan.strides[j];
    batch.out_strides[batch.rank] = out_strides[j];
    ++batch.rank;
    batches *= plan.dims[j];
  }
  TileGeometry g;
  g.k_extent = plan.dims[k];
  g.c_extent = plan.dims[c];
  g.c_stride = plan.strides[c];
  g.k_out = out_strides[k];
  g.unit = static_cast<uint32_t>(unit);
  g.unit_div = FastDiv32(g.unit);
  g.tiles_k = (g.k_extent + kTile - 1) / kTile;
  g.tiles_c = (g.c_extent + kTile - 1) / kTile;
  g.items = batches * g.tiles_k * g.tiles_c;
  const size_t shared = size_t{kTile} * (kTile * unit + 1) * sizeof(W);
  tile_kernel<W><<<grid_for(g.items, 1), kThreads, shared, stream>>>(x, out, g, batch);
  check_launch(op);
}

// Permutations of at most this many elements skip the tiles: the tile kernels' shared-memory
// round trip and barrier cost more than the uncoalesced reads of so few words.
constexpr uint64_t kLightGatherElements = 4096;

// out[o] = x[sum_j o_j * strides[j]] over the row-major coordinates of `dims`.
template <class T>
void strided_copy(const T* xt, const uint64_t* dims, const uint64_t* strides, size_t rank, T* outt,
                  cudaStream_t stream, const char* op) {
  using W = typename Word<T>::type;
  constexpr int kWide = static_cast<int>(16 / sizeof(W));
  const W* x = reinterpret_cast<const W*>(xt);
  W* out = reinterpret_cast<W*>(outt);
  const CopyPlan plan = plan_copy(dims, strides, rank);
  if (plan.size == 0) return;
  const size_t r = plan.dims.size();
  if (r == 0 || (r == 1 && plan.strides[0] == 1)) {
    copy_elements(out, x, plan.size, stream, op);
    return;
  }
  uint64_t in_extent = 1;  // one past the largest input offset read
  for (size_t j = 0; j < r; ++j) in_extent += (plan.dims[j] - 1) * plan.strides[j];
  const bool narrow = plan.size < (uint64_t{1} << 31) && in_extent <= (uint64_t{1} << 31);
  const uint64_t len = plan.dims[r - 1], inner = plan.strides[r - 1];
  if (inner == 0) {
    if (len % kWide == 0 && aligned16(out)) {
      launch_rows_indexed<W, kWide, true>(x, out, plan, r - 1, len, narrow, stream, op);
    } else {
      launch_rows_indexed<W, 1, true>(x, out, plan, r - 1, len, narrow, stream, op);
    }
    return;
  }
  if (gathered_rows_apply(out, plan)) {
    launch_gathered_rows(x, out, plan, stream, op);
    return;
  }
  // The tile's k axis: the output axis reading input stride `unit` (1 for a transpose, the run
  // length when the innermost axis is a short contiguous run).
  const uint64_t unit = inner == 1 ? len : 1;
  const size_t c = inner == 1 ? r - 2 : r - 1;
  const bool short_runs = inner != 1 || len * sizeof(W) < 32;
  if (short_runs && plan.size <= kLightGatherElements) {
    // Small permutations: one gathered word per output element, one round trip to memory.
    launch_rows_indexed<W, 1, false>(x, out, plan, r, 1, narrow, stream, op);
    return;
  }
  if (short_runs && (inner != 1 || r >= 2)) {
    for (size_t k = 0; k < c; ++k) {
      if (plan.strides[k] == unit && plan.dims[k] >= 8 && plan.dims[c] >= 8) {
        if (!launch_transpose(x, out, plan, k, c, unit, stream, op)) {
          launch_tiles(x, out, plan, k, c, unit, stream, op);
        }
        return;
      }
    }
  }
  if (inner == 1) {
    bool wide = len % kWide == 0 && aligned16(x) && aligned16(out);
    for (size_t j = 0; j + 1 < r; ++j) wide = wide && plan.strides[j] % kWide == 0;
    if (wide) {
      launch_rows_indexed<W, kWide, false>(x, out, plan, r - 1, len, narrow, stream, op);
    } else {
      launch_rows_indexed<W, 1, false>(x, out, plan, r - 1, len, narrow, stream, op);
    }
    return;
  }
  // A permutation without a usable tile: one gathered word per output element.
  launch_rows_indexed<W, 1, false>(x, out, plan, r, 1, narrow, stream, op);
}

}  // namespace

template <class T>
void concat1d_cuda(const T* a, uint64_t n, const T* b, uint64_t m, T* out, CUstream_st* stream) {
  using W = typename Word<T>::type;
  launch_concat(reinterpret_cast<const W*>(a), n, reinterpret_cast<const W*>(b), m,
                reinterpret_cast<W*>(out), stream, "concat1d");
}

template <class T>
void slice1d_cuda(const T* x, uint64_t start, uint64_t len, T* out, CUstream_st* stream) {
  using W = typename Word<T>::type;
  copy_elements(reinterpret_cast<W*>(out), reinterpret_cast<const W*>(x + start), len, stream,
                "slice1d");
}

template <class T>
void broadcast_vec_to_cols_cuda(const T* v, uint64_t rows, uint64_t cols, T* out,
                                CUstream_st* stream) {
  const uint64_t dims[2] = {rows, cols};
  const uint64_t strides[2] = {1, 0};
  strided_copy(v, dims, strides, 2, out, stream, "broadcast_vec_to_cols");
}

template <class T>
void broadcast_to_cuda(const T* x, const uint64_t* out_dims, const uint64_t* read_strides,
                       size_t rank, T* out, CUstream_st* stream) {
  strided_copy(x, out_dims, read_strides, rank, out, stream, "broadcast_to");
}

template <class T>
void swap_adjacent_cuda(const T* x, uint64_t outer, uint64_t a, uint64_t b, uint64_t inner, T* out,
                        CUstream_st* stream) {
  const uint64_t dims[4] = {outer, b, a, inner};
  const uint64_t strides[4] = {a * b * inner, inner, b * inner, 1};
  strided_copy(x, dims, strides, 4, out, stream, "swap_adjacent_at_depth");
}

template void concat1d_cuda<float>(const float*, uint64_t, const float*, uint64_t, float*,
                                   CUstream_st*);
template void concat1d_cuda<double>(const double*, uint64_t, const double*, uint64_t, double*,
                                    CUstream_st*);
template void slice1d_cuda<float>(const float*, uint64_t, uint64_t, float*, CUstream_st*);
template void slice1d_cuda<double>(const double*, uint64_t, uint64_t, double*, CUstream_st*);
template void broadcast_vec_to_cols_cuda<float>(const float*, uint64_t, uint64_t, float*,
                                                CUstream_st*);
template void broadcast_vec_to_cols_cuda<double>(const double*, uint64_t, uint64_t, double*,
                                                 CUstream_st*);
template void broadcast_to_cuda<float>(const float*, const uint64_t*, const uint64_t*, size_t,
                                       float*, CUstream_st*);
template void broadcast_to_cuda<double>(const double*, const uint64_t*, const uint64_t*, size_t,
                                        double*, CUstream_st*);
template void swap_adjacent_cuda<float>(const float*, uint64_t, uint64_t, uint64_t, uint64_t,
                                        float*, CUstream_st*);
template void swap_adjacent_cuda<double>(const double*, uint64_t, uint64_t, uint64_t, uint64_t,
                                         double*, CUstream_st*);

}  // namespace tlrt::kernels
