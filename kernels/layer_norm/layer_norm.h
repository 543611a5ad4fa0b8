// Layer normalization over the rows of a row-major (rows, cols) matrix (SPEC-ops 9):
//
//   layer_norm_fwd: per row, in binary64 whatever T is (x widened):
//     mu = (sum_j x_j) / cols (true division), c_j = x_j - mu, var = (sum_j c_j^2) / cols,
//     sd = sqrt(var + epsilon) (epsilon unrounded), xhat_j = fl_T(c_j / sd),
//     inv_std = fl_T(1 / sd), y_j = fl_T(fl_T(xhat_j * gamma_j) + beta_j).
//   layer_norm_bwd: in T, with cols_scale = fl_T(colsScale) and inv_cols = fl_T(invCols) rounded
//     by the caller:
//     q_j = fl(dy_j * gamma_j), s1 = sum_j q_j, s2 = sum_j fl(q_j * xhat_j),
//     dx_j = fl(fl(fl(fl(fl(q_j * cols_scale) - s1) - fl(xhat_j * s2)) * inv_std) * inv_cols),
//     d_gamma_j = sum_rows fl(dy * xhat), d_beta_j = sum_rows dy.
//
// The sums' order is free (tolerance, SPEC-ops 4); every other stage is the one rounding the
// contract names. The launchers take validated extents (rows > 0, cols > 0, every buffer of the
// size the contract states, outputs allocated by the caller).
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

struct LayerNormShape {
  uint64_t rows = 0;
  uint64_t cols = 0;
};

// Reference backend (kernels/layer_norm/layer_norm_ref.cpp): plain loops over host memory.
template <class T>
void layer_norm_fwd_ref(const T* x, const T* gamma, const T* beta, LayerNormShape s, double epsilon,
                        T* y, T* xhat, T* inv_std);
template <class T>
void layer_norm_bwd_ref(const T* dy, const T* xhat, const T* inv_std, const T* gamma,
                        LayerNormShape s, T cols_scale, T inv_cols, T* dx, T* d_gamma, T* d_beta);

// CUDA backend (kernels/layer_norm/layer_norm.cu): device memory, asynchronous on `stream`.
template <class T>
void layer_norm_fwd_cuda(const T* x, const T* gamma, const T* beta, LayerNormShape s,
                         double epsilon, T* y, T* xhat, T* inv_std, CUstream_st* stream);

// The backward's per-block column partials of d_gamma and d_beta: device scratch of
// layer_norm_bwd_workspace_bytes(s) bytes, free for reuse once the launches have run. The row
// partition behind it depends on (rows, cols) only, so the column sums are run-to-run
// bit-reproducible.
uint64_t layer_norm_bwd_workspace_bytes(LayerNormShape s);
template <class T>
void layer_norm_bwd_cuda(const T* dy, const T* xhat, const T* inv_std, const T* gamma,
                         LayerNormShape s, T cols_scale, T inv_cols, T* dx, T* d_gamma, T* d_beta,
                         void* workspace, CUstream_st* stream);

}  // namespace tlrt::kernels
