// Pooling through its CUDA launchers, float32, channels 2048 of 112 x 112 (no batch axis, as the
// ABI has it): max, average and smooth max pooling, forward and backward, 2x2 stride 2, and smooth
// max pooling also 3x3 stride 1 padding 1 (the overlapping windows: the gather backward with its
// statistics pass). Bytes are what must move: forward input read + output written; max and
// smooth backward input and dY read + dX written; average backward dY read + dX written. Each row
// sits beside TorchLean's ATen path for the same call (bench/pool_aten.cpp: max_pool2d /
// avg_pool2d with their backward, and the per-kernel-offset composition of smooth max pooling).
// Goals: max/avg forward >= 85% of copy, backward >= 75%; smooth max >= 70% forward and backward.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/pool/pool.h"
#include "kernels/random/random.h"

namespace bench {
namespace {

constexpr uint64_t kChannels = 2048;
constexpr uint64_t kExtent = 112;

struct Config {
  const char* op;  // the tlrt op and its ATen composition's name
  int kernel, stride, padding;
  bool smooth, backward;
  // smooth 3x3 stride 1: the shared-memory tiles instead of the streaming kernels
  bool tiles = false;
};

constexpr Config kConfigs[] = {
    {"maxpool_fwd", 2, 2, 0, false, false},
    {"maxpool_bwd", 2, 2, 0, false, true},
    {"avgpool_fwd", 2, 2, 0, false, false},
    {"avgpool_bwd", 2, 2, 0, false, true},
    {"smooth_maxpool_fwd", 2, 2, 0, true, false},
    {"smooth_maxpool_bwd", 2, 2, 0, true, true},
    {"smooth_maxpool_fwd", 3, 1, 1, true, false},
    {"smooth_maxpool_bwd", 3, 1, 1, true, true},
    {"smooth_maxpool_fwd", 3, 1, 1, true, false, true},
    {"smooth_maxpool_bwd", 3, 1, 1, true, true, true},
};

tlrt::kernels::PoolGeometry geometry(const Config& c) {
  tlrt::kernels::PoolGeometry g;
  g.channels = kChannels;
  g.in[1] = g.in[2] = static_cast<int64_t>(kExtent);
  g.kernel[1] = g.kernel[2] = c.kernel;
  g.stride[1] = g.stride[2] = c.stride;
  g.padding[1] = g.padding[2] = c.padding;
  const int64_t out = (static_cast<int64_t>(kExtent) + 2 * c.padding - c.kernel) / c.stride + 1;
  g.out[1] = g.out[2] = out;
  g.in_volume = kExtent * kExtent;
  g.out_volume = static_cast<uint64_t>(out * out);
  g.kernel_volume = static_cast<uint64_t>(c.kernel * c.kernel);
  return g;
}

void pool_benchmarks(Harness& h, const BenchOptions&) {
  const uint64_t n = kChannels * kExtent * kExtent;  // the largest operand (3x3 stride 1: out = in)
  float *x = nullptr, *dy = nullptr, *out = nullptr;
  void* workspace = nullptr;
  bool ok = cudaMalloc(&x, n * sizeof(float)) == cudaSuccess &&
            cudaMalloc(&dy, n * sizeof(float)) == cudaSuccess &&
            cudaMalloc(&out, n * sizeof(float)) == cudaSuccess &&
            cudaMalloc(&workspace, 2 * n * sizeof(float)) == cudaSuccess;
  if (!ok) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed\n");
  } else {
    tlrt::kernels::rand_uniform_cuda(x, n, 0x9001, nullptr);
    tlrt::kernels::rand_uniform_cuda(dy, n, 0x9002, nullptr);
    cudaDeviceSynchronize();
    const float beta = 1.0f;
    for (const Config& c : kConfigs) {
      const tlrt::kernels::PoolGeometry g = geometry(c);
      const uint64_t in_count = g.channels * g.in_volume, out_count = g.channels * g.out_volume;
      const std::string op = c.op;
      const bool average = op.rfind("avgpool", 0) == 0;
      // The ABI's host scalars in its order: (beta,) inSpatial, kernel, stride, padding, channels.
      std::vector<double> scalars;
      if (c.smooth) scalars.push_back(beta);
      for (int v : {static_cast<int>(kExtent), static_cast<int>(kExtent), c.kernel, c.kernel,
                    c.stride, c.stride, c.padding, c.padding}) {
        scalars.push_back(v);
      }
      scalars.push_back(static_cast<double>(kChannels));
      const void* inputs[2] = {average && c.backward ? static_cast<const void*>(dy) : x, dy};
      const int n_inputs = c.backward && !average ? 2 : 1;
      // The tiles rows repeat a geometry whose ATen path the streaming row measured.
      const double aten_us =
          c.tiles
              ? 0.0
              : std::max(0.0, aten::median_us(h, c.op, 0, inputs, n_inputs, scalars.data(), n, 5));
      tlrt::kernels::set_smooth_schedule(c.tiles ? tlrt::kernels::SmoothSchedule::tiles
                                                 : tlrt::kernels::SmoothSchedule::streaming);
      Row r;
      r.group = "pool";
      r.name = op + " float32, C 2048 x 112x112, " + std::to_string(c.kernel) + "x" +
               std::to_string(c.kernel) + " stride " + std::to_string(c.stride) +
               (c.padding != 0 ? " pad " + std::to_string(c.padding) : "") +
               (c.tiles ? " (shared-memory tiles)" : "");
      r.median_us = h.device_median_us(
          [&](CUstream_st* s) {
            if (op == "maxpool_fwd") {
              tlrt::kernels::maxpool_fwd_cuda(x, out, g, s);
            } else if (op == "maxpool_bwd") {
              tlrt::kernels::maxpool_bwd_cuda(x, dy, out, g, s);
            } else if (op == "avgpool_fwd") {
              tlrt::kernels::avgpool_fwd_cuda(x, out, g, s);
            } else if (op == "avgpool_bwd") {
              tlrt::kernels::avgpool_bwd_cuda(dy, out, g, s);
            } else if (op == "smooth_maxpool_fwd") {
              tlrt::kernels::smooth_maxpool_fwd_cuda(x, beta, out, g, s);
            } else {
              tlrt::kernels::smooth_maxpool_bwd_cuda(x, dy, beta, out, workspace, g, s);
            }
          },
          20);
      double moved = 0;
      if (!c.backward) {
        moved = static_cast<double>(in_count + out_count);
      } else if (average) {
        moved = static_cast<double>(out_count + in_count);
      } else {
        moved = static_cast<double>(2 * in_count + out_count);
      }
      r.bytes = moved * sizeof(float);
      r.size = in_count;
      const char* goal = c.smooth     ? "goal >= 70% of copy"
                         : c.backward ? "goal >= 75% of copy"
                                      : "goal >= 85% of copy";
      r.note = std::string("bytes that must move; ") + goal;
      r.aten_us = aten_us;
      h.add(r);
    }
    tlrt::kernels::set_smooth_schedule(tlrt::kernels::SmoothSchedule::streaming);
  }
  cudaFree(x);
  cudaFree(dy);
  cudaFree(out);
  cudaFree(workspace);
}

// Rank 100: after the selective scans.
const GroupRegistration kPoolGroup(
    {"pool",
     "max, average and smooth max pooling, forward and backward, float32, C 2048 x 112x112, 2x2 "
     "stride 2 (smooth max also 3x3 stride 1 pad 1), bytes that must move, next to TorchLean's "
     "ATen path",
     100, pool_benchmarks, "", []() -> std::vector<std::string> {
       return {"maxpool_fwd", "maxpool_bwd",        "avgpool_fwd",
               "avgpool_bwd", "smooth_maxpool_fwd", "smooth_maxpool_bwd"};
     }});

}  // namespace
}  // namespace bench
