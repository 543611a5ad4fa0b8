#include "bench_harness.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace bench {
namespace {

void check(cudaError_t st, const char* what) {
  if (st != cudaSuccess) {
    std::fprintf(stderr, "tlrt-bench: %s: %s\n", what, cudaGetErrorString(st));
    std::exit(1);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

Harness::Harness(CUstream_st* stream) : stream_(stream) {
  int dev = 0, l2 = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "L2 size");
  flush_bytes_ = static_cast<size_t>(l2) * 2;
  check(cudaMalloc(&flush_, flush_bytes_), "cudaMalloc (L2 flush)");
}

Harness::~Harness() { cudaFree(flush_); }

double Harness::device_median_us(const std::function<void(CUstream_st*)>& launch, int repeats,
                                 int warmup) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < warmup; ++i) launch(stream_);
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) {
    check(cudaMemsetAsync(flush_, i & 0xFF, flush_bytes_, stream_), "L2 flush");
    check(cudaEventRecord(start, stream_), "cudaEventRecord");
    launch(stream_);
    check(cudaEventRecord(stop, stream_), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    samples.push_back(ms * 1e3);
  }
  check(cudaGetLastError(), "benchmarked launch");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(samples);
}

double Harness::host_median_us(const std::function<void()>& call, int repeats, int warmup) {
  for (int i = 0; i < warmup; ++i) call();
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return median(samples);
}

double Harness::measure_copy_gbps(size_t bytes) {
  void *a = nullptr, *b = nullptr;
  check(cudaMalloc(&a, bytes), "cudaMalloc (copy)");
  check(cudaMalloc(&b, bytes), "cudaMalloc (copy)");
  check(cudaMemsetAsync(a, 1, bytes, stream_), "memset");
  const double us = device_median_us([&](CUstream_st* s) {
    check(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s), "copy");
  });
  cudaFree(a);
  cudaFree(b);
  copy_gbps_ = 2.0 * bytes / (us * 1e-6) / 1e9;
  Row r{"ceiling", "device-to-device copy", us, 2.0 * bytes, copy_gbps_, 100.0, "read + write"};
  add(r);
  return copy_gbps_;
}

void Harness::add(Row row) {
  if (row.bytes > 0 && row.median_us > 0) {
    row.gbps = row.bytes / (row.median_us * 1e-6) / 1e9;
    if (copy_gbps_ > 0) row.pct_of_copy = 100.0 * row.gbps / copy_gbps_;
  }
  rows_.push_back(row);
}

void Harness::print() const {
  std::printf("%-10s %-46s %12s %10s %8s  %s\n", "group", "name", "median us", "GB/s", "% copy",
              "note");
  for (const Row& r : rows_) {
    std::printf("%-10s %-46s %12.3f %10.1f %8.1f  %s\n", r.group.c_str(), r.name.c_str(),
                r.median_us, r.gbps, r.pct_of_copy, r.note.c_str());
  }
}

void Harness::write(const std::string& out_dir, const std::string& device_name) const {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d", std::gmtime(&now));
  if (FILE* f = std::fopen((out_dir + "/bench.md").c_str(), "w")) {
    std::fprintf(f, "tlrt-bench on %s, %s\n\n", device_name.c_str(), date);
    std::fprintf(f, "| group | name | median µs | GB/s | %% of copy | note |\n");
    std::fprintf(f, "| --- | --- | ---: | ---: | ---: | --- |\n");
    for (const Row& r : rows_) {
      std::fprintf(f, "| %s | %s | %.3f | %.1f | %.1f | %s |\n", r.group.c_str(), r.name.c_str(),
                   r.median_us, r.gbps, r.pct_of_copy, r.note.c_str());
    }
    std::fclose(f);
  }
  if (FILE* f = std::fopen((out_dir + "/bench.json").c_str(), "w")) {
    std::fprintf(f, "{\"device\":\"%s\",\"date\":\"%s\",\"copy_gbps\":%.1f,\"rows\":[",
                 device_name.c_str(), date, copy_gbps_);
    for (size_t i = 0; i < rows_.size(); ++i) {
      const Row& r = rows_[i];
      std::fprintf(f,
                   "%s{\"group\":\"%s\",\"name\":\"%s\",\"median_us\":%.4f,\"bytes\":%.0f,"
                   "\"gbps\":%.2f,\"pct_of_copy\":%.2f,\"note\":\"%s\"}",
                   i ? "," : "", r.group.c_str(), r.name.c_str(), r.median_us, r.bytes, r.gbps,
                   r.pct_of_copy, r.note.c_str());
    }
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }
}

}  // namespace bench
