// Pooling launchers (SPEC-ops 14.1, 14.3-14.5): max, average (count_include_pad) and smooth max
// pooling over channels-first buffers without a batch axis, forward and backward. The geometry
// arrives validated and normalised to three spatial axes: a rank-1 or rank-2 geometry gets
// leading unit axes (extent 1, kernel 1, stride 1, padding 0), which leaves the row-major kernel
// order, the row-major output order and every result unchanged (1-D pooling is the 2-D operator
// with a leading unit axis, and so on).
//
// Orders shared by both backends (every one bit-defined except the exp/log values of smooth max):
// - maxpool_fwd: the window's valid positions in row-major kernel order; the first valid value is
//   the initial choice and a later value v replaces it when v > choice or v is NaN (the newest
//   reference's rule: any NaN wins and the last NaN is selected). The output is a bit copy.
// - maxpool_bwd: dx[i] = +0 + dy[o1] + dy[o2] + ... over the windows o (in increasing row-major
//   output order) whose selection, recomputed from x, is i; each addition rounded.
// - avgpool_fwd: s = +0 + x[v1] + x[v2] + ... over the valid positions in row-major kernel order,
//   each addition rounded in the dtype, then y = fl(s / fl(prod k)) (ATen's order: the sum in the
//   dtype, then one true division by the full kernel volume).
// - avgpool_bwd: dx[i] = +0 + fl(dy[o1] / fl(prod k)) + ... over the windows containing i in
//   increasing row-major output order.
// - smooth max: v = x or the literal 0 in padding; P = NaN-ignoring max (b > 0) or min (b < 0)
//   from -inf / +inf over all prod k offsets, with +0 above -0 for the max and -0 below +0 for the
//   min; D = +0 + exp(fl(fl(v - P) * b)) + ... in kernel order; y = fl(P + fl(log(D) * fl(1/b))).
//   Backward: dx[i] = +0 + fl(dy[o] * fl(exp(fl(fl(x[i] - P[o]) * b)) / D[o])) + ... in increasing
//   kernel offset (each offset reaches i from at most one window).
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

constexpr int kPoolAxes = 3;

struct PoolGeometry {
  uint64_t channels = 0;
  int64_t in[kPoolAxes] = {1, 1, 1};
  int64_t kernel[kPoolAxes] = {1, 1, 1};
  int64_t stride[kPoolAxes] = {1, 1, 1};
  int64_t padding[kPoolAxes] = {0, 0, 0};
  int64_t out[kPoolAxes] = {1, 1, 1};
  uint64_t in_volume = 1;      // prod in
  uint64_t out_volume = 1;     // prod out
  uint64_t kernel_volume = 1;  // prod kernel
};

// Whether every input position lies in at most one window per axis (stride >= kernel): the
// backward passes then write each window's positions directly.
inline bool pool_windows_disjoint(const PoolGeometry& g) {
  for (int a = 0; a < kPoolAxes; ++a) {
    if (g.stride[a] < g.kernel[a]) return false;
  }
  return true;
}

// Reference backend (plain loops, the orders above; exp and log in long double rounded to T).
// Output buffers hold channels * out_volume (forward) or channels * in_volume (backward)
// elements and are non-empty.
template <class T>
void maxpool_fwd_ref(const T* x, T* y, const PoolGeometry& g);
template <class T>
void maxpool_bwd_ref(const T* x, const T* dy, T* dx, const PoolGeometry& g);
template <class T>
void avgpool_fwd_ref(const T* x, T* y, const PoolGeometry& g);
template <class T>
void avgpool_bwd_ref(const T* dy, T* dx, const PoolGeometry& g);
template <class T>
void smooth_maxpool_fwd_ref(const T* x, T b, T* y, const PoolGeometry& g);
template <class T>
void smooth_maxpool_bwd_ref(const T* x, const T* dy, T b, T* dx, const PoolGeometry& g);

// CUDA backend: the same orders, queued on `stream`; exp/log are the device libm of T (expf,
// logf for float32). smooth_maxpool_bwd needs a workspace of
// smooth_maxpool_bwd_workspace_bytes(g, sizeof(T)) bytes (0 when the windows are disjoint or
// the planar tiled kernel runs, which computes its statistics in shared memory).
template <class T>
void maxpool_fwd_cuda(const T* x, T* y, const PoolGeometry& g, CUstream_st* stream);
template <class T>
void maxpool_bwd_cuda(const T* x, const T* dy, T* dx, const PoolGeometry& g, CUstream_st* stream);
template <class T>
void avgpool_fwd_cuda(const T* x, T* y, const PoolGeometry& g, CUstream_st* stream);
template <class T>
void avgpool_bwd_cuda(const T* dy, T* dx, const PoolGeometry& g, CUstream_st* stream);
template <class T>
void smooth_maxpool_fwd_cuda(const T* x, T b, T* y, const PoolGeometry& g, CUstream_st* stream);
uint64_t smooth_maxpool_bwd_workspace_bytes(const PoolGeometry& g, size_t element_bytes);
// The kernels of smooth max pooling on float32 3x3 stride-1 planes: streaming (the default; rows
// kept in registers down a strip) or the shared-memory tiles. Both give the same bits; the
// setting is process-wide and exists so that tests and the bench can compare them.
enum class SmoothSchedule { streaming, tiles };
void set_smooth_schedule(SmoothSchedule schedule);
SmoothSchedule smooth_schedule();
template <class T>
void smooth_maxpool_bwd_cuda(const T* x, const T* dy, T b, T* dx, void* workspace,
                             const PoolGeometry& g, CUstream_st* stream);

}  // namespace tlrt::kernels
