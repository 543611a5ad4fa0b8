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
//       and 24 bytes; 8- and 16-byte groups moved as one word; kernels/shape/shape_transpose.cu),
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
#include "kernels/shape/shape_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace shape_detail;

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
    const uint64_t rest = item / (g.tiles_k * g.tiles_c);
    const uint64_t in_tile = item - rest * (g.tiles_k * g.tiles_c);
    const uint64_t tk = in_tile / g.tiles_c, tc = in_tile - tk * g.tiles_c;
    const auto [in_base, out_base] =
        batch_offsets(rest, batch.rank, batch.dims, batch.in_strides, batch.out_strides);
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
  constexpr int kV = Pack16<W>::kWords;
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
        const uint4 piece = Pack16<W>::pack(w);
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
  constexpr uint64_t kV = Pack16<W>::kWords;
  const size_t r = plan.dims.size();
  if (r < 2) return false;
  const uint64_t len = plan.dims[r - 1], inner = plan.strides[r - 1];
  return inner > 1 && plan.strides[r - 2] == 0 && plan.dims[r - 2] >= kGatherRows &&
         len % kV == 0 && len * sizeof(W) >= 512 && aligned16(out);
}

template <class W>
void launch_gathered_rows(const W* x, W* out, const CopyPlan& plan, cudaStream_t stream,
                          const char* op) {
  constexpr uint64_t kV = Pack16<W>::kWords, kMaxX = 0x7fffffffu, kMaxYZ = 65535;
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
