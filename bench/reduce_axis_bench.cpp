// Axis reductions through their CUDA launchers, float32, bytes read + written per call:
//   * reduce_sum_by_row, reduce_max_by_row, reduce_max_by_column at 65536 x 1024 (bandwidth
//     bound: goal >= 90% of copy);
//   * the ordered column fold of reduce_sum_axis at [65536, 1024] axis 0 (1024 chains of 65536
//     dependent additions: bound by the add latency, measured in the same run by a kernel that
//     runs the same chains in registers) and [8192, 8192]
//     axis 0 (short chains: goal >= 85% of copy), and of reduce_from_broadcast [64, 1024, 1024] ->
//     [1024] (axis map [0, 0, 1]), whose reduced axes merge into the same 65536 x 1024 geometry.
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
#include "kernels/reduce_axis/reduce_axis.h"

namespace bench {
namespace {

// The ATen work the rows are compared with, registered by bench/reduce_axis_aten.cpp.
constexpr const char* kAtenSumByRow = "reduce_sum_by_row";
constexpr const char* kAtenMaxByRow = "reduce_max_by_row";
constexpr const char* kAtenMaxByColumn = "reduce_max_by_column";
constexpr const char* kAtenSumAxis = "reduce_sum_axis";
constexpr const char* kAtenFromBroadcast = "reduce_from_broadcast";

constexpr uint64_t kRows = 65536;
constexpr uint64_t kCols = 1024;
constexpr uint64_t kSquare = 8192;

enum class MatrixOp { sum_by_row, max_by_row, max_by_column };

void add_matrix_row(Harness& h, MatrixOp op, const float* x, float* out, void* workspace) {
  Row r;
  r.group = "reduce_axis";
  const char* aten = op == MatrixOp::sum_by_row   ? kAtenSumByRow
                     : op == MatrixOp::max_by_row ? kAtenMaxByRow
                                                  : kAtenMaxByColumn;
  r.name = std::string(aten) + " float32, 65536 x 1024";
  r.median_us = h.device_median_us([&](CUstream_st* s) {
    if (op == MatrixOp::sum_by_row) {
      tlrt::kernels::reduce_sum_by_row_cuda(x, kRows, kCols, out, s);
    } else if (op == MatrixOp::max_by_row) {
      tlrt::kernels::reduce_max_by_row_cuda(x, kRows, kCols, out, s);
    } else {
      tlrt::kernels::reduce_max_by_column_cuda(x, kRows, kCols, out, workspace, s);
    }
  });
  const uint64_t outputs = op == MatrixOp::max_by_column ? kCols : kRows;
  r.bytes = static_cast<double>(kRows * kCols + outputs) * sizeof(float);
  r.size = kRows * kCols;
  r.note = "bytes read + written; goal >= 90% of copy";
  const double scalars[2] = {static_cast<double>(kRows), static_cast<double>(kCols)};
  const void* inputs[1] = {x};
  r.aten_us = std::max(0.0, aten::median_us(h, aten, 0, inputs, 1, scalars, kRows * kCols, 20));
  h.add(r);
}

void add_fold_row(Harness& h, const char* aten, const std::string& name, uint64_t rows,
                  uint64_t cols, const double* scalars, const float* x, float* out,
                  const char* note) {
  const tlrt::kernels::FoldGeometry g = tlrt::kernels::matrix_fold_geometry(rows, cols);
  Row r;
  r.group = "reduce_axis";
  r.name = name;
  r.median_us =
      h.device_median_us([&](CUstream_st* s) { tlrt::kernels::ordered_fold_cuda(x, g, out, s); });
  r.bytes = static_cast<double>(rows * cols + cols) * sizeof(float);
  r.size = rows * cols;
  r.note = note;
  const void* inputs[1] = {x};
  r.aten_us = std::max(0.0, aten::median_us(h, aten, 0, inputs, 1, scalars, rows * cols, 10));
  h.add(r);
}

void reduce_axis_benchmarks(Harness& h, const BenchOptions&) {
  const uint64_t elements = kSquare * kSquare;  // 64 Mi, the largest input
  void* input = nullptr;
  void* out = nullptr;
  void* workspace = nullptr;
  if (cudaMalloc(&input, elements * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&out, kRows * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&workspace, tlrt::kernels::reduce_max_by_column_workspace_bytes(
                                 static_cast<const float*>(input), kRows, kCols)) != cudaSuccess) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed\n");
    cudaFree(input);
    cudaFree(out);
    return;
  }
  // Uniform values in [0, 1), filled on the legacy stream and waited for, so no timed sample
  // overlaps the fill.
  tlrt::kernels::rand_uniform_cuda(static_cast<float*>(input), elements, 0x5EED, nullptr);
  cudaDeviceSynchronize();
  const float* x = static_cast<const float*>(input);
  float* y = static_cast<float*>(out);
  add_matrix_row(h, MatrixOp::sum_by_row, x, y, workspace);
  add_matrix_row(h, MatrixOp::max_by_row, x, y, workspace);
  add_matrix_row(h, MatrixOp::max_by_column, x, y, workspace);
  // The add-latency bound of the [65536, 1024] fold: its 1024 chains in registers, nothing read.
  Row bound;
  bound.group = "reduce_axis";
  bound.name = "dependent-add chain bound: 1024 chains of 65536 float32 additions (registers)";
  bound.median_us = h.device_median_us([&](CUstream_st* s) {
    add_chain_bound(y, static_cast<uint32_t>(kCols), static_cast<uint32_t>(kRows), s);
  });
  bound.note = "the least time of an ordered fold of [65536, 1024] on this device";
  h.add(bound);
  // reduce_sum_axis's scalars: dims[axis] and the product of the other extents.
  const double tall[2] = {static_cast<double>(kRows), static_cast<double>(kCols)};
  add_fold_row(h, kAtenSumAxis, "reduce_sum_axis float32, [65536, 1024] axis 0 (ordered)", kRows,
               kCols, tall, x, y,
               "bytes read + written; bound: the chain row above; goal >= 50x ATen's "
               "segment_reduce");
  const double square[2] = {static_cast<double>(kSquare), static_cast<double>(kSquare)};
  add_fold_row(h, kAtenSumAxis, "reduce_sum_axis float32, [8192, 8192] axis 0 (ordered)", kSquare,
               kSquare, square, x, y, "bytes read + written; goal >= 85% of copy");
  // reduce_from_broadcast's scalars: outDims; inDims = [1024], axisMap = [0, 0, 1].
  const double cube[3] = {64, 1024, 1024};
  add_fold_row(h, kAtenFromBroadcast,
               "reduce_from_broadcast float32, [64, 1024, 1024] -> [1024] (ordered)", kRows, kCols,
               cube, x, y, "bytes read + written; bound: the chain row above");
  cudaDeviceSynchronize();
  cudaFree(workspace);
  cudaFree(out);
  cudaFree(input);
}

// Rank 85: after the shape group.
const GroupRegistration kReduceAxisGroup(
    {"reduce_axis",
     "row sums and row / column maxima at 65536 x 1024, the ordered column fold at [65536, 1024] "
     "and [8192, 8192] axis 0 and [64, 1024, 1024] -> [1024], float32, bytes read + written, "
     "next to TorchLean's ATen compositions",
     85, reduce_axis_benchmarks, "", []() -> std::vector<std::string> {
       return {kAtenSumByRow, kAtenMaxByRow, kAtenMaxByColumn, kAtenSumAxis, kAtenFromBroadcast};
     }});

}  // namespace
}  // namespace bench
