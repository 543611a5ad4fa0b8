// Shape ops through their CUDA launchers at 2^26 output elements: concat1d (one kernel), slice1d
// (a copy-engine copy), broadcast_to without and with a permutation (TorchLean's attention map
// [1024, 64] -> [64, 1024, 1024], axisMap [2, 0, 1]), swap_adjacent_at_depth with long contiguous
// runs ([32, 1024, 16, 64] at depth 1) and as a plain transpose ([64, 1024, 1024] at depth 1), and
// broadcast_vec_to_cols. Bytes read + written per call (distinct input bytes + output bytes) as the
// bandwidth figure, so that % of copy compares them with the device-to-device copy measured at the
// start of the run.
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
constexpr const char* kAtenBroadcast = "broadcast_to";
constexpr const char* kAtenVecToCols = "broadcast_vec_to_cols";
constexpr const char* kAtenSwap = "swap_adjacent_at_depth";

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

std::string dims_text(const std::vector<uint64_t>& dims) {
  std::string t = "[";
  for (size_t i = 0; i < dims.size(); ++i) t += (i ? ", " : "") + std::to_string(dims[i]);
  return t + "]";
}

uint64_t product(const std::vector<uint64_t>& dims) {
  uint64_t p = 1;
  for (uint64_t d : dims) p *= d;
  return p;
}

// Output axis j reads input axis map[j] - 1 (none for 0); extent-1 input axes read stride 0.
std::vector<uint64_t> read_strides(const std::vector<uint64_t>& in,
                                   const std::vector<uint64_t>& map) {
  std::vector<uint64_t> strides(map.size(), 0);
  for (size_t j = 0; j < map.size(); ++j) {
    if (map[j] == 0 || in[map[j] - 1] == 1) continue;
    uint64_t stride = 1;
    for (size_t a = map[j]; a < in.size(); ++a) stride *= in[a];
    strides[j] = stride;
  }
  return strides;
}

void add_broadcast_row(Harness& h, const float* x, float* out, const std::vector<uint64_t>& in,
                       const std::vector<uint64_t>& outd, const std::vector<uint64_t>& map,
                       const char* note) {
  const std::vector<uint64_t> strides = read_strides(in, map);
  Row r;
  r.group = "shape";
  r.name = "broadcast_to float32, " + dims_text(in) + " -> " + dims_text(outd) + " map " +
           dims_text(map);
  r.median_us = h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::broadcast_to_cuda(x, outd.data(), strides.data(), outd.size(), out, s);
  });
  r.bytes = static_cast<double>(product(in) + product(outd)) * sizeof(float);
  r.size = product(outd);
  r.note = note;
  // The ABI's arrays as host scalars: rank and inDims, rank and outDims, axisMap.
  std::vector<double> scalars = {static_cast<double>(in.size())};
  for (uint64_t d : in) scalars.push_back(static_cast<double>(d));
  scalars.push_back(static_cast<double>(outd.size()));
  for (uint64_t d : outd) scalars.push_back(static_cast<double>(d));
  for (uint64_t m : map) scalars.push_back(static_cast<double>(m));
  const void* inputs[1] = {x};
  r.aten_us = std::max(
      0.0, aten::median_us(h, kAtenBroadcast, 0, inputs, 1, scalars.data(), product(in), 20));
  h.add(r);
}

void add_swap_row(Harness& h, const float* x, float* out, const std::vector<uint64_t>& dims,
                  uint64_t depth, const char* note) {
  uint64_t outer = 1, inner = 1;
  for (uint64_t j = 0; j < depth; ++j) outer *= dims[j];
  for (uint64_t j = depth + 2; j < dims.size(); ++j) inner *= dims[j];
  Row r;
  r.group = "shape";
  r.name = "swap_adjacent_at_depth float32, " + dims_text(dims) + " depth " + std::to_string(depth);
  r.median_us = h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::swap_adjacent_cuda(x, outer, dims[depth], dims[depth + 1], inner, out, s);
  });
  r.bytes = 2.0 * static_cast<double>(product(dims)) * sizeof(float);
  r.size = product(dims);
  r.note = note;
  // depth, rank, dims.
  std::vector<double> scalars = {static_cast<double>(depth), static_cast<double>(dims.size())};
  for (uint64_t d : dims) scalars.push_back(static_cast<double>(d));
  const void* inputs[1] = {x};
  r.aten_us =
      std::max(0.0, aten::median_us(h, kAtenSwap, 0, inputs, 1, scalars.data(), product(dims), 20));
  h.add(r);
}

void add_vec_to_cols_row(Harness& h, const float* v, float* out, uint64_t rows, uint64_t cols) {
  Row r;
  r.group = "shape";
  r.name = "broadcast_vec_to_cols float32, rows " + std::to_string(rows) + ", cols " +
           std::to_string(cols);
  r.median_us = h.device_median_us(
      [&](CUstream_st* s) { tlrt::kernels::broadcast_vec_to_cols_cuda(v, rows, cols, out, s); });
  r.bytes = static_cast<double>(rows + rows * cols) * sizeof(float);
  r.size = rows * cols;
  r.note = "bytes read + written; 16-byte splatted stores";
  const double scalars[2] = {static_cast<double>(rows), static_cast<double>(cols)};
  const void* inputs[1] = {v};
  r.aten_us = std::max(0.0, aten::median_us(h, kAtenVecToCols, 0, inputs, 1, scalars, rows, 20));
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
  add_broadcast_row(h, x, y, {1024, 1024}, {64, 1024, 1024}, {0, 1, 2},
                    "bytes read + written; inserted leading axis, contiguous rows");
  add_broadcast_row(h, x, y, {1024, 64}, {64, 1024, 1024}, {2, 0, 1},
                    "bytes read + written; permuted and inserted axes, one tile per block "
                    "written to many broadcast positions");
  add_swap_row(h, x, y, {32, 1024, 16, 64}, 1, "bytes read + written; runs of 64 words");
  add_swap_row(h, x, y, {64, 1024, 1024}, 1, "bytes read + written; a plain transpose");
  add_swap_row(h, x, y, {16, 1024, 1024, 4}, 1,
               "bytes read + written; groups of 4 words moved as 16-byte words");
  add_swap_row(h, x, y, {16, 1024, 1365, 3}, 1, "bytes read + written; groups of 3 words");
  add_vec_to_cols_row(h, x, y, uint64_t{1} << 16, uint64_t{1} << 10);
  cudaDeviceSynchronize();
  cudaFree(out);
  cudaFree(source);
}

// Rank 80: after the elementwise group.
const GroupRegistration kShapeGroup(
    {"shape",
     "concat1d, slice1d, broadcast_to, swap_adjacent_at_depth and "
     "broadcast_vec_to_cols float32 at 64 Mi outputs, bytes read "
     "+ written, next to TorchLean's ATen compositions",
     80, shape_benchmarks, "", []() -> std::vector<std::string> {
       return {kAtenConcat, kAtenSlice, kAtenBroadcast, kAtenVecToCols, kAtenSwap};
     }});

}  // namespace
}  // namespace bench
