// Matrix products on cuBLAS. Row-major storage read as column-major is the transpose, so the
// row-major product C = A' B' (m x p) is computed as the column-major product
// C^T = B'^T A'^T (p x m, ldc = p) without moving any operand:
//   B stored (n, p), tB = 0: column-major (p x n), ld p, is B'^T          -> CUBLAS_OP_N, ldb = p
//   B stored (p, n), tB = 1: column-major (n x p), ld n, is B'            -> CUBLAS_OP_T, ldb = n
//   A stored (m, n), tA = 0: column-major (n x m), ld n, is A'^T          -> CUBLAS_OP_N, lda = n
//   A stored (n, m), tA = 1: column-major (m x n), ld m, is A'            -> CUBLAS_OP_T, lda = m
// Every extent and stride goes through the 64-bit API of cuBLAS 12+ (m, n, p up to 2^32 - 1,
// batch strides past 2^31). beta = 0, so the output is written without being read.
//
// One layout takes another route: float32 in strict math with both operands transposed (cuBLAS
// operations T, T) and an output of many tiles runs on cuBLASLt with a fixed configuration (see
// lt_transposed_product), whose kernel for that layout is faster than the one cuBLAS selects.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "common/error.h"
#include "kernels/common/launch.cuh"
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

// The cuBLASLt configuration of lt_transposed_product: algorithm 55 (a float32 FMA kernel) with
// 128 x 256 output tiles and 3 stages, no split of the depth, no workspace. On the H200
// (docs/BENCH.md) it runs the T, T layout 5-20% faster than cuBLAS's choice wherever its tiles
// spread evenly over the SMs, and up to several times slower where they do not (few tiles, or a
// last round of tiles that leaves many SMs idle).
constexpr int kLtAlgo = 55;
constexpr uint64_t kLtTileRows = 128;  // of the column-major output (p)
constexpr uint64_t kLtTileCols = 256;  // (m)
// The least balance of tiles over SMs taken, in tenths: tiles / (SMs * ceil(tiles / SMs)), the
// share of the busiest SM's tile count that an average SM has.
constexpr uint64_t kLtBalanceTenths = 9;

}  // namespace

bool bmm_lt_qualifies(const MatmulShape& s, uint32_t sms) {
  if (!s.transpose_a || !s.transpose_b || s.n == 0 || sms == 0) return false;
  if (s.batch > 0x7fffffffu) return false;  // the layouts' batch count is 32-bit
  // Leading dimensions (n, m, p) and batch strides of whole 16-byte vectors: every matrix of the
  // batch starts as aligned as the buffer.
  if (s.m % 4 != 0 || s.n % 4 != 0 || s.p % 4 != 0) return false;
  // The extents are validated (batch * m * p fits in 64 bits), so the tile count fits too.
  const uint64_t tiles =
      s.batch * ((s.p + kLtTileRows - 1) / kLtTileRows) * ((s.m + kLtTileCols - 1) / kLtTileCols);
  const uint64_t busiest = (tiles + sms - 1) / sms;  // tiles on the busiest SM
  return tiles * 10 >= kLtBalanceTenths * busiest * sms;
}

namespace {

// cuBLASLt objects released on every path.
struct LtObjects {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  LtObjects() = default;
  LtObjects(const LtObjects&) = delete;
  LtObjects& operator=(const LtObjects&) = delete;
  ~LtObjects() {
    if (c != nullptr) cublasLtMatrixLayoutDestroy(c);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
  }
};

// A column-major layout of `rows` x `cols` float32 (leading dimension `rows`), `batch` of them
// `stride` elements apart.
cublasStatus_t lt_layout(cublasLtMatrixLayout_t* layout, uint64_t rows, uint64_t cols,
                         uint64_t batch, int64_t stride) {
  cublasStatus_t st =
      cublasLtMatrixLayoutCreate(layout, CUDA_R_32F, rows, cols, static_cast<int64_t>(rows));
  if (st != CUBLAS_STATUS_SUCCESS || batch == 1) return st;
  const auto count = static_cast<int32_t>(batch);
  st = cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                        sizeof(count));
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  return cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                          &stride, sizeof(stride));
}

// C^T = B'^T A'^T with tA = tB = 1 (column-major operations T, T) on cuBLASLt's configuration
// above, for float32 in strict math (the handle's pedantic mode: CUBLAS_COMPUTE_32F_PEDANTIC, no
// TF32) when bmm_lt_qualifies. Returns false, having queued
// nothing, when the call does not qualify or this cuBLASLt does not offer the configuration for
// the problem (then cuBLAS runs it); a failure of the product itself is an error.
bool lt_transposed_product(const float* a, const float* b, float* c, const MatmulShape& s,
                           cublasHandle_t handle, cudaStream_t stream, const char* op) {
  if (!aligned16(a) || !aligned16(b) || !aligned16(c)) return false;
  if (!bmm_lt_qualifies(s, current_sm_count(op))) return false;
  cublasMath_t mode = CUBLAS_DEFAULT_MATH;
  if (cublasGetMathMode(handle, &mode) != CUBLAS_STATUS_SUCCESS || mode != CUBLAS_PEDANTIC_MATH) {
    return false;
  }
  // A cuBLAS handle is usable as a cuBLASLt handle.
  auto lt = reinterpret_cast<cublasLtHandle_t>(handle);
  constexpr cublasComputeType_t kCompute = CUBLAS_COMPUTE_32F_PEDANTIC;
  LtObjects o;
  const int32_t transposed = CUBLAS_OP_T;
  // Lt's operand A is the stored B (p, n): column-major n x p; its B is the stored A (n, m):
  // column-major m x n; the output column-major p x m.
  if (cublasLtMatmulDescCreate(&o.desc, kCompute, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatmulDescSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transposed,
                                     sizeof(transposed)) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatmulDescSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_TRANSB, &transposed,
                                     sizeof(transposed)) != CUBLAS_STATUS_SUCCESS ||
      lt_layout(&o.a, s.n, s.p, s.batch, static_cast<int64_t>(s.n * s.p)) !=
          CUBLAS_STATUS_SUCCESS ||
      lt_layout(&o.b, s.m, s.n, s.batch, static_cast<int64_t>(s.m * s.n)) !=
          CUBLAS_STATUS_SUCCESS ||
      lt_layout(&o.c, s.p, s.m, s.batch, static_cast<int64_t>(s.m * s.p)) !=
          CUBLAS_STATUS_SUCCESS) {
    return false;
  }
  cublasLtMatmulAlgo_t algo;
  const uint32_t tile = CUBLASLT_MATMUL_TILE_128x256;
  const uint32_t stages = CUBLASLT_MATMUL_STAGES_8x3;
  cublasLtMatmulHeuristicResult_t checked{};
  if (cublasLtMatmulAlgoInit(lt, kCompute, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                             CUDA_R_32F, kLtAlgo, &algo) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                           sizeof(tile)) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                           sizeof(stages)) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatmulAlgoCheck(lt, o.desc, o.a, o.b, o.c, o.c, &algo, &checked) !=
          CUBLAS_STATUS_SUCCESS ||
      checked.workspaceSize != 0) {
    return false;
  }
  const float alpha = static_cast<float>(s.alpha), zero = 0.0f;
  check_cublas(cublasLtMatmul(lt, o.desc, &alpha, b, o.a, a, o.b, &zero, c, o.c, c, o.c, &algo,
                              nullptr, 0, stream),
               op, "cublasLtMatmul");
  return true;
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
  if constexpr (std::is_same_v<T, float>) {
    if (lt_transposed_product(a, b, c, s, handle, stream, op)) return;
  }
  const cublasOperation_t op_b = s.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = s.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const auto rows = static_cast<int64_t>(s.p);  // of the column-major result C^T
  const auto cols = static_cast<int64_t>(s.m);
  const auto depth = static_cast<int64_t>(s.n);
  const auto ldb = static_cast<int64_t>(s.transpose_b ? s.n : s.p);
  const auto lda = static_cast<int64_t>(s.transpose_a ? s.m : s.n);
  const T alpha = static_cast<T>(s.alpha), zero = T(0);
  if (s.batch == 1) {
    check_cublas(
        gemm(handle, op_b, op_a, rows, cols, depth, &alpha, b, ldb, a, lda, &zero, c, rows), op,
        "cublas gemm");
    return;
  }
  const auto stride_b = static_cast<long long>(s.n * s.p);
  const auto stride_a = static_cast<long long>(s.m * s.n);
  const auto stride_c = static_cast<long long>(s.m * s.p);
  check_cublas(gemm_batched(handle, op_b, op_a, rows, cols, depth, &alpha, b, ldb, stride_b, a, lda,
                            stride_a, &zero, c, rows, stride_c, static_cast<int64_t>(s.batch)),
               op, "cublas strided-batched gemm");
}

template void bmm_cuda<float>(const float*, const float*, float*, const MatmulShape&,
                              cublasContext*, CUstream_st*, const char*);
template void bmm_cuda<double>(const double*, const double*, double*, const MatmulShape&,
                               cublasContext*, CUstream_st*, const char*);

}  // namespace tlrt::kernels
