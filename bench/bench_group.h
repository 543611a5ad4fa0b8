// The registry of tlrt-bench's groups. Each bench/<family>_bench.cpp (or .cu) registers its groups
// with a static GroupRegistration, and bench_main runs, selects (--only) and lists (--list) what
// is registered: adding a family's benchmarks touches no other file. The bench sources are linked
// into the executable directly, not through a static library, so no registration is dropped.
#pragma once

#include <string>
#include <vector>

namespace bench {

class Harness;

// Command-line settings a group may read.
struct BenchOptions {
  bool sweep = false;  // --sweep: the elementwise size sweep 2^10..2^28
};

struct BenchGroup {
  const char* name;         // what --only selects; no commas
  const char* description;  // one line for --list
  // Groups run in ascending rank (ties by name), so the order the groups are measured in is
  // stated by the groups, not left to the link order of their files.
  int rank;
  void (*run)(Harness& h, const BenchOptions& options);
  // Groups that run whenever this one is selected, comma-separated: their rows are reference
  // points for this group's rows. Empty when none.
  const char* runs_with = "";
  // Names of the ATen compositions this group's rows are compared with, each registered by a
  // bench/<family>_aten.cpp (tlrt-bench refuses to start with LibTorch linked and one missing);
  // nullptr when the group has no ATen column.
  std::vector<std::string> (*aten_compositions)() = nullptr;
};

// Adds a group to the registry during static initialisation.
class GroupRegistration {
 public:
  explicit GroupRegistration(const BenchGroup& group);
};

// Every registered group, in run order.
std::vector<BenchGroup> registered_groups();

}  // namespace bench
