// Softmax through its CUDA launchers, float32, bytes read + written per call:
//   * hard_masked_softmax_by_row at 65536 x 1024 (warp rows in registers; goal >= 85% of copy),
//     524288 x 128 (short rows; goal >= 80%) and 2048 x 32768 (rows split between registers and
//     shared memory, two blocks per SM; goal >= 80%); bytes = scores + mask read + output written.
//     The mask is uniform in [0, 1), so every entry is allowed (the work does not depend on the
//     mask's values);
//   * softmax_io [64, 1024, 1024] along axes 0, 1 and 2 (the column kernel in registers, the
//     axis split over a block, the row kernel without a mask; goal >= 1.0x ATen's softmax); bytes =
//     input + output.
// Each row sits next to the ATen composition TorchLean's LibTorch backend runs for the op.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/random/random.h"
#include "kernels/softmax/softmax.h"

namespace bench {
namespace {

constexpr const char* kAtenMasked = "hard_masked_softmax_by_row";
constexpr const char* kAtenSoftmaxIo = "softmax_io";

constexpr uint64_t kElements = uint64_t{1} << 26;  // every row's input: 64 Mi floats

void add_masked_row(Harness& h, uint64_t rows, uint64_t cols, const float* scores,
                    const float* mask, float* out, const char* note) {
  Row r;
  r.group = "softmax";
  r.name =
      std::string(kAtenMasked) + " float32, " + std::to_string(rows) + " x " + std::to_string(cols);
  r.median_us = h.device_median_us(
      [&](CUstream_st* s) { tlrt::kernels::softmax_rows_cuda(scores, mask, rows, cols, out, s); });
  r.bytes = static_cast<double>(3 * rows * cols) * sizeof(float);
  r.size = rows * cols;
  r.note = note;
  const double scalars[2] = {static_cast<double>(rows), static_cast<double>(cols)};
  const void* inputs[2] = {scores, mask};
  r.aten_us =
      std::max(0.0, aten::median_us(h, kAtenMasked, 0, inputs, 2, scalars, rows * cols, 10));
  h.add(r);
}

void add_axis_row(Harness& h, uint64_t axis, const float* x, float* out) {
  const uint64_t dims[3] = {64, 1024, 1024};
  uint64_t outer = 1, inner = 1;
  for (uint64_t k = 0; k < axis; ++k) outer *= dims[k];
  for (uint64_t k = axis + 1; k < 3; ++k) inner *= dims[k];
  const uint64_t len = dims[axis];
  Row r;
  r.group = "softmax";
  r.name = std::string(kAtenSoftmaxIo) + " float32, [64, 1024, 1024] axis " + std::to_string(axis);
  r.median_us = h.device_median_us([&](CUstream_st* s) {
    if (inner == 1) {
      tlrt::kernels::softmax_rows_cuda<float>(x, nullptr, outer, len, out, s);
    } else {
      tlrt::kernels::softmax_axis_cuda(x, outer, len, inner, out, s);
    }
  });
  r.bytes = static_cast<double>(2 * kElements) * sizeof(float);
  r.size = kElements;
  r.note = "bytes read + written; goal >= 1.0x ATen's softmax";
  const double scalars[4] = {64, 1024, 1024, static_cast<double>(axis)};
  const void* inputs[1] = {x};
  r.aten_us =
      std::max(0.0, aten::median_us(h, kAtenSoftmaxIo, 0, inputs, 1, scalars, kElements, 10));
  h.add(r);
}

void softmax_benchmarks(Harness& h, const BenchOptions&) {
  void* scores = nullptr;
  void* mask = nullptr;
  void* out = nullptr;
  if (cudaMalloc(&scores, kElements * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&mask, kElements * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&out, kElements * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed\n");
    cudaFree(scores);
    cudaFree(mask);
    cudaFree(out);
    return;
  }
  // Uniform values in [0, 1), filled on the legacy stream and waited for, so no timed sample
  // overlaps the fill.
  tlrt::kernels::rand_uniform_cuda(static_cast<float*>(scores), kElements, 0x5EED, nullptr);
  tlrt::kernels::rand_uniform_cuda(static_cast<float*>(mask), kElements, 0xFACE, nullptr);
  cudaDeviceSynchronize();
  const float* s = static_cast<const float*>(scores);
  const float* m = static_cast<const float*>(mask);
  float* y = static_cast<float*>(out);
  add_masked_row(h, 65536, 1024, s, m, y, "scores + mask + output; goal >= 85% of copy");
  add_masked_row(h, 524288, 128, s, m, y, "scores + mask + output; goal >= 80% of copy");
  add_masked_row(h, 2048, 32768, s, m, y, "scores + mask + output; goal >= 80% of copy");
  for (uint64_t axis = 0; axis < 3; ++axis) add_axis_row(h, axis, s, y);
  cudaDeviceSynchronize();
  cudaFree(out);
  cudaFree(mask);
  cudaFree(scores);
}

// Rank 87: after the axis reductions.
const GroupRegistration kSoftmaxGroup(
    {"softmax",
     "hard_masked_softmax_by_row at 65536 x 1024, 524288 x 128 and 2048 x 32768, softmax_io "
     "[64, 1024, 1024] along each axis, float32, bytes read + written, next to TorchLean's ATen "
     "compositions",
     87, softmax_benchmarks, "", []() -> std::vector<std::string> {
       return {kAtenMasked, kAtenSoftmaxIo};
     }});

}  // namespace
}  // namespace bench
