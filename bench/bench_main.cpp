// tlrt-bench [--out DIR] [--only GROUP[,GROUP...]] [--sweep] [--list]: runs the benchmark groups
// that bench/*_bench.cpp register (bench_group.h) on CUDA device 0, prints the table and writes
// DIR/bench.md and DIR/bench.json. --only runs the named groups (and the groups they run with),
// --sweep adds the elementwise size sweep (2^10..2^28), --list prints the groups that would run
// (all, or those --only selects) and needs no GPU.
// Before anything is measured, with LibTorch linked, every ATen composition a group's rows name
// must be registered (bench/*_aten.cpp): a forgotten one stops the bench instead of silently
// leaving its rows without an ATen column. Around each group the library plan caches' counters
// are read, and their change is reported per group.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "runtime/context.h"
#include "runtime/cuda_device.h"
#include "runtime/plan_cache.h"

namespace {

using bench::BenchGroup;

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

const BenchGroup* find_group(const std::vector<BenchGroup>& groups, const std::string& name) {
  for (const BenchGroup& g : groups) {
    if (name == g.name) return &g;
  }
  return nullptr;
}

std::string usage(const std::vector<BenchGroup>& groups) {
  std::string names;
  for (const BenchGroup& g : groups) names += (names.empty() ? "" : "|") + std::string(g.name);
  return "usage: tlrt-bench [--out DIR] [--sweep] [--only GROUP[,GROUP...]] [--list]\n"
         "       GROUP: " +
         names + "\n";
}

// Duplicate names and runs_with entries that name no group: mistakes in a registration.
std::vector<std::string> registry_errors(const std::vector<BenchGroup>& groups) {
  std::vector<std::string> errors;
  std::set<std::string> seen;
  for (const BenchGroup& g : groups) {
    if (!seen.insert(g.name).second)
      errors.push_back(std::string("group registered twice: ") + g.name);
    for (const std::string& with : split_commas(g.runs_with)) {
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

// Which groups run, in run order: those --only names and the groups they run with; every group
// without --only. Empty, and `unknown` set, when --only names a group that is not registered.
std::vector<BenchGroup> selected_groups(const std::vector<BenchGroup>& groups,
                                        const std::string& only, std::string& unknown) {
  if (only.empty()) return groups;
  std::set<std::string> wanted;
  for (const std::string& name : split_commas(only)) {
    const BenchGroup* g = find_group(groups, name);
    if (!g) {
      unknown = name;
      return {};
    }
    wanted.insert(name);
    for (const std::string& with : split_commas(g->runs_with)) wanted.insert(with);
  }
  std::vector<BenchGroup> selected;
  for (const BenchGroup& g : groups) {
    if (wanted.count(g.name)) selected.push_back(g);
  }
  return selected;
}

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

}  // namespace

int main(int argc, char** argv) {
  const std::vector<BenchGroup> groups = bench::registered_groups();
  const std::vector<std::string> errors = registry_errors(groups);
  if (!errors.empty()) {
    for (const std::string& e : errors) std::fprintf(stderr, "tlrt-bench: %s\n", e.c_str());
    return 2;
  }
  std::string out = ".", only;
  bench::BenchOptions options;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc)
      out = argv[++i];
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (a == "--sweep")
      options.sweep = true;
    else if (a == "--list")
      list = true;
    else {
      std::fprintf(stderr, "%s", usage(groups).c_str());
      return 2;
    }
  }
  std::string unknown;
  const std::vector<BenchGroup> selected = selected_groups(groups, only, unknown);
  if (selected.empty()) {
    const std::string why = unknown.empty() ? "--only names no group" : "no group named " + unknown;
    std::fprintf(stderr, "tlrt-bench: %s\n%s", why.c_str(), usage(groups).c_str());
    return 2;
  }
  if (list) {
    print_groups(selected);
    return 0;
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
  bench::Harness h(tlrt::cuda::stream(0));
  h.measure_copy_gbps(size_t{1} << 30);
  for (const BenchGroup& g : selected) {
    // The plan caches of this process's runtime: work the group queues through libtlrt.so's own
    // copy of the runtime is not counted here.
    const tlrt::PlanCacheCounters before = tlrt::plan_cache_counters();
    g.run(h, options);
    h.add_plan_cache_activity(plan_cache_activity(g.name, before, tlrt::plan_cache_counters()));
  }
  h.print();
  h.write(out, props.name);
  return 0;
}
