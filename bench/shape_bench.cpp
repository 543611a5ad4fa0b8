// One-dimensional shape ops: concat1d and slice1d through their CUDA launchers (device-to-device
// copies on the copy engine), bytes read + written per call as the bandwidth figure, so that
// % of copy compares them with the device-to-device copy measured at the start of the run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/random/random.h"
#include "kernels/shape/shape.h"

namespace bench {
namespace {

// The ATen work the rows are compared with, registered by bench/shape_aten.cpp.
constexpr const char* kAtenConcat = "concat1d";
constexpr const char* kAtenSlice = "slice1d";

constexpr uint64_t kConcatPart = uint64_t{1} << 25;  // each operand of the concat row
constexpr uint64_t kSliceLen = uint64_t{1} << 26;
constexpr uint64_t kSource = uint64_t{1} << 27;  // the buffer slices are cut from

std::string mi(uint64_t n) {
  return std::to_string(n >> 20) + " Mi";
}

void add_concat_row(Harness& h, const float* source, float* out) {
  const float* a = source;
  const float* b = source + kConcatPart;
  Row r;
  r.group = "shape";
  r.name = "concat1d float32, " + mi(kConcatPart) + " + " + mi(kConcatPart);
  r.median_us = h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::concat1d_cuda(a, kConcatPart, b, kConcatPart, out, s);
  });
  r.bytes = 2.0 * static_cast<double>(2 * kConcatPart) * sizeof(float);
  r.size = 2 * kConcatPart;
  r.note = "bytes read + written";
  const void* inputs[2] = {a, b};
  r.aten_us =
      std::max(0.0, aten::median_us(h, kAtenConcat, 0, inputs, 2, nullptr, kConcatPart, 20));
  h.add(r);
}

void add_slice_row(Harness& h, const float* source, float* out, uint64_t start, const char* note) {
  Row r;
  r.group = "shape";
  r.name =
      "slice1d float32, " + mi(kSliceLen) + " of " + mi(kSource) + " at " + std::to_string(start);
  r.median_us = h.device_median_us(
      [&](CUstream_st* s) { tlrt::kernels::slice1d_cuda(source, start, kSliceLen, out, s); });
  r.bytes = 2.0 * static_cast<double>(kSliceLen) * sizeof(float);
  r.size = kSliceLen;
  r.note = note;
  // The ABI's host scalars n, start, len.
  const double scalars[3] = {static_cast<double>(kSource), static_cast<double>(start),
                             static_cast<double>(kSliceLen)};
  const void* inputs[1] = {source};
  r.aten_us = std::max(0.0, aten::median_us(h, kAtenSlice, 0, inputs, 1, scalars, kSource, 20));
  h.add(r);
}

void shape_benchmarks(Harness& h, const BenchOptions&) {
  void* source = nullptr;
  void* out = nullptr;
  if (cudaMalloc(&source, kSource * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&out, 2 * kConcatPart * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed\n");
    cudaFree(source);
    return;
  }
  // Uniform values in [0, 1), filled on the legacy stream and waited for, so no timed sample
  // overlaps the fill.
  tlrt::kernels::rand_uniform_cuda(static_cast<float*>(source), kSource, 0x5EED, nullptr);
  cudaDeviceSynchronize();
  const float* x = static_cast<const float*>(source);
  float* y = static_cast<float*>(out);
  add_concat_row(h, x, y);
  add_slice_row(h, x, y, kSource / 4, "bytes read + written");
  add_slice_row(h, x, y, kSource / 4 + 1,
                "bytes read + written; source 4 bytes off 16-byte alignment");
  cudaDeviceSynchronize();
  cudaFree(out);
  cudaFree(source);
}

// Rank 80: after the elementwise group.
const GroupRegistration kShapeGroup({"shape",
                                     "concat1d float32 32 Mi + 32 Mi and slice1d float32 64 Mi "
                                     "(aligned and odd offset), bytes read + written, next to "
                                     "ATen's cat and narrow + clone",
                                     80, shape_benchmarks, "", []() -> std::vector<std::string> {
                                       return {kAtenConcat, kAtenSlice};
                                     }});

}  // namespace
}  // namespace bench
