// The legacy attention pair (symbols-ops.tsv, legacy rows; SPEC-ops 15 and 16): per batch b of
// (n, d) row-major operands q, k, v and an optional (n, n) mask (allowed where mask != 0, NaN
// allowed),
//
//   s[i, j] = scale * sum_l q[i, l] k[j, l]
//   p[i, :] = the hard-masked row softmax of s[i, :] (kernels/softmax/softmax.h: blocked entries
//             +0; a row without an allowed entry, a "blocked row", all +0)
//   out[i, l] = sum_j p[i, j] v[j, l], and +0 on blocked rows
//
// and the backward from the saved p and the cotangent g of out (blocked rows of g, q and dq taken
// as +0, so blocked rows contribute nothing):
//
//   dp[i, j] = sum_l g[i, l] v[j, l]
//   ds[i, j] = p[i, j] (dp[i, j] - sum_j' p[i, j'] dp[i, j'])
//   dq = scale ds k,  dk = scale ds^T q,  dv = p^T g.
//
// with scale rounded to T; scale 0 gives +0 scores, dq and dk without reading q, k or ds (as a
// BLAS product with alpha = 0 does), so non-finite operands do not reach them.
//
// The CUDA backend composes this from matrix products (kernels/matmul) and the row softmax; the
// launchers here are the pieces between them. The reference computes each output of the pair in a
// wider format and rounds it once. Order unspecified (tolerance ops): docs/NUMERICS.md, "Legacy
// attention". Extents arrive validated, all nonzero.
#pragma once

#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

struct AttentionShape {
  uint64_t batch = 0;
  uint64_t n = 0;
  uint64_t d = 0;
};

// Reference forward (kernels/attention/attention_ref.cpp), in the wider format W of
// kernels/common/wide.h: s from the products of q and k and scale rounded to T, the softmax's
// rules exactly, out from the unrounded p; out rounded once. probs (batch * n * n) receives p
// rounded to T, blocked (batch * n) 1 for blocked rows and 0 for the others. mask may be null
// (every entry allowed).
template <class T>
void attention_fwd_ref(const T* q, const T* k, const T* v, const T* mask, const AttentionShape& s,
                       double scale, T* out, T* probs, uint8_t* blocked);

// Reference backward from the saved probs and blocked flags (of either backend's forward) and q
// with its blocked rows already +0: dq, dk, dv as in the head, each output accumulated in W from
// ds formed in W, rounded once; dq +0 on blocked rows.
template <class T>
void attention_bwd_ref(const T* q, const T* k, const T* v, const T* probs, const uint8_t* blocked,
                       const T* g, const AttentionShape& s, double scale, T* dq, T* dk, T* dv);

// dst[r, :] = +0 where blocked[r] != 0, src[r, :] elsewhere, for `rows` rows of `cols` scalars;
// blocked null copies every row. dst may be src (then only blocked rows are written).
template <class T>
void masked_rows_copy_ref(const T* src, const uint8_t* blocked, T* dst, uint64_t rows,
                          uint64_t cols);

// CUDA (kernels/attention/attention.cu), asynchronous on `stream`.
// blocked[r] = 1 where row r of p (rows x cols) is all zero, else 0 (a row of the masked softmax
// is all zero exactly when it has no allowed entry: its largest allowed term is exp(0) = 1).
template <class T>
void attention_blocked_rows_cuda(const T* p, uint8_t* blocked, uint64_t rows, uint64_t cols,
                                 CUstream_st* stream, const char* op);
template <class T>
void masked_rows_copy_cuda(const T* src, const uint8_t* blocked, T* dst, uint64_t rows,
                           uint64_t cols, CUstream_st* stream, const char* op);
// The softmax backward of each row in place: dp_ds[r, j] becomes p[r, j] (dp[r, j] - c_r),
// c_r = sum_j p[r, j] dp[r, j] summed in a fixed order (the launch geometry's), so repeatable;
// rows with blocked[r] != 0 (blocked may be null) become +0.
template <class T>
void attention_softmax_bwd_cuda(const T* p, T* dp_ds, const uint8_t* blocked, uint64_t rows,
                                uint64_t cols, CUstream_st* stream, const char* op);

}  // namespace tlrt::kernels
