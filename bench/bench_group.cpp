// Storage of the group registry. The list lives in a function-local static so that registrations
// from any translation unit's static initialisers find it constructed, whatever their order.
#include "bench_group.h"

#include <algorithm>
#include <cstring>

namespace bench {
namespace {

std::vector<BenchGroup>& groups() {
  static std::vector<BenchGroup> all;
  return all;
}

}  // namespace

GroupRegistration::GroupRegistration(const BenchGroup& group) {
  groups().push_back(group);
}

std::vector<BenchGroup> registered_groups() {
  std::vector<BenchGroup> ordered = groups();
  std::stable_sort(ordered.begin(), ordered.end(), [](const BenchGroup& a, const BenchGroup& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    return std::strcmp(a.name, b.name) < 0;
  });
  return ordered;
}

}  // namespace bench
