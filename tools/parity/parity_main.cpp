// tlrt-parity: runs ops on the subject backend (CUDA when a device is visible, else the reference)
// and compares them with the reference backend, printing one row per (op, dtype, comparison).
// The ops come from the families registered in tools/parity/*_cases.cpp (parity_case.h): the
// runtime constructors and transfers, the elementwise list, the whole-buffer reductions, ... This
// file knows none of them: it parses the options, evaluates every selected case, prints the table
// and writes the reports. Without a GPU the comparison with the reference is the reference against
// itself, so the cases with an oracle also measure the reference against it (a wide-format
// evaluation or the contract's formulas); --oracle adds those rows on a GPU run too.
//
//   tlrt-parity [--n N] [--seed S] [--only NAME[,NAME...]] [--large] [--oracle]
//               [--json FILE] [--markdown FILE]
//
// --large also runs the 2^31 + 17 element modes. Exit status 1 when any op breaks its bound
// (docs/NUMERICS.md), 2 on a usage error.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/context.h"
#include "tools/parity/parity_case.h"

namespace {

using namespace tlrt::parity;
using tlrt::Backend;
using tlrt::Dtype;

// The host scalar sets each op runs with, in first-use order.
struct ScalarLine {
  std::string op;
  std::vector<std::vector<double>> sets;
};

std::vector<ScalarLine> scalar_lines(const CaseList& cases) {
  std::vector<ScalarLine> lines;
  for (const auto& c : cases) {
    std::vector<double> set = c->host_scalars();
    if (set.empty()) continue;
    auto line = std::find_if(lines.begin(), lines.end(),
                             [&](const ScalarLine& l) { return l.op == c->op(); });
    if (line == lines.end()) line = lines.insert(lines.end(), ScalarLine{c->op(), {}});
    // Equal bits: NaN bounds are sets too.
    const bool listed = std::any_of(line->sets.begin(), line->sets.end(), [&](const auto& s) {
      return s.size() == set.size() &&
             std::equal(s.begin(), s.end(), set.begin(),
                        [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; });
    });
    if (!listed) line->sets.push_back(std::move(set));
  }
  return lines;
}

std::string scalar_text(const std::vector<double>& set) {
  std::string t;
  for (double v : set) t += (t.empty() ? "" : ", ") + number(v, Dtype::f64);
  return "(" + t + ")";
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "\"nan\"" : v > 0 ? "\"inf\"" : "\"-inf\"";
  char s[48];
  std::snprintf(s, sizeof s, "%.17g", v);
  return s;
}

// The bound in ULPs for the JSON report: 0 for bit-exact, null where the bound is relative.
std::string json_bound_ulp(const Bound& b) {
  if (b.kind == Bound::Kind::relative) return "null";
  char s[48];
  std::snprintf(s, sizeof s, "%g", b.limit);
  return s;
}

// A table cell: '|' would end it.
std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void write_markdown(const std::string& path, const std::string& header, const std::deque<Row>& rows,
                    const std::vector<ScalarLine>& scalars) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return;
  std::fprintf(f,
               "%s\n\n| op | dtype | against | elements | mismatching bits | max ULP | "
               "max rel. error | bound | result |\n"
               "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n",
               header.c_str());
  for (const Row& r : rows) {
    std::fprintf(f, "| %s | %s | %s | %" PRIu64 " | %" PRIu64 " | %.3g | %.3g | %s | %s |\n",
                 markdown_cell(r.label).c_str(), tlrt::dtype_name(r.dtype),
                 markdown_cell(r.against).c_str(), r.stats.elements, r.stats.mismatching,
                 r.stats.max_ulp, r.stats.max_rel, markdown_cell(r.bound.text()).c_str(),
                 r.verdict());
  }
  std::fprintf(f, "\nHost scalars (rounded to the dtype by the runtime):\n\n");
  for (const ScalarLine& l : scalars) {
    std::fprintf(f, "- `%s`:", l.op.c_str());
    for (const auto& set : l.sets) std::fprintf(f, " %s", scalar_text(set).c_str());
    std::fprintf(f, "\n");
  }
  std::fclose(f);
}

void write_json(const std::string& path, const Options& opt, const std::deque<Row>& rows,
                const std::vector<ScalarLine>& scalars, const std::string& subject,
                const std::string& oracle) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return;
  std::fprintf(f,
               "{\"subject\":\"%s\",\"oracle\":\"%s\",\"n\":%" PRIu64 ",\"seed\":%" PRIu64
               ",\"scalars\":{",
               subject.c_str(), json_escape(oracle).c_str(), opt.n, opt.seed);
  for (size_t i = 0; i < scalars.size(); ++i) {
    std::fprintf(f, "%s\"%s\":[", i ? "," : "", scalars[i].op.c_str());
    for (size_t j = 0; j < scalars[i].sets.size(); ++j) {
      std::fprintf(f, "%s[", j ? "," : "");
      for (size_t k = 0; k < scalars[i].sets[j].size(); ++k) {
        std::fprintf(f, "%s%s", k ? "," : "", json_number(scalars[i].sets[j][k]).c_str());
      }
      std::fprintf(f, "]");
    }
    std::fprintf(f, "]");
  }
  std::fprintf(f, "},\"results\":[");
  size_t i = 0;
  for (const Row& r : rows) {
    std::fprintf(f,
                 "%s{\"op\":\"%s\",\"dtype\":\"%s\",\"against\":\"%s\",\"elements\":%" PRIu64
                 ",\"mismatching\":%" PRIu64 ",\"outside_bound\":%" PRIu64
                 ",\"max_ulp\":%s,\"max_rel\":%s,\"bound_ulp\":%s,\"bound\":\"%s\","
                 "\"result\":\"%s\",\"worst\":\"%s\",\"error\":\"%s\"}",
                 i++ ? "," : "", json_escape(r.label).c_str(), tlrt::dtype_name(r.dtype),
                 json_escape(r.against).c_str(), r.stats.elements, r.stats.mismatching,
                 r.stats.outside, json_number(r.stats.max_ulp).c_str(),
                 json_number(r.stats.max_rel).c_str(), json_bound_ulp(r.bound).c_str(),
                 json_escape(r.bound.text()).c_str(), r.verdict(),
                 json_escape(r.stats.worst).c_str(), json_escape(r.error).c_str());
  }
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

int usage() {
  std::fprintf(stderr,
               "usage: tlrt-parity [--n N] [--seed S] [--only NAME[,NAME...]] [--large] "
               "[--oracle] [--json FILE] [--markdown FILE]\n");
  return 2;
}

// Parses the command line into opt; false on a usage error.
bool parse(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--n" && has_value) {
      opt.n = std::strtoull(argv[++i], nullptr, 0);
    } else if (a == "--seed" && has_value) {
      opt.seed = std::strtoull(argv[++i], nullptr, 0);
    } else if (a == "--json" && has_value) {
      opt.json_path = argv[++i];
    } else if (a == "--markdown" && has_value) {
      opt.md_path = argv[++i];
    } else if (a == "--large") {
      opt.large = true;
    } else if (a == "--oracle") {
      opt.oracle = true;
    } else if (a == "--only" && has_value) {
      std::stringstream list(argv[++i]);
      for (std::string name; std::getline(list, name, ',');) {
        if (!name.empty()) opt.only.insert(name);
      }
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  opt.seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  if (!parse(argc, argv, opt)) return usage();

  // Every family's cases; --only keeps the named ops and must name only known ones.
  CaseList all;
  for (const ParityFamily& family : parity_families()) {
    for (auto& c : family.make_cases(opt)) all.push_back(std::move(c));
  }
  for (const std::string& name : opt.only) {
    const bool known =
        std::any_of(all.begin(), all.end(), [&](const auto& c) { return c->op() == name; });
    if (!known) {
      std::fprintf(stderr, "tlrt-parity: --only %s: no such op\n", name.c_str());
      return usage();
    }
  }
  CaseList cases;
  for (auto& c : all) {
    if (opt.selected(c->op())) cases.push_back(std::move(c));
  }

  const bool gpu = tlrt::built_with_cuda() && tlrt::default_backend() == Backend::cuda &&
                   tlrt::cuda_device_count() > 0;
  const Backend subject = gpu ? Backend::cuda : Backend::reference;
  try {
    // A CUDA build without a visible device has nothing to initialise: the reference backend
    // needs no device.
    if (gpu || tlrt::default_backend() == Backend::reference) tlrt::ensure_initialized();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlrt-parity: %s\n", e.what());
    return 1;
  }
  const bool with_oracle = !gpu || opt.oracle;
  std::string oracles;
  if (with_oracle) {
    for (const auto& c : cases) {
      const std::string name = c->oracle_name();
      if (!name.empty() && oracles.find(name) == std::string::npos) {
        oracles += (oracles.empty() ? "" : ", ") + name;
      }
    }
  }
  char header[768];
  std::snprintf(header, sizeof header,
                "tlrt-parity: %s backend vs reference backend%s%s, n = %" PRIu64
                " (+ special values), seed = %" PRIu64 " (replay with --seed %" PRIu64 ")",
                tlrt::backend_name(subject),
                oracles.empty() ? "" : "; ops with an oracle also reference vs ", oracles.c_str(),
                opt.n, opt.seed, opt.seed);
  std::printf("%s\n", header);
  if (!gpu) {
    std::printf(
        "no GPU visible: rows against the reference compare the reference with itself; the "
        "oracle rows measure it\n");
  }
  const std::vector<ScalarLine> scalars = scalar_lines(cases);
  if (!scalars.empty()) std::printf("host scalars (rounded to the dtype by the runtime):\n");
  for (const ScalarLine& l : scalars) {
    std::printf("  %-16s", l.op.c_str());
    for (const auto& set : l.sets) std::printf(" %s", scalar_text(set).c_str());
    std::printf("\n");
  }
  std::fflush(stdout);

  uint64_t total_steps = 0;
  for (const auto& c : cases) total_steps += c->steps();
  ProgressBar progress(total_steps);
  RowTable table;
  const RunContext ctx{opt, subject, gpu, with_oracle, progress};
  for (auto& c : cases) {
    const uint64_t end = progress.done() + c->steps();
    c->evaluate(ctx, table);
    c.reset();  // its inputs go now
    progress.show(end);
  }

  bool ok = true;
  std::printf("\n%-22s %-8s %-18s %11s %11s %9s %12s %13s  %s\n", "op", "dtype", "against",
              "elements", "mismatching", "max ULP", "max rel err", "bound", "result");
  for (const Row& r : table.rows()) {
    ok = ok && r.pass();
    std::printf("%-22s %-8s %-18s %11" PRIu64 " %11" PRIu64 " %9.3g %12.3g %13s  %s\n",
                r.label.c_str(), tlrt::dtype_name(r.dtype), r.against.c_str(), r.stats.elements,
                r.stats.mismatching, r.stats.max_ulp, r.stats.max_rel, r.bound.text().c_str(),
                r.verdict());
  }
  for (const Row& r : table.rows()) {
    if (!r.error.empty()) {
      std::printf("%s %s: %s%s\n", r.label.c_str(), tlrt::dtype_name(r.dtype),
                  r.skipped ? "skipped: " : "error: ", r.error.c_str());
    } else if (!r.pass()) {
      std::printf("%s %s worst: %s\n", r.label.c_str(), tlrt::dtype_name(r.dtype),
                  r.stats.worst.c_str());
    }
  }
  std::printf("\n%zu rows, %s\n", table.rows().size(), ok ? "all within bounds" : "FAILURES");
  if (!opt.md_path.empty()) write_markdown(opt.md_path, header, table.rows(), scalars);
  if (!opt.json_path.empty()) {
    write_json(opt.json_path, opt, table.rows(), scalars, tlrt::backend_name(subject), oracles);
  }
  return ok ? 0 : 1;
}
