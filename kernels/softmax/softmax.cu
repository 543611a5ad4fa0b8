// Softmax, CUDA backend. Every row kernel reads the scores (and the mask) of a row once and
// writes its output once; the mask predicate is kept on chip as one bit per element.
//
//   * rows of at most 1024 elements: G lanes per row (G the smallest power of two that covers a
//     row of at most 32 chunks, else a whole warp), the row in registers (each lane holds N
//     chunks of V adjacent elements), 16-byte loads and stores when the pointers are 16-byte
//     aligned and V divides cols; on that 16-byte path masked rows of 257 to 1024 float32 (129 to
//     512 float64) go through shared memory by asynchronous copies, a warp's next row in flight
//     while it works on one (rows_pipe_kernel, the same lane layout and sum order);
//   * rows of up to 16k float32 (8k float64) elements: a block per row, the row held in shared
//     memory, the mask bits in shared memory words built with warp shuffles;
//   * longer rows whose rest fits in one block's shared memory (on sm_90 up to about 64k float32
//     or 32k float64 with a mask, 70k or 36k without): a block of 512 threads per row, 16k
//     float32 (8k float64) elements in registers and the rest in shared memory (copied there
//     asynchronously), the mask streamed through a ring of asynchronous copies, so that 32k
//     float32 rows run two blocks per SM;
//   * longer rows still: a block per row, an online max / sum pass (one read) and then a pass
//     that reads again and writes; nothing of the row's size is stored anywhere.
//   * softmax along an axis that is not the last (x as (outer, len, inner), inner >= 2): for
//     len <= 64 and at least 2^15 columns a thread per (outer, inner) column, consecutive threads
//     on consecutive inner columns (coalesced), the column in registers (one read, one write);
//     otherwise the axis split over a block of (TX columns) x (S slices), an online max / sum
//     pass per slice merged in slice order, then a pass that reads again and writes.
//
// The max propagates NaN (a NaN allowed score makes m NaN and so the row NaN), e = exp(s - m)
// with the full-precision expf / exp, y = e / sum with IEEE division (-prec-div=true; float32
// rows take the same bits from the sum's two-part reciprocal, kernels/common/quotient.h); the sum's
// order is unspecified (a tolerance op), but it is fixed by the launch geometry, so a result is
// reproducible run to run. Rows are grid-strided (grids are capped), so any row count works.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kernels/common/async_copy.cuh"
#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/common/quotient.h"
#include "kernels/softmax/softmax.h"

namespace tlrt::kernels {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpRowMax = 1024;           // longest row of the warp-per-row kernel
constexpr uint64_t kRowGridCap = 1u << 20;  // blocks of the row kernels (they stride)
constexpr int kAxisRegisterMax = 64;        // longest axis column held in registers
// Fewest columns for the register kernel along an axis (fewer would leave the device idle).
constexpr uint64_t kAxisRegisterMinColumns = uint64_t{1} << 15;

__device__ __forceinline__ float exp_of(float v) {
  return expf(v);
}
__device__ __forceinline__ double exp_of(double v) {
  return exp(v);
}

template <class T>
__device__ __forceinline__ T neg_inf();
template <>
__device__ __forceinline__ float neg_inf<float>() {
  return __int_as_float(static_cast<int>(0xff800000u));
}
template <>
__device__ __forceinline__ double neg_inf<double>() {
  return __longlong_as_double(static_cast<long long>(0xfff0000000000000ull));
}
template <class T>
__device__ __forceinline__ T quiet_nan();
template <>
__device__ __forceinline__ float quiet_nan<float>() {
  return __int_as_float(0x7fc00000);
}
template <>
__device__ __forceinline__ double quiet_nan<double>() {
  return __longlong_as_double(0x7ff8000000000000ll);
}

// max that propagates NaN from either side (which zero of two is returned does not matter: m
// only enters as s - m, and s - (+0) and s - (-0) have the same exp).
template <class T>
__device__ __forceinline__ T nan_max(T a, T b) {
  return (a > b || a != a) ? a : b;
}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
template <>
__device__ __forceinline__ float nan_max<float>(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#endif

// V adjacent elements at p (16-byte aligned when V > 1).
template <class T, int V>
__device__ __forceinline__ void load_chunk(const T* p, T (&v)[V]) {
  if constexpr (V == 1) {
    v[0] = p[0];
  } else {
    const typename Vec16<T>::type q = *reinterpret_cast<const typename Vec16<T>::type*>(p);
    if constexpr (V == 4) {
      v[0] = q.x;
      v[1] = q.y;
      v[2] = q.z;
      v[3] = q.w;
    } else {
      v[0] = q.x;
      v[1] = q.y;
    }
  }
}

template <class T, int V>
__device__ __forceinline__ void store_chunk(T* p, const T (&v)[V]) {
  if constexpr (V == 1) {
    p[0] = v[0];
  } else {
    store16(p, v);
  }
}

// store_chunk with the streaming (evict-first) cache hint: outputs are written once and not read
// again by the kernel.
__device__ __forceinline__ void store_streaming(float* p, const float (&v)[4]) {
  __stcs(reinterpret_cast<float4*>(p), make_float4(v[0], v[1], v[2], v[3]));
}
__device__ __forceinline__ void store_streaming(double* p, const double (&v)[2]) {
  __stcs(reinterpret_cast<double2*>(p), make_double2(v[0], v[1]));
}
template <class T, int V>
__device__ __forceinline__ void store_chunk_streaming(T* p, const T (&v)[V]) {
  if constexpr (V == 1) {
    __stcs(p, v[0]);
  } else {
    store_streaming(p, v);
  }
}

template <class T>
__device__ __forceinline__ T warp_max(T v) {
  for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

// Block-wide max / sum, the result in every thread. `scratch` holds 32 values; the call is a
// barrier, and scratch may be reused after it returns.
template <class T>
__device__ T block_max(T v, T* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_max(v);
  __syncthreads();  // earlier readers of scratch are done
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : neg_inf<T>();
  return warp_max(v);
}
template <class T>
__device__ T block_sum(T v, T* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : T(0);
  return warp_sum(v);
}

// fl(e / sum) for the e of one row. float: through the sum's two-part reciprocal
// (kernels/common/quotient.h: the same bits as IEEE division, four operations a quotient); an e
// is +0 or in [2^-64, 1] (e = exp(s - m) with s - m <= 0), or NaN, or tiny, which two divide.
template <class T>
struct RowDivisor {
  T d;
  __device__ explicit RowDivisor(T sum) : d(sum) {}
  __device__ T operator()(T e) const { return e / d; }
};
template <>
struct RowDivisor<float> {
  Reciprocal r;
  __device__ explicit RowDivisor(float sum) : r(reciprocal_of(sum)) {}
  __device__ float operator()(float e) const {
    return r.fast && (e >= kQuotientLeast || e == 0.0f) ? quotient_unchecked(e, r)
                                                        : __fdiv_rn(e, r.d);
  }
};

// The exp pass over one register chunk: e = exp(s - m) for the allowed elements (bits, the
// chunk's allowed bits from bit 0), +0 for the others, each added to sum in element order.
// Without a mask every element of a chunk inside the row is allowed, so the test is per chunk;
// with one it is per element and branch-free (adding +0 leaves the sum's bits unchanged, so the
// sum is that of the allowed terms in the same order either way).
template <class T, int V, bool kMasked>
__device__ __forceinline__ void exp_chunk(T (&v)[V], T m, uint32_t bits, bool in_row, T& sum) {
  if constexpr (kMasked) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const T e = exp_of(v[j] - m);
      v[j] = ((bits >> j) & 1u) ? e : T(0);
      sum += v[j];
    }
  } else if (in_row) {
#pragma unroll
    for (int j = 0; j < V; ++j) {
      v[j] = exp_of(v[j] - m);
      sum += v[j];
    }
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j) v[j] = T(0);
  }
}

// The outputs of one register chunk inside the row: e / sum for the allowed elements, +0 for the
// blocked ones (set after the arithmetic, so +0 even in a NaN row).
template <class T, int V, bool kMasked>
__device__ __forceinline__ void quotient_chunk(const T (&v)[V], const RowDivisor<T>& div,
                                               uint32_t bits, T (&y)[V]) {
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const T q = div(v[j]);
    y[j] = (!kMasked || ((bits >> j) & 1u)) ? q : T(0);
  }
}

// ---------------------------------------------------------------------------------------------
// G lanes per row (G a power of two <= 32: 32 / G rows per warp), the row in registers: lane l of
// the group holds chunk k at element (G k + l) V, cols <= G N V, and N V <= 32 mask bits per
// lane. Every lane of a warp runs the same trip count (the warp's first row decides), so the
// group shuffles always see the whole warp; lanes past the last row only take part in them.

template <int G, class T>
__device__ __forceinline__ T group_max(T v) {
  for (int o = G / 2; o > 0; o >>= 1) v = nan_max(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}
template <int G, class T>
__device__ __forceinline__ T group_sum(T v) {
  for (int o = G / 2; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}
template <int G>
__device__ __forceinline__ uint32_t group_or(uint32_t v) {
  for (int o = G / 2; o > 0; o >>= 1) v |= __shfl_xor_sync(kFullMask, v, o);
  return v;
}

template <class T, int V, int N, int G, bool kMasked>
__global__ void __launch_bounds__(kThreads)
    rows_warp_kernel(const T* __restrict__ scores, const T* __restrict__ mask, uint64_t rows,
                     uint64_t cols, T* __restrict__ out) {
  static_assert(N * V <= 32, "one mask bit per register element");
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "a power-of-two group");
  constexpr uint64_t kRowsPerWarp = 32 / G;
  const int lane = threadIdx.x & 31;
  const int gl = lane % G;  // lane within the row's group
  const uint64_t warps = blockDim.x >> 5;
  const uint64_t warp = static_cast<uint64_t>(blockIdx.x) * warps + (threadIdx.x >> 5);
  const uint64_t warp_stride = static_cast<uint64_t>(gridDim.x) * warps;
  for (uint64_t first = warp * kRowsPerWarp; first < rows; first += warp_stride * kRowsPerWarp) {
    const uint64_t row = first + static_cast<uint64_t>(lane / G);
    const bool live = row < rows;
    const uint64_t base = live ? row * cols : 0;
    T v[N][V];
    T mk[N][V];
    // Every load of the row is issued before any loaded value is used, so that a lane has all of
    // its chunks (scores and mask) in flight at once. V divides cols, so a chunk that starts in
    // the row lies in it.
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * G + gl) * V;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        v[k][j] = T(0);
        mk[k][j] = T(0);
      }
      if (live && c < cols) {
        load_chunk<T, V>(scores + base + c, v[k]);
        if constexpr (kMasked) load_chunk<T, V>(mask + base + c, mk[k]);
      }
    }
    uint32_t allowed = 0;
    T m = neg_inf<T>();
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * G + gl) * V;
      const bool in = live && c < cols;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if (in && (!kMasked || mk[k][j] != T(0))) {
          allowed |= 1u << (k * V + j);
          m = nan_max(m, v[k][j]);
        }
      }
    }
    // Without a mask a row has an allowed entry (cols >= 1); lanes past the last row store nothing.
    const bool any = !kMasked || group_or<G>(allowed) != 0;
    m = group_max<G>(m);
    // Branch-free: exp of every register element, blocked ones replaced by +0 (adding +0 leaves
    // the sum's bits unchanged, so the sum is that of the allowed terms in the same order).
    T sum = T(0);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * G + gl) * V;
      exp_chunk<T, V, kMasked>(v[k], m, allowed >> (k * V), live && c < cols, sum);
    }
    sum = group_sum<G>(sum);
    if (!any) sum = T(1);  // no allowed entry: every output is +0 and nothing divides
    const RowDivisor<T> div(sum);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * G + gl) * V;
      if (live && c < cols) {
        T y[V];
        quotient_chunk<T, V, kMasked>(v[k], div, allowed >> (k * V), y);
        store_chunk_streaming<T, V>(out + base + c, y);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Masked rows of 129 to 1024 elements on the 16-byte path: a warp per row as in rows_warp_kernel
// (lane l holds chunk k at element (32 k + l) V), but the chunks travel through shared memory with
// asynchronous copies, two stages per lane: while a warp works on one row, the copies of its next
// row (scores and mask) are in flight, and they hold no registers, so every chunk of that row is
// requested at once. Each lane copies and later reads only its own slots, so no barrier is
// needed; the loop over rows is warp-uniform, so every shuffle sees the whole warp.

constexpr int kPipeThreads = 128;

// Two stages of N chunks of scores and N of mask per thread.
template <int N>
constexpr uint64_t pipe_smem_bytes() {
  return uint64_t{2} * 2 * N * kPipeThreads * 16;
}

template <class T, int N>
__global__ void __launch_bounds__(kPipeThreads)
    rows_pipe_kernel(const T* __restrict__ scores, const T* __restrict__ mask, uint64_t rows,
                     uint64_t cols, T* __restrict__ out) {
  constexpr int V = Vec16<T>::kLanes;
  static_assert(N * V <= 32, "one mask bit per register element");
  extern __shared__ __align__(16) unsigned char smem[];
  const int lane = threadIdx.x & 31;
  // Slot of chunk k in stage s for this thread: 16 bytes, consecutive threads adjacent.
  auto slot = [&](int array, int s, int k) {
    return reinterpret_cast<T*>(
        smem +
        ((static_cast<uint64_t>((array * 2 + s) * N + k) * kPipeThreads) + threadIdx.x) * 16);
  };
  const uint64_t warps = blockDim.x >> 5;
  const uint64_t warp = static_cast<uint64_t>(blockIdx.x) * warps + (threadIdx.x >> 5);
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * warps;
  auto fetch = [&](uint64_t row, int s) {
    if (row >= rows) return;
    const uint64_t base = row * cols;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * 32 + lane) * V;
      if (c < cols) {
        copy16_async(slot(0, s, k), scores + base + c);
        copy16_async(slot(1, s, k), mask + base + c);
      }
    }
  };
  int s = 0;
  fetch(warp, 0);
  copy_commit();
  for (uint64_t row = warp; row < rows; row += stride) {
    fetch(row + stride, s ^ 1);
    copy_commit();  // possibly empty: the wait below then still means "this row's copies"
    copy_wait<1>();
    const uint64_t base = row * cols;
    T v[N][V];
    uint32_t allowed = 0;
    T m = neg_inf<T>();
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * 32 + lane) * V;
#pragma unroll
      for (int j = 0; j < V; ++j) v[k][j] = T(0);
      if (c < cols) {
        T mk[V] = {};
        load_chunk<T, V>(slot(0, s, k), v[k]);
        load_chunk<T, V>(slot(1, s, k), mk);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          if (mk[j] != T(0)) {
            allowed |= 1u << (k * V + j);
            m = nan_max(m, v[k][j]);
          }
        }
      }
    }
    const bool any = __any_sync(kFullMask, allowed != 0);
    m = warp_max(m);
    T sum = T(0);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * 32 + lane) * V;
      exp_chunk<T, V, true>(v[k], m, allowed >> (k * V), c < cols, sum);
    }
    sum = warp_sum(sum);
    if (!any) sum = T(1);  // no allowed entry: every output is +0 and nothing divides
    const RowDivisor<T> div(sum);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const uint64_t c = (static_cast<uint64_t>(k) * 32 + lane) * V;
      if (c < cols) {
        T y[V];
        quotient_chunk<T, V, true>(v[k], div, allowed >> (k * V), y);
        store_chunk_streaming<T, V>(out + base + c, y);
      }
    }
    s ^= 1;
  }
}

// ---------------------------------------------------------------------------------------------
// A block per row, the row in shared memory: values (cols, rounded up to 16 bytes) then the mask
// bits (one word per 32 elements of the row rounded up to a whole block step).

template <class T>
uint64_t smem_values_bytes(uint64_t cols) {
  return (cols * sizeof(T) + 15) / 16 * 16;
}
uint64_t smem_step(int threads, int v) {
  return static_cast<uint64_t>(threads) * v;
}
template <class T>
uint64_t smem_bytes(uint64_t cols, int threads, int v) {
  const uint64_t step = smem_step(threads, v);
  const uint64_t padded = (cols + step - 1) / step * step;
  return smem_values_bytes<T>(cols) + padded / 32 * sizeof(uint32_t);
}

template <class T, int V>
__global__ void __launch_bounds__(1024)
    rows_smem_kernel(const T* __restrict__ scores, const T* __restrict__ mask, uint64_t rows,
                     uint64_t cols, T* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ T scratch[32];
  T* vals = reinterpret_cast<T*>(smem);
  uint32_t* bits = reinterpret_cast<uint32_t*>(smem + (cols * sizeof(T) + 15) / 16 * 16);
  constexpr int kGroup = 32 / V;  // lanes whose chunks share one mask word
  const int lane = threadIdx.x & 31;
  const uint64_t step = static_cast<uint64_t>(blockDim.x) * V;
  const uint64_t padded = (cols + step - 1) / step * step;
  for (uint64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const uint64_t base = row * cols;
    T m = neg_inf<T>();
    bool mine = false;
    // Block-uniform trip count, so the whole warp takes part in every shuffle; unrolled so that
    // each thread has several loads in flight.
#pragma unroll 4
    for (uint64_t c = static_cast<uint64_t>(threadIdx.x) * V; c < padded; c += step) {
      uint32_t word = 0;
      if (c < cols) {
        T v[V], mk[V] = {};
        load_chunk<T, V>(scores + base + c, v);
        if (mask != nullptr) load_chunk<T, V>(mask + base + c, mk);
        store_chunk<T, V>(vals + c, v);  // one 16-byte shared store: no bank conflicts
#pragma unroll
        for (int j = 0; j < V; ++j) {
          if (mask == nullptr || mk[j] != T(0)) {
            word |= 1u << ((c + j) & 31);
            m = nan_max(m, v[j]);
          }
        }
      }
#pragma unroll
      for (int o = 1; o < kGroup; o <<= 1) word |= __shfl_xor_sync(kFullMask, word, o);
      if (lane % kGroup == 0) bits[c >> 5] = word;
      mine = mine || word != 0;
    }
    const bool any = __syncthreads_or(mine) != 0;  // also orders the shared stores above
    if (!any) {
      for (uint64_t c = static_cast<uint64_t>(threadIdx.x) * V; c < cols; c += step) {
        T y[V];
#pragma unroll
        for (int j = 0; j < V; ++j) y[j] = T(0);
        store_chunk_streaming<T, V>(out + base + c, y);
      }
      __syncthreads();  // the next row's stores wait for nothing of this row, but keep lockstep
      continue;
    }
    m = block_max(m, scratch);
    T sum = T(0);
    for (uint64_t c = static_cast<uint64_t>(threadIdx.x) * V; c < cols; c += step) {
      T v[V];
      load_chunk<T, V>(vals + c, v);
      const uint32_t word = bits[c >> 5] >> (c & 31);  // a chunk never straddles a word
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if ((word >> j) & 1u) {
          v[j] = exp_of(v[j] - m);
          sum += v[j];
        }
      }
      store_chunk<T, V>(vals + c, v);
    }
    sum = block_sum(sum, scratch);  // a barrier: every e is in shared memory after it
    const RowDivisor<T> div(sum);
    for (uint64_t c = static_cast<uint64_t>(threadIdx.x) * V; c < cols; c += step) {
      T v[V], y[V];
      load_chunk<T, V>(vals + c, v);
      const uint32_t word = bits[c >> 5] >> (c & 31);
#pragma unroll
      for (int j = 0; j < V; ++j) y[j] = ((word >> j) & 1u) ? div(v[j]) : T(0);
      store_chunk_streaming<T, V>(out + base + c, y);
    }
    __syncthreads();  // this row's shared values are read before the next row overwrites them
  }
}

// ---------------------------------------------------------------------------------------------
// A block of kHybridThreads per row, two blocks per SM, the row split between registers and
// shared memory: each thread holds R chunks of V elements in registers (chunk r of thread t at
// element (r * blockDim + t) V, the first R * blockDim * V elements of the row), and the rest of
// the row sits in shared memory as in rows_smem_kernel (values, then mask bits), offset by the
// register span, followed by the mask's ring (kHybridRing chunks per thread, masked rows only).
// Rows of 16k to about 64k float32 (8k to 32k float64) with a mask, 70k (36k) without, stay on
// chip; up to about 36k float32 (18k float64) with a mask, 44k (22k) without, two blocks fit on an
// SM, so one block's loads overlap the other's arithmetic. The mask loads go through the ring
// rather than registers so that a block keeps kHybridRing chunks per thread in flight while it
// folds the landed ones (through registers, the budget of two blocks per SM allowed two).

constexpr int kHybridThreads = 512;
constexpr int kHybridRing = 4;  // mask chunks per thread in flight (power of two)

// Dynamic shared memory of the hybrid kernel for `rest` elements past the register span.
template <class T>
uint64_t hybrid_smem_bytes(uint64_t rest, int v, bool masked) {
  const uint64_t ring = masked ? uint64_t{kHybridRing} * kHybridThreads * v * sizeof(T) : 0;
  return (smem_bytes<T>(rest, kHybridThreads, v) + 15) / 16 * 16 + ring;
}

template <class T, int V, int R, bool kMasked>
__global__ void __launch_bounds__(kHybridThreads, 2)
    rows_hybrid_kernel(const T* __restrict__ scores, const T* __restrict__ mask, uint64_t rows,
                       uint64_t cols, T* __restrict__ out) {
  static_assert(R * V <= 32, "one mask bit per register element");
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ T scratch[32];
  constexpr int kGroup = 32 / V;  // lanes whose chunks share one mask word
  const int lane = threadIdx.x & 31;
  const uint32_t step = blockDim.x * V;  // row offsets fit 32 bits on this path
  const uint32_t span = step * R;        // elements held in registers
  const uint32_t rest = cols > span ? static_cast<uint32_t>(cols - span) : 0u;
  const uint32_t padded = (rest + step - 1) / step * step;
  T* vals = reinterpret_cast<T*>(smem);
  const uint32_t values_bytes = (rest * sizeof(T) + 15) / 16 * 16;
  uint32_t* bits = reinterpret_cast<uint32_t*>(smem + values_bytes);
  T* ring = reinterpret_cast<T*>(smem + (values_bytes + padded / 32 * 4 + 15) / 16 * 16);
  const uint32_t first = threadIdx.x * V;
  for (uint64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const uint64_t base = row * cols;
    // The scores of the shared-memory part go there by asynchronous copies (no registers held:
    // they are all in flight at once); each thread copies, and later reads, only its own chunks.
    for (uint32_t c = first; c < rest; c += step) {
      copy_chunk_async<T, V>(vals + c, scores + base + span + c);
    }
    copy_commit();
    // The mask streams through a ring of kHybridRing chunks per thread (asynchronous copies, no
    // registers held while in flight): mask chunk k of this thread lies at element k * step +
    // first of the row (the register chunks first, then the shared-memory part), and chunk k +
    // kHybridRing is requested as soon as chunk k has been read. One group per chunk, committed
    // even when empty, so "wait for all but the newest kHybridRing - 1 groups" always means
    // "chunk k (and everything older, the scores' copies included) has landed".
    const uint32_t chunks = static_cast<uint32_t>(R) + padded / step;  // block-uniform
    auto request_mask = [&](uint32_t k) {
      if constexpr (kMasked) {
        const uint32_t c = k * step + first;
        if (k < chunks && c < cols) {
          copy_chunk_async<T, V>(ring + (k % kHybridRing * blockDim.x + threadIdx.x) * V,
                                 mask + base + c);
        }
        copy_commit();
      }
    };
    auto mask_chunk = [&](uint32_t k, T(&mk)[V]) {
      if constexpr (kMasked) {
        copy_wait<kHybridRing - 1>();
        load_chunk<T, V>(ring + (k % kHybridRing * blockDim.x + threadIdx.x) * V, mk);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j) mk[j] = T(1);
      }
    };
#pragma unroll
    for (int k = 0; k < kHybridRing; ++k) request_mask(k);
    T v[R][V];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const uint32_t c = r * step + first;
#pragma unroll
      for (int j = 0; j < V; ++j) v[r][j] = T(0);
      if (c < cols) load_chunk<T, V>(scores + base + c, v[r]);
    }
    uint32_t reg_bits = 0;
    T m = neg_inf<T>();
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const uint32_t c = r * step + first;
      T mk[V];
      mask_chunk(r, mk);
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if (c < cols && mk[j] != T(0)) {
          reg_bits |= 1u << (r * V + j);
          m = nan_max(m, v[r][j]);
        }
      }
      request_mask(r + kHybridRing);  // after chunk r's values are in registers and used
    }
    if constexpr (!kMasked) copy_wait<0>();  // the scores' copies
    bool mine = reg_bits != 0;
    // The shared-memory part: its mask from the ring, its scores from this thread's own copies.
    // Block-uniform trip count, so the whole warp takes part in every shuffle.
    for (uint32_t k = R; k < chunks; ++k) {
      const uint32_t c = (k - R) * step + first;
      T mk[V];
      mask_chunk(k, mk);
      uint32_t word = 0;
      if (c < rest) {
        T w[V];
        load_chunk<T, V>(vals + c, w);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          if (mk[j] != T(0)) {
            word |= 1u << ((c + j) & 31);
            m = nan_max(m, w[j]);
          }
        }
      }
      request_mask(k + kHybridRing);
#pragma unroll
      for (int o = 1; o < kGroup; o <<= 1) word |= __shfl_xor_sync(kFullMask, word, o);
      if (lane % kGroup == 0) bits[c >> 5] = word;
      mine = mine || word != 0;
    }
    const bool any = __syncthreads_or(mine) != 0;  // also orders the shared stores above
    T sum = T(1);                                  // no allowed entry: nothing divides
    if (any) {
      m = block_max(m, scratch);
      sum = T(0);
#pragma unroll
      for (int r = 0; r < R; ++r) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          if ((reg_bits >> (r * V + j)) & 1u) {
            v[r][j] = exp_of(v[r][j] - m);
            sum += v[r][j];
          }
        }
      }
      for (uint32_t c = first; c < rest; c += step) {
        T w[V];
        load_chunk<T, V>(vals + c, w);
        const uint32_t word = bits[c >> 5] >> (c & 31);  // a chunk never straddles a word
#pragma unroll
        for (int j = 0; j < V; ++j) {
          if ((word >> j) & 1u) {
            w[j] = exp_of(w[j] - m);
            sum += w[j];
          }
        }
        store_chunk<T, V>(vals + c, w);
      }
      sum = block_sum(sum, scratch);
    }
    const RowDivisor<T> div(sum);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const uint32_t c = r * step + first;
      if (c < cols) {
        T y[V];
#pragma unroll
        for (int j = 0; j < V; ++j) y[j] = ((reg_bits >> (r * V + j)) & 1u) ? div(v[r][j]) : T(0);
        store_chunk_streaming<T, V>(out + base + c, y);
      }
    }
    for (uint32_t c = first; c < rest; c += step) {
      T w[V], y[V];
      load_chunk<T, V>(vals + c, w);
      const uint32_t word = any ? bits[c >> 5] >> (c & 31) : 0u;
#pragma unroll
      for (int j = 0; j < V; ++j) y[j] = ((word >> j) & 1u) ? div(w[j]) : T(0);
      store_chunk_streaming<T, V>(out + base + span + c, y);
    }
    __syncthreads();  // this row's shared values are read before the next row overwrites them
  }
}

// ---------------------------------------------------------------------------------------------
// Online max / sum: (m, s) with s = sum over the values seen of exp(x - m), m NaN once a NaN was
// seen. s = 0 exactly when no value other than -inf was seen. The result is only used with a
// finite m (a non-finite final m makes the sum NaN: +inf gives inf - inf, all -inf gives
// -inf - -inf, NaN gives NaN).

template <class T>
struct Online {
  T m;
  T s;
};

template <class T>
__device__ __forceinline__ void online_add(Online<T>& a, T x) {
  if (x != x || a.m != a.m) {
    a.m = quiet_nan<T>();
  } else if (x > a.m) {
    a.s = (a.s == T(0) ? T(0) : a.s * exp_of(a.m - x)) + T(1);
    a.m = x;
  } else if (x != neg_inf<T>()) {
    a.s += exp_of(x - a.m);
  }
}

template <class T>
__device__ __forceinline__ Online<T> online_merge(Online<T> a, Online<T> b) {
  if (a.m != a.m || b.m != b.m) return {quiet_nan<T>(), T(0)};
  const T m = a.m > b.m ? a.m : b.m;
  const T sa = a.s == T(0) ? T(0) : a.s * exp_of(a.m - m);
  const T sb = b.s == T(0) ? T(0) : b.s * exp_of(b.m - m);
  return {m, sa + sb};
}

template <class T>
__device__ __forceinline__ T online_sum(Online<T> a) {
  return (a.m == a.m && a.m != neg_inf<T>() && a.m != -neg_inf<T>()) ? a.s : quiet_nan<T>();
}

template <class T>
__device__ Online<T> warp_online(Online<T> a) {
  for (int o = 16; o > 0; o >>= 1) {
    Online<T> b{__shfl_xor_sync(kFullMask, a.m, o), __shfl_xor_sync(kFullMask, a.s, o)};
    a = online_merge(a, b);
  }
  return a;
}

template <class T, int V>
__global__ void __launch_bounds__(1024)
    rows_online_kernel(const T* __restrict__ scores, const T* __restrict__ mask, uint64_t rows,
                       uint64_t cols, T* __restrict__ out) {
  __shared__ T scratch_m[32];
  __shared__ T scratch_s[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const uint64_t step = static_cast<uint64_t>(blockDim.x) * V;
  for (uint64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const uint64_t base = row * cols;
    Online<T> acc{neg_inf<T>(), T(0)};
    bool mine = false;
#pragma unroll 4
    for (uint64_t c = static_cast<uint64_t>(threadIdx.x) * V; c < cols; c += step) {
      T v[V], mk[V] = {};
      load_chunk<T, V>(scores + base + c, v);
      if (mask != nullptr) load_chunk<T, V>(mask + base + c, mk);
#pragma unroll
      for (int j = 0; j < V; ++j) {
        if (mask == nullptr || mk[j] != T(0)) {
          mine = true;
          online_add(acc, v[j]);
        }
      }
    }
    const bool any = __syncthreads_or(mine) != 0;
    acc = warp_online(acc);
    if (lane == 0) {
      scratch_m[warp] = acc.m;
      scratch_s[warp] = acc.s;
    }
    __syncthreads();
    Online<T> all{neg_inf<T>(), T(0)};
    if (lane < warps) all = {scratch_m[lane], scratch_s[lane]};
    all = warp_online(all);
    const T m = all.m;
    const RowDivisor<T> div(online_sum(all));
    for (uint64_t c = static_cast<uint64_t>(threadIdx.x) * V; c < cols; c += step) {
      T v[V] = {}, mk[V] = {}, y[V];
      if (any) load_chunk<T, V>(scores + base + c, v);
      if (any && mask != nullptr) load_chunk<T, V>(mask + base + c, mk);
#pragma unroll
      for (int j = 0; j < V; ++j) {
        y[j] = (any && (mask == nullptr || mk[j] != T(0))) ? div(exp_of(v[j] - m)) : T(0);
      }
      store_chunk_streaming<T, V>(out + base + c, y);
    }
    __syncthreads();  // scratch is rewritten by the next row
  }
}

// ---------------------------------------------------------------------------------------------
// Softmax along a middle axis: a thread per (o, i) column of x as (outer, len, inner).

template <class T, int N>
__global__ void __launch_bounds__(kThreads)
    axis_register_kernel(const T* __restrict__ x, uint64_t columns, uint64_t len, uint64_t inner,
                         T* __restrict__ out) {
  for (uint64_t idx = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < columns;
       idx += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const uint64_t o = idx / inner;
    const uint64_t base = o * len * inner + (idx - o * inner);
    T v[N];
    T m = neg_inf<T>();
#pragma unroll
    for (int k = 0; k < N; ++k) {
      v[k] = T(0);
      if (static_cast<uint64_t>(k) < len) {
        v[k] = x[base + static_cast<uint64_t>(k) * inner];
        m = nan_max(m, v[k]);
      }
    }
    T sum = T(0);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (static_cast<uint64_t>(k) < len) {
        v[k] = exp_of(v[k] - m);
        sum += v[k];
      }
    }
    const RowDivisor<T> div(sum);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (static_cast<uint64_t>(k) < len) out[base + static_cast<uint64_t>(k) * inner] = div(v[k]);
    }
  }
}

// Softmax along a middle axis with the axis split over the block: blockDim = (TX, S), TX
// consecutive inner columns of one outer index per block tile, S slices of the axis per column
// (slice t takes k = t, t + S, ...). Each thread folds its slice online, the S partials of a column
// merge in slice order through shared memory (a fixed order: the same bits on every run), then
// each thread writes its slice. A warp reads 32 / TX slices of TX adjacent columns: contiguous
// when TX = inner, 128-byte lines otherwise.

template <class T>
__global__ void __launch_bounds__(kThreads)
    axis_split_kernel(const T* __restrict__ x, uint64_t outer, uint64_t len, uint64_t inner,
                      T* __restrict__ out) {
  __shared__ T part_m[kThreads];
  __shared__ T part_s[kThreads];
  const uint32_t tx = threadIdx.x, ty = threadIdx.y, tx_count = blockDim.x, slices = blockDim.y;
  const uint64_t tiles_per_outer = (inner + tx_count - 1) / tx_count;
  const uint64_t tiles = outer * tiles_per_outer;
  for (uint64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const uint64_t o = tile / tiles_per_outer;
    const uint64_t i = (tile - o * tiles_per_outer) * tx_count + tx;
    const bool live = i < inner;
    const uint64_t base = o * len * inner + (live ? i : 0);
    Online<T> acc{neg_inf<T>(), T(0)};
    if (live) {
#pragma unroll 4
      for (uint64_t k = ty; k < len; k += slices) online_add(acc, x[base + k * inner]);
    }
    part_m[ty * tx_count + tx] = acc.m;
    part_s[ty * tx_count + tx] = acc.s;
    __syncthreads();
    Online<T> all{neg_inf<T>(), T(0)};
    for (uint32_t t = 0; t < slices; ++t) {
      all = online_merge(all, Online<T>{part_m[t * tx_count + tx], part_s[t * tx_count + tx]});
    }
    const T m = all.m;
    const T sum = online_sum(all);
    if (live) {
#pragma unroll 4
      for (uint64_t k = ty; k < len; k += slices) {
        out[base + k * inner] = exp_of(x[base + k * inner] - m) / sum;
      }
    }
    __syncthreads();  // the partials are read before the next tile rewrites them
  }
}

// ---------------------------------------------------------------------------------------------
// Launch selection.

template <class T, int V, int N, int G>
void launch_warp(const T* s, const T* mk, uint64_t rows, uint64_t cols, T* out,
                 cudaStream_t stream) {
  constexpr uint64_t kRowsPerBlock = kThreads / G;
  const dim3 grid = grid_for(rows, kRowsPerBlock, kRowGridCap);
  if (mk != nullptr) {
    rows_warp_kernel<T, V, N, G, true><<<grid, kThreads, 0, stream>>>(s, mk, rows, cols, out);
  } else {
    rows_warp_kernel<T, V, N, G, false><<<grid, kThreads, 0, stream>>>(s, mk, rows, cols, out);
  }
}

// Masked rows only: unmasked rows of this length take rows_warp_kernel, which measured faster
// once its per-element work was cut to exp, add and quotient (unmasked chunks are tested whole).
// As many blocks as are resident at once (each warp then streams through several rows, its next
// row's copies in flight while it works), fewer when there are fewer rows.
template <class T, int N>
void launch_pipe(const T* s, const T* mk, uint64_t rows, uint64_t cols, T* out, cudaStream_t stream,
                 const char* op) {
  constexpr auto kKernel = rows_pipe_kernel<T, N>;
  const uint64_t bytes = pipe_smem_bytes<N>();
  const int per_sm = resident_blocks_per_sm<kKernel>(kPipeThreads, bytes, op);
  const uint64_t resident = static_cast<uint64_t>(per_sm) * current_sm_count(op);
  const dim3 grid = grid_for(rows, kPipeThreads / 32, resident);
  kKernel<<<grid, kPipeThreads, bytes, stream>>>(s, mk, rows, cols, out);
}

// Rows of at most 32 V elements: G = the smallest power of two with G V >= cols, one chunk per
// lane. Longer rows (<= 1024): a whole warp, N = the smallest power of two with 32 N V >= cols;
// masked rows on the 16-byte path with N = 4 or 8 through shared memory (rows_pipe_kernel).
template <class T, int V>
void dispatch_warp(const T* s, const T* mk, uint64_t rows, uint64_t cols, T* out,
                   cudaStream_t stream, const char* op) {
  const uint64_t chunks = (cols + V - 1) / V;
  if (chunks <= 1) return launch_warp<T, V, 1, 1>(s, mk, rows, cols, out, stream);
  if (chunks <= 2) return launch_warp<T, V, 1, 2>(s, mk, rows, cols, out, stream);
  if (chunks <= 4) return launch_warp<T, V, 1, 4>(s, mk, rows, cols, out, stream);
  if (chunks <= 8) return launch_warp<T, V, 1, 8>(s, mk, rows, cols, out, stream);
  if (chunks <= 16) return launch_warp<T, V, 1, 16>(s, mk, rows, cols, out, stream);
  if (chunks <= 32) return launch_warp<T, V, 1, 32>(s, mk, rows, cols, out, stream);
  if (chunks <= 64) return launch_warp<T, V, 2, 32>(s, mk, rows, cols, out, stream);
  if constexpr (V > 1) {
    if (mk == nullptr) {
      if (chunks <= 128) return launch_warp<T, V, 4, 32>(s, mk, rows, cols, out, stream);
      if (chunks <= 256) return launch_warp<T, V, 8, 32>(s, mk, rows, cols, out, stream);
    }
    if (chunks <= 128) return launch_pipe<T, 4>(s, mk, rows, cols, out, stream, op);
    if (chunks <= 256) return launch_pipe<T, 8>(s, mk, rows, cols, out, stream, op);
  } else {
    if (chunks <= 128) return launch_warp<T, V, 4, 32>(s, mk, rows, cols, out, stream);
    if (chunks <= 256) return launch_warp<T, V, 8, 32>(s, mk, rows, cols, out, stream);
  }
  if constexpr (V <= 2) {
    if (chunks <= 512) return launch_warp<T, V, 16, 32>(s, mk, rows, cols, out, stream);
  }
  if constexpr (V == 1) {
    launch_warp<T, V, 32, 32>(s, mk, rows, cols, out, stream);
  }
}

template <class T, int V>
void dispatch_rows(const T* s, const T* mk, uint64_t rows, uint64_t cols, T* out,
                   cudaStream_t stream, const char* op) {
  if (cols <= kWarpRowMax) {
    dispatch_warp<T, V>(s, mk, rows, cols, out, stream, op);
    return;
  }
  // Dynamic shared memory a row kernel may use: the device's opt-in limit less the kernels'
  // static shared memory (the 32-entry scratch) and some slack. The kernels' limits are raised to
  // it once per device.
  const uint64_t limit = smem_optin_bytes(op) - 32 * sizeof(T) - 64;
  // Register chunks per thread of the hybrid kernel: 32 float32 or 16 float64 values.
  constexpr int kR = (sizeof(T) == 4 ? 32 : 16) / V;
  const uint64_t span = static_cast<uint64_t>(kHybridThreads) * V * kR;
  if (cols <= span) {
    const int threads = cols <= 4096 ? 256 : cols <= 8192 ? 512 : 1024;
    // The static shared memory (the 32-entry scratch) and some slack come on top.
    const uint64_t dynamic = smem_bytes<T>(cols, threads, V);
    if (dynamic <= limit) {
      allow_dynamic_shared<rows_smem_kernel<T, V>>(limit, op);
      rows_smem_kernel<T, V>
          <<<grid_for(rows, 1, kRowGridCap), threads, dynamic, stream>>>(s, mk, rows, cols, out);
      return;
    }
  } else {
    const uint64_t dynamic = hybrid_smem_bytes<T>(cols - span, V, mk != nullptr);
    if (dynamic <= limit) {
      const dim3 grid = grid_for(rows, 1, kRowGridCap);
      if (mk != nullptr) {
        allow_dynamic_shared<rows_hybrid_kernel<T, V, kR, true>>(limit, op);
        rows_hybrid_kernel<T, V, kR, true>
            <<<grid, kHybridThreads, dynamic, stream>>>(s, mk, rows, cols, out);
      } else {
        allow_dynamic_shared<rows_hybrid_kernel<T, V, kR, false>>(limit, op);
        rows_hybrid_kernel<T, V, kR, false>
            <<<grid, kHybridThreads, dynamic, stream>>>(s, mk, rows, cols, out);
      }
      return;
    }
  }
  rows_online_kernel<T, V>
      <<<grid_for(rows, 1, kRowGridCap), 1024, 0, stream>>>(s, mk, rows, cols, out);
}

}  // namespace

template <class T>
void softmax_rows_cuda(const T* scores, const T* mask, uint64_t rows, uint64_t cols, T* out,
                       CUstream_st* stream) {
  // The op whose failure a launch error reports: the last-axis softmax_io has no mask.
  const char* op = mask != nullptr ? "hard_masked_softmax_by_row" : "softmax_io";
  if (rows == 0 || cols == 0) return;
  constexpr int kV = Vec16<T>::kLanes;
  const bool vector =
      cols % kV == 0 && aligned16(scores) && aligned16(out) && (mask == nullptr || aligned16(mask));
  if (vector) {
    dispatch_rows<T, kV>(scores, mask, rows, cols, out, stream, op);
  } else {
    dispatch_rows<T, 1>(scores, mask, rows, cols, out, stream, op);
  }
  check_launch(op);
}

template <class T>
void softmax_axis_cuda(const T* x, uint64_t outer, uint64_t len, uint64_t inner, T* out,
                       CUstream_st* stream) {
  const char* op = "softmax_io";
  const uint64_t columns = outer * inner;
  if (columns == 0 || len == 0) return;
  // Short axes with many columns: a thread per column, the column in registers (one read, one
  // write). Otherwise the axis split over the block (two reads, one write).
  if (len <= kAxisRegisterMax && columns >= kAxisRegisterMinColumns) {
    const dim3 grid = grid_for(columns, kThreads);
    if (len <= 8) {
      axis_register_kernel<T, 8><<<grid, kThreads, 0, stream>>>(x, columns, len, inner, out);
    } else if (len <= 32) {
      axis_register_kernel<T, 32><<<grid, kThreads, 0, stream>>>(x, columns, len, inner, out);
    } else {
      axis_register_kernel<T, kAxisRegisterMax>
          <<<grid, kThreads, 0, stream>>>(x, columns, len, inner, out);
    }
  } else {
    uint32_t tx = 1;
    while (tx < 32 && tx < inner) tx <<= 1;
    const dim3 block(tx, kThreads / tx);
    const uint64_t tiles = outer * ((inner + tx - 1) / tx);
    axis_split_kernel<T>
        <<<grid_for(tiles, 1, kRowGridCap), block, 0, stream>>>(x, outer, len, inner, out);
  }
  check_launch(op);
}

template void softmax_rows_cuda<float>(const float*, const float*, uint64_t, uint64_t, float*,
                                       CUstream_st*);
template void softmax_rows_cuda<double>(const double*, const double*, uint64_t, uint64_t, double*,
                                        CUstream_st*);
template void softmax_axis_cuda<float>(const float*, uint64_t, uint64_t, uint64_t, float*,
                                       CUstream_st*);
template void softmax_axis_cuda<double>(const double*, uint64_t, uint64_t, uint64_t, double*,
                                        CUstream_st*);

}  // namespace tlrt::kernels
