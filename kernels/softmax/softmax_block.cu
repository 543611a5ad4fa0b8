// Softmax rows longer than 1024 elements, CUDA backend: a block per row (the launch selection,
// the shorter rows and the other axes: kernels/softmax/softmax.cu, whose opening comment describes
// every schedule).
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kernels/common/async_copy.cuh"
#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/common/quotient.h"
#include "kernels/softmax/softmax.h"
#include "kernels/softmax/softmax_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace softmax_detail;

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

}  // namespace

namespace softmax_detail {

template <class T, int V>
void launch_block_rows(const T* s, const T* mk, uint64_t rows, uint64_t cols, T* out,
                       cudaStream_t stream, const char* op) {
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

template void launch_block_rows<float, 1>(const float*, const float*, uint64_t, uint64_t, float*,
                                          cudaStream_t, const char*);
template void launch_block_rows<float, Vec16<float>::kLanes>(const float*, const float*, uint64_t,
                                                             uint64_t, float*, cudaStream_t,
                                                             const char*);
template void launch_block_rows<double, 1>(const double*, const double*, uint64_t, uint64_t,
                                           double*, cudaStream_t, const char*);
template void launch_block_rows<double, Vec16<double>::kLanes>(const double*, const double*,
                                                               uint64_t, uint64_t, double*,
                                                               cudaStream_t, const char*);

}  // namespace softmax_detail
}  // namespace tlrt::kernels
