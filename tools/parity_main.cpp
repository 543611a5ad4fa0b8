// tlrt-parity: runs ops on the subject backend (CUDA when a device is visible, else the reference)
// and compares them with the reference backend, printing one row per (op, dtype):
//   * every op of the elementwise list (ops/elementwise_ops.def) over random inputs
//     suited to the op, a leading block of special values, and the sizes 0, 1, 3, 5 and 1023;
//   * the random constructors and transfers (against the binary64 formulas when no GPU is there).
// Without a GPU the elementwise comparison is reference against reference, so the toleranced ops
// are also compared against an independent wide-format evaluation (parity_cases.h).
//
//   tlrt-parity [--n N] [--seed S] [--only NAME[,NAME...]] [--large] [--oracle]
//               [--json FILE] [--markdown FILE]
//
// --large also runs add and exp at 2^31 + 17 float32 elements. Exit status 1 when any op breaks
// its bound (docs/NUMERICS.md), 2 on a usage error.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/elementwise/elementwise.h"
#include "kernels/random/splitmix.h"
#include "runtime/construct.h"
#include "runtime/context.h"
#include "runtime/elementwise_dispatch.h"
#include "runtime/transfer.h"
#include "tools/parity_cases.h"

namespace {

using tlrt::Backend;
using tlrt::Buffer;
using tlrt::Dtype;
using tlrt::kernels::ElementwiseInfo;
using tlrt::kernels::ElementwiseOp;
using namespace tlrt::parity;

struct Options {
  uint64_t n = 1 << 20;
  uint64_t seed = 0;
  std::set<std::string> only;
  bool large = false;
  bool oracle = false;  // compare against the oracle even when a GPU is the subject
  std::string json_path, md_path;
  bool selected(const std::string& op) const { return only.empty() || only.count(op) > 0; }
};

struct Stats {
  uint64_t elements = 0;
  uint64_t mismatching = 0;  // elements whose bits differ (NaN against NaN counts as equal)
  double max_ulp = 0;
  double max_rel = 0;
  std::string worst;  // the element at max_ulp (or the first mismatch): inputs, result, expected

  void merge(const Stats& o) {
    elements += o.elements;
    mismatching += o.mismatching;
    if (o.max_ulp > max_ulp || (worst.empty() && !o.worst.empty())) worst = o.worst;
    max_ulp = std::fmax(max_ulp, o.max_ulp);
    max_rel = std::fmax(max_rel, o.max_rel);
  }
};

struct Row {
  Row(std::string op_, Dtype dtype_, std::string against_, double bound)
      : op(std::move(op_)), dtype(dtype_), against(std::move(against_)), bound_ulp(bound) {}
  std::string op;
  Dtype dtype = Dtype::f32;
  std::string against;   // what the results were compared with
  double bound_ulp = 0;  // 0: bit-exact
  Stats stats;
  std::string error;  // the run itself failed
  bool skipped = false;
  bool pass() const {
    if (skipped) return true;
    if (!error.empty()) return false;
    return bound_ulp == 0 ? stats.mismatching == 0 : stats.max_ulp <= bound_ulp;
  }
  const char* verdict() const { return skipped ? "skipped" : pass() ? "ok" : "FAIL"; }
};

// Progress on stderr: a bar redrawn at most ten times a second on a terminal, a line per tenth
// of the work otherwise (logs of remote runs).
class Progress {
 public:
  explicit Progress(uint64_t total) : total_(total ? total : 1), tty_(isatty(2) != 0) {}
  void step(uint64_t k = 1) { show(done_ += k); }
  void show(uint64_t done) {
    done = std::min(done, total_);
    if (finished_) return;
    finished_ = done == total_;
    const auto now = std::chrono::steady_clock::now();
    if (tty_) {
      if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
    } else {
      const uint64_t tenth = 10 * done / total_;
      if (tenth == last_tenth_) return;
      last_tenth_ = tenth;
    }
    last_ = now;
    const int width = 30;
    const int filled = static_cast<int>(width * done / total_);
    std::fprintf(stderr, "%s[%.*s%*s] %" PRIu64 "/%" PRIu64 "%s", tty_ ? "\r" : "", filled,
                 "==============================", width - filled, "", done, total_,
                 tty_ && done < total_ ? "" : "\n");
  }

 private:
  uint64_t total_;
  uint64_t done_ = 0;
  bool tty_;
  bool finished_ = false;
  uint64_t last_tenth_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

template <class T>
constexpr Dtype dtype_of() {
  return sizeof(T) == 4 ? Dtype::f32 : Dtype::f64;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (std::isnan(a) && std::isnan(b));
}

std::string number(double v, Dtype dt) {
  char s[48];
  std::snprintf(s, sizeof s, dt == Dtype::f32 ? "%.9g" : "%.17g", v);
  return s;
}

// One compared element. Where the reference gives a magnitude other than |result| (a cancelling
// sum), ULPs are counted at that magnitude; otherwise on the dtype's ordered integer line.
template <class T>
void accumulate(Stats& s, ElementwiseOp op, const T* x, int inputs, const T* scalars,
                int scalar_count, int output, T got, T want) {
  ++s.elements;
  const bool same = same_bits(got, want);
  if (same) return;
  ++s.mismatching;
  const double scale = tlrt::kernels::elementwise_error_scale<T>(op, x, scalars, want);
  const double diff = std::fabs(static_cast<double>(got) - static_cast<double>(want));
  const bool finite = std::isfinite(got) && std::isfinite(want) && std::isfinite(scale);
  const bool at_scale = finite && scale > std::fabs(static_cast<double>(want));
  const double ulps = at_scale ? diff / ulp_at<T>(scale) : ulp_distance<T>(got, want);
  if (finite && scale > 0) s.max_rel = std::fmax(s.max_rel, diff / scale);
  if (ulps > s.max_ulp || (!same && s.worst.empty())) {
    const Dtype dt = dtype_of<T>();
    std::string w = "x = (";
    for (int k = 0; k < inputs; ++k) w += (k ? ", " : "") + number(x[k], dt);
    if (scalar_count > 0) {
      w += "), scalars = (";
      for (int k = 0; k < scalar_count; ++k) w += (k ? ", " : "") + number(scalars[k], dt);
    }
    w += "): output " + std::to_string(output) + " = " + number(got, dt) + ", expected " +
         number(want, dt);
    s.worst = w;
  }
  s.max_ulp = std::fmax(s.max_ulp, ulps);
}

// ---------------------------------------------------------------------------------------------
// Elementwise ops

template <class T>
std::vector<std::vector<T>> execute(Backend backend, ElementwiseOp op,
                                    const std::vector<std::vector<T>>& in, uint64_t offset,
                                    uint64_t n, const double* scalars) {
  constexpr Dtype dt = dtype_of<T>();
  std::vector<std::unique_ptr<Buffer>> owned;
  const Buffer* operands[tlrt::kernels::kMaxElementwiseInputs] = {};
  for (size_t k = 0; k < in.size(); ++k) {
    owned.push_back(tlrt::upload_words(
        backend, dt, reinterpret_cast<const uint8_t*>(in[k].data() + offset), n, dt, "parity"));
    operands[k] = owned.back().get();
  }
  const std::vector<std::unique_ptr<Buffer>> outs = tlrt::run_elementwise(op, operands, scalars);
  std::vector<std::vector<T>> result;
  for (const auto& o : outs) {
    result.emplace_back(n);
    if (n > 0)
      tlrt::download_words(*o, reinterpret_cast<uint8_t*>(result.back().data()), dt, "parity");
  }
  return result;
}

constexpr uint64_t kSmallSizes[] = {0, 1, 3, 5, 1023};

uint64_t steps_of(ElementwiseOp op) {
  return scalar_sets(op).size() * (1 + std::size(kSmallSizes));
}

template <class T>
void run_elementwise_case(ElementwiseOp op, const Options& opt, Backend subject, bool with_oracle,
                          std::vector<Row>& rows, Progress& progress) {
  const ElementwiseInfo& info = tlrt::kernels::elementwise_info(op);
  constexpr Dtype dt = dtype_of<T>();
  const bool f32 = dt == Dtype::f32;
  const std::vector<std::vector<double>> sets = scalar_sets(op);
  const uint64_t block = special_block(op, f32);
  const uint64_t total = block + opt.n;

  Row vs_ref(info.name, dt, "reference", f32 ? info.ulp_f32 : info.ulp_f64);
  Row vs_oracle(info.name, dt, std::string("ref vs ") + oracle_format(), vs_ref.bound_ulp);
  std::vector<std::vector<T>> in(info.inputs, std::vector<T>(total));
  std::vector<T*> ptrs;
  for (auto& v : in) ptrs.push_back(v.data());
  fill_inputs<T>(op, case_key(opt.seed, info.name, f32), sets[0].data(), ptrs.data(), 0, total);

  // The full input, then short runs from the middle of the special block into the random values
  // (one element, odd sizes and a tail that no vector width divides).
  std::vector<std::pair<uint64_t, uint64_t>> slices = {{0, total}};
  for (uint64_t size : kSmallSizes) {
    if (size <= total) slices.emplace_back(std::min(block / 2, total - size), size);
  }
  for (const std::vector<double>& set : sets) {
    T scalars[tlrt::kernels::kMaxElementwiseScalars] = {};
    for (int k = 0; k < info.scalars; ++k) scalars[k] = static_cast<T>(set[k]);
    for (size_t si = 0; si < slices.size(); ++si) {
      const auto [offset, n] = slices[si];
      try {
        const auto got = execute<T>(subject, op, in, offset, n, set.data());
        const auto want = execute<T>(Backend::reference, op, in, offset, n, set.data());
        T x[tlrt::kernels::kMaxElementwiseInputs];
        T y[tlrt::kernels::kMaxElementwiseOutputs];
        for (uint64_t i = 0; i < n; ++i) {
          for (int k = 0; k < info.inputs; ++k) x[k] = in[k][offset + i];
          for (int o = 0; o < info.outputs; ++o) {
            accumulate<T>(vs_ref.stats, op, x, info.inputs, scalars, info.scalars, o, got[o][i],
                          want[o][i]);
          }
          if (with_oracle && si == 0) {
            oracle<T>(op, x, scalars, y);
            accumulate<T>(vs_oracle.stats, op, x, info.inputs, scalars, info.scalars, 0, want[0][i],
                          y[0]);
          }
        }
      } catch (const std::exception& e) {
        if (vs_ref.error.empty()) vs_ref.error = e.what();
      }
      progress.step();
    }
  }
  rows.push_back(vs_ref);
  if (with_oracle) rows.push_back(vs_oracle);
}

// ---------------------------------------------------------------------------------------------
// Past 2^31 elements: one binary and one unary op in float32. Host inputs stay float; the
// reference runs chunk by chunk on all cores (its launcher called directly) and is compared as it
// goes, so host memory holds only the inputs and the subject's result.

void parallel_chunks(uint64_t n, uint64_t chunk,
                     const std::function<void(uint64_t, uint64_t, int)>& body, Progress* progress) {
  const int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const uint64_t chunks = (n + chunk - 1) / chunk;
  std::atomic<uint64_t> next{0}, finished{0};
  auto work = [&](int w) {
    for (uint64_t c; (c = next++) < chunks;) {
      body(c * chunk, std::min(n, (c + 1) * chunk), w);
      ++finished;
      if (w == 0 && progress != nullptr) progress->show(finished.load());
    }
  };
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (std::thread& t : threads) t.join();
  if (progress != nullptr) progress->show(chunks);
}

Row run_large_case(ElementwiseOp op, const Options& opt, Backend subject) {
  constexpr uint64_t kN = (uint64_t{1} << 31) + 17;
  constexpr uint64_t kChunk = uint64_t{1} << 18;  // the reference launcher's one-thread size
  const ElementwiseInfo& info = tlrt::kernels::elementwise_info(op);
  Row row(std::string(info.name) + " [2^31+17]", Dtype::f32, "reference", info.ulp_f32);
  const int inputs = info.inputs;
  const uint64_t bytes = kN * sizeof(float);
  const uint64_t host_need = bytes * (inputs + 1) * (subject == Backend::reference ? 2 : 1);
  size_t host_free = 0, host_total = 0, dev_free = 0, dev_total = 0;
  tlrt::memory_info(Backend::reference, &host_free, &host_total);
  if (subject == Backend::cuda) tlrt::memory_info(Backend::cuda, &dev_free, &dev_total);
  if (host_need > host_free || (subject == Backend::cuda && bytes * (inputs + 1) > dev_free)) {
    row.skipped = true;
    row.error = "needs " + std::to_string(host_need >> 30) + " GiB host memory (" +
                std::to_string(host_free >> 30) + " GiB free)" +
                (subject == Backend::cuda
                     ? " and " + std::to_string((bytes * (inputs + 1)) >> 30) +
                           " GiB device memory (" + std::to_string(dev_free >> 30) + " GiB free)"
                     : "");
    return row;
  }
  std::fprintf(stderr, "%s: %" PRIu64 " float32 elements\n", row.op.c_str(), kN);
  std::vector<std::unique_ptr<float[]>> host;
  std::vector<float*> in;
  for (int k = 0; k < inputs; ++k) {
    host.emplace_back(new float[kN]);
    in.push_back(host.back().get());
  }
  const uint64_t key = case_key(opt.seed, row.op.c_str(), true);
  parallel_chunks(
      kN, kChunk,
      [&](uint64_t b, uint64_t e, int) { fill_inputs<float>(op, key, nullptr, in.data(), b, e); },
      nullptr);

  std::unique_ptr<float[]> got(new float[kN]);
  {
    std::vector<std::unique_ptr<Buffer>> owned;
    const Buffer* operands[tlrt::kernels::kMaxElementwiseInputs] = {};
    for (int k = 0; k < inputs; ++k) {
      owned.push_back(tlrt::upload_words(
          subject, Dtype::f32, reinterpret_cast<const uint8_t*>(in[k]), kN, Dtype::f32, "parity"));
      operands[k] = owned.back().get();
    }
    auto outs = tlrt::run_elementwise(op, operands, nullptr);
    owned.clear();  // device memory for the download's staging
    tlrt::download_words(*outs[0], reinterpret_cast<uint8_t*>(got.get()), Dtype::f32, "parity");
  }

  const int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<Stats> partial(workers);
  std::vector<std::vector<float>> want(workers, std::vector<float>(kChunk));
  Progress progress((kN + kChunk - 1) / kChunk);
  parallel_chunks(
      kN, kChunk,
      [&](uint64_t b, uint64_t e, int w) {
        const float* at[tlrt::kernels::kMaxElementwiseInputs];
        for (int k = 0; k < inputs; ++k) at[k] = in[k] + b;
        float* out = want[w].data();
        tlrt::kernels::elementwise_ref<float>(op, at, &out, nullptr, e - b);
        float x[tlrt::kernels::kMaxElementwiseInputs];
        for (uint64_t i = b; i < e; ++i) {
          for (int k = 0; k < inputs; ++k) x[k] = in[k][i];
          accumulate<float>(partial[w], op, x, inputs, nullptr, 0, 0, got[i], out[i - b]);
        }
      },
      &progress);
  for (const Stats& s : partial) row.stats.merge(s);
  return row;
}

// ---------------------------------------------------------------------------------------------
// Random constructors and transfers

// ULPs of dtype dt between two values already representable in it.
double ulps_between(double a, double b, Dtype dt) {
  return dt == Dtype::f32 ? ulp_distance<float>(static_cast<float>(a), static_cast<float>(b))
                          : ulp_distance<double>(a, b);
}

// scale: when given, errors are measured in ULPs at that magnitude (for results that are sums
// whose terms are larger than the result, where ULPs of the result overstate a rounding error).
void compare_values(Stats& s, Dtype dt, const std::vector<double>& got,
                    const std::vector<double>& want, const std::function<double(uint64_t)>& scale) {
  for (size_t i = 0; i < got.size(); ++i) {
    ++s.elements;
    if (!same_bits(got[i], want[i])) ++s.mismatching;
    const double magnitude = scale ? scale(i) : std::fabs(want[i]);
    const bool finite = std::isfinite(got[i]) && std::isfinite(want[i]);
    const double diff = std::fabs(got[i] - want[i]);
    const double ulps = scale && finite ? diff / (dt == Dtype::f32 ? ulp_at<float>(magnitude)
                                                                   : ulp_at<double>(magnitude))
                                        : ulps_between(got[i], want[i], dt);
    if (ulps > s.max_ulp) {
      s.worst = "element " + std::to_string(i) + ": " + number(got[i], dt) + ", expected " +
                number(want[i], dt);
    }
    s.max_ulp = std::fmax(s.max_ulp, ulps);
    if (magnitude != 0 && finite) s.max_rel = std::fmax(s.max_rel, diff / magnitude);
  }
}

std::vector<double> download(const Buffer& b) {
  std::vector<double> v(b.size());
  tlrt::download_f64(b, v.data(), "parity");
  return v;
}

double round_to(double v, Dtype dt) {
  return dt == Dtype::f32 ? static_cast<float>(v) : v;
}

using Formula = std::function<double(uint64_t i)>;
using Make = std::function<std::unique_ptr<Buffer>(Backend, Dtype)>;

struct ConstructorCase {
  std::string op;
  double bound_f32, bound_f64;
  Make make;
  std::function<Formula(Dtype)> formula;  // the binary64 oracle when no second backend is there
  std::function<double(uint64_t)> scale;  // empty: ULPs of the result itself
};

std::vector<ConstructorCase> constructor_cases(uint64_t n, uint64_t key,
                                               const std::vector<double>& host) {
  const double mean = 0.25, deviation = 2.0, p = 0.375, fill = 0.1;
  using tlrt::random::draw;
  return {
      {"rand_uniform",
       0,
       0,
       [=](Backend b, Dtype d) { return tlrt::make_rand_uniform(b, d, n, key, "parity"); },
       [=](Dtype d) -> Formula {
         return [=](uint64_t i) { return round_to(draw(key, i) * 0x1p-32, d); };
       },
       {}},
      {"bernoulli_mask",
       0,
       0,
       [=](Backend b, Dtype d) { return tlrt::make_bernoulli_mask(b, d, n, p, key, "parity"); },
       [=](Dtype d) -> Formula {
         return [=](uint64_t i) {
           return round_to(draw(key, i) * 0x1p-32, d) < round_to(p, d) ? 1.0 : 0.0;
         };
       },
       {}},
      // Normal: the formula takes the contract's staged roundings of the draws (a, s, u1, u2,
      // theta) exactly and evaluates log, sqrt and cos in binary64, so the distance measures the
      // libm error of the staged formula (docs/NUMERICS.md).
      {"rand_normal", 16, 16,
       [=](Backend b, Dtype d) {
         return tlrt::make_rand_normal(b, d, n, mean, deviation, key, "parity");
       },
       [=](Dtype d) -> Formula {
         return [=](uint64_t i) {
           const double r1 = draw(key, 2 * i), r2 = draw(key, 2 * i + 1);
           const double k = d == Dtype::f32 ? 0x1p-32 : round_to(1.0 / 4294967297.0, d);
           const double s = round_to(round_to(r1, d) + 1.0, d);
           const double u1 = round_to(s * k, d), u2 = round_to(r2 * 0x1p-32, d);
           const double theta = round_to(u2 * round_to(6.2831853071795864769, d), d);
           const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(theta);
           return round_to(std::fma(round_to(deviation, d), z, round_to(mean, d)), d);
         };
       },
       // mean + deviation * z cancels near zero: measure at the magnitude of the terms.
       [=](uint64_t i) {
         const double r1 = draw(key, 2 * i), r2 = draw(key, 2 * i + 1);
         const double z = std::sqrt(-2.0 * std::log((r1 + 1.0) / 4294967297.0)) *
                          std::cos(6.283185307179586 * r2 * 0x1p-32);
         return std::fabs(mean) + std::fabs(deviation * z);
       }},
      {"full",
       0,
       0,
       [=](Backend b, Dtype d) { return tlrt::make_full(b, d, n, fill, "parity"); },
       [=](Dtype d) -> Formula { return [=](uint64_t) { return round_to(fill, d); }; },
       {}},
      {"of_float_array",
       0,
       0,
       [&host, n](Backend b, Dtype d) { return tlrt::upload_f64(b, d, host.data(), n, "parity"); },
       [&host](Dtype d) -> Formula {
         return [&host, d](uint64_t i) { return round_to(host[i], d); };
       },
       {}},
  };
}

void run_constructor_cases(const Options& opt, bool gpu, Backend subject, std::vector<Row>& rows,
                           Progress& progress, const std::vector<ConstructorCase>& cases) {
  for (const ConstructorCase& c : cases) {
    if (!opt.selected(c.op)) continue;
    for (Dtype d : {Dtype::f32, Dtype::f64}) {
      Row r(c.op, d, gpu ? "reference" : "binary64 formula",
            d == Dtype::f32 ? c.bound_f32 : c.bound_f64);
      try {
        const std::vector<double> got = download(*c.make(subject, d));
        std::vector<double> want;
        if (gpu) {
          want = download(*c.make(Backend::reference, d));
        } else {
          const Formula f = c.formula(d);
          for (uint64_t i = 0; i < got.size(); ++i) want.push_back(f(i));
        }
        compare_values(r.stats, d, got, want, c.scale);
      } catch (const std::exception& e) {
        r.error = e.what();
      }
      rows.push_back(r);
      progress.step();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Output

std::string bound_text(const Row& r) {
  if (r.bound_ulp == 0) return "bit-exact";
  std::ostringstream s;
  s << "<= " << r.bound_ulp << " ULP";
  return s.str();
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

struct ScalarLine {
  std::string op;
  std::vector<std::vector<double>> sets;
};

void write_reports(const Options& opt, const std::string& header, const std::vector<Row>& rows,
                   const std::vector<ScalarLine>& scalars, const std::string& subject,
                   const std::string& oracle) {
  if (!opt.md_path.empty()) {
    if (FILE* f = std::fopen(opt.md_path.c_str(), "w")) {
      std::fprintf(f,
                   "%s\n\n| op | dtype | against | elements | mismatching bits | max ULP | "
                   "max rel. error | bound | result |\n"
                   "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n",
                   header.c_str());
      for (const Row& r : rows) {
        std::fprintf(f, "| %s | %s | %s | %" PRIu64 " | %" PRIu64 " | %.3g | %.3g | %s | %s |\n",
                     r.op.c_str(), tlrt::dtype_name(r.dtype), r.against.c_str(), r.stats.elements,
                     r.stats.mismatching, r.stats.max_ulp, r.stats.max_rel, bound_text(r).c_str(),
                     r.verdict());
      }
      std::fprintf(f, "\nHost scalars (rounded to the dtype by the runtime):\n\n");
      for (const ScalarLine& l : scalars) {
        std::fprintf(f, "- `%s`:", l.op.c_str());
        for (const auto& set : l.sets) {
          std::string t;
          for (double v : set) t += (t.empty() ? "" : ", ") + number(v, Dtype::f64);
          std::fprintf(f, " (%s)", t.c_str());
        }
        std::fprintf(f, "\n");
      }
      std::fclose(f);
    }
  }
  if (!opt.json_path.empty()) {
    if (FILE* f = std::fopen(opt.json_path.c_str(), "w")) {
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
      for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        std::fprintf(f,
                     "%s{\"op\":\"%s\",\"dtype\":\"%s\",\"against\":\"%s\",\"elements\":%" PRIu64
                     ",\"mismatching\":%" PRIu64
                     ",\"max_ulp\":%s,\"max_rel\":%s,"
                     "\"bound_ulp\":%g,\"result\":\"%s\",\"worst\":\"%s\",\"error\":\"%s\"}",
                     i ? "," : "", r.op.c_str(), tlrt::dtype_name(r.dtype),
                     json_escape(r.against).c_str(), r.stats.elements, r.stats.mismatching,
                     json_number(r.stats.max_ulp).c_str(), json_number(r.stats.max_rel).c_str(),
                     r.bound_ulp, r.verdict(), json_escape(r.stats.worst).c_str(),
                     json_escape(r.error).c_str());
      }
      std::fprintf(f, "]}\n");
      std::fclose(f);
    }
  }
}

int usage() {
  std::fprintf(stderr,
               "usage: tlrt-parity [--n N] [--seed S] [--only NAME[,NAME...]] [--large] "
               "[--oracle] [--json FILE] [--markdown FILE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  opt.seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--n" && has_value)
      opt.n = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--seed" && has_value)
      opt.seed = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--json" && has_value)
      opt.json_path = argv[++i];
    else if (a == "--markdown" && has_value)
      opt.md_path = argv[++i];
    else if (a == "--large")
      opt.large = true;
    else if (a == "--oracle")
      opt.oracle = true;
    else if (a == "--only" && has_value) {
      std::stringstream list(argv[++i]);
      for (std::string name; std::getline(list, name, ',');) {
        if (!name.empty()) opt.only.insert(name);
      }
    } else {
      return usage();
    }
  }

  int op_count = 0;
  const ElementwiseOp* ops = tlrt::kernels::elementwise_ops(&op_count);
  std::vector<double> host(opt.n);
  std::mt19937_64 rng(opt.seed);
  const uint64_t key = rng();
  std::uniform_real_distribution<double> dist(-1e3, 1e3);
  for (double& v : host) v = dist(rng);
  const double special[] = {0.0,
                            -0.0,
                            INFINITY,
                            -INFINITY,
                            NAN,
                            4.9e-324,
                            1.17549435e-38,
                            1.4e-45,
                            3.4028234663852886e38,
                            1.7976931348623157e308};
  for (size_t i = 0; i < std::size(special) && i < opt.n; ++i) host[i] = special[i];
  const std::vector<ConstructorCase> constructors = constructor_cases(opt.n, key, host);

  for (const std::string& name : opt.only) {
    bool known = std::any_of(constructors.begin(), constructors.end(),
                             [&](const ConstructorCase& c) { return c.op == name; });
    for (int k = 0; k < op_count; ++k)
      known = known || name == tlrt::kernels::elementwise_info(ops[k]).name;
    if (!known) {
      std::fprintf(stderr, "tlrt-parity: --only %s: no such op\n", name.c_str());
      return usage();
    }
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
  char header[512];
  std::snprintf(header, sizeof header,
                "tlrt-parity: %s backend vs reference backend%s%s, n = %" PRIu64
                " (+ special values), seed = %" PRIu64 " (replay with --seed %" PRIu64 ")",
                tlrt::backend_name(subject),
                with_oracle ? "; toleranced ops also reference vs " : "",
                with_oracle ? oracle_name() : "", opt.n, opt.seed, opt.seed);
  std::printf("%s\n", header);
  if (!gpu) {
    std::printf(
        "no GPU visible: elementwise rows against the reference compare the reference with "
        "itself; constructors use the binary64 formulas\n");
  }

  std::vector<ScalarLine> scalar_lines;
  uint64_t total_steps = 0;
  std::vector<ElementwiseOp> chosen;
  for (int k = 0; k < op_count; ++k) {
    const ElementwiseInfo& info = tlrt::kernels::elementwise_info(ops[k]);
    if (!opt.selected(info.name)) continue;
    chosen.push_back(ops[k]);
    total_steps += 2 * steps_of(ops[k]);
    if (info.scalars > 0) scalar_lines.push_back({info.name, scalar_sets(ops[k])});
  }
  for (const ConstructorCase& c : constructors) total_steps += opt.selected(c.op) ? 2 : 0;
  if (!scalar_lines.empty()) std::printf("host scalars (rounded to the dtype by the runtime):\n");
  for (const ScalarLine& l : scalar_lines) {
    std::printf("  %-16s", l.op.c_str());
    for (const auto& set : l.sets) {
      std::string t;
      for (double v : set) t += (t.empty() ? "" : ", ") + number(v, Dtype::f64);
      std::printf(" (%s)", t.c_str());
    }
    std::printf("\n");
  }
  std::fflush(stdout);

  std::vector<Row> rows;
  Progress progress(total_steps);
  for (ElementwiseOp op : chosen) {
    const bool oracle_here = with_oracle && has_oracle(op);
    run_elementwise_case<float>(op, opt, subject, oracle_here, rows, progress);
    run_elementwise_case<double>(op, opt, subject, oracle_here, rows, progress);
  }
  run_constructor_cases(opt, gpu, subject, rows, progress, constructors);
  if (opt.large) {
    for (ElementwiseOp op : {ElementwiseOp::add, ElementwiseOp::exp}) {
      if (!opt.selected(tlrt::kernels::elementwise_info(op).name)) continue;
      try {
        rows.push_back(run_large_case(op, opt, subject));
      } catch (const std::exception& e) {
        Row r(std::string(tlrt::kernels::elementwise_info(op).name) + " [2^31+17]", Dtype::f32,
              "reference", 0);
        r.error = e.what();
        rows.push_back(r);
      }
    }
  }

  bool ok = true;
  std::printf("\n%-22s %-8s %-18s %11s %11s %9s %12s %13s  %s\n", "op", "dtype", "against",
              "elements", "mismatching", "max ULP", "max rel err", "bound", "result");
  for (const Row& r : rows) {
    ok = ok && r.pass();
    std::printf("%-22s %-8s %-18s %11" PRIu64 " %11" PRIu64 " %9.3g %12.3g %13s  %s\n",
                r.op.c_str(), tlrt::dtype_name(r.dtype), r.against.c_str(), r.stats.elements,
                r.stats.mismatching, r.stats.max_ulp, r.stats.max_rel, bound_text(r).c_str(),
                r.verdict());
  }
  for (const Row& r : rows) {
    if (!r.error.empty()) {
      std::printf("%s %s: %s%s\n", r.op.c_str(), tlrt::dtype_name(r.dtype),
                  r.skipped ? "skipped: " : "error: ", r.error.c_str());
    } else if (!r.pass()) {
      std::printf("%s %s worst: %s\n", r.op.c_str(), tlrt::dtype_name(r.dtype),
                  r.stats.worst.c_str());
    }
  }
  std::printf("\n%zu rows, %s\n", rows.size(), ok ? "all within bounds" : "FAILURES");
  write_reports(opt, header, rows, scalar_lines, tlrt::backend_name(subject),
                with_oracle ? oracle_name() : "");
  return ok ? 0 : 1;
}
