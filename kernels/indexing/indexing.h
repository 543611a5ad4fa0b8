// Gather and scatter along rows (SPEC-ops 11) on contiguous float / double buffers, with host index
// lists already converted to uint32 words (runtime/index_upload.h) or device positions of the
// buffer's dtype (gather_at, scatter_add_at).
//
//   gather_rows: out[r, :] = mat[idx[r], :] when idx[r] < rows, else a row of +0. A selection:
//     rows are copied as words (NaN payloads kept) and an out-of-range row never reads mat.
//   scatter_add_rows: out = copy(mat); each touched row t with sources r1 < r2 < ... (the r with
//     idx[r] = t) becomes fl(...fl(fl(-0 + mat[t]) + values[r1]) + values[r2] ...), column by
//     column; untouched rows keep their bits; idx[r] >= rows is ignored. This ordered fold is the
//     deterministic contract and both backends use it whatever the deterministic setting says, so
//     the results are bit-identical across backends, runs and settings (NaN payloads aside).
//   gather_at / scatter_add_at address a table of `size` > 0 entries through at_index(p).
//     scatter_add_at is scatter_add_rows over a base of +0 zeros (cols = 1), so an entry with
//     sources v1, v2, ... is fl(...fl(fl(+0 + v1) + v2) ...) and an untouched entry is +0.
//
// The launchers take validated extents: the callers (runtime/indexing_dispatch.cpp) have checked
// the sizes against the buffers and allocated `out` with room for every element written.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/host_device.h"

struct CUstream_st;

namespace tlrt::kernels {

// The addressing of gather_at / scatter_add_at for a table of size > 0: p' = 0 for NaN, size-1
// for +inf, 0 for -inf, else p; idx = trunc(clamp(p', 0, size-1)). Compared in binary64, where
// every float32 position and every size-1 is exact, so the clamp never rounds.
template <class T>
TLRT_HOST_DEVICE uint32_t at_index(T p, uint32_t size) {
  const double x = static_cast<double>(p);
  const double last = static_cast<double>(size - 1);
  if (!(x > 0.0)) return 0;  // NaN, -inf, negatives and both zeros
  if (x >= last) return size - 1;
  return static_cast<uint32_t>(x);  // 0 < x < size - 1: truncation
}

// Reference backend (kernels/indexing/indexing_ref.cpp): plain loops over host memory.
template <class T>
void gather_rows_ref(const T* mat, uint64_t rows, uint64_t cols, const uint32_t* idx, uint64_t k,
                     T* out);
template <class T>
void scatter_add_rows_ref(const T* mat, const T* values, uint64_t rows, uint64_t cols,
                          const uint32_t* idx, uint64_t k, T* out);
template <class T>
void gather_at_ref(const T* table, uint32_t size, const T* positions, uint64_t count, T* out);
template <class T>
void scatter_add_at_ref(uint32_t size, const T* positions, const T* values, uint64_t count, T* out);

// CUDA backend (kernels/indexing/indexing.cu; the scatters in indexing_scatter.cu): device memory,
// asynchronous on `stream`.
template <class T>
void gather_rows_cuda(const T* mat, uint64_t rows, uint64_t cols, const uint32_t* idx, uint64_t k,
                      T* out, CUstream_st* stream);
template <class T>
void gather_at_cuda(const T* table, uint32_t size, const T* positions, uint64_t count, T* out,
                    CUstream_st* stream);

// The ordered scatter sorts (target, source) pairs by target on the device (a stable radix sort
// over the bits of `rows`, out-of-range targets mapped to the key `rows`, which sorts last and is
// skipped), then folds each touched row's sources in increasing source order. Scratch: device
// memory of ordered_scatter_workspace_bytes(rows, k) bytes, 256-byte aligned, free for reuse by
// later work on the same stream once the launch is queued.
size_t ordered_scatter_workspace_bytes(uint64_t rows, uint64_t k);

// out = copy(mat), then the ordered fold (rows, cols, k > 0 not required: empty extents queue at
// most the copy). `mat` may be null when the base is zeros (scatter_add_at): out is zero-filled.
template <class T>
void scatter_add_rows_cuda(const T* mat, const T* values, uint64_t rows, uint64_t cols,
                           const uint32_t* idx, uint64_t k, T* out, void* workspace,
                           CUstream_st* stream);

// zeros(size), then the ordered fold of values at at_index(positions[i]). Scratch: the ordered
// scatter's workspace for (size, count) plus scatter_add_at_index_bytes(count) bytes, laid out by
// scatter_add_at_workspace_bytes.
size_t scatter_add_at_workspace_bytes(uint32_t size, uint64_t count);

// Short host index lists (k <= kParamIndices) travel to the device as kernel parameters: no index
// block, no staged upload, no stream synchronisation. The ordered scatter of a short list is one
// kernel: every block ranks the k sources by target in shared memory (stable: equal targets keep
// source order), copies (or zero-fills) its tiles of the base and folds each touched row of a tile
// base-first in source order, threads across the touched (row, column) pairs. The adds are the
// ones of the sorted path above, in the same order, so both paths give the same bits. Lists of
// at most 64 into bases of at most 2^14 elements skip the ranking: a thread per base element scans
// the targets in source order (the same adds again).
// scatter_add_at takes this path for count <= kParamIndices, its positions read on the device.
constexpr uint64_t kParamIndices = 1024;
template <class T>
void gather_rows_param_cuda(const T* mat, uint64_t rows, uint64_t cols, const uint32_t* host_idx,
                            uint64_t k, T* out, CUstream_st* stream);
template <class T>
void scatter_add_rows_param_cuda(const T* mat, const T* values, uint64_t rows, uint64_t cols,
                                 const uint32_t* host_idx, uint64_t k, T* out, CUstream_st* stream);
template <class T>
void scatter_add_at_cuda(uint32_t size, const T* positions, const T* values, uint64_t count, T* out,
                         void* workspace, CUstream_st* stream);

}  // namespace tlrt::kernels
