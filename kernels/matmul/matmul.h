// Matrix products (SPEC-ops 10): C[b, i, j] = sum_k A'[b, i, k] B'[b, k, j] on contiguous row-major
// operands, A' = A (stored (batch, m, n)) or A^T per batch (stored (batch, n, m)), B' = B (stored
// (batch, n, p)) or B^T per batch (stored (batch, p, n)). The accumulation order is unspecified by
// the contract; every result is within the bound of docs/NUMERICS.md ("Matrix products").
// Extents arrive validated (products checked, buffers of the right sizes) and are all nonzero
// except n: n = 0 writes zeros.
#pragma once

#include <cstdint>
#include <initializer_list>

struct CUstream_st;
struct cublasContext;

namespace tlrt::kernels {

struct MatmulShape {
  uint64_t batch = 0;
  uint64_t m = 0;
  uint64_t n = 0;
  uint64_t p = 0;
  bool transpose_a = false;
  bool transpose_b = false;
  // C = alpha A'B': alpha is rounded to T and multiplies each finished sum once (one rounding
  // more; alpha = 1 leaves the sums as they are); alpha = 0 writes +0 without reading A or B (as
  // BLAS does). The ABI's products use 1; the legacy attention pair folds its scale in here.
  double alpha = 1.0;
};

// Reference backend (kernels/matmul/matmul_ref.cpp): for each (b, i, j) the products are
// accumulated in k order in a wider format (float in double, whose products of two floats are
// exact; double in long double) and rounded once to T at the end. batch*m*p outputs.
template <class T>
void bmm_ref(const T* a, const T* b, T* c, const MatmulShape& shape);

// CUDA backend (kernels/matmul/matmul_cuda.cpp): one cuBLAS GEMM (batch = 1) or strided-batched
// GEMM on the row-major operands read in place through the operation flags (the column-major
// product C^T = B'^T A'^T); n = 0 queues a memset of zeros. `handle` is bound to `stream` and
// carries the caller's math mode (strict float32 unless TF32 was allowed); its workspace is
// already set. Strict float32 products that bmm_lt_qualifies run on cuBLASLt instead, through the
// same handle. Asynchronous on `stream`; throws tlrt::Error (library) naming op on a cuBLAS
// failure.
template <class T>
void bmm_cuda(const T* a, const T* b, T* c, const MatmulShape& shape, cublasContext* handle,
              CUstream_st* stream, const char* op);

// Whether bmm_cuda runs a float32 product in strict math on cuBLASLt's fixed configuration
// rather than cuBLAS (kernels/matmul/matmul_cuda.cpp): both operands transposed, m, n and p
// multiples of 4 (n > 0), and its 128 x 256 output tiles (p by m) spread evenly over the `sms`
// SMs: tiles >= 0.9 * sms * ceil(tiles / sms). The operands and the output must also be 16-byte
// aligned, and where that cuBLASLt does not offer the configuration for the problem, cuBLAS runs
// it after all.
bool bmm_lt_qualifies(const MatmulShape& shape, uint32_t sms);

// Products small enough for bmm_small_cuda: at most kSmallProductWork multiply-adds in all
// (batch * m * n * p; n = 0 counts as 1). Such a call is dominated by its host cost, which the
// small kernel keeps at one launch.
constexpr uint64_t kSmallProductWork = uint64_t{1} << 20;
inline bool bmm_small_fits(const MatmulShape& s) {
  uint64_t work = 1;
  for (uint64_t e : {s.batch, s.m, s.n == 0 ? uint64_t{1} : s.n, s.p}) {
    if (e > kSmallProductWork || work * e > kSmallProductWork) return false;
    work *= e;
  }
  return true;
}

// CUDA backend without cuBLAS, for bmm_small_fits shapes: a thread per output, the inner product
// in k order with fused multiply-adds (n = 0 writes +0). Asynchronous on `stream`.
template <class T>
void bmm_small_cuda(const T* a, const T* b, T* c, const MatmulShape& shape, CUstream_st* stream,
                    const char* op);

}  // namespace tlrt::kernels
