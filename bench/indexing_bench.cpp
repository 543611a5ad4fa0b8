// Gather and scatter through their CUDA launchers with the indices already on the device: the
// embedding shapes (a 50304 x 1024 float32 table, 32768 indices) for gather_rows and the ordered
// scatter_add_rows, and the single-column ordered scatter_add with 2^24 indices, spread over 2^20
// targets and all on one target (the long-run path). Bytes are read + written (the scatter rows
// count the base copy, the values and the index words). Beside them, in the same run: ATen's
// index_select and clone + index_add_ (atomic, unordered) with their indices on the device too.
// Then the whole ABI path, from a Lean Array Nat on the host to the result on the device (index
// conversion into pinned staging, upload, sort, fold, synchronize), beside TorchLean's
// deterministic path for the same call (host stable_sort, segment_reduce), wall clock per call.
#include <cuda_runtime.h>
#include <lean/lean.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "aten_bench.h"

#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/indexing/indexing.h"
#include "kernels/random/random.h"
#include "tlrt/torchlean_abi.h"

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

std::vector<uint32_t> host_indices(uint64_t k, uint64_t range, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> idx(k);
  for (auto& i : idx) i = static_cast<uint32_t>(range <= 1 ? 0 : rng() % range);
  return idx;
}

// The ATen compositions' host scalars: rows, cols, k, a tag unique to this index set, then the
// indices.
std::vector<double> aten_scalars(uint64_t rows, uint64_t cols, const std::vector<uint32_t>& idx) {
  static double next_tag = 0;
  std::vector<double> s = {static_cast<double>(rows), static_cast<double>(cols),
                           static_cast<double>(idx.size()), next_tag++};
  s.insert(s.end(), idx.begin(), idx.end());
  return s;
}

uint32_t* device_indices(Device& d, uint64_t k, uint64_t range, uint64_t seed) {
  const std::vector<uint32_t> idx = host_indices(k, range, seed);
  auto* p = static_cast<uint32_t*>(d.get(k * sizeof(uint32_t)));
  if (p != nullptr) cudaMemcpy(p, idx.data(), k * sizeof(uint32_t), cudaMemcpyHostToDevice);
  return p;
}

float* device_values(Device& d, uint64_t n, uint64_t seed) {
  auto* p = static_cast<float*>(d.get(n * sizeof(float)));
  if (p != nullptr) tlrt::kernels::rand_uniform_cuda(p, n, seed, nullptr);
  return p;
}

double ratio_or_zero(double num, double den) {
  return num > 0 && den > 0 ? num / den : 0;
}

void speed_goal(Harness& h, const std::string& name, const Row& r, double at_least,
                const char* what) {
  Goal g;
  g.name = name;
  char text[200];
  std::snprintf(text, sizeof text, ">= %.2fx %s", at_least, what);
  g.target = text;
  const double x = ratio_or_zero(r.aten_us, r.median_us);
  if (x > 0) {
    std::snprintf(text, sizeof text, "%.1f us vs %.1f us: %.2fx", r.median_us, r.aten_us, x);
  } else {
    std::snprintf(text, sizeof text, "%.1f us (ATen not measured)", r.median_us);
  }
  g.measured = text;
  g.met = x >= at_least;
  h.add_goal(g);
}

// An owned Lean Array Nat of the indices.
lean_object* lean_indices(const std::vector<uint32_t>& idx) {
  lean_object* a = lean_alloc_array(idx.size(), idx.size());
  for (size_t i = 0; i < idx.size(); ++i) lean_array_set_core(a, i, lean_box(idx[i]));
  return a;
}

// Wall clock of one ABI call (result finalised, device synchronised), median of `repeats`.
double abi_wall_us(const std::function<lean_object*()>& call, int repeats) {
  return Harness::host_median_us(
      [&] {
        lean_dec(call());
        lean_dec(torchlean_libtorch_synchronize(0));
      },
      repeats, 1);
}

void embedding_rows(Harness& h) {
  constexpr uint64_t rows = 50304, cols = 1024, k = 32768;
  Device d;
  float* table = device_values(d, rows * cols, 1);
  // The harness gives every ATen input the table's element count; the values are its first rows.
  float* grads = device_values(d, rows * cols, 2);
  const std::vector<uint32_t> host_idx = host_indices(k, rows, 3);
  uint32_t* idx = device_indices(d, k, rows, 3);
  float* out = static_cast<float*>(d.get(rows * cols * sizeof(float)));
  void* ws = d.get(tlrt::kernels::ordered_scatter_workspace_bytes(rows, k));
  if (!table || !grads || !idx || !out || !ws) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed (indexing)\n");
    return;
  }
  cudaDeviceSynchronize();
  const std::vector<double> scalars = aten_scalars(rows, cols, host_idx);
  const void* inputs[2] = {table, grads};
  Row g;
  g.group = "indexing";
  g.name = "gather_rows float32, 50304 x 1024 table, 32768 indices (device)";
  g.median_us = h.device_median_us(
      [&](CUstream_st* s) { tlrt::kernels::gather_rows_cuda(table, rows, cols, idx, k, out, s); });
  g.bytes = 2.0 * k * cols * sizeof(float) + k * 4.0;
  g.size = k * cols;
  g.aten_us = std::max(
      0.0, aten::median_us(h, "index_select", 0, inputs, 1, scalars.data(), rows * cols, 20));
  g.note = "bytes read + written; ATen: index_select, device indices";
  h.add(g);
  speed_goal(h, "gather_rows vs index_select, device indices", g, 0.95, "ATen's index_select");
  Row s;
  s.group = "indexing";
  s.name = "scatter_add_rows float32, 50304 x 1024 base, 32768 indices (device), ordered";
  s.median_us = h.device_median_us([&](CUstream_st* st) {
    tlrt::kernels::scatter_add_rows_cuda(table, grads, rows, cols, idx, k, out, ws, st);
  });
  s.bytes = 2.0 * rows * cols * sizeof(float) + 2.0 * k * cols * sizeof(float) + k * 4.0;
  s.size = rows * cols;
  s.aten_us =
      std::max(0.0, aten::median_us(h, "index_add", 0, inputs, 2, scalars.data(), rows * cols, 20));
  s.note = "base copy + values read + touched rows written; ATen: clone + index_add_ (atomic)";
  h.add(s);
  speed_goal(h, "ordered scatter_add_rows (1024 cols) vs atomic index_add_, device indices", s, 1.0,
             "ATen's clone + index_add_");

  // The whole ABI path against TorchLean's deterministic path, both from host indices.
  lean_object* mat = torchlean_cuda_buffer_rand_uniform(rows * cols, 11, 0);
  lean_object* values = torchlean_cuda_buffer_rand_uniform(k * cols, 12, 0);
  lean_object* list = lean_indices(host_idx);
  Row a;
  a.group = "indexing";
  a.name = "scatter_add_rows via the ABI, 50304 x 1024, 32768 host indices, ordered";
  a.median_us = abi_wall_us(
      [&] { return torchlean_cuda_buffer_scatter_add_rows(mat, values, rows, cols, list, k); }, 9);
  a.size = rows * cols;
  a.aten_us = std::max(
      0.0, aten::median_us(h, "scatter_add_rows", 0, inputs, 2, scalars.data(), rows * cols, 5));
  a.note = "wall clock incl. index conversion + sync; ATen: TorchLean's deterministic path";
  h.add(a);
  speed_goal(h, "embedding backward scatter_add_rows vs TorchLean's deterministic path", a, 10,
             "TorchLean (anchor 6.9 ms)");
  lean_dec(list);
  lean_dec(values);
  lean_dec(mat);
}

void single_column(Harness& h, uint64_t n, const char* what, bool abi_rows) {
  constexpr uint64_t k = uint64_t{1} << 24;
  Device d;
  // Both ATen inputs get k elements; the base is the first n of them.
  float* base = device_values(d, std::max(n, k), 4);
  float* values = device_values(d, k, 5);
  const std::vector<uint32_t> host_idx = host_indices(k, n, 6);
  uint32_t* idx = device_indices(d, k, n, 6);
  float* out = static_cast<float*>(d.get(n * sizeof(float)));
  void* ws = d.get(tlrt::kernels::ordered_scatter_workspace_bytes(n, k));
  if (!base || !values || !idx || !out || !ws) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed (indexing)\n");
    return;
  }
  cudaDeviceSynchronize();
  const std::vector<double> scalars = aten_scalars(n, 1, host_idx);
  const void* inputs[2] = {base, values};
  Row r;
  r.group = "indexing";
  r.name = std::string("scatter_add float32, 2^24 indices (device) ") + what + ", ordered";
  r.median_us = h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::scatter_add_rows_cuda(base, values, n, 1, idx, k, out, ws, s);
  });
  r.bytes = 2.0 * n * sizeof(float) + k * (sizeof(float) + 4.0);
  r.size = k;
  r.aten_us = std::max(0.0, aten::median_us(h, "index_add", 0, inputs, 2, scalars.data(), k, 10));
  r.note = "base copy + values + index words; ATen: clone + index_add_ (atomic)";
  h.add(r);
  if (!abi_rows) return;
  speed_goal(h, "ordered single-column scatter_add vs atomic index_add_, device indices", r,
             1.0 / 3.0, "ATen's clone + index_add_ (within 3x)");

  lean_object* x = torchlean_cuda_buffer_rand_uniform(n, 13, 0);
  lean_object* v = torchlean_cuda_buffer_rand_uniform(k, 14, 0);
  lean_object* list = lean_indices(host_idx);
  Row a;
  a.group = "indexing";
  a.name = std::string("scatter_add via the ABI, 2^24 host indices ") + what + ", ordered";
  a.median_us = abi_wall_us([&] { return torchlean_cuda_buffer_scatter_add(x, v, n, list, k); }, 5);
  a.size = k;
  // TorchLean's deterministic path takes seconds (a host sort of 2^24): one timed sample.
  a.aten_us =
      std::max(0.0, aten::median_us(h, "scatter_add_rows", 0, inputs, 2, scalars.data(), k, 1));
  a.note = "wall clock incl. index conversion + sync; ATen: TorchLean's deterministic path";
  h.add(a);
  speed_goal(h, "scatter_add 2^24 indices vs TorchLean's deterministic path", a, 100,
             "TorchLean (anchor 4.3 s)");
  lean_dec(list);
  lean_dec(v);
  lean_dec(x);
}

void indexing_benchmarks(Harness& h, const BenchOptions&) {
  std::printf("indexing: %s\n", aten::description());
  std::fflush(stdout);
  h.set_aten(aten::description());
  embedding_rows(h);
  single_column(h, uint64_t{1} << 20, "over 2^20 targets", true);
  single_column(h, 1, "all on one target", false);
  aten::release_cache();
}

std::vector<std::string> indexing_aten_compositions() {
  return {"index_select", "index_add", "gather_rows", "scatter_add_rows"};
}

// Rank 85: after the shape group.
const GroupRegistration kIndexingGroup({"indexing",
                                        "gather_rows and ordered scatter_add_rows on a 50304 x "
                                        "1024 float32 table with 32768 device indices; ordered "
                                        "scatter_add with 2^24 device indices",
                                        85, indexing_benchmarks, "", indexing_aten_compositions});

}  // namespace
}  // namespace bench
