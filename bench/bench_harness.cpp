#include "bench_harness.h"

#include "common/report_file.h"
#include "tlrt_version.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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

// Host time per call of one batch: `settle` (untimed, when given), then `calls` calls of `call`.
double batch_per_call_us(const std::function<void()>& call, int calls,
                         const std::function<void()>& settle) {
  if (settle) settle();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) call();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / calls;
}

}  // namespace

Harness::Harness(CUstream_st* stream) : stream_(stream) {
  int dev = 0, l2 = 0;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev), "L2 size");
  flush_bytes_ = static_cast<size_t>(l2) * 2;
  check(cudaMalloc(&flush_, flush_bytes_ + 256), "cudaMalloc (L2 flush)");
  check(cudaMemset(flush_, 0x5A, flush_bytes_ + 256), "L2 flush buffer fill");
}

Harness::~Harness() {
  cudaFree(flush_);
}

double Harness::device_median_us(const std::function<void(CUstream_st*)>& launch, int repeats,
                                 int warmup) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < warmup; ++i) launch(stream_);
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) {
    l2_flush(flush_, flush_bytes_,
             reinterpret_cast<unsigned*>(static_cast<char*>(flush_) + flush_bytes_), stream_);
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

double Harness::host_per_call_us(const std::function<void()>& call, int calls, int batches,
                                 const std::function<void()>& settle) {
  batch_per_call_us(call, calls, settle);  // untimed
  std::vector<double> samples;
  for (int b = 0; b < batches; ++b) samples.push_back(batch_per_call_us(call, calls, settle));
  if (settle) settle();
  return median(samples);
}

Harness::Paired Harness::paired_per_call_us(const std::function<void()>& call,
                                            const std::function<void()>& floor, int calls,
                                            int rounds, const std::function<void()>& settle) {
  const auto batch_us = [&](const std::function<void()>& f) {
    return batch_per_call_us(f, calls, settle);
  };
  batch_us(floor);
  batch_us(call);
  std::vector<double> call_us, floor_us, excess_us;
  for (int r = 0; r < rounds; ++r) {
    double f = 0, c = 0;
    if (r % 2 == 0) {
      f = batch_us(floor);
      c = batch_us(call);
    } else {
      c = batch_us(call);
      f = batch_us(floor);
    }
    call_us.push_back(c);
    floor_us.push_back(f);
    excess_us.push_back(c - f);
  }
  if (settle) settle();
  return {median(call_us), median(floor_us), median(excess_us)};
}

double Harness::median(std::vector<double> v) {
  return bench::median(std::move(v));
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
  if (keep_ && !keep_(row)) return;
  if (row.bytes > 0 && row.median_us > 0) {
    row.gbps = row.bytes / (row.median_us * 1e-6) / 1e9;
    if (copy_gbps_ > 0) row.pct_of_copy = 100.0 * row.gbps / copy_gbps_;
  }
  if (row.aten_us > 0) {
    if (row.bytes > 0) row.aten_gbps = row.bytes / (row.aten_us * 1e-6) / 1e9;
    if (row.median_us > 0) row.ratio = row.median_us / row.aten_us;
  }
  rows_.push_back(row);
}

void Harness::add_sweep(SweepPoint p) {
  if (!dtype_.empty() && p.dtype != dtype_) return;
  if (p.bytes > 0 && p.median_us > 0) {
    p.gbps = p.bytes / (p.median_us * 1e-6) / 1e9;
    if (copy_gbps_ > 0) p.pct_of_copy = 100.0 * p.gbps / copy_gbps_;
  }
  if (p.bytes > 0 && p.aten_us > 0) p.aten_gbps = p.bytes / (p.aten_us * 1e-6) / 1e9;
  sweep_.push_back(p);
}

void Harness::add_goal(Goal goal) {
  goals_.push_back(goal);
}

void Harness::add_plan_cache_activity(PlanCacheActivity activity) {
  plan_caches_.push_back(activity);
}

namespace {

// printf of one number, or an empty string where the figure was not measured.
std::string cell(double v, const char* fmt) {
  if (v == 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The sweep as one table per dtype: a row per size, a column pair (tlrt, ATen) per op.
struct SweepTable {
  std::string dtype;
  std::vector<std::string> ops;
  std::vector<uint64_t> sizes;
  const SweepPoint* at(const std::vector<SweepPoint>& all, const std::string& op,
                       uint64_t size) const {
    for (const SweepPoint& p : all) {
      if (p.dtype == dtype && p.op == op && p.size == size) return &p;
    }
    return nullptr;
  }
};

std::vector<SweepTable> sweep_tables(const std::vector<SweepPoint>& all) {
  std::vector<SweepTable> tables;
  for (const SweepPoint& p : all) {
    auto t = std::find_if(tables.begin(), tables.end(),
                          [&](const SweepTable& x) { return x.dtype == p.dtype; });
    if (t == tables.end()) {
      tables.push_back(SweepTable{p.dtype, {}, {}});
      t = tables.end() - 1;
    }
    if (std::find(t->ops.begin(), t->ops.end(), p.op) == t->ops.end()) t->ops.push_back(p.op);
    if (std::find(t->sizes.begin(), t->sizes.end(), p.size) == t->sizes.end()) {
      t->sizes.push_back(p.size);
    }
  }
  for (SweepTable& t : tables) std::sort(t.sizes.begin(), t.sizes.end());
  return tables;
}

std::string size_label(uint64_t n) {
  for (int e = 0; e < 64; ++e) {
    if (n == (uint64_t{1} << e)) return "2^" + std::to_string(e);
  }
  return std::to_string(n);
}

}  // namespace

void Harness::print() const {
  std::printf("%-10s %-46s %12s %10s %8s %12s %9s  %s\n", "group", "name", "median us", "GB/s",
              "% copy", "ATen us", "tlrt/ATen", "note");
  for (const Row& r : rows_) {
    std::printf("%-10s %-46s %12.3f %10s %8s %12s %9s  %s\n", r.group.c_str(), r.name.c_str(),
                r.median_us, cell(r.gbps, "%.1f").c_str(), cell(r.pct_of_copy, "%.1f").c_str(),
                cell(r.aten_us, "%.3f").c_str(), cell(r.ratio, "%.3f").c_str(), r.note.c_str());
  }
  for (const SweepTable& t : sweep_tables(sweep_)) {
    std::printf("\nsweep %s, GB/s (tlrt / ATen)\n%-8s", t.dtype.c_str(), "elements");
    for (const std::string& op : t.ops) std::printf(" %21s", op.c_str());
    std::printf("\n");
    for (uint64_t n : t.sizes) {
      std::printf("%-8s", size_label(n).c_str());
      for (const std::string& op : t.ops) {
        const SweepPoint* p = t.at(sweep_, op, n);
        std::string c = p ? cell(p->gbps, "%.1f") + " / " + cell(p->aten_gbps, "%.1f") : "";
        std::printf(" %21s", c.c_str());
      }
      std::printf("\n");
    }
  }
  if (!goals_.empty()) std::printf("\n%-52s %-28s %-44s %s\n", "goal", "target", "measured", "");
  for (const Goal& g : goals_) {
    std::printf("%-52s %-28s %-44s %s\n", g.name.c_str(), g.target.c_str(), g.measured.c_str(),
                g.met ? "met" : "NOT MET");
  }
  if (!plan_caches_.empty()) {
    std::printf("\nplan caches, change during each group\n%-12s %9s %9s %9s %9s %9s %9s %10s\n",
                "group", "hits", "misses", "creates", "evictions", "destroyed", "live",
                "live after");
  }
  for (const PlanCacheActivity& p : plan_caches_) {
    std::printf("%-12s %+9lld %+9lld %+9lld %+9lld %+9lld %+9lld %10llu\n", p.group.c_str(),
                static_cast<long long>(p.hits), static_cast<long long>(p.misses),
                static_cast<long long>(p.creates), static_cast<long long>(p.evictions),
                static_cast<long long>(p.destroyed), static_cast<long long>(p.live),
                static_cast<unsigned long long>(p.live_after));
  }
  if (!aten_.empty()) std::printf("\n%s\n", aten_.c_str());
}

bool Harness::write(const std::string& out_dir, const std::string& device_name) const {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d", std::gmtime(&now));
  const std::string md_path = out_dir + "/bench.md", json_path = out_dir + "/bench.json";
  bool ok = true;
  FILE* f = std::fopen(md_path.c_str(), "w");
  if (f != nullptr) {
    std::fprintf(f, "tlrt-bench on %s, %s; copy %.1f GB/s", device_name.c_str(), date, copy_gbps_);
    if (offset_mib_ != 0) {
      std::fprintf(f, "; %llu MiB held ahead of the buffers (--offset)",
                   static_cast<unsigned long long>(offset_mib_));
    }
    if (!aten_.empty()) std::fprintf(f, "; %s", aten_.c_str());
    std::fprintf(f, "\n\n");
    if (!goals_.empty()) {
      std::fprintf(f, "| goal | target | measured | met |\n| --- | --- | --- | --- |\n");
      for (const Goal& g : goals_) {
        std::fprintf(f, "| %s | %s | %s | %s |\n", g.name.c_str(), g.target.c_str(),
                     g.measured.c_str(), g.met ? "yes" : "**no**");
      }
      std::fprintf(f, "\n");
    }
    std::fprintf(f,
                 "| group | name | elements | median µs | GB/s | %% of copy | ATen µs | ATen GB/s "
                 "| tlrt/ATen | note |\n");
    std::fprintf(f, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (const Row& r : rows_) {
      std::fprintf(f, "| %s | %s | %s | %.3f | %s | %s | %s | %s | %s | %s |\n", r.group.c_str(),
                   r.name.c_str(), r.size ? size_label(r.size).c_str() : "", r.median_us,
                   cell(r.gbps, "%.1f").c_str(), cell(r.pct_of_copy, "%.1f").c_str(),
                   cell(r.aten_us, "%.3f").c_str(), cell(r.aten_gbps, "%.1f").c_str(),
                   cell(r.ratio, "%.3f").c_str(), r.note.c_str());
    }
    for (const SweepTable& t : sweep_tables(sweep_)) {
      std::fprintf(f, "\nSize sweep, %s: GB/s, tlrt / ATen (one pass over memory)\n\n| elements |",
                   t.dtype.c_str());
      for (const std::string& op : t.ops) std::fprintf(f, " %s |", op.c_str());
      std::fprintf(f, "\n| ---: |");
      for (size_t k = 0; k < t.ops.size(); ++k) std::fprintf(f, " ---: |");
      std::fprintf(f, "\n");
      for (uint64_t n : t.sizes) {
        std::fprintf(f, "| %s |", size_label(n).c_str());
        for (const std::string& op : t.ops) {
          const SweepPoint* p = t.at(sweep_, op, n);
          std::string c = p ? cell(p->gbps, "%.0f") : "";
          if (p && p->aten_gbps > 0) c += " / " + cell(p->aten_gbps, "%.0f");
          std::fprintf(f, " %s |", c.c_str());
        }
        std::fprintf(f, "\n");
      }
    }
  }
  ok = tlrt::close_report(f, md_path, "tlrt-bench") && ok;
  f = std::fopen(json_path.c_str(), "w");
  if (f != nullptr) {
    std::string only = "[";
    for (size_t i = 0; i < only_.size(); ++i) only += (i ? "," : "") + json_string(only_[i]);
    only += "]";
    std::fprintf(f,
                 "{\"tool\":\"tlrt-bench\",\"schema_version\":%d,\"tlrt_version\":%s,"
                 "\"device\":%s,\"date\":\"%s\",\"options\":{\"only\":%s,\"dtype\":%s,\"sweep\":%s,"
                 "\"offset_mib\":%llu},\"copy_gbps\":%.1f,\"aten\":%s,\"rows\":[",
                 kJsonSchemaVersion, json_string(TLRT_VERSION).c_str(),
                 json_string(device_name).c_str(), date, only.c_str(),
                 dtype_.empty() ? "null" : json_string(dtype_).c_str(),
                 sweep_option_ ? "true" : "false", static_cast<unsigned long long>(offset_mib_),
                 copy_gbps_, json_string(aten_).c_str());
    for (size_t i = 0; i < rows_.size(); ++i) {
      const Row& r = rows_[i];
      std::fprintf(f,
                   "%s\n{\"group\":%s,\"name\":%s,\"size\":%llu,\"median_us\":%.4f,\"bytes\":%.0f,"
                   "\"gbps\":%.2f,\"pct_of_copy\":%.2f,\"aten_us\":%.4f,\"aten_gbps\":%.2f,"
                   "\"ratio\":%.4f,\"note\":%s}",
                   i ? "," : "", json_string(r.group).c_str(), json_string(r.name).c_str(),
                   static_cast<unsigned long long>(r.size), r.median_us, r.bytes, r.gbps,
                   r.pct_of_copy, r.aten_us, r.aten_gbps, r.ratio, json_string(r.note).c_str());
    }
    std::fprintf(f, "],\n\"sweep\":[");
    for (size_t i = 0; i < sweep_.size(); ++i) {
      const SweepPoint& p = sweep_[i];
      std::fprintf(f,
                   "%s\n{\"op\":%s,\"dtype\":%s,\"size\":%llu,\"bytes\":%.0f,\"median_us\":%.4f,"
                   "\"gbps\":%.2f,\"pct_of_copy\":%.2f,\"aten_us\":%.4f,\"aten_gbps\":%.2f}",
                   i ? "," : "", json_string(p.op).c_str(), json_string(p.dtype).c_str(),
                   static_cast<unsigned long long>(p.size), p.bytes, p.median_us, p.gbps,
                   p.pct_of_copy, p.aten_us, p.aten_gbps);
    }
    std::fprintf(f, "],\n\"goals\":[");
    for (size_t i = 0; i < goals_.size(); ++i) {
      const Goal& g = goals_[i];
      std::fprintf(f, "%s\n{\"name\":%s,\"target\":%s,\"measured\":%s,\"met\":%s}", i ? "," : "",
                   json_string(g.name).c_str(), json_string(g.target).c_str(),
                   json_string(g.measured).c_str(), g.met ? "true" : "false");
    }
    std::fprintf(f, "],\n\"plan_cache\":[");
    for (size_t i = 0; i < plan_caches_.size(); ++i) {
      const PlanCacheActivity& p = plan_caches_[i];
      std::fprintf(f,
                   "%s\n{\"group\":%s,\"hits\":%lld,\"misses\":%lld,\"creates\":%lld,"
                   "\"evictions\":%lld,\"destroyed\":%lld,\"live\":%lld,\"live_after\":%llu}",
                   i ? "," : "", json_string(p.group).c_str(), static_cast<long long>(p.hits),
                   static_cast<long long>(p.misses), static_cast<long long>(p.creates),
                   static_cast<long long>(p.evictions), static_cast<long long>(p.destroyed),
                   static_cast<long long>(p.live), static_cast<unsigned long long>(p.live_after));
    }
    std::fprintf(f, "]}\n");
  }
  return tlrt::close_report(f, json_path, "tlrt-bench") && ok;
}

}  // namespace bench
