// Matrix products: bmm_with_transpose float32 through the cuBLAS launcher for every tA/tB pair at
// 4096^3 (batch 1) and 32 x 1024^3, in the runtime's strict float32 mode (TF32 off), next to
// TorchLean's ATen composition (at::bmm on the transposed views); TFLOP/s in the note. dgemm 4096^3
// host to host through the ABI (FloatArrays in and out) next to TorchLean's path (pageable
// from_blob .to(gpu), at::matmul, .to(cpu), memcpy into the FloatArray), wall clock per call.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <lean/lean.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/matmul/matmul.h"
#include "kernels/random/random.h"
#include "runtime/context.h"
#include "runtime/cuda_libraries.h"
#include "tlrt/torchlean_abi.h"

namespace bench {
namespace {

// The ATen work the rows are compared with, registered by bench/matmul_aten.cpp.
constexpr const char* kAtenBmm = "bmm_with_transpose";
constexpr const char* kAtenDgemm = "dgemm";

std::string tflops_text(double flops, double us) {
  if (us <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", flops / (us * 1e-6) / 1e12);
  return text;
}

void add_bmm_row(Harness& h, uint64_t batch, uint64_t size, bool ta, bool tb, const float* a,
                 const float* b, float* c, bool default_math = false) {
  const tlrt::kernels::MatmulShape shape{batch, size, size, size, ta, tb};
  double us = -1;
  {
    // The runtime's handle in its strict float32 mode, bound to the harness stream while timed.
    tlrt::cuda::CublasMathScope scope(tlrt::selected_device(), false);
    cudaStream_t bound = nullptr;
    cublasGetStream(scope.handle(), &bound);
    cublasMath_t mode = CUBLAS_DEFAULT_MATH;
    cublasGetMathMode(scope.handle(), &mode);
    // For scale only: the same product in cuBLAS's default math mode (still no TF32).
    if (default_math) cublasSetMathMode(scope.handle(), CUBLAS_DEFAULT_MATH);
    us = h.device_median_us([&](CUstream_st* s) {
      cublasSetStream(scope.handle(), s);
      tlrt::kernels::bmm_cuda(a, b, c, shape, scope.handle(), s, "bench");
    });
    cublasSetMathMode(scope.handle(), mode);
    cublasSetStream(scope.handle(), bound);
  }
  const double flops = 2.0 * static_cast<double>(batch) * size * size * size;
  Row r;
  r.group = "matmul";
  r.name = "bmm float32 " + std::to_string(batch) + " x " + std::to_string(size) + "^3, tA " +
           std::to_string(ta) + " tB " + std::to_string(tb) +
           (default_math ? " (cuBLAS default math, for scale)" : "");
  r.median_us = us;
  r.size = batch * size * size;
  const void* inputs[2] = {a, b};
  const double scalars[6] = {static_cast<double>(batch), static_cast<double>(size),
                             static_cast<double>(size),  static_cast<double>(size),
                             static_cast<double>(ta),    static_cast<double>(tb)};
  r.aten_us = std::max(0.0, aten::median_us(h, kAtenBmm, 0, inputs, 2, scalars, r.size, 10));
  r.note = "TFLOP/s " + tflops_text(flops, us) + " (ATen " + tflops_text(flops, r.aten_us) + ")" +
           (default_math ? "; CUBLAS_DEFAULT_MATH, no TF32" : "; strict float32 (pedantic)");
  h.add(r);
}

lean_object* float_array(uint64_t n, uint64_t seed) {
  lean_object* a = lean_mk_empty_float_array(lean_box(n));
  lean_sarray_set_size(a, n);
  double* p = lean_float_array_cptr(a);
  uint64_t s = seed;
  for (uint64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = static_cast<double>(s >> 11) * 0x1p-53;
  }
  return a;
}

void add_dgemm_row(Harness& h, uint32_t size) {
  const uint64_t n = uint64_t{size} * size;
  lean_object* a = float_array(n, 1);
  lean_object* b = float_array(n, 2);
  const double us = Harness::host_median_us(
      [&] { lean_dec(torchlean_dgemm_cuda(a, b, size, size, size)); }, 5, 1);
  lean_dec(a);
  lean_dec(b);
  const double flops = 2.0 * size * static_cast<double>(size) * size;
  Row r;
  r.group = "matmul";
  r.name = "dgemm " + std::to_string(size) + "^3 host to host";
  r.median_us = us;
  r.size = n;
  r.bytes = 3.0 * static_cast<double>(n) * sizeof(double);  // A and B up, C down
  const double scalars[3] = {static_cast<double>(size), static_cast<double>(size),
                             static_cast<double>(size)};
  r.aten_us = std::max(0.0, aten::host_us(kAtenDgemm, 1, scalars, n, true, 1));
  r.note = "wall clock per call, FloatArrays in and out; TFLOP/s " + tflops_text(flops, us) +
           " (TorchLean's path " + tflops_text(flops, r.aten_us) + "); goal >= 5x TorchLean's path";
  h.add(r);
}

void matmul_benchmarks(Harness& h, const BenchOptions&) {
  // Three operands of 32 Mi floats: 4096^2 (batch 1) and 32 x 1024^2 have the same size.
  const uint64_t elements = uint64_t{32} << 20;
  float* a = nullptr;
  float* b = nullptr;
  float* c = nullptr;
  if (cudaMalloc(&a, elements * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b, elements * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&c, elements * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed\n");
    cudaFree(a);
    cudaFree(b);
    return;
  }
  // Uniform values in [0, 1), filled on the legacy stream and waited for.
  tlrt::kernels::rand_uniform_cuda(a, elements, 0x5EED, nullptr);
  tlrt::kernels::rand_uniform_cuda(b, elements, 0x5EEE, nullptr);
  cudaDeviceSynchronize();
  for (int flags = 0; flags < 4; ++flags) add_bmm_row(h, 1, 4096, flags & 1, flags & 2, a, b, c);
  for (int flags = 0; flags < 4; ++flags) add_bmm_row(h, 32, 1024, flags & 1, flags & 2, a, b, c);
  add_bmm_row(h, 1, 4096, false, false, a, b, c, true);
  add_bmm_row(h, 32, 1024, false, false, a, b, c, true);
  cudaDeviceSynchronize();
  cudaFree(c);
  cudaFree(b);
  cudaFree(a);
  aten::release_cache();
  add_dgemm_row(h, 4096);
}

// Rank 90: after the memory-bound families.
const GroupRegistration kMatmulGroup({"matmul",
                                      "bmm float32 4096^3 and 32 x 1024^3 for every tA/tB next to "
                                      "ATen's bmm, TFLOP/s; dgemm 4096^3 host to host next to "
                                      "TorchLean's pageable path",
                                      90, matmul_benchmarks, "", []() -> std::vector<std::string> {
                                        return {kAtenBmm, kAtenDgemm};
                                      }});

}  // namespace
}  // namespace bench
