// Matrix products (SPEC-ops 10), dispatched to the backend that holds the operands. bmm returns a
// fresh buffer of the operands' dtype on their backend; dgemm writes host binary64 results. Every
// failure is a tlrt::Error naming `op` with the sizes involved; nothing is counted on failure.
// Device work is queued on the device's stream (asynchronous) except dgemm, which returns with its
// results on the host.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/matmul/matmul.h"
#include "runtime/buffer.h"

namespace tlrt {

// "transpose flag must be zero or one (transposeA = 2, transposeB = 0)" unless both are 0 or 1:
// the first check of bmm_with_transpose, before its operands are read.
void require_transpose_flags(uint32_t transpose_a, uint32_t transpose_b, const char* op);

// C[b] = A'[b] B'[b] (batch x m x p) in the order of the contract: A against (batch, m, n) or
// (batch, n, m), B against (batch, n, p) or (batch, p, n) ("shape size overflow", "buffer size does
// not match shape"), the output's batch*m*p ("shape size overflow"), then one dtype and one
// backend. n = 0 gives zeros; batch, m or p = 0 an empty buffer. Float32 uses TF32 only while
// Setting::matmul_tf32 is on. The flags must have passed require_transpose_flags.
std::unique_ptr<Buffer> bmm(const Buffer& a, const Buffer& b, uint64_t batch, uint64_t m,
                            uint64_t n, uint64_t p, bool transpose_a, bool transpose_b,
                            const char* op);

// The product bmm queues, on raw payloads of `dtype` on `backend`: validated nonzero extents
// (depth may be 0), c with room for batch * m * p scalars, shape.alpha as given. For ops that
// compose products on their own temporaries (the legacy attention pair).
void queue_product(Backend backend, Dtype dtype, const void* a, const void* b, void* c,
                   const kernels::MatmulShape& shape, const char* op);

// Products of at most kernels::kSmallProductWork multiply-adds run on tlrt's small-product kernel
// (kernels/matmul/matmul_small.cu: one launch, no cuBLAS host path; strict in both dtypes) unless
// TLRT_BMM_SMALL is "0" (read on first use) or it is switched off here; every other product, and
// all of them when it is off, runs on cuBLAS.
void set_bmm_small_kernel(bool enabled);
bool bmm_small_kernel_on();

// The checks of torchlean_dgemm_cuda on host arrays of a_size and b_size binary64 values:
// "A size mismatch" (a_size != m*n), "B size mismatch" (b_size != n*p), and an output whose bytes
// overflow or exceed the host's memory. Returns m*p, the elements of the result.
uint64_t dgemm_output_size(uint64_t a_size, uint64_t b_size, uint64_t m, uint64_t n, uint64_t p,
                           const char* op);

// c (m x p) = a (m x n) * b (n x p), all host row-major binary64, sizes checked by
// dgemm_output_size. On the CUDA backend (the selected device) the operands go up through the
// transfers' pinned staging, one cuBLAS DGEMM runs on the selected device and the result comes back
// into c; on the reference backend the reference loops run on the host. n = 0 or m*p = 0 gives
// zeros.
void dgemm(Backend backend, const double* a, const double* b, double* c, uint64_t m, uint64_t n,
           uint64_t p, const char* op);

}  // namespace tlrt
