// Measurement helpers for tlrt-bench: CUDA-event timing of device work (median over repeats after
// warm-up, L2 flushed before each sample), host wall-clock timing, and the result table written
// as markdown and JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct CUstream_st;

namespace bench {

struct Row {
  std::string group;   // "allocator", "random", "transfer", ...
  std::string name;
  double median_us = 0;
  double bytes = 0;            // bytes moved per call (0 when not a bandwidth figure)
  double gbps = 0;             // bytes / median
  double pct_of_copy = 0;      // gbps / copy bandwidth of this run
  std::string note;
};

class Harness {
 public:
  explicit Harness(CUstream_st* stream);
  ~Harness();
  // Median device time in microseconds of `launch` (queued on the harness stream), L2 flushed
  // before each sample.
  double device_median_us(const std::function<void(CUstream_st*)>& launch, int repeats = 20,
                          int warmup = 3);
  // Median host wall time in microseconds of `call`.
  static double host_median_us(const std::function<void()>& call, int repeats, int warmup = 2);
  // Device-to-device copy bandwidth (bytes read + written per second) on `bytes`-sized buffers.
  double measure_copy_gbps(size_t bytes);

  void add(Row row);
  double copy_gbps() const { return copy_gbps_; }
  void write(const std::string& out_dir, const std::string& device_name) const;
  void print() const;

 private:
  CUstream_st* stream_;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  double copy_gbps_ = 0;
  std::vector<Row> rows_;
};

}  // namespace bench
