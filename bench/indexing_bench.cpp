// Gather and scatter through their CUDA launchers with the indices already on the device: the
// embedding shapes (a 50304 x 1024 float32 table, 32768 indices) for gather_rows and the ordered
// scatter_add_rows, and the single-column ordered scatter_add with 2^24 indices, spread over 2^20
// targets and all on one target (the long-run path). Bytes are read + written (the scatter rows
// count the base copy, the values and the index words). The ATen comparisons (index_select +
// masked_fill, index_add_, TorchLean's host stable_sort + segment_reduce path) are not registered
// yet, so these rows have no ATen column.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/indexing/indexing.h"
#include "kernels/random/random.h"

namespace bench {
namespace {

struct Device {
  std::vector<void*> blocks;
  ~Device() {
    cudaDeviceSynchronize();
    for (void* p : blocks) cudaFree(p);
  }
  void* get(size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes == 0 ? 1 : bytes) != cudaSuccess) return nullptr;
    blocks.push_back(p);
    return p;
  }
};

uint32_t* device_indices(Device& d, uint64_t k, uint64_t range, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> idx(k);
  for (auto& i : idx) i = static_cast<uint32_t>(range <= 1 ? 0 : rng() % range);
  auto* p = static_cast<uint32_t*>(d.get(k * sizeof(uint32_t)));
  if (p != nullptr) cudaMemcpy(p, idx.data(), k * sizeof(uint32_t), cudaMemcpyHostToDevice);
  return p;
}

float* device_values(Device& d, uint64_t n, uint64_t seed) {
  auto* p = static_cast<float*>(d.get(n * sizeof(float)));
  if (p != nullptr) tlrt::kernels::rand_uniform_cuda(p, n, seed, nullptr);
  return p;
}

void embedding_rows(Harness& h) {
  constexpr uint64_t rows = 50304, cols = 1024, k = 32768;
  Device d;
  float* table = device_values(d, rows * cols, 1);
  float* grads = device_values(d, k * cols, 2);
  uint32_t* idx = device_indices(d, k, rows, 3);
  float* out = static_cast<float*>(d.get(rows * cols * sizeof(float)));
  void* ws = d.get(tlrt::kernels::ordered_scatter_workspace_bytes(rows, k));
  if (!table || !grads || !idx || !out || !ws) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed (indexing)\n");
    return;
  }
  cudaDeviceSynchronize();
  Row g;
  g.group = "indexing";
  g.name = "gather_rows float32, 50304 x 1024 table, 32768 indices (device)";
  g.median_us = h.device_median_us(
      [&](CUstream_st* s) { tlrt::kernels::gather_rows_cuda(table, rows, cols, idx, k, out, s); });
  g.bytes = 2.0 * k * cols * sizeof(float) + k * 4.0;
  g.size = k * cols;
  g.note = "bytes read + written";
  h.add(g);
  Row s;
  s.group = "indexing";
  s.name = "scatter_add_rows float32, 50304 x 1024 base, 32768 indices (device), ordered";
  s.median_us = h.device_median_us([&](CUstream_st* st) {
    tlrt::kernels::scatter_add_rows_cuda(table, grads, rows, cols, idx, k, out, ws, st);
  });
  s.bytes = 2.0 * rows * cols * sizeof(float) + 2.0 * k * cols * sizeof(float) + k * 4.0;
  s.size = rows * cols;
  s.note = "base copy + values read + touched rows written";
  h.add(s);
}

void single_column(Harness& h, uint64_t n, const char* what) {
  constexpr uint64_t k = uint64_t{1} << 24;
  Device d;
  float* base = device_values(d, n, 4);
  float* values = device_values(d, k, 5);
  uint32_t* idx = device_indices(d, k, n, 6);
  float* out = static_cast<float*>(d.get(n * sizeof(float)));
  void* ws = d.get(tlrt::kernels::ordered_scatter_workspace_bytes(n, k));
  if (!base || !values || !idx || !out || !ws) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed (indexing)\n");
    return;
  }
  cudaDeviceSynchronize();
  Row r;
  r.group = "indexing";
  r.name = std::string("scatter_add float32, 2^24 indices (device) ") + what + ", ordered";
  r.median_us = h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::scatter_add_rows_cuda(base, values, n, 1, idx, k, out, ws, s);
  });
  r.bytes = 2.0 * n * sizeof(float) + k * (sizeof(float) + 4.0);
  r.size = k;
  r.note = "base copy + values + index words";
  h.add(r);
}

void indexing_benchmarks(Harness& h, const BenchOptions&) {
  embedding_rows(h);
  single_column(h, uint64_t{1} << 20, "over 2^20 targets");
  single_column(h, 1, "all on one target");
}

// Rank 85: after the shape group.
const GroupRegistration kIndexingGroup({"indexing",
                                        "gather_rows and ordered scatter_add_rows on a 50304 x "
                                        "1024 float32 table with 32768 device indices; ordered "
                                        "scatter_add with 2^24 device indices",
                                        85, indexing_benchmarks, "", nullptr});

}  // namespace
}  // namespace bench
