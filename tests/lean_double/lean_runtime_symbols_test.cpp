// What libtlrt.so and libtlrt_unavailable.so need from the Lean runtime they are loaded into: their
// undefined lean_* and mi_* symbols (nm -D --undefined-only) against the allow-list
// abi/lean_compat/runtime-symbols.tsv for the lean.h generation and build type they were compiled
// with (docs/LEAN.md). A symbol the list does
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
  std::string library;     // tlrt, unavailable or both
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
    if (cols.size() < 4) {
      ADD_FAILURE() << path << ": malformed line: " << line;
      continue;
    }
    entries.push_back({cols[0], cols[1], cols[2], cols[3]});
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

struct Library {
  const char* key;  // the library column
  const char* path;
};

const Library kLibraries[] = {{"tlrt", TLRT_LIBRARY_PATH}, {"unavailable", TLRT_UNAVAILABLE_PATH}};

bool applies(const Entry& e, const Library& lib, bool debug_allowed) {
  const bool library = e.library == "both" || e.library == lib.key;
  const bool generation = e.generation == "both" || e.generation == TLRT_LEAN_GENERATION;
  const bool build = e.build == "all" || (e.build == "debug" && debug_allowed);
  return library && generation && build;
}

TEST(LeanRuntimeSymbols, AllowListIsWellFormed) {
  const auto entries = read_allow_list(TLRT_RUNTIME_SYMBOLS);
  ASSERT_GE(entries.size(), 10u) << "cannot read " << TLRT_RUNTIME_SYMBOLS;
  std::set<std::string> seen;
  for (const Entry& e : entries) {
    EXPECT_TRUE(e.library == "tlrt" || e.library == "unavailable" || e.library == "both")
        << e.symbol << ": library " << e.library;
    EXPECT_TRUE(e.generation == "compat" || e.generation == "next" || e.generation == "both")
        << e.symbol << ": generation " << e.generation;
    EXPECT_TRUE(e.build == "all" || e.build == "debug") << e.symbol << ": build " << e.build;
    EXPECT_TRUE(seen.insert(e.symbol + " " + e.library + " " + e.generation + " " + e.build).second)
        << e.symbol << " listed twice";
  }
}

TEST(LeanRuntimeSymbols, LibrariesNeedOnlyAllowedSymbols) {
  const auto entries = read_allow_list(TLRT_RUNTIME_SYMBOLS);
  for (const Library& lib : kLibraries) {
    const auto imports = runtime_imports(lib.path);
    ASSERT_FALSE(imports.empty()) << "nm found no lean_* import in " << lib.path
                                  << " (is nm installed?)";
    std::set<std::string> allowed;
    for (const Entry& e : entries) {
      if (applies(e, lib, !optimised_build())) allowed.insert(e.symbol);
    }
    std::printf("%s (lean.h generation %s, %s build) needs:", lib.path, TLRT_LEAN_GENERATION,
                TLRT_BUILD_TYPE);
    for (const std::string& s : imports) std::printf(" %s", s.c_str());
    std::printf("\n");
    for (const std::string& s : imports) {
      EXPECT_TRUE(allowed.count(s))
          << lib.path << " needs " << s << " from the Lean runtime, which "
          << "abi/lean_compat/runtime-symbols.tsv does not allow for library " << lib.key
          << ", generation " << TLRT_LEAN_GENERATION << " (" << TLRT_BUILD_TYPE
          << " build): list it there and in docs/LEAN.md, or stop calling it";
    }
  }
}

TEST(LeanRuntimeSymbols, EveryListedSymbolIsStillNeeded) {
  const std::string type = TLRT_BUILD_TYPE;
  if (!TLRT_LEAN_OWN_HEADER || (type != "Release" && type != "Debug")) {
    GTEST_SKIP() << "exact only in a Release or Debug build against the project's own lean.h";
  }
  const auto entries = read_allow_list(TLRT_RUNTIME_SYMBOLS);
  for (const Library& lib : kLibraries) {
    const auto imports = runtime_imports(lib.path);
    for (const Entry& e : entries) {
      if (!applies(e, lib, type == "Debug")) continue;
      EXPECT_TRUE(imports.count(e.symbol))
          << e.symbol << " is listed for " << lib.key << ", generation " << TLRT_LEAN_GENERATION
          << ", " << type << " build, but " << lib.path
          << " no longer needs it: drop it from runtime-symbols.tsv and docs/LEAN.md";
    }
  }
}

}  // namespace
