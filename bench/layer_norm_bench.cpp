// Layer normalization through its CUDA launchers, float32, at 65536 x 1024, 4096 x 8192 and
// 262144 x 256, bytes read + written per call:
//   * layer_norm_fwd: x read, y and xhat written, invStd written (goal at 65536 x 1024: >= 80% of
//     copy, and faster than ATen's own at::layer_norm on the same shape);
//   * layer_norm_bwd: dout and xhat read, dx written, plus the small vectors (gamma and invStd
//     read, dGamma and dBeta written) (goal at 65536 x 1024: >= 75% of copy).
// At 65536 x 1024 a plain stream of the forward's bytes (x read once, two arrays written, no
// arithmetic) is timed in the same run: the floor of any forward that writes y and xhat.
// Each row sits next to the ATen composition TorchLean's LibTorch backend runs for the op; the
// forward has a second row beside ATen's fused at::layer_norm.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/layer_norm/layer_norm.h"
#include "kernels/random/random.h"

namespace bench {
namespace {

constexpr const char* kAtenForward = "layer_norm_fwd";
constexpr const char* kAtenBackward = "layer_norm_bwd";
constexpr const char* kAtenNative = "layer_norm_fwd_aten_native";

struct Shape {
  uint64_t rows, cols;
};

constexpr Shape kShapes[] = {{65536, 1024}, {4096, 8192}, {262144, 256}};
constexpr uint64_t kMaxElements = 262144 * 256;  // the largest shape (= 65536 x 1024)
constexpr uint64_t kMaxRows = 262144;
constexpr uint64_t kMaxCols = 8192;
constexpr double kEpsilon = 1e-5;

struct Buffers {
  float* x = nullptr;  // also dout
  float* y = nullptr;  // also dx
  float* xhat = nullptr;
  float* gamma = nullptr;
  float* beta = nullptr;
  float* inv_std = nullptr;
  float* d_gamma = nullptr;
  float* d_beta = nullptr;
  void* workspace = nullptr;
};

std::string shape_name(const char* op, const Shape& s) {
  return std::string(op) + " float32, " + std::to_string(s.rows) + " x " + std::to_string(s.cols);
}

void add_rows(Harness& h, const Buffers& b, const Shape& s) {
  const tlrt::kernels::LayerNormShape shape{s.rows, s.cols};
  const uint64_t n = s.rows * s.cols;
  const double fwd_scalars[4] = {static_cast<double>(s.rows), static_cast<double>(s.cols),
                                 1.0 / static_cast<double>(s.cols), kEpsilon};
  const void* fwd_inputs[3] = {b.x, b.x, b.x};  // each holds n elements; gamma, beta are views
  auto forward = [&](CUstream_st* st) {
    tlrt::kernels::layer_norm_fwd_cuda<float>(b.x, b.gamma, b.beta, shape, kEpsilon, b.y, b.xhat,
                                              b.inv_std, st);
  };
  Row f;
  f.group = "layer_norm";
  f.name = shape_name("layer_norm_fwd", s);
  f.median_us = h.device_median_us(forward);
  f.bytes = static_cast<double>(3 * n + s.rows + 2 * s.cols) * sizeof(float);
  f.size = n;
  f.note = "x read, y + xhat + invStd written; goal at 65536 x 1024 >= 80% of copy";
  f.aten_us = std::max(0.0, aten::median_us(h, kAtenForward, 0, fwd_inputs, 3, fwd_scalars, n, 10));
  h.add(f);

  if (s.rows == 65536) {
    // The bytes of the forward as a pure stream: what any kernel writing y and xhat needs.
    Row bound = f;
    bound.name = "streaming bound: x read, two outputs written, 65536 x 1024 (no arithmetic)";
    bound.median_us =
        h.device_median_us([&](CUstream_st* st) { read_one_write_two(b.x, b.y, b.xhat, n, st); });
    bound.bytes = static_cast<double>(3 * n) * sizeof(float);
    bound.note = "the forward's bytes as one plain stream: its floor on this device";
    bound.aten_us = 0;
    h.add(bound);
  }

  Row nat = f;
  nat.name = shape_name("layer_norm_fwd", s) + " vs at::layer_norm";
  nat.median_us = h.device_median_us(forward);
  nat.note = "the same forward beside ATen's fused at::layer_norm (goal: faster)";
  nat.aten_us =
      std::max(0.0, aten::median_us(h, kAtenNative, 0, fwd_inputs, 3, fwd_scalars, n, 10));
  h.add(nat);

  const double bwd_scalars[4] = {static_cast<double>(s.rows), static_cast<double>(s.cols),
                                 static_cast<double>(s.cols), 1.0 / static_cast<double>(s.cols)};
  const void* bwd_inputs[4] = {b.x, b.xhat, b.xhat, b.xhat};
  Row r;
  r.group = "layer_norm";
  r.name = shape_name("layer_norm_bwd", s);
  r.median_us = h.device_median_us([&](CUstream_st* st) {
    tlrt::kernels::layer_norm_bwd_cuda<float>(b.x, b.xhat, b.inv_std, b.gamma, shape,
                                              static_cast<float>(s.cols),
                                              static_cast<float>(1.0 / static_cast<double>(s.cols)),
                                              b.y, b.d_gamma, b.d_beta, b.workspace, st);
  });
  r.bytes = static_cast<double>(3 * n + s.rows + 3 * s.cols) * sizeof(float);
  r.size = n;
  r.note =
      "dout + xhat read, dx written (+ gamma, invStd, dGamma, dBeta); goal at 65536 x 1024 "
      ">= 75% of copy";
  r.aten_us =
      std::max(0.0, aten::median_us(h, kAtenBackward, 0, bwd_inputs, 4, bwd_scalars, n, 10));
  h.add(r);
}

void layer_norm_benchmarks(Harness& h, const BenchOptions&) {
  Buffers b;
  uint64_t workspace_bytes = 0;
  for (const Shape& s : kShapes) {
    workspace_bytes = std::max(workspace_bytes, tlrt::kernels::layer_norm_bwd_workspace_bytes(
                                                    tlrt::kernels::LayerNormShape{s.rows, s.cols}));
  }
  const bool ok = cudaMalloc(&b.x, kMaxElements * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&b.y, kMaxElements * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&b.xhat, kMaxElements * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&b.gamma, kMaxCols * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&b.beta, kMaxCols * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&b.inv_std, kMaxRows * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&b.d_gamma, kMaxCols * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&b.d_beta, kMaxCols * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&b.workspace, workspace_bytes) == cudaSuccess;
  if (ok) {
    // Uniform values in [0, 1), filled on the legacy stream and waited for.
    tlrt::kernels::rand_uniform_cuda(b.x, kMaxElements, 0x5EED, nullptr);
    tlrt::kernels::rand_uniform_cuda(b.xhat, kMaxElements, 0x5EEE, nullptr);
    tlrt::kernels::rand_uniform_cuda(b.gamma, kMaxCols, 0x5EEF, nullptr);
    tlrt::kernels::rand_uniform_cuda(b.beta, kMaxCols, 0x5EF0, nullptr);
    tlrt::kernels::rand_uniform_cuda(b.inv_std, kMaxRows, 0x5EF1, nullptr);
    cudaDeviceSynchronize();
    for (const Shape& s : kShapes) add_rows(h, b, s);
    cudaDeviceSynchronize();
  } else {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed\n");
  }
  for (void* p :
       {static_cast<void*>(b.x), static_cast<void*>(b.y), static_cast<void*>(b.xhat),
        static_cast<void*>(b.gamma), static_cast<void*>(b.beta), static_cast<void*>(b.inv_std),
        static_cast<void*>(b.d_gamma), static_cast<void*>(b.d_beta), b.workspace}) {
    cudaFree(p);
  }
}

// Rank 90: after the axis reductions.
const GroupRegistration kLayerNormGroup(
    {"layer_norm",
     "layer_norm_fwd and layer_norm_bwd at 65536 x 1024, 4096 x 8192 and 262144 x 256, float32, "
     "bytes read + written, next to TorchLean's ATen compositions and ATen's at::layer_norm",
     90, layer_norm_benchmarks, "", []() -> std::vector<std::string> {
       return {kAtenForward, kAtenBackward, kAtenNative};
     }});

}  // namespace
}  // namespace bench
