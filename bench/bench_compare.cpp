// The reports' reader for tlrt-bench --compare: a small JSON reader (objects, arrays, strings,
// numbers, true/false/null), enough for bench.json, and the per-row comparison.
#include "bench_compare.h"

#include "bench_harness.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bench {
namespace {

struct Json {
  enum class Kind { null, boolean, number, string, array, object } kind = Kind::null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;

  const Json* get(const std::string& key) const {
    for (const auto& [k, v] : object) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

class Reader {
 public:
  explicit Reader(const std::string& text) : s_(text) {}
  Json document() {
    Json v = value();
    space();
    if (i_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(what + " at offset " + std::to_string(i_));
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  bool literal(const char* word) {
    const std::string w(word);
    if (s_.compare(i_, w.size(), w) != 0) return false;
    i_ += w.size();
    return true;
  }
  Json value() {
    space();
    if (i_ >= s_.size()) fail("unexpected end");
    Json v;
    const char c = s_[i_];
    if (c == '{') {
      v.kind = Json::Kind::object;
      ++i_;
      space();
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return v;
      }
      for (;;) {
        space();
        if (i_ >= s_.size() || s_[i_] != '"') fail("expected a key");
        std::string key = string();
        space();
        if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':'");
        ++i_;
        v.object.emplace_back(std::move(key), value());
        space();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
        } else if (i_ < s_.size() && s_[i_] == '}') {
          ++i_;
          return v;
        } else {
          fail("expected ',' or '}'");
        }
      }
    }
    if (c == '[') {
      v.kind = Json::Kind::array;
      ++i_;
      space();
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return v;
      }
      for (;;) {
        v.array.push_back(value());
        space();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
        } else if (i_ < s_.size() && s_[i_] == ']') {
          ++i_;
          return v;
        } else {
          fail("expected ',' or ']'");
        }
      }
    }
    if (c == '"') {
      v.kind = Json::Kind::string;
      v.string = string();
      return v;
    }
    if (literal("true")) {
      v.kind = Json::Kind::boolean;
      v.boolean = true;
      return v;
    }
    if (literal("false")) {
      v.kind = Json::Kind::boolean;
      return v;
    }
    if (literal("null")) return v;
    char* end = nullptr;
    v.number = std::strtod(s_.c_str() + i_, &end);
    if (end == s_.c_str() + i_) fail("unexpected character");
    v.kind = Json::Kind::number;
    i_ = static_cast<size_t>(end - s_.c_str());
    return v;
  }
  // A string starting at the opening quote; \uXXXX escapes below 0x80 are decoded, others kept.
  std::string string() {
    ++i_;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\' && i_ < s_.size()) {
        const char e = s_[i_++];
        switch (e) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'r':
            c = '\r';
            break;
          case 'b':
            c = '\b';
            break;
          case 'f':
            c = '\f';
            break;
          case 'u':
            if (i_ + 4 <= s_.size()) {
              const long code = std::strtol(s_.substr(i_, 4).c_str(), nullptr, 16);
              i_ += 4;
              if (code < 0x80) {
                c = static_cast<char>(code);
              } else {
                out += "\\u" + s_.substr(i_ - 4, 4);
                continue;
              }
            }
            break;
          default:
            c = e;
        }
      }
      out += c;
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    return out;
  }

  const std::string& s_;
  size_t i_ = 0;
};

struct RunRows {
  std::string device, date;
  std::vector<std::pair<std::string, double>> rows;  // "group / name", median µs, in file order
};

bool load(const std::string& path, RunRows& run) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "tlrt-bench --compare: cannot read %s\n", path.c_str());
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  Json doc;
  try {
    doc = Reader(text.str()).document();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlrt-bench --compare: %s is not JSON: %s\n", path.c_str(), e.what());
    return false;
  }
  const Json* rows = doc.get("rows");
  if (doc.kind != Json::Kind::object || rows == nullptr || rows->kind != Json::Kind::array) {
    std::fprintf(stderr, "tlrt-bench --compare: %s has no \"rows\" array (not a bench.json)\n",
                 path.c_str());
    return false;
  }
  if (const Json* tool = doc.get("tool"); tool && tool->string != "tlrt-bench") {
    std::fprintf(stderr, "tlrt-bench --compare: %s is a report of %s\n", path.c_str(),
                 tool->string.c_str());
    return false;
  }
  // Reports before schema_version 1 have the same rows; a newer layout may have changed them.
  if (const Json* v = doc.get("schema_version"); v && v->number > kJsonSchemaVersion) {
    std::fprintf(stderr,
                 "tlrt-bench --compare: %s has schema_version %g, newer than this tool's %d; its "
                 "rows are read as version %d rows\n",
                 path.c_str(), v->number, kJsonSchemaVersion, kJsonSchemaVersion);
  }
  if (const Json* d = doc.get("device")) run.device = d->string;
  if (const Json* d = doc.get("date")) run.date = d->string;
  for (const Json& r : rows->array) {
    const Json* group = r.get("group");
    const Json* name = r.get("name");
    const Json* us = r.get("median_us");
    if (!group || !name || !us || us->kind != Json::Kind::number) {
      std::fprintf(stderr, "tlrt-bench --compare: %s: a row without group, name or median_us\n",
                   path.c_str());
      return false;
    }
    run.rows.emplace_back(group->string + " / " + name->string, us->number);
  }
  return true;
}

}  // namespace

int compare_runs(const std::string& a_path, const std::string& b_path, double threshold) {
  RunRows a, b;
  if (!load(a_path, a) || !load(b_path, b)) return 2;
  std::map<std::string, double> a_us;
  for (const auto& [key, us] : a.rows) a_us.emplace(key, us);
  std::printf(
      "tlrt-bench --compare: B / A median time per row; slower than %.3gx is a regression\n",
      threshold);
  std::printf("  A: %s (%s, %s)\n  B: %s (%s, %s)\n\n", a_path.c_str(), a.device.c_str(),
              a.date.c_str(), b_path.c_str(), b.device.c_str(), b.date.c_str());
  std::printf("%-64s %12s %12s %8s\n", "group / name", "A us", "B us", "B/A");
  size_t matched = 0, regressions = 0, only_b = 0;
  std::map<std::string, bool> seen;
  for (const auto& [key, us] : b.rows) {
    seen[key] = true;
    const auto it = a_us.find(key);
    if (it == a_us.end()) {
      ++only_b;
      std::printf("%-64s %12s %12.3f %8s\n", key.c_str(), "-", us, "new");
      continue;
    }
    ++matched;
    // A row timed at zero has no ratio (a failed or skipped measurement).
    const bool measurable = it->second > 0 && us > 0;
    const double ratio = measurable ? us / it->second : NAN;
    const bool regression = measurable && ratio > threshold;
    regressions += regression;
    char ratio_text[32];
    if (measurable)
      std::snprintf(ratio_text, sizeof ratio_text, "%.3f", ratio);
    else
      std::snprintf(ratio_text, sizeof ratio_text, "n/a");
    std::printf("%-64s %12.3f %12.3f %8s%s\n", key.c_str(), it->second, us, ratio_text,
                regression ? "  SLOWER" : "");
  }
  size_t only_a = 0;
  for (const auto& [key, us] : a.rows) {
    if (seen.count(key)) continue;
    ++only_a;
    std::printf("%-64s %12.3f %12s %8s\n", key.c_str(), us, "-", "gone");
  }
  std::printf("\n%zu rows matched, %zu only in A, %zu only in B; %zu slower than %.3gx\n", matched,
              only_a, only_b, regressions, threshold);
  return regressions > 0 ? 1 : 0;
}

}  // namespace bench
