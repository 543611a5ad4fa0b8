// Runtime benchmarks: the caching allocator's hot path and steady state, the seeded random
// constructors, host transfers through the ABI and the host cost of one call through it. Four
// groups: allocator, random, transfer, abi.
#include <cuda_runtime.h>
#include <lean/lean.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/random/random.h"
#include "runtime/context.h"
#include "tlrt/torchlean_abi.h"

namespace bench {
namespace {

void allocator_benchmarks(Harness& h, const BenchOptions&) {
  tlrt::CachingAllocator& a = tlrt::allocator(tlrt::Backend::cuda);
  for (size_t size :
       {size_t{512}, size_t{64} << 10, size_t{1} << 20, size_t{16} << 20, size_t{64} << 20}) {
    a.free(a.allocate(size, "bench"));  // warm: the block is cached from here on
    constexpr int kPairs = 20000;
    const double batch_us = Harness::host_median_us(
        [&] {
          for (int i = 0; i < kPairs; ++i) a.free(a.allocate(size, "bench"));
        },
        9);
    Row r;
    r.group = "allocator";
    r.name = "cached alloc + free pair, " + std::to_string(size) + " B";
    r.median_us = batch_us / kPairs;
    r.note = "host time per pair (goal <= 0.5 us)";
    h.add(r);
  }
  // A repeated trace of varying sizes: after the first replay the driver is never called.
  std::mt19937_64 rng(42);
  std::vector<size_t> trace(400);
  for (size_t& s : trace) {
    const size_t base = size_t{1} << (10 + rng() % 17);  // 1 KiB .. 64 MiB
    s = base + rng() % (base / 5 + 1) - base / 10;       // +-10%
  }
  auto replay = [&] {
    std::vector<void*> window;
    for (size_t s : trace) {
      window.push_back(a.allocate(s, "bench trace"));
      if (window.size() > 24) {
        a.free(window.front());
        window.erase(window.begin());
      }
    }
    for (void* p : window) a.free(p);
  };
  replay();
  const tlrt::AllocatorStats warm = a.stats();
  const double trace_us = Harness::host_median_us(replay, 10, 0);
  const tlrt::AllocatorStats after = a.stats();
  Row r;
  r.group = "allocator";
  r.name = "trace replay x10 after warm-up (400 allocs)";
  r.median_us = trace_us;
  char note[256];
  std::snprintf(note, sizeof(note),
                "driver allocs after warm-up: %llu, driver frees: %llu; peak reserved / peak "
                "allocated = %.3f",
                static_cast<unsigned long long>(after.source_allocs - warm.source_allocs),
                static_cast<unsigned long long>(after.source_frees - warm.source_frees),
                static_cast<double>(after.peak_reserved_bytes) /
                    static_cast<double>(after.peak_allocated_bytes));
  r.note = note;
  h.add(r);
}

void random_benchmarks(Harness& h, const BenchOptions&) {
  const uint64_t n = uint64_t{64} << 20;
  void* out = nullptr;
  if (cudaMalloc(&out, n * 8) != cudaSuccess) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed\n");
    return;
  }
  auto add = [&](const char* name, double us, double bytes, const char* note) {
    Row r;
    r.group = "random";
    r.name = name;
    r.median_us = us;
    r.bytes = bytes;
    r.note = note;
    h.add(r);
  };
  add("rand_uniform float32, 64 Mi", h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::rand_uniform_cuda(static_cast<float*>(out), n, 0x1234, s);
  }),
      n * 4.0, "bytes written; goal >= 3.5 TB/s; ATen composition 5.27 ms, torch.rand 0.12 ms");
  add("rand_uniform float64, 64 Mi", h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::rand_uniform_cuda(static_cast<double*>(out), n, 0x1234, s);
  }),
      n * 8.0, "bytes written");
  add("bernoulli_mask float32, 64 Mi", h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::bernoulli_mask_cuda(static_cast<float*>(out), n, 0.5f, 0x1234, s);
  }),
      n * 4.0, "bytes written");
  add("rand_normal float32, 64 Mi", h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::rand_normal_cuda(static_cast<float*>(out), n, 0.0f, 1.0f, 0x1234, s);
  }),
      n * 4.0, "bytes written");
  add("rand_normal float64, 64 Mi", h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::rand_normal_cuda(static_cast<double*>(out), n, 0.0, 1.0, 0x1234, s);
  }),
      n * 8.0, "bytes written");
  cudaFree(out);
}

void transfer_benchmarks(Harness& h, const BenchOptions&) {
  const uint64_t n = uint64_t{64} << 20;
  lean_object* host = lean_mk_empty_float_array(lean_box(n));
  lean_sarray_set_size(host, n);
  double* p = lean_float_array_cptr(host);
  for (uint64_t i = 0; i < n; ++i) p[i] = static_cast<double>(i) * 0.5;
  for (uint8_t dtype : {uint8_t{0}, uint8_t{1}}) {
    const char* dt = dtype == 0 ? "float32" : "float64";
    const double up = Harness::host_median_us(
        [&] { lean_dec(torchlean_cuda_buffer_of_float_array(host, dtype)); }, 5);
    lean_object* buf = torchlean_cuda_buffer_of_float_array(host, dtype);
    const double down =
        Harness::host_median_us([&] { lean_dec(torchlean_cuda_buffer_to_float_array(buf)); }, 5);
    lean_dec(buf);
    Row r;
    r.group = "transfer";
    r.name = std::string("of_float_array 64 Mi -> ") + dt;
    r.median_us = up;
    r.bytes = n * 8.0;
    r.note = "GB/s of host FloatArray data; % of copy not meaningful (PCIe)";
    h.add(r);
    r.name = std::string("to_float_array 64 Mi <- ") + dt;
    r.median_us = down;
    h.add(r);
  }
  lean_dec(host);
  // The bus itself, for scale: one pageable 512 MiB host-to-device cudaMemcpy.
  std::vector<double> plain(n, 1.0);
  void* dev = nullptr;
  if (cudaMalloc(&dev, n * 8) == cudaSuccess) {
    const double us = Harness::host_median_us(
        [&] { cudaMemcpy(dev, plain.data(), n * 8, cudaMemcpyHostToDevice); }, 5);
    Row r;
    r.group = "transfer";
    r.name = "cudaMemcpy pageable H2D 512 MiB (scale)";
    r.median_us = us;
    r.bytes = n * 8.0;
    r.note = "raw bus reference";
    h.add(r);
    void* pinned = nullptr;
    if (cudaHostAlloc(&pinned, n * 8, cudaHostAllocDefault) == cudaSuccess) {
      std::memset(pinned, 1, n * 8);
      r.name = "cudaMemcpy pinned H2D 512 MiB (scale)";
      r.median_us = Harness::host_median_us(
          [&] { cudaMemcpy(dev, pinned, n * 8, cudaMemcpyHostToDevice); }, 5);
      h.add(r);
      r.name = "cudaMemcpy pinned D2H 512 MiB (scale)";
      r.median_us = Harness::host_median_us(
          [&] { cudaMemcpy(pinned, dev, n * 8, cudaMemcpyDeviceToHost); }, 5);
      h.add(r);
      cudaFreeHost(pinned);
    }
    r.name = "first touch of a fresh 512 MiB host array (scale)";
    r.median_us = Harness::host_median_us(
        [&] {
          std::vector<double> fresh(n);  // value-initialised: every page written once
          if (fresh[n / 2] != 0) std::abort();
        },
        3);
    r.note = "page-fault cost a download into a new FloatArray pays";
    h.add(r);
    cudaFree(dev);
  }
}

void abi_overhead_benchmarks(Harness& h, const BenchOptions&) {
  constexpr int kCalls = 2000;
  const double async_us = Harness::host_median_us(
                              [&] {
                                for (int i = 0; i < kCalls; ++i)
                                  lean_dec(torchlean_cuda_buffer_rand_uniform(1024, i, 0));
                              },
                              7) /
                          kCalls;
  Row r;
  r.group = "abi";
  r.name = "rand_uniform 1024 through the ABI, async";
  r.median_us = async_us;
  r.note = "host time per call, buffer created and finalised";
  h.add(r);
  const double sync_us = Harness::host_median_us(
                             [&] {
                               for (int i = 0; i < kCalls; ++i) {
                                 lean_dec(torchlean_cuda_buffer_rand_uniform(1024, i, 0));
                                 lean_dec(torchlean_libtorch_synchronize(0));
                               }
                             },
                             7) /
                         kCalls;
  r.name = "rand_uniform 1024 through the ABI + synchronize";
  r.median_us = sync_us;
  h.add(r);
}

// Ranks 10..40: the runtime groups run first.
const GroupRegistration kAllocatorGroup({"allocator",
                                         "caching allocator: cached alloc + free pairs, driver "
                                         "calls on a replayed allocation trace",
                                         10, allocator_benchmarks});
const GroupRegistration kRandomGroup({"random",
                                      "seeded random constructors, 64 Mi elements, bytes written",
                                      20, random_benchmarks});
const GroupRegistration kTransferGroup({"transfer",
                                        "host transfers through the ABI (of_float_array, "
                                        "to_float_array) and the bus for scale",
                                        30, transfer_benchmarks});
const GroupRegistration kAbiGroup({"abi",
                                   "host time of rand_uniform through the ABI, asynchronous and "
                                   "with a synchronize",
                                   40, abi_overhead_benchmarks, "launch"});

}  // namespace
}  // namespace bench
