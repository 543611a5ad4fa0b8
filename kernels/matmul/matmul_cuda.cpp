// Matrix products on cuBLAS. Row-major storage read as column-major is the transpose, so the
// row-major product C = A' B' (m x p) is computed as the column-major product
// C^T = B'^T A'^T (p x m, ldc = p) without moving any operand:
//   B stored (n, p), tB = 0: column-major (p x n), ld p, is B'^T          -> CUBLAS_OP_N, ldb = p
//   B stored (p, n), tB = 1: column-major (n x p), ld n, is B'            -> CUBLAS_OP_T, ldb = n
//   A stored (m, n), tA = 0: column-major (n x m), ld n, is A'^T          -> CUBLAS_OP_N, lda = n
//   A stored (n, m), tA = 1: column-major (m x n), ld m, is A'            -> CUBLAS_OP_T, lda = m
// Every extent and stride goes through the 64-bit API of cuBLAS 12+ (m, n, p up to 2^32 - 1,
// batch strides past 2^31). beta = 0, so the output is written without being read.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "common/error.h"
#include "kernels/matmul/matmul.h"

namespace tlrt::kernels {
namespace {

void check_cublas(cublasStatus_t status, const char* op, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  fail(ErrorKind::library, op,
       std::string(call) + " failed: " + cublasGetStatusName(status) + " (" +
           cublasGetStatusString(status) + ")");
}

void check_runtime(cudaError_t status, const char* op, const char* call) {
  if (status == cudaSuccess) return;
  fail(ErrorKind::device, op,
       std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
           cudaGetErrorString(status) + ")");
}

cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                    int64_t n, int64_t k, const float* alpha, const float* a, int64_t lda,
                    const float* b, int64_t ldb, const float* beta, float* c, int64_t ldc) {
  return cublasSgemm_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                    int64_t n, int64_t k, const double* alpha, const double* a, int64_t lda,
                    const double* b, int64_t ldb, const double* beta, double* c, int64_t ldc) {
  return cublasDgemm_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                            int64_t n, int64_t k, const float* alpha, const float* a, int64_t lda,
                            long long sa, const float* b, int64_t ldb, long long sb,
                            const float* beta, float* c, int64_t ldc, long long sc, int64_t count) {
  return cublasSgemmStridedBatched_64(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c,
                                      ldc, sc, count);
}
cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                            int64_t n, int64_t k, const double* alpha, const double* a, int64_t lda,
                            long long sa, const double* b, int64_t ldb, long long sb,
                            const double* beta, double* c, int64_t ldc, long long sc,
                            int64_t count) {
  return cublasDgemmStridedBatched_64(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c,
                                      ldc, sc, count);
}

}  // namespace

template <class T>
void bmm_cuda(const T* a, const T* b, T* c, const MatmulShape& s, cublasContext* handle,
              CUstream_st* stream, const char* op) {
  const uint64_t outputs = s.batch * s.m * s.p;  // validated: no overflow
  if (outputs == 0) return;
  if (s.n == 0) {
    check_runtime(cudaMemsetAsync(c, 0, outputs * sizeof(T), stream), op, "cudaMemsetAsync");
    return;
  }
  // The handle is bound to the device's stream; the launcher's stream must be that one.
  cudaStream_t bound = nullptr;
  check_cublas(cublasGetStream(handle, &bound), op, "cublasGetStream");
  if (bound != stream) {
    fail(ErrorKind::invalid_argument, op, "the cuBLAS handle is bound to another stream");
  }
  const cublasOperation_t op_b = s.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = s.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const auto rows = static_cast<int64_t>(s.p);  // of the column-major result C^T
  const auto cols = static_cast<int64_t>(s.m);
  const auto depth = static_cast<int64_t>(s.n);
  const auto ldb = static_cast<int64_t>(s.transpose_b ? s.n : s.p);
  const auto lda = static_cast<int64_t>(s.transpose_a ? s.m : s.n);
  const T one = T(1), zero = T(0);
  if (s.batch == 1) {
    check_cublas(gemm(handle, op_b, op_a, rows, cols, depth, &one, b, ldb, a, lda, &zero, c, rows),
                 op, "cublas gemm");
    return;
  }
  const auto stride_b = static_cast<long long>(s.n * s.p);
  const auto stride_a = static_cast<long long>(s.m * s.n);
  const auto stride_c = static_cast<long long>(s.m * s.p);
  check_cublas(gemm_batched(handle, op_b, op_a, rows, cols, depth, &one, b, ldb, stride_b, a, lda,
                            stride_a, &zero, c, rows, stride_c, static_cast<int64_t>(s.batch)),
               op, "cublas strided-batched gemm");
}

template void bmm_cuda<float>(const float*, const float*, float*, const MatmulShape&,
                              cublasContext*, CUstream_st*, const char*);
template void bmm_cuda<double>(const double*, const double*, double*, const MatmulShape&,
                               cublasContext*, CUstream_st*, const char*);

}  // namespace tlrt::kernels
