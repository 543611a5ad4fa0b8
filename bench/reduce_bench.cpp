// Whole-buffer reductions: reduce_sum through the CUDA launcher (the deterministic 256-lane tree,
// all passes in one launch), bytes read per call as the bandwidth figure.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/random/random.h"
#include "kernels/reduce/reduce.h"

namespace bench {
namespace {

// The ATen work every row is compared with, registered by bench/reduce_aten.cpp.
constexpr const char* kAtenSum = "reduce_sum";

template <class T>
void add_reduce_row(Harness& h, const char* dtype, uint64_t n, void* input, void* workspace,
                    void* out, const char* note) {
  const double us = h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::reduce_sum_cuda(static_cast<const T*>(input), n, static_cast<T*>(out), workspace,
                                   s);
  });
  Row r;
  r.group = "reduce";
  r.name = std::string("reduce_sum ") + dtype + ", " + std::to_string(n >> 20) + " Mi";
  r.median_us = us;
  r.bytes = static_cast<double>(n) * sizeof(T);
  r.note = note;
  // ATen's sum of the same data in the same run (its own copy of the input).
  const void* inputs[1] = {input};
  r.aten_us = std::max(
      0.0, aten::median_us(h, kAtenSum, sizeof(T) == 4 ? 0 : 1, inputs, 1, nullptr, n, 20));
  h.add(r);
}

void reduce_benchmarks(Harness& h, const BenchOptions&) {
  const uint64_t largest = uint64_t{1} << 28;  // float32: 1 GiB, room for the float64 row too
  void* input = nullptr;
  void* out = nullptr;
  void* workspace = nullptr;
  const size_t workspace_bytes = tlrt::kernels::reduce_sum_workspace_bytes(largest, 8);
  if (cudaMalloc(&input, largest * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&out, sizeof(double)) != cudaSuccess ||
      cudaMalloc(&workspace, workspace_bytes) != cudaSuccess) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed\n");
    cudaFree(input);
    cudaFree(out);
    return;
  }
  // Uniform values in [0, 1): nonzero data, so nothing is special-cased by value. Filled on the
  // legacy stream and waited for, so no timed sample overlaps the fill.
  tlrt::kernels::rand_uniform_cuda(static_cast<float*>(input), largest, 0x5EED, nullptr);
  cudaDeviceSynchronize();
  const uint64_t mi64 = uint64_t{64} << 20;
  for (uint64_t n : {uint64_t{1} << 20, uint64_t{1} << 22, uint64_t{1} << 24, uint64_t{1} << 25,
                     mi64, largest}) {
    add_reduce_row<float>(
        h, "float32", n, input, workspace, out,
        n == mi64 ? "bytes read; goal >= 1.25x ATen's sum (GPU.md: 3205 GB/s)" : "bytes read");
  }
  tlrt::kernels::rand_uniform_cuda(static_cast<double*>(input), mi64, 0x5EED, nullptr);
  cudaDeviceSynchronize();
  add_reduce_row<double>(h, "float64", mi64, input, workspace, out, "bytes read");
  cudaDeviceSynchronize();
  cudaFree(workspace);
  cudaFree(out);
  cudaFree(input);
}

// Rank 50: after the runtime groups, before the launch floor and elementwise.
const GroupRegistration kReduceGroup({"reduce",
                                      "reduce_sum float32 1 Mi..256 Mi and float64 64 Mi, bytes "
                                      "read, next to ATen's sum",
                                      50, reduce_benchmarks, "",
                                      []() -> std::vector<std::string> { return {kAtenSum}; }});

}  // namespace
}  // namespace bench
