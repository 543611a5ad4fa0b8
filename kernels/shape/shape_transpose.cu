// The shape ops' batched transpose, CUDA backend (the ops and the strided-copy engine that
// chooses it: kernels/shape/shape.cu).
//
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

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/common/row_major.h"
#include "kernels/shape/copy_plan.h"
#include "kernels/shape/shape.h"
#include "kernels/shape/shape_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace shape_detail;

// threadIdx.x, read where it is used: the transpose's tile loops then recompute the few
// thread-constant offsets of the path a tile takes (a handful of integer instructions per tile)
// instead of holding those of every path in registers across the loops.
__device__ __forceinline__ uint32_t thread_index() {
  uint32_t t;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
  return t;
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

// The tile of kT x kT groups of G words of W, and each thread's share of it (see above).
template <class W, int G, int kT>
struct TransposeTile {
  static constexpr int kG = G;
  static constexpr int kV = Pack16<W>::kWords;  // words per 16-byte vector
  static constexpr int kRowWords = kT * G;      // words of a tile row
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
        Pack16<W>::unpack(__ldg(from + s), v + ((b * kV + j) * G + s) * kV);
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
        tile[L::slot(kV * bq + m, G * br + s) + G * L::kBlockStep * b] = Pack16<W>::pack(w);
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
            Pack16<W>::pack(v + ((b * L::kUnitCols + e) * G + s) * kV);
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
      Pack16<W>::unpack(tile[L::slot(sr + 16 * j, sc) + 16 * s], v + (j * L::kVecCols + s) * L::kV);
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
      store16(to + 16 * L::kV * s, Pack16<W>::pack(v + (j * L::kVecCols + s) * L::kV));
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
    const auto [in_base, out_base] =
        batch_offsets(batch, g.load_rank, g.load_dims, g.load_in, g.load_out);
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
  constexpr uint64_t kV = Pack16<V>::kWords;
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

}  // namespace

namespace shape_detail {

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

template bool launch_transpose<uint32_t>(const uint32_t*, uint32_t*, const CopyPlan&, size_t,
                                         size_t, uint64_t, cudaStream_t, const char*);
template bool launch_transpose<uint64_t>(const uint64_t*, uint64_t*, const CopyPlan&, size_t,
                                         size_t, uint64_t, cudaStream_t, const char*);

}  // namespace shape_detail
}  // namespace tlrt::kernels
