// The built libraries export exactly the spec's symbols: every newest-ABI and variant row of
// symbols-runtime.tsv is defined by libtlrt.so and libtlrt_unavailable.so, every exported
// torchlean_* symbol is a row of one of the tables, both libraries export the same torchlean_* set
// (a no-GPU TorchLean build links either), and the public header declares exactly that set.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Row {
  std::string symbol;
  std::string group;
};

std::vector<Row> read_table(const std::string& path) {
  std::ifstream in(path);
  std::vector<Row> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() >= 6) rows.push_back({cols[0], cols[5]});
  }
  return rows;
}

std::set<std::string> exported(const std::string& library) {
  std::set<std::string> names;
  const std::string cmd = "nm -D --defined-only '" + library + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return names;
  char buf[1024];
  while (std::fgets(buf, sizeof(buf), p) != nullptr) {
    std::stringstream ss(buf);
    std::string addr, kind, name;
    ss >> addr >> kind >> name;
    if (kind == "T" || kind == "W" || kind == "i") names.insert(name);
  }
  pclose(p);
  return names;
}

bool runtime_row_required(const Row& r) {
  return r.group != "legacy";
}

void expect_runtime_rows(const std::string& library) {
  const auto rows = read_table(std::string(TLRT_SPEC_DIR) + "/symbols-runtime.tsv");
  ASSERT_EQ(rows.size(), 77u) << "symbols-runtime.tsv is incomplete";
  const auto names = exported(library);
  ASSERT_FALSE(names.empty()) << "nm found no symbols in " << library;
  size_t required = 0;
  for (const Row& r : rows) {
    if (!runtime_row_required(r)) continue;
    ++required;
    EXPECT_TRUE(names.count(r.symbol)) << library << " does not export " << r.symbol;
  }
  EXPECT_EQ(required, 72u);  // 62 newest-ABI rows + 10 variant rows
}

TEST(Symbols, LibraryExportsEveryRuntimeRow) {
  expect_runtime_rows(TLRT_LIBRARY_PATH);
  // Progress on the numerical half of the ABI, for the log.
  const auto rows = read_table(std::string(TLRT_SPEC_DIR) + "/symbols-ops.tsv");
  const auto names = exported(TLRT_LIBRARY_PATH);
  size_t have = 0;
  for (const Row& r : rows) have += names.count(r.symbol);
  std::printf("symbols-ops.tsv: %zu of %zu rows exported\n", have, rows.size());
}

TEST(Symbols, UnavailableLibraryExportsEveryRuntimeRow) {
  expect_runtime_rows(TLRT_UNAVAILABLE_PATH);
}

TEST(Symbols, NoExportOutsideTheSpecTables) {
  std::set<std::string> spec;
  for (const char* table : {"/symbols-runtime.tsv", "/symbols-ops.tsv"}) {
    for (const Row& r : read_table(std::string(TLRT_SPEC_DIR) + table)) spec.insert(r.symbol);
  }
  for (const char* lib : {TLRT_LIBRARY_PATH, TLRT_UNAVAILABLE_PATH}) {
    for (const std::string& name : exported(lib)) {
      if (name.rfind("torchlean_", 0) != 0) {
        // Only the ABI is visible; runtime internals stay hidden.
        EXPECT_TRUE(name.rfind("_init", 0) == 0 || name.rfind("_fini", 0) == 0 || name[0] == '_')
            << lib << " exports a non-ABI symbol " << name;
        continue;
      }
      EXPECT_TRUE(spec.count(name)) << lib << " exports " << name << ", which no table lists";
    }
  }
}

std::set<std::string> torchlean_exports(const std::string& library) {
  std::set<std::string> names;
  for (const std::string& n : exported(library)) {
    if (n.rfind("torchlean_", 0) == 0) names.insert(n);
  }
  return names;
}

std::string missing_from(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::string out;
  for (const std::string& n : a) {
    if (!b.count(n)) out += " " + n;
  }
  return out.empty() ? " (none)" : out;
}

TEST(Symbols, BothLibrariesExportTheSameSet) {
  const auto full = torchlean_exports(TLRT_LIBRARY_PATH);
  const auto stub = torchlean_exports(TLRT_UNAVAILABLE_PATH);
  ASSERT_GT(full.size(), 100u) << "nm found too few exports in " << TLRT_LIBRARY_PATH;
  EXPECT_EQ(full, stub) << "only in libtlrt:" << missing_from(full, stub)
                        << "\nonly in libtlrt_unavailable:" << missing_from(stub, full);
}

TEST(Symbols, PublicHeaderDeclaresExactlyTheExports) {
  std::ifstream in(TLRT_PUBLIC_HEADER);
  ASSERT_TRUE(in) << TLRT_PUBLIC_HEADER;
  std::stringstream text;
  text << in.rdbuf();
  const std::string header = text.str();
  std::set<std::string> declared;
  static const std::regex declaration(R"(TLRT_EXPORT[^;]*?\b(torchlean_\w+)\s*\()");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), declaration);
       it != std::sregex_iterator(); ++it) {
    declared.insert((*it)[1].str());
  }
  const auto full = torchlean_exports(TLRT_LIBRARY_PATH);
  EXPECT_EQ(declared, full) << "exported, not declared:" << missing_from(full, declared)
                            << "\ndeclared, not exported:" << missing_from(declared, full);
}

// The in-repository copy of the tables matches the shared contract when it is present.
TEST(Symbols, SpecCopyMatchesSharedContract) {
  for (const char* table : {"/symbols-runtime.tsv", "/symbols-ops.tsv"}) {
    std::ifstream shared(std::string(TLRT_SHARED_SPEC_DIR) + table);
    if (!shared) GTEST_SKIP() << "no ../shared/abi beside the checkout to compare with";
    std::ifstream local(std::string(TLRT_SPEC_DIR) + table);
    std::stringstream a, b;
    a << shared.rdbuf();
    b << local.rdbuf();
    EXPECT_EQ(a.str(), b.str()) << table << " differs from ../shared/abi" << table;
  }
}

}  // namespace
