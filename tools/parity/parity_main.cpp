// tlrt-parity: runs ops on the subject backend (CUDA when a device is visible, else the reference)
// and compares them with the reference backend, printing one row per (op, dtype, comparison).
// The ops come from the families registered in tools/parity/*_cases.cpp (parity_case.h): the
// runtime constructors and transfers, the elementwise list, the whole-buffer reductions, ... This
// file knows none of them: it parses the options, evaluates every selected case, prints the table
// and writes the reports. Without a GPU the comparison with the reference is the reference against
// itself, so the cases with an oracle also measure the reference against it (a wide-format
// evaluation or the contract's formulas); --oracle adds those rows on a GPU run too.
//
//   tlrt-parity [--n N] [--seed S] [--shapes N] [--only NAME[,NAME...]] [--dtype float32|float64]
//               [--large] [--oracle] [--json FILE] [--markdown FILE] [--list] [--help]
//
// --only takes family names and op names; --list prints the families and their ops (what --only
// and --dtype select) and runs nothing. --large also runs the 2^31 + 17 element modes. The JSON
// report's schema is in docs/TOOLS.md. Exit status 1 when any op breaks its bound
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
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/cli_values.h"
#include "common/report_file.h"
#include "runtime/context.h"
#include "tools/parity/parity_case.h"

namespace {

using namespace tlrt::parity;
using tlrt::Backend;
using tlrt::Dtype;

// Version of the JSON report's layout (docs/TOOLS.md); raised when a field changes meaning or goes.
constexpr int kJsonSchemaVersion = 1;

// The options only the driver reads.
struct Cli {
  std::vector<std::string> only;  // --only: family and op names, as given
  std::string dtype;              // --dtype: "float32", "float64" or empty (both)
  bool list = false;
  bool help = false;
};

// A row's family: its label is the op, with a suffix for special modes ("add [2^31+17]").
std::string family_of_row(const std::map<std::string, std::string>& family_of,
                          const std::string& label) {
  auto it = family_of.find(label);
  if (it == family_of.end()) it = family_of.find(label.substr(0, label.find(' ')));
  return it == family_of.end() ? std::string() : it->second;
}

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

// Whether `path` can be written (opened for appending, so an existing file keeps its contents
// until the run ends); the reason on stderr when not.
bool output_writable(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "a");
  return tlrt::close_report(f, path, "tlrt-parity");
}

bool write_markdown(const std::string& path, const std::string& header, const std::deque<Row>& rows,
                    const std::vector<ScalarLine>& scalars) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return tlrt::close_report(f, path, "tlrt-parity");
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
  return tlrt::close_report(f, path, "tlrt-parity");
}

bool write_json(const std::string& path, const Options& opt, const Cli& cli,
                const std::deque<Row>& rows, const std::vector<ScalarLine>& scalars,
                const std::string& subject, const std::string& oracle,
                const std::map<std::string, std::string>& family_of) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return tlrt::close_report(f, path, "tlrt-parity");
  std::fprintf(f,
               "{\"tool\":\"tlrt-parity\",\"schema_version\":%d,\"tlrt_version\":\"%s\","
               "\"subject\":\"%s\",\"oracle\":\"%s\",\"n\":%" PRIu64 ",\"seed\":%" PRIu64
               ",\"large\":%s,\"dtype\":%s,\"only\":[",
               kJsonSchemaVersion, json_escape(tlrt::version_string()).c_str(), subject.c_str(),
               json_escape(oracle).c_str(), opt.n, opt.seed, opt.large ? "true" : "false",
               cli.dtype.empty() ? "null" : ("\"" + cli.dtype + "\"").c_str());
  for (size_t i = 0; i < cli.only.size(); ++i) {
    std::fprintf(f, "%s\"%s\"", i ? "," : "", json_escape(cli.only[i]).c_str());
  }
  std::fprintf(f, "],\"scalars\":{");
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
                 "%s{\"family\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\",\"against\":\"%s\","
                 "\"elements\":%" PRIu64 ",\"mismatching\":%" PRIu64 ",\"outside_bound\":%" PRIu64
                 ",\"max_ulp\":%s,\"max_rel\":%s,\"bound_ulp\":%s,\"bound\":\"%s\","
                 "\"result\":\"%s\",\"worst\":\"%s\",\"error\":\"%s\"}",
                 i++ ? "," : "", json_escape(family_of_row(family_of, r.label)).c_str(),
                 json_escape(r.label).c_str(), tlrt::dtype_name(r.dtype),
                 json_escape(r.against).c_str(), r.stats.elements, r.stats.mismatching,
                 r.stats.outside, json_number(r.stats.max_ulp).c_str(),
                 json_number(r.stats.max_rel).c_str(), json_bound_ulp(r.bound).c_str(),
                 json_escape(r.bound.text()).c_str(), r.verdict(),
                 json_escape(r.stats.worst).c_str(), json_escape(r.error).c_str());
  }
  bool ok = true;
  for (const Row& r : rows) ok = ok && r.pass();
  std::fprintf(f, "],\"row_count\":%zu,\"pass\":%s}\n", rows.size(), ok ? "true" : "false");
  return tlrt::close_report(f, path, "tlrt-parity");
}

const char kUsage[] =
    "usage: tlrt-parity [--n N] [--seed S] [--shapes N] [--only NAME[,NAME...]]\n"
    "                   [--dtype float32|float64] [--large] [--oracle] [--json FILE]\n"
    "                   [--markdown FILE] [--list] [--help]\n";

int usage() {
  std::fprintf(stderr, "%s(tlrt-parity --help explains each option)\n", kUsage);
  return 2;
}

void print_help() {
  std::printf(
      "%s\n"
      "Runs every selected op on the subject backend (CUDA when a device is visible, else the\n"
      "reference backend) and compares the results with the reference backend element by element,\n"
      "within each op's bound (docs/NUMERICS.md). Ops with an independent oracle (a wide-format\n"
      "evaluation, FFTW in quad precision, the contract's formulas) are also measured against it:\n"
      "always without a GPU, with --oracle on a GPU run.\n\n"
      "  --n N            random elements per case, after the special values (default 2^20)\n"
      "  --seed S         the inputs' seed (default: random, printed for replay)\n"
      "  --shapes N       N more input recipes per family, their shapes drawn from the seed (odd\n"
      "                   extents, powers of two and their neighbours, empty axes), in the same\n"
      "                   rows; the largest operand of each at most min(--n, 2^22) elements\n"
      "  --only LIST      comma-separated family names and op names (see --list)\n"
      "  --dtype DTYPE    float32 or float64: only the cases of that dtype\n"
      "  --large          also the 2^31 + 17 element modes (needs host and device memory)\n"
      "  --oracle         oracle rows on a GPU run too\n"
      "  --json FILE      the results as JSON (schema: docs/TOOLS.md, schema_version %d)\n"
      "  --markdown FILE  the results as a markdown table\n"
      "  --list           print the families and their ops (after --only and --dtype); run "
      "nothing\n"
      "  --help           this text\n\n"
      "Progress goes to stderr. Exit status: 0 all rows within bounds, 1 a row outside its bound\n"
      "or a failed run, 2 a usage error.\n",
      kUsage, kJsonSchemaVersion);
}

// Parses the command line into opt and cli; false on a usage error.
bool parse(int argc, char** argv, Options& opt, Cli& cli) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if ((a == "--n" || a == "--seed" || a == "--shapes") && has_value) {
      uint64_t& value = a == "--n" ? opt.n : a == "--seed" ? opt.seed : opt.shapes;
      if (!tlrt::parse_whole_number(argv[++i], &value)) {
        std::fprintf(stderr,
                     "tlrt-parity: %s %s: a whole number (decimal, or hexadecimal after 0x)\n",
                     a.c_str(), argv[i]);
        return false;
      }
    } else if (a == "--json" && has_value) {
      opt.json_path = argv[++i];
    } else if (a == "--markdown" && has_value) {
      opt.md_path = argv[++i];
    } else if (a == "--large") {
      opt.large = true;
    } else if (a == "--oracle") {
      opt.oracle = true;
    } else if (a == "--only" && has_value) {
      for (const std::string& name : tlrt::split_list(argv[++i])) cli.only.push_back(name);
    } else if (a == "--dtype" && has_value) {
      cli.dtype = argv[++i];
      if (cli.dtype != "float32" && cli.dtype != "float64") {
        std::fprintf(stderr, "tlrt-parity: --dtype %s: float32 or float64\n", cli.dtype.c_str());
        return false;
      }
    } else if (a == "--list") {
      cli.list = true;
    } else if (a == "--help" || a == "-h") {
      cli.help = true;
    } else {
      std::fprintf(stderr, "tlrt-parity: unknown or incomplete option %s\n", a.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  Cli cli;
  opt.seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  if (!parse(argc, argv, opt, cli)) return usage();
  if (cli.help) {
    print_help();
    return 0;
  }

  // Every family's cases (making a case draws no inputs); each op and label knows its family.
  CaseList all;
  std::vector<std::pair<std::string, std::vector<std::string>>> family_ops;
  std::map<std::string, std::string> family_of;
  for (const ParityFamily& family : parity_families()) {
    family_ops.push_back({family.name, {}});
    for (auto& c : family.make_cases(opt)) {
      std::vector<std::string>& ops = family_ops.back().second;
      if (std::find(ops.begin(), ops.end(), c->op()) == ops.end()) ops.push_back(c->op());
      family_of.emplace(c->op(), family.name);
      family_of.emplace(c->label(), family.name);
      all.push_back(std::move(c));
    }
  }
  // --only: a family name stands for its ops; every name must be a family or an op.
  for (const std::string& name : cli.only) {
    const auto family = std::find_if(family_ops.begin(), family_ops.end(),
                                     [&](const auto& f) { return f.first == name; });
    if (family != family_ops.end()) {
      opt.only.insert(family->second.begin(), family->second.end());
    } else if (family_of.count(name) > 0) {
      opt.only.insert(name);
    } else {
      std::fprintf(stderr, "tlrt-parity: --only %s: no such family or op (tlrt-parity --list)\n",
                   name.c_str());
      return usage();
    }
  }
  CaseList cases;
  for (auto& c : all) {
    if (!opt.selected(c->op())) continue;
    if (!cli.dtype.empty() && cli.dtype != tlrt::dtype_name(c->dtype())) continue;
    cases.push_back(std::move(c));
  }
  all.clear();
  if (cli.list) {
    // Per family, the selected ops with their dtypes and case counts, in registration order.
    std::printf("tlrt-parity families and their ops (--only takes either; --dtype filters):\n");
    for (const auto& [family, ops] : family_ops) {
      std::vector<std::string> lines;
      for (const std::string& op : ops) {
        std::set<std::string> dtypes;
        size_t n = 0;
        for (const auto& c : cases) {
          if (c->op() != op) continue;
          dtypes.insert(tlrt::dtype_name(c->dtype()));
          ++n;
        }
        if (n == 0) continue;
        std::string line = op;
        line.resize(std::max<size_t>(line.size() + 1, 24), ' ');
        for (const std::string& d : dtypes) line += d + " ";
        line += "(" + std::to_string(n) + (n == 1 ? " case)" : " cases)");
        lines.push_back(line);
      }
      if (lines.empty()) continue;
      std::printf("  %s (%zu %s)\n", family.c_str(), lines.size(),
                  lines.size() == 1 ? "op" : "ops");
      for (const std::string& line : lines) std::printf("    %s\n", line.c_str());
    }
    std::printf("%zu cases\n", cases.size());
    return 0;
  }
  if (cases.empty()) {
    std::fprintf(stderr, "tlrt-parity: the selection (--only, --dtype) leaves no case\n");
    return 2;
  }
  // An output that cannot be written fails before the run, not after it.
  for (const std::string* path : {&opt.md_path, &opt.json_path}) {
    if (!path->empty() && !output_writable(*path)) return 2;
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
  const std::string shapes_text =
      opt.shapes == 0 ? "" : ", " + std::to_string(opt.shapes) + " random shapes per family";
  const std::string shapes_flag = opt.shapes == 0 ? "" : " --shapes " + std::to_string(opt.shapes);
  char header[768];
  std::snprintf(header, sizeof header,
                "tlrt-parity: %s backend vs reference backend%s%s, n = %" PRIu64
                " (+ special values)%s, seed = %" PRIu64 " (replay with --seed %" PRIu64 "%s)",
                tlrt::backend_name(subject),
                oracles.empty() ? "" : "; ops with an oracle also reference vs ", oracles.c_str(),
                opt.n, shapes_text.c_str(), opt.seed, opt.seed, shapes_flag.c_str());
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
  bool written = true;
  if (!opt.md_path.empty()) {
    written = write_markdown(opt.md_path, header, table.rows(), scalars) && written;
  }
  if (!opt.json_path.empty()) {
    written = write_json(opt.json_path, opt, cli, table.rows(), scalars,
                         tlrt::backend_name(subject), oracles, family_of) &&
              written;
  }
  if (!written) return 1;
  return ok ? 0 : 1;
}
