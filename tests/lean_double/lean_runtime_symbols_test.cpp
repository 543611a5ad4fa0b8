// What libtlrt.so needs from the Lean runtime it is loaded into: its undefined lean_* and mi_*
// symbols (nm -D --undefined-only) against the allow-list abi/lean_compat/runtime-symbols.tsv for
// the lean.h generation and build type it was compiled with (docs/LEAN.md). A symbol the list does
// not allow fails the test, so a new runtime dependency cannot slip in unnoticed; in a Release or
// Debug build against the project's own headers, so does a listed symbol the library no longer
// needs, so the list and the documentation stay exact.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Entry {
  std::string symbol;
  std::string generation;  // compat, next or both
  std::string build;       // all or debug
};

std::vector<Entry> read_allow_list(const std::string& path) {
  std::vector<Entry> entries;
  std::ifstream in(path);
  std::string line;
  bool header_seen = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (!header_seen) {  // the column names
      header_seen = true;
      continue;
    }
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() < 3) {
      ADD_FAILURE() << path << ": malformed line: " << line;
      continue;
    }
    entries.push_back({cols[0], cols[1], cols[2]});
  }
  return entries;
}

// Undefined dynamic symbols whose name starts with lean_ or mi_, without version suffixes.
std::set<std::string> runtime_imports(const std::string& library) {
  std::set<std::string> names;
  const std::string cmd = "nm -D --undefined-only '" + library + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return names;
  char buf[1024];
  while (std::fgets(buf, sizeof(buf), p) != nullptr) {
    std::stringstream ss(buf);
    std::string kind, name;
    ss >> kind >> name;
    if (kind != "U" && kind != "w") continue;
    name = name.substr(0, name.find('@'));
    if (name.rfind("lean_", 0) == 0 || name.rfind("mi_", 0) == 0) names.insert(name);
  }
  pclose(p);
  return names;
}

bool optimised_build() {
  const std::string type = TLRT_BUILD_TYPE;
  return type == "Release" || type == "RelWithDebInfo" || type == "MinSizeRel";
}

bool applies(const Entry& e, bool debug_allowed) {
  const bool generation = e.generation == "both" || e.generation == TLRT_LEAN_GENERATION;
  const bool build = e.build == "all" || (e.build == "debug" && debug_allowed);
  return generation && build;
}

TEST(LeanRuntimeSymbols, AllowListIsWellFormed) {
  const auto entries = read_allow_list(TLRT_RUNTIME_SYMBOLS);
  ASSERT_GE(entries.size(), 10u) << "cannot read " << TLRT_RUNTIME_SYMBOLS;
  std::set<std::string> seen;
  for (const Entry& e : entries) {
    EXPECT_TRUE(e.generation == "compat" || e.generation == "next" || e.generation == "both")
        << e.symbol << ": generation " << e.generation;
    EXPECT_TRUE(e.build == "all" || e.build == "debug") << e.symbol << ": build " << e.build;
    EXPECT_TRUE(seen.insert(e.symbol + " " + e.generation + " " + e.build).second)
        << e.symbol << " listed twice";
  }
}

TEST(LeanRuntimeSymbols, LibraryNeedsOnlyAllowedSymbols) {
  const auto imports = runtime_imports(TLRT_LIBRARY_PATH);
  ASSERT_FALSE(imports.empty()) << "nm found no lean_* import in " << TLRT_LIBRARY_PATH
                                << " (is nm installed?)";
  std::set<std::string> allowed;
  for (const Entry& e : read_allow_list(TLRT_RUNTIME_SYMBOLS)) {
    if (applies(e, !optimised_build())) allowed.insert(e.symbol);
  }
  std::printf("libtlrt.so (lean.h generation %s, %s build) needs:", TLRT_LEAN_GENERATION,
              TLRT_BUILD_TYPE);
  for (const std::string& s : imports) std::printf(" %s", s.c_str());
  std::printf("\n");
  for (const std::string& s : imports) {
    EXPECT_TRUE(allowed.count(s))
        << "libtlrt.so needs " << s << " from the Lean runtime, which "
        << "abi/lean_compat/runtime-symbols.tsv does not allow for generation "
        << TLRT_LEAN_GENERATION << " (" << TLRT_BUILD_TYPE
        << " build): list it there and in docs/LEAN.md, or stop calling it";
  }
}

TEST(LeanRuntimeSymbols, EveryListedSymbolIsStillNeeded) {
  const std::string type = TLRT_BUILD_TYPE;
  if (!TLRT_LEAN_OWN_HEADER || (type != "Release" && type != "Debug")) {
    GTEST_SKIP() << "exact only in a Release or Debug build against the project's own lean.h";
  }
  const auto imports = runtime_imports(TLRT_LIBRARY_PATH);
  for (const Entry& e : read_allow_list(TLRT_RUNTIME_SYMBOLS)) {
    if (!applies(e, type == "Debug")) continue;
    EXPECT_TRUE(imports.count(e.symbol))
        << e.symbol << " is listed for generation " << TLRT_LEAN_GENERATION
        << " but libtlrt.so no longer needs it: drop it from runtime-symbols.tsv and docs/LEAN.md";
  }
}

}  // namespace
