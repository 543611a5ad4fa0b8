// tlrt-bench: runs the benchmark groups that bench/*_bench.cpp register (bench_group.h) on CUDA
// device 0, prints the table and writes DIR/bench.md and DIR/bench.json (schema: docs/TOOLS.md).
//
//   tlrt-bench [--out DIR] [--only NAME[,NAME...]] [--dtype float32|float64] [--sweep]
//              [--offset MIB] [--list]
//   tlrt-bench --compare A.json B.json [--threshold T]
//   tlrt-bench --help
//
// --only takes group names (the group and the groups it runs with) and op names (the rows whose
// name starts with the op, from the groups whose ops name it or its first word, else from every
// group; the scan group skips the measurement of a row it would drop); --dtype
// keeps the rows whose name says that dtype and the rows that name none; --sweep adds the
// elementwise size sweep (2^10..2^28); --offset holds MIB MiB of device memory from before the
// first buffer of the run to its end, so that the buffers sit at other device addresses (a row
// whose time moves with it depends on where its buffers are); --list prints the groups that would
// run and their ops.
// --list, --compare and --help need no GPU. Progress (one line per group) goes to stderr.
// Before anything is measured, with LibTorch linked, every ATen composition a group's rows name
// must be registered (bench/*_aten.cpp): a forgotten one stops the bench instead of silently
// leaving its rows without an ATen column. Around each group the library plan caches' counters
// are read, and their change is reported per group.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_compare.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "common/cli_values.h"
#include "runtime/context.h"
#if TLRT_HAVE_CUDA
#include <cuda_runtime.h>

#include "runtime/cuda_device.h"
#endif
#include "runtime/plan_cache.h"

namespace {

using bench::BenchGroup;

const BenchGroup* find_group(const std::vector<BenchGroup>& groups, const std::string& name) {
  for (const BenchGroup& g : groups) {
    if (name == g.name) return &g;
  }
  return nullptr;
}

std::string usage(const std::vector<BenchGroup>& groups) {
  std::string names;
  for (const BenchGroup& g : groups) names += (names.empty() ? "" : "|") + std::string(g.name);
  return "usage: tlrt-bench [--out DIR] [--only NAME[,NAME...]] [--dtype float32|float64] "
         "[--sweep] [--offset MIB] [--list]\n"
         "       tlrt-bench --compare A.json B.json [--threshold T]\n"
         "       tlrt-bench --help\n"
         "       NAME: a group (" +
         names + ") or an op (tlrt-bench --list)\n";
}

void print_help(const std::vector<BenchGroup>& groups) {
  std::printf(
      "%s\n"
      "Measures tlrt on CUDA device 0: kernel time (median of CUDA-event samples, L2 flushed),\n"
      "bandwidth as a share of the device-to-device copy measured in the same run, host cost per\n"
      "call through the Lean ABI, and ATen side by side when LibTorch is linked. Prints the table\n"
      "and writes DIR/bench.md and DIR/bench.json.\n\n"
      "  --out DIR        where bench.md and bench.json go (default .)\n"
      "  --only LIST      comma-separated group names and op names (see --list); a group brings\n"
      "                   the groups it runs with, an op keeps the rows whose name starts with it\n"
      "                   (an op may carry the first words of its rows' names: \"OP fast "
      "float32\";\n"
      "                   the scan group measures only the rows kept)\n"
      "  --dtype DTYPE    float32 or float64: drop the rows that name the other dtype\n"
      "  --sweep          add the elementwise size sweep 2^10..2^28\n"
      "  --offset MIB     hold MIB MiB of device memory (1 to 65536) ahead of every buffer of the\n"
      "                   run, so the buffers sit at other addresses\n"
      "  --list           print the selected groups and their ops; measure nothing (no GPU "
      "needed)\n"
      "  --compare A B    per-row B/A median time of two bench.json files matched by (group,\n"
      "                   name); exit status 1 when a row is slower than the threshold (no GPU)\n"
      "  --threshold T    the --compare regression threshold (default 1.10: 10%% slower)\n"
      "  --help           this text\n\n"
      "bench.json's schema (schema_version %d) is in docs/TOOLS.md. Progress goes to stderr.\n"
      "Exit status: 0 done, 1 no device / a failed measurement / a --compare regression,\n"
      "2 a usage error or an unreadable report.\n",
      usage(groups).c_str(), bench::kJsonSchemaVersion);
}

// Duplicate names and runs_with entries that name no group: mistakes in a registration.
std::vector<std::string> registry_errors(const std::vector<BenchGroup>& groups) {
  std::vector<std::string> errors;
  std::set<std::string> seen;
  for (const BenchGroup& g : groups) {
    if (!seen.insert(g.name).second)
      errors.push_back(std::string("group registered twice: ") + g.name);
    for (const std::string& with : tlrt::split_list(g.runs_with)) {
      if (!find_group(groups, with)) {
        errors.push_back(std::string("group ") + g.name + " runs with unknown group " + with);
      }
    }
  }
  return errors;
}

// The ATen compositions `group`'s rows name and no bench/*_aten.cpp registers.
std::vector<std::string> missing_aten_compositions(const BenchGroup& group) {
  std::vector<std::string> missing;
  if (!group.aten_compositions) return missing;
  for (const std::string& name : group.aten_compositions()) {
    if (!bench::aten::is_registered(name.c_str())) missing.push_back(name);
  }
  return missing;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void print_groups(const std::vector<BenchGroup>& groups) {
  std::printf("tlrt-bench groups, in run order (--only takes a comma-separated list of names):\n");
  for (const BenchGroup& g : groups) {
    std::printf("  %-12s %s\n", g.name, g.description);
    if (g.runs_with[0] != '\0') std::printf("  %-12s runs with: %s\n", "", g.runs_with);
    if (!g.aten_compositions) continue;
    std::printf("  %-12s ops: %s\n", "", joined(g.aten_compositions()).c_str());
    std::printf("  %-12s ATen compositions: %zu", "", g.aten_compositions().size());
    if (bench::aten::linked()) {
      const std::vector<std::string> missing = missing_aten_compositions(g);
      if (!missing.empty()) std::printf(", not registered: %s", joined(missing).c_str());
    } else {
      std::printf(" (LibTorch not linked)");
    }
    std::printf("\n");
  }
}

// What --only selects: whole groups (with the groups they run with) and ops.
struct Selection {
  std::set<std::string> groups;  // run with every row
  std::set<std::string> ops;     // rows whose name starts with the op (then a space, a comma or
                                 // the end)
};

// Whether `name` is `op` or starts with it followed by a space or a comma (a row of the op, or the
// op with the first words of its rows' names, e.g. "selective_scan_diag_bwd fast float32").
bool starts_with_op(const std::string& name, const std::string& op) {
  return name.compare(0, op.size(), op) == 0 &&
         (name.size() == op.size() || name[op.size()] == ' ' || name[op.size()] == ',');
}

// Whether `name` is one of `ops`, alone or with the first words of its rows' names.
bool names_op(const std::vector<std::string>& ops, const std::string& name) {
  for (const std::string& op : ops) {
    if (starts_with_op(name, op)) return true;
  }
  return false;
}

// Which groups run, in run order: the groups --only names and the groups they run with, and for
// an op name the groups whose ops (their ATen compositions) name it, every group when none does;
// every group without --only.
std::vector<BenchGroup> selected_groups(const std::vector<BenchGroup>& groups,
                                        const std::vector<std::string>& only, Selection& sel) {
  if (only.empty()) return groups;
  std::set<std::string> wanted;
  for (const std::string& name : only) {
    if (const BenchGroup* g = find_group(groups, name)) {
      sel.groups.insert(name);
      wanted.insert(name);
      for (const std::string& with : tlrt::split_list(g->runs_with)) {
        sel.groups.insert(with);
        wanted.insert(with);
      }
      continue;
    }
    sel.ops.insert(name);
    bool listed = false;
    for (const BenchGroup& g : groups) {
      if (g.aten_compositions && names_op(g.aten_compositions(), name)) {
        wanted.insert(g.name);
        listed = true;
      }
    }
    if (!listed) {
      for (const BenchGroup& g : groups) wanted.insert(g.name);
    }
  }
  std::vector<BenchGroup> selected;
  for (const BenchGroup& g : groups) {
    if (wanted.count(g.name)) selected.push_back(g);
  }
  return selected;
}

// The rows --only and --dtype keep. The copy ceiling always stays: every bandwidth is a share of
// it.
bool keep_row(const bench::Row& r, const Selection& sel, const std::string& dtype) {
  if (r.group == "ceiling") return true;
  if (!dtype.empty()) {
    const std::string other = dtype == "float32" ? "float64" : "float32";
    if (r.name.find(other) != std::string::npos && r.name.find(dtype) == std::string::npos)
      return false;
  }
  if (sel.groups.empty() && sel.ops.empty()) return true;
  if (sel.groups.count(r.group)) return true;
  for (const std::string& op : sel.ops) {
    if (starts_with_op(r.name, op)) return true;
  }
  return false;
}

#if TLRT_HAVE_CUDA
bench::PlanCacheActivity plan_cache_activity(const char* group, const tlrt::PlanCacheCounters& a,
                                             const tlrt::PlanCacheCounters& b) {
  const auto change = [](uint64_t before, uint64_t after) {
    return static_cast<int64_t>(after) - static_cast<int64_t>(before);
  };
  bench::PlanCacheActivity p;
  p.group = group;
  p.hits = change(a.hits, b.hits);
  p.misses = change(a.misses, b.misses);
  p.creates = change(a.creates, b.creates);
  p.evictions = change(a.evictions, b.evictions);
  p.destroyed = change(a.destroyed, b.destroyed);
  p.live = change(a.live, b.live);
  p.live_after = b.live;
  return p;
}

#endif

}  // namespace

int main(int argc, char** argv) {
  const std::vector<BenchGroup> groups = bench::registered_groups();
  const std::vector<std::string> errors = registry_errors(groups);
  if (!errors.empty()) {
    for (const std::string& e : errors) std::fprintf(stderr, "tlrt-bench: %s\n", e.c_str());
    return 2;
  }
  std::string out = ".", dtype, compare_a, compare_b;
  std::vector<std::string> only;
  double threshold = 1.10;
  bench::BenchOptions options;
  uint64_t offset_mib = 0;
  bool list = false, help = false, compare = false, threshold_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      for (const std::string& name : tlrt::split_list(argv[++i])) only.push_back(name);
    } else if (a == "--dtype" && i + 1 < argc) {
      dtype = argv[++i];
      if (dtype != "float32" && dtype != "float64") {
        std::fprintf(stderr, "tlrt-bench: --dtype %s: float32 or float64\n", dtype.c_str());
        return 2;
      }
    } else if (a == "--sweep") {
      options.sweep = true;
    } else if (a == "--offset" && i + 1 < argc) {
      const char* v = argv[++i];
      if (!tlrt::parse_whole_number(v, &offset_mib) || offset_mib < 1 || offset_mib > 65536) {
        std::fprintf(stderr, "tlrt-bench: --offset %s: a whole number of MiB from 1 to 65536\n", v);
        return 2;
      }
    } else if (a == "--list") {
      list = true;
    } else if (a == "--help" || a == "-h") {
      help = true;
    } else if (a == "--compare" && i + 2 < argc) {
      compare = true;
      compare_a = argv[++i];
      compare_b = argv[++i];
    } else if (a == "--threshold" && i + 1 < argc) {
      threshold_given = true;
      if (!tlrt::parse_positive_number(argv[++i], &threshold)) {
        std::fprintf(stderr, "tlrt-bench: --threshold %s: a positive number (1.10: 10%% slower)\n",
                     argv[i]);
        return 2;
      }
    } else {
      std::fprintf(stderr, "tlrt-bench: unknown or incomplete option %s\n%s", a.c_str(),
                   usage(groups).c_str());
      return 2;
    }
  }
  if (help) {
    print_help(groups);
    return 0;
  }
  if (compare) return bench::compare_runs(compare_a, compare_b, threshold);
  if (threshold_given) {
    std::fprintf(stderr, "tlrt-bench: --threshold goes with --compare\n%s", usage(groups).c_str());
    return 2;
  }
  if (groups.empty()) {
    // A build without the CUDA backend registers no group.
    std::fprintf(list ? stdout : stderr,
                 "tlrt-bench: no groups: this build has no CUDA backend (--help and --compare "
                 "work)\n");
    return list ? 0 : 1;
  }
  Selection sel;
  const std::vector<BenchGroup> selected = selected_groups(groups, only, sel);
  if (selected.empty()) {
    std::fprintf(stderr, "tlrt-bench: --only selects no group\n%s", usage(groups).c_str());
    return 2;
  }
  if (list) {
    print_groups(selected);
    if (!sel.ops.empty()) {
      std::string ops;
      for (const std::string& op : sel.ops) ops += (ops.empty() ? "" : ", ") + op;
      std::printf("rows kept from these groups: those whose name starts with %s\n", ops.c_str());
    }
    if (!dtype.empty()) {
      std::printf("rows that name the other dtype than %s are dropped\n", dtype.c_str());
    }
    return 0;
  }
  {
    // Made before the first group runs, so an unwritable DIR fails at once, not after the run.
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec || !std::filesystem::is_directory(out)) {
      std::fprintf(stderr, "tlrt-bench: --out %s: cannot make the directory%s%s\n", out.c_str(),
                   ec ? ": " : "", ec ? ec.message().c_str() : "");
      return 2;
    }
  }
  if (bench::aten::linked()) {
    std::string missing;
    for (const BenchGroup& g : groups) {
      const std::vector<std::string> names = missing_aten_compositions(g);
      if (!names.empty()) missing += std::string("\n  ") + g.name + ": " + joined(names);
    }
    const std::string duplicates = bench::aten::duplicate_registrations();
    if (!missing.empty() || !duplicates.empty()) {
      if (!missing.empty()) {
        std::fprintf(stderr,
                     "tlrt-bench: rows name ATen compositions that no bench/*_aten.cpp "
                     "registers (register each, or register it as having no ATen equivalent):%s\n",
                     missing.c_str());
      }
      if (!duplicates.empty()) {
        std::fprintf(stderr, "tlrt-bench: ATen compositions registered more than once: %s\n",
                     duplicates.c_str());
      }
      return 1;
    }
  }
#if !TLRT_HAVE_CUDA
  (void)&keep_row;
  std::fprintf(stderr, "tlrt-bench: built without the CUDA backend; nothing to measure\n");
  return 1;
#else
  if (tlrt::cuda_device_count() == 0) {
    std::fprintf(stderr, "tlrt-bench: no CUDA device visible; nothing to measure\n");
    return 1;
  }
  try {
    tlrt::ensure_initialized();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlrt-bench: %s\n", e.what());
    return 1;
  }
  const tlrt::DeviceProperties props = tlrt::device_properties(0);
  std::printf("tlrt-bench on %s (%s)\n", props.name.c_str(), tlrt::version_string().c_str());
  // Held to the end of the run, ahead of the harness's buffers and every group's.
  void* offset_block = nullptr;
  if (offset_mib != 0) {
    const cudaError_t st = cudaMalloc(&offset_block, static_cast<size_t>(offset_mib) << 20);
    if (st != cudaSuccess) {
      std::fprintf(stderr, "tlrt-bench: --offset %llu: cudaMalloc failed: %s\n",
                   static_cast<unsigned long long>(offset_mib), cudaGetErrorString(st));
      return 1;
    }
    std::printf("%llu MiB of device memory held ahead of the run's buffers (--offset)\n",
                static_cast<unsigned long long>(offset_mib));
  }
  bench::Harness h(tlrt::cuda::stream(0));
  h.set_selection(only, dtype, options.sweep, offset_mib);
  h.set_row_filter([&](const bench::Row& r) { return keep_row(r, sel, dtype); });
  h.measure_copy_gbps(size_t{1} << 30);
  const auto start = std::chrono::steady_clock::now();
  size_t index = 0;
  for (const BenchGroup& g : selected) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "tlrt-bench: [%zu/%zu] %s (%.0f s so far)\n", ++index, selected.size(),
                 g.name, elapsed);
    // The plan caches of this process's runtime: work the group queues through libtlrt.so's own
    // copy of the runtime is not counted here.
    const tlrt::PlanCacheCounters before = tlrt::plan_cache_counters();
    g.run(h, options);
    h.add_plan_cache_activity(plan_cache_activity(g.name, before, tlrt::plan_cache_counters()));
  }
  h.print();
  const bool written = h.write(out, props.name);
  if (offset_block != nullptr) cudaFree(offset_block);
  return written ? 0 : 1;
#endif
}
