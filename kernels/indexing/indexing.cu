// CUDA backend of the indexing family (kernels/indexing/indexing.h).
//
// gather_rows copies whole rows as 16-, 8- or 4-byte words (the widest the row length and the
// pointers allow): a 2-D grid (rows in y, words in x) for long rows, a flat grid-stride loop for
// short ones. gather_at is a per-element word copy.
//
// The ordered scatters are in kernels/indexing/indexing_scatter.cu; what both files share in
// indexing_shared.cuh.
#include <algorithm>
#include <string>

#include "kernels/common/float_ops.cuh"
#include "kernels/common/launch.cuh"
#include "kernels/indexing/indexing.h"
#include "kernels/indexing/indexing_shared.cuh"

namespace tlrt::kernels {
namespace {

using namespace indexing_detail;

// ---------------------------------------------------------------------------------------------
// gather_rows

template <class W, class I>
__global__ void gather_rows_2d(const W* __restrict__ mat, uint32_t rows, uint64_t units,
                               const __grid_constant__ I list, uint64_t k, W* __restrict__ out) {
  const uint32_t* idx = list.get();
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t r = blockIdx.y; r < k; r += gridDim.y) {
    const uint32_t t = idx[r];
    W* dst = out + r * units;
    if (t < rows) {
      const W* src = mat + uint64_t{t} * units;
      for (uint64_t u = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; u < units; u += stride) {
        dst[u] = src[u];
      }
    } else {
      for (uint64_t u = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; u < units; u += stride) {
        dst[u] = W{};
      }
    }
  }
}

template <class W, class I>
__global__ void gather_rows_flat(const W* __restrict__ mat, uint32_t rows, uint32_t units,
                                 const __grid_constant__ I list, uint64_t total,
                                 W* __restrict__ out) {
  const uint32_t* idx = list.get();
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += stride) {
    const uint64_t r = i / units;
    const uint64_t u = i - r * units;
    const uint32_t t = idx[r];
    out[i] = t < rows ? mat[uint64_t{t} * units + u] : W{};
  }
}

template <class W, class I>
void launch_gather_rows(const void* mat, uint64_t rows, uint64_t row_bytes, const I& idx,
                        uint64_t k, void* out, CUstream_st* stream) {
  const uint64_t units = row_bytes / sizeof(W);
  const W* m = static_cast<const W*>(mat);
  W* o = static_cast<W*>(out);
  if (units >= 32) {
    const uint64_t threads = std::min<uint64_t>(kThreads, (units + 31) / 32 * 32);
    const uint64_t x = std::min<uint64_t>((units + threads - 1) / threads, 1u << 16);
    const uint64_t y = std::min<uint64_t>(k, 65535);
    gather_rows_2d<W, I>
        <<<dim3(static_cast<unsigned>(x), static_cast<unsigned>(y)), static_cast<unsigned>(threads),
           0, stream>>>(m, static_cast<uint32_t>(rows), units, idx, k, o);
  } else {
    const uint64_t total = k * units;
    gather_rows_flat<W, I><<<grid_for(total, kThreads), kThreads, 0, stream>>>(
        m, static_cast<uint32_t>(rows), static_cast<uint32_t>(units), idx, total, o);
  }
  check_launch("gather_rows");
}

// Rows copied as 16-, 8- or 4-byte words, the widest the row length and the pointers allow.
template <class T, class I>
void gather_rows_words(const T* mat, uint64_t rows, uint64_t cols, const I& idx, uint64_t k, T* out,
                       CUstream_st* stream) {
  const uint64_t row_bytes = cols * sizeof(T);
  if (row_bytes % 16 == 0 && aligned16(mat) && aligned16(out)) {
    launch_gather_rows<uint4>(mat, rows, row_bytes, idx, k, out, stream);
  } else if (row_bytes % 8 == 0 && reinterpret_cast<uintptr_t>(mat) % 8 == 0 &&
             reinterpret_cast<uintptr_t>(out) % 8 == 0) {
    launch_gather_rows<unsigned long long>(mat, rows, row_bytes, idx, k, out, stream);
  } else {
    launch_gather_rows<uint32_t>(mat, rows, row_bytes, idx, k, out, stream);
  }
}

// ---------------------------------------------------------------------------------------------
// gather_at

template <class T>
__global__ void gather_at_kernel(const T* __restrict__ table, uint32_t size,
                                 const T* __restrict__ positions, uint64_t count,
                                 T* __restrict__ out) {
  using B = typename Word<T>::type;
  const B* words = reinterpret_cast<const B*>(table);
  B* dst = reinterpret_cast<B*>(out);
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    dst[i] = words[at_index(positions[i], size)];
  }
}

}  // namespace

template <class T>
void gather_rows_cuda(const T* mat, uint64_t rows, uint64_t cols, const uint32_t* idx, uint64_t k,
                      T* out, CUstream_st* stream) {
  if (cols == 0 || k == 0) return;
  gather_rows_words(mat, rows, cols, PtrIdx{idx}, k, out, stream);
}

template <class T>
void gather_rows_param_cuda(const T* mat, uint64_t rows, uint64_t cols, const uint32_t* host_idx,
                            uint64_t k, T* out, CUstream_st* stream) {
  if (cols == 0 || k == 0) return;
  require_param_count(k, "gather_rows");
  if (k <= kParamSmall) {
    gather_rows_words(mat, rows, cols, param_list<kParamSmall>(host_idx, k), k, out, stream);
  } else {
    gather_rows_words(mat, rows, cols, param_list<kParamLarge>(host_idx, k), k, out, stream);
  }
}

template <class T>
void gather_at_cuda(const T* table, uint32_t size, const T* positions, uint64_t count, T* out,
                    CUstream_st* stream) {
  if (count == 0) return;
  gather_at_kernel<T>
      <<<grid_for(count, kThreads), kThreads, 0, stream>>>(table, size, positions, count, out);
  check_launch("gather_at");
}

#define TLRT_INDEXING_CUDA(T)                                                                      \
  template void gather_rows_cuda<T>(const T*, uint64_t, uint64_t, const uint32_t*, uint64_t, T*,   \
                                    CUstream_st*);                                                 \
  template void gather_at_cuda<T>(const T*, uint32_t, const T*, uint64_t, T*, CUstream_st*);       \
  template void gather_rows_param_cuda<T>(const T*, uint64_t, uint64_t, const uint32_t*, uint64_t, \
                                          T*, CUstream_st*);
TLRT_INDEXING_CUDA(float)
TLRT_INDEXING_CUDA(double)
#undef TLRT_INDEXING_CUDA

}  // namespace tlrt::kernels
