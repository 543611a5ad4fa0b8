// Diagonal selective scans through their CUDA launchers, float32, at T x S = 4096 x 1024,
// 8192 x 1024, 2048 x 16384 and 65536 x 1024, few channels with long sequences (2^24 x 1, 2^21 x
// 8, 2^18 x 64) and the channels between (2^17 x 128, 2^16 x 256), each op with the fast schedule
// (slab, resident, rows or chunked look-back by shape, what the dispatch runs with the
// deterministic setting off) and the exact schedule (one thread per channel, setting on) as
// separate rows, the schedule passed to the launcher as the dispatch passes it. Bytes are the
// traffic that must move: forward constant X read + h written; forward variable A, B, X read + h
// written; backward constant X, out, dY read + dX written; backward variable A, B, X, out, dY read
// + dA, dB, dX written (the length-S vectors are left out). Goals for the fast rows: >= 60% of copy
// and >= 50x TorchLean's ATen composition (the Hillis-Steele log-step prefix, bench/scan_aten.cpp),
// measured beside each row.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/random/random.h"
#include "kernels/scan/scan.h"

namespace bench {
namespace {

constexpr const char* kAtenFwd = "selective_scan_diag_fwd";
constexpr const char* kAtenVarFwd = "selective_scan_diag_var_fwd";
constexpr const char* kAtenBwd = "selective_scan_diag_bwd";
constexpr const char* kAtenVarBwd = "selective_scan_diag_var_bwd";

struct Shape {
  uint64_t steps, state;
};
constexpr Shape kShapes[] = {{4096, 1024},   {8192, 1024},    {2048, 16384},
                             {65536, 1024},  {1u << 24, 1},   {1u << 21, 8},
                             {1u << 18, 64}, {1u << 17, 128}, {1u << 16, 256}};
constexpr uint64_t kMaxElements = 65536 * 1024;

struct Device {
  // Inputs (each kMaxElements long, so that ATen can copy T*S elements of every input).
  float *a = nullptr, *b = nullptr, *x = nullptr, *h0 = nullptr, *out = nullptr, *dy = nullptr;
  // Outputs.
  float *h = nullptr, *da = nullptr, *db = nullptr, *dx = nullptr, *dh0 = nullptr;
  void* workspace = nullptr;
};

void run_op(Harness& h, const Device& d, const Shape& shape, bool backward, bool variable) {
  const uint64_t n = shape.steps * shape.state;
  const char* aten =
      backward ? (variable ? kAtenVarBwd : kAtenBwd) : (variable ? kAtenVarFwd : kAtenFwd);
  tlrt::kernels::ScanOperands<float> in;
  in.a = d.a;
  in.b = d.b;
  in.x = d.x;
  in.h0 = d.h0;
  in.steps = shape.steps;
  in.state = shape.state;
  in.variable = variable;
  const tlrt::kernels::ScanGradients<float> grad{d.da, d.db, d.dx, d.dh0};
  const double units = backward ? (variable ? 8 : 4) : (variable ? 4 : 2);
  const double scalars[2] = {static_cast<double>(shape.steps), static_cast<double>(shape.state)};
  // The two rows (fast, exact), named first: a row --only drops is not measured, nor ATen's
  // composition when it drops both.
  Row rows[2];
  for (bool exact : {false, true}) {
    Row& r = rows[exact];
    r.group = "scan";
    r.name = std::string(aten) + (exact ? " exact" : " fast") + " float32, T " +
             std::to_string(shape.steps) + " x S " + std::to_string(shape.state);
  }
  if (!h.wants(rows[0]) && !h.wants(rows[1])) return;
  const void* inputs[6] = {d.a, d.b, d.x, d.h0, d.out, d.dy};
  const double aten_us =
      std::max(0.0, aten::median_us(h, aten, 0, inputs, backward ? 6 : 4, scalars, n, 5));
  for (bool exact : {false, true}) {
    Row& r = rows[exact];
    if (!h.wants(r)) continue;
    r.median_us = h.device_median_us(
        [&](CUstream_st* s) {
          if (backward) {
            tlrt::kernels::selective_scan_bwd_cuda(in, d.out, d.dy, grad, exact, d.workspace, s);
          } else {
            tlrt::kernels::selective_scan_fwd_cuda(in, d.h, exact, d.workspace, s);
          }
        },
        exact ? 5 : 20);
    r.bytes = units * static_cast<double>(n) * sizeof(float);
    r.size = n;
    r.note = exact ? "bytes that must move; one thread per channel (deterministic setting)"
                   : "bytes that must move; goal >= 60% of copy and >= 50x ATen";
    r.aten_us = aten_us;
    h.add(r);
  }
}

void scan_benchmarks(Harness& h, const BenchOptions&) {
  Device d;
  size_t workspace_bytes = 0;
  for (const Shape& s : kShapes) {
    for (bool exact : {false, true}) {
      for (bool variable : {false, true}) {
        workspace_bytes =
            std::max(workspace_bytes, tlrt::kernels::selective_scan_fwd_workspace_bytes(
                                          s.steps, s.state, sizeof(float), variable, exact));
        workspace_bytes =
            std::max(workspace_bytes, tlrt::kernels::selective_scan_bwd_workspace_bytes(
                                          s.steps, s.state, sizeof(float), variable, exact));
      }
    }
  }
  std::vector<float**> buffers = {&d.a, &d.b,  &d.x,  &d.h0, &d.out, &d.dy,
                                  &d.h, &d.da, &d.db, &d.dx, &d.dh0};
  bool ok = cudaMalloc(&d.workspace, std::max<size_t>(workspace_bytes, 256)) == cudaSuccess;
  for (float** p : buffers) {
    ok = ok && cudaMalloc(reinterpret_cast<void**>(p), kMaxElements * sizeof(float)) == cudaSuccess;
  }
  if (!ok) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed\n");
  } else {
    // Uniform values in [0, 1): |A| <= 1 and finite values, so ATen takes its parallel path.
    uint64_t key = 0x5CA9;
    for (float* p : {d.a, d.b, d.x, d.h0, d.out, d.dy}) {
      tlrt::kernels::rand_uniform_cuda(p, kMaxElements, key++, nullptr);
    }
    cudaDeviceSynchronize();
    for (const Shape& shape : kShapes) {
      for (bool backward : {false, true}) {
        for (bool variable : {false, true}) run_op(h, d, shape, backward, variable);
      }
    }
    cudaDeviceSynchronize();
  }
  for (float** p : buffers) cudaFree(*p);
  cudaFree(d.workspace);
}

// Rank 95: after the axis reductions.
const GroupRegistration kScanGroup(
    {"scan",
     "diagonal selective scans (constant and variable, forward and backward) at T x S = 4096 x "
     "1024, 8192 x 1024, 2048 x 16384, 65536 x 1024, 2^24 x 1, 2^21 x 8, 2^18 x 64, 2^17 x 128, "
     "2^16 x 256, float32, fast and exact schedules, bytes that must move, next to TorchLean's "
     "ATen "
     "log-step prefix",
     95, scan_benchmarks, "", []() -> std::vector<std::string> {
       return {kAtenFwd, kAtenVarFwd, kAtenBwd, kAtenVarBwd};
     }});

}  // namespace
}  // namespace bench
