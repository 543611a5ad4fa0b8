// Measurement helpers for tlrt-bench: CUDA-event timing of device work (median over repeats after
// warm-up, L2 flushed before each sample), host wall-clock timing, and the result tables (rows, a
// size sweep, goals) written as markdown and JSON, with the plan caches' activity per group
// printed and in the JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct CUstream_st;

namespace bench {

// Version of bench.json's layout (docs/TOOLS.md); raised when a field changes meaning or goes.
constexpr int kJsonSchemaVersion = 1;

// bench_kernels.cu: reads `bytes` of `buffer` on `stream`, evicting the L2 without dirtying it.
void l2_flush(const void* buffer, size_t bytes, unsigned* sink, CUstream_st* stream);
// bench_kernels.cu: the streaming bound of a kernel that reads n floats once and writes two
// arrays of n (16-byte words, streaming hints; n a multiple of 4, the pointers 16-byte aligned).
void read_one_write_two(const float* x, float* a, float* b, size_t n, CUstream_st* stream);
// bench_kernels.cu: `chains` independent chains of `adds` dependent float32 additions held in
// registers, 8 chains per block (out: one float per chain): the add-latency bound of an ordered
// fold whose chains have that length.
void add_chain_bound(float* out, uint32_t chains, uint32_t adds, CUstream_st* stream);

struct Row {
  std::string group;  // "allocator", "random", "transfer", ...
  std::string name;
  double median_us = 0;
  double bytes = 0;        // bytes moved per call (0 when not a bandwidth figure)
  double gbps = 0;         // bytes / median
  double pct_of_copy = 0;  // gbps / copy bandwidth of this run
  std::string note;
  uint64_t size = 0;     // elements per operand (0 when not meaningful)
  double aten_us = 0;    // the same work through ATen in this process (0: not measured)
  double aten_gbps = 0;  // bytes / aten_us
  double ratio = 0;      // median_us / aten_us: below 1 means tlrt is faster
};

// One point of a size sweep: the same op timed through tlrt and (when present) ATen.
struct SweepPoint {
  std::string op;
  std::string dtype;
  uint64_t size = 0;
  double bytes = 0;
  double median_us = 0;
  double gbps = 0;
  double pct_of_copy = 0;
  double aten_us = 0;  // 0: not measured
  double aten_gbps = 0;
};

// A target from GPU.md and whether this run met it.
struct Goal {
  std::string name;
  std::string target;
  std::string measured;
  bool met = false;
};

// What the library plan caches did while one group ran: each counter's change from the group's
// start to its end (runtime/plan_cache.h). Creates equal to the distinct plans a group needs, hits
// for every other call and no evictions mean that no plan was made on a timed path.
struct PlanCacheActivity {
  std::string group;
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t creates = 0;
  int64_t evictions = 0;
  int64_t destroyed = 0;
  int64_t live = 0;  // change in plans alive (cached or waiting for their fence)
  uint64_t live_after = 0;
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
  // Host time per call in microseconds: median over `batches` timed batches of `calls` calls
  // (after one untimed batch), divided by `calls`. `settle` runs untimed before each batch, for
  // example a device synchronize so that every batch starts with an empty queue.
  static double host_per_call_us(const std::function<void()>& call, int calls, int batches,
                                 const std::function<void()>& settle);
  // Host time per call of `call` against a `floor` call, measured in alternating batches of
  // `calls` calls (one untimed batch of each first; `settle` before every batch): `rounds` rounds,
  // each timing one batch of each, floor first in even rounds and last in odd ones, so that a
  // drift of the machine's speed during the measurement falls on both alike. call_us and
  // floor_us are the medians of their batches, excess_us the median of the rounds' differences.
  struct Paired {
    double call_us = 0;
    double floor_us = 0;
    double excess_us = 0;
  };
  static Paired paired_per_call_us(const std::function<void()>& call,
                                   const std::function<void()>& floor, int calls, int rounds,
                                   const std::function<void()>& settle);
  // The median of `v` (the upper middle element of an even count; 0 for none).
  static double median(std::vector<double> v);
  // Device-to-device copy bandwidth (bytes read + written per second) on `bytes`-sized buffers.
  double measure_copy_gbps(size_t bytes);

  CUstream_st* stream() const { return stream_; }
  void add(Row row);
  void add_sweep(SweepPoint point);
  void add_goal(Goal goal);
  void add_plan_cache_activity(PlanCacheActivity activity);
  // One line on what the ATen columns compare against ("ATen: not found ..." when absent).
  void set_aten(const std::string& description) { aten_ = description; }
  // Rows (and sweep points) the filter rejects are not recorded: --only with op names, --dtype.
  void set_row_filter(std::function<bool(const Row&)> keep) { keep_ = std::move(keep); }
  // Whether the filter keeps a row of this group and name: a group that names a row before
  // measuring it leaves out the measurement of a row that would not be recorded.
  bool wants(const Row& row) const { return !keep_ || keep_(row); }
  // The run's selection, for the JSON report: --only as given, --dtype ("" when absent), --sweep
  // and --offset (MiB held ahead of the groups' buffers, 0 when absent).
  void set_selection(std::vector<std::string> only, std::string dtype, bool sweep,
                     uint64_t offset_mib) {
    only_ = std::move(only);
    dtype_ = std::move(dtype);
    sweep_option_ = sweep;
    offset_mib_ = offset_mib;
  }
  double copy_gbps() const { return copy_gbps_; }
  // Writes out_dir/bench.md and out_dir/bench.json; false (with a message on stderr) when either
  // cannot be written.
  bool write(const std::string& out_dir, const std::string& device_name) const;
  void print() const;

 private:
  CUstream_st* stream_;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  double copy_gbps_ = 0;
  std::string aten_;
  std::function<bool(const Row&)> keep_;
  std::vector<std::string> only_;
  std::string dtype_;
  bool sweep_option_ = false;
  uint64_t offset_mib_ = 0;
  std::vector<Row> rows_;
  std::vector<SweepPoint> sweep_;
  std::vector<Goal> goals_;
  std::vector<PlanCacheActivity> plan_caches_;
};

}  // namespace bench
