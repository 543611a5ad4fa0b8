// Whole-buffer reductions reduce_sum and reduce_mean (SPEC-ops 6.4) on contiguous float / double
// buffers, one result scalar. Both backends compute the deterministic 256-lane tree bit for bit:
// B = min(ceil(N/256), 65535) rows of 256 lanes, lane i folds cur[i], cur[i+S], ... (S = 256*B)
// in order from +0, each row halves pairwise (w = 128 .. 1), the B row results become the next
// cur, until one value is left; empty -> +0. reduce_mean = fl(sum * fl(1 / fl(n))), empty -> NaN.
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

// Tree shape shared by both backends.
constexpr uint64_t kReduceRowLanes = 256;
constexpr uint64_t kReduceMaxRows = 65535;

// Rows of one tree pass over n > 0 values: min(ceil(n/256), 65535).
inline uint64_t reduce_rows(uint64_t n) {
  const uint64_t rows = n / kReduceRowLanes + (n % kReduceRowLanes != 0);
  return rows < kReduceMaxRows ? rows : kReduceMaxRows;
}

// The multiplier of reduce_mean for n > 0: the reciprocal is formed in binary64 from the
// dtype-rounded count, then rounded to the dtype (SPEC-ops 2.6).
template <class T>
inline T mean_reciprocal(uint64_t n) {
  return static_cast<T>(1.0 / static_cast<double>(static_cast<T>(n)));
}

// Reference backend (kernels/reduce/reduce_ref.cpp): plain loops over host memory.
template <class T>
T reduce_sum_ref(const T* x, uint64_t n);
template <class T>
T reduce_mean_ref(const T* x, uint64_t n);

// Device workspace the CUDA launchers need for n elements of element_bytes each (0 when n <= 256:
// a single row needs none). Layout (offsets 16-byte aligned): second-pass row results, first-pass
// row results. Nothing in it is read before the launch writes it.
struct ReduceWorkspaceLayout {
  uint64_t rows = 0;    // first-pass rows B
  uint64_t groups = 0;  // second-pass rows ceil(B/256)
  size_t second_offset = 0;
  size_t first_offset = 0;
  size_t bytes = 0;
};

inline ReduceWorkspaceLayout reduce_workspace_layout(uint64_t n, size_t element_bytes) {
  ReduceWorkspaceLayout l;
  if (n <= kReduceRowLanes) return l;
  auto align16 = [](size_t b) { return (b + 15) / 16 * 16; };
  l.rows = reduce_rows(n);
  l.groups = reduce_rows(l.rows);
  l.second_offset = 0;
  l.first_offset = align16(static_cast<size_t>(l.groups) * element_bytes);
  l.bytes = l.first_offset + static_cast<size_t>(l.rows) * element_bytes;
  return l;
}

inline size_t reduce_sum_workspace_bytes(uint64_t n, size_t element_bytes) {
  return reduce_workspace_layout(n, element_bytes).bytes;
}

// CUDA backend (kernels/reduce/reduce.cu). Asynchronous on `stream`: writes the result to the
// device scalar *out. `workspace` is device memory of reduce_sum_workspace_bytes(n, sizeof(T))
// bytes (may be null when that is 0), free for reuse by later work on the same stream. Launches
// on one device must not overlap (the kernels share per-device completion counters): tlrt queues
// all work of a device on its one stream.
template <class T>
void reduce_sum_cuda(const T* x, uint64_t n, T* out, void* workspace, CUstream_st* stream);
template <class T>
void reduce_mean_cuda(const T* x, uint64_t n, T* out, void* workspace, CUstream_st* stream);

}  // namespace tlrt::kernels
