// The layer rules of DESIGN.md as a test: data flows abi -> runtime -> kernels, only abi/ knows
// Lean, common/ (the error type) and ops/ (the op lists) sit beside every layer, and the public
// header stands alone. Each rule reads the #include lines of every source file under its folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Include {
  std::string file;  // relative to the source root
  int line;
  std::string target;
};

std::vector<Include> includes_under(const std::string& folder) {
  std::vector<Include> found;
  const fs::path root(TLRT_SOURCE_DIR);
  const fs::path dir = root / folder;
  if (!fs::exists(dir)) return found;
  static const std::regex include_line(R"(^\s*#\s*include\s*[<"]([^">]+)[">])");
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".h" && ext != ".cpp" && ext != ".cu" && ext != ".cuh" && ext != ".c" &&
        ext != ".def" && ext != ".in") {
      continue;
    }
    std::ifstream in(entry.path());
    std::string text;
    int number = 0;
    while (std::getline(in, text)) {
      ++number;
      std::smatch m;
      if (std::regex_search(text, m, include_line)) {
        found.push_back({fs::relative(entry.path(), root).string(), number, m[1].str()});
      }
    }
  }
  return found;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

bool is_lean(const std::string& target) {
  return starts_with(target, "lean/") || target == "lean.h" ||
         target.find("lean_compat") != std::string::npos;
}

std::string where(const Include& inc) {
  return inc.file + ":" + std::to_string(inc.line) + " includes \"" + inc.target + "\"";
}

TEST(Layers, SourcesAreFound) {
  // A wrong root would make every rule below pass vacuously.
  EXPECT_GT(includes_under("kernels").size(), 10u);
  EXPECT_GT(includes_under("runtime").size(), 10u);
  EXPECT_GT(includes_under("abi").size(), 5u);
}

TEST(Layers, KernelsIncludeNeitherRuntimeNorAbi) {
  for (const Include& inc : includes_under("kernels")) {
    EXPECT_FALSE(starts_with(inc.target, "runtime/") || starts_with(inc.target, "abi/") ||
                 inc.target.find("../") != std::string::npos)
        << where(inc) << ": kernels/ may include kernels/, common/ and ops/ only";
  }
}

TEST(Layers, RuntimeDoesNotIncludeAbi) {
  for (const Include& inc : includes_under("runtime")) {
    EXPECT_FALSE(starts_with(inc.target, "abi/") || inc.target.find("../") != std::string::npos)
        << where(inc) << ": runtime/ sits below abi/";
  }
}

TEST(Layers, OnlyAbiKnowsLean) {
  for (const char* folder : {"kernels", "runtime", "common", "ops"}) {
    for (const Include& inc : includes_under(folder)) {
      EXPECT_FALSE(is_lean(inc.target)) << where(inc) << ": only abi/ includes Lean headers";
    }
  }
}

TEST(Layers, CommonAndOpsStandAlone) {
  for (const char* folder : {"common", "ops"}) {
    for (const Include& inc : includes_under(folder)) {
      EXPECT_FALSE(starts_with(inc.target, "runtime/") || starts_with(inc.target, "kernels/") ||
                   starts_with(inc.target, "abi/") || inc.target.find("../") != std::string::npos)
          << where(inc) << ": " << folder << "/ is included by every layer and includes none";
    }
  }
}

TEST(Layers, PublicHeaderIsSelfContained) {
  const auto found = includes_under("include");
  EXPECT_FALSE(found.empty());
  for (const Include& inc : found) {
    const bool system = inc.target.find('/') == std::string::npos && inc.target.find('.') != 0;
    EXPECT_TRUE(inc.target == "lean/lean.h" || starts_with(inc.target, "tlrt/") ||
                (system && inc.target.find("..") == std::string::npos &&
                 !starts_with(inc.target, "runtime") && !starts_with(inc.target, "kernels")))
        << where(inc) << ": the installed header may include lean/lean.h, tlrt/ and the C library";
  }
}

// The rule itself can fail: a planted include is caught by the same predicate.
TEST(Layers, RuleCatchesAPlantedInclude) {
  const Include planted{"kernels/x/x.cu", 1, "runtime/context.h"};
  EXPECT_TRUE(starts_with(planted.target, "runtime/"));
  EXPECT_TRUE(is_lean("lean/lean.h"));
  EXPECT_FALSE(is_lean("common/error.h"));
}

}  // namespace
