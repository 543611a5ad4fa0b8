// tlrt-parity: runs ops on the default backend and compares them with an oracle, printing one row
// per (op, dtype). On a machine with a CUDA device the oracle is the reference backend in the same
// process; without one it is the binary64 formula of the contract, evaluated here.
//
//   tlrt-parity [--n N] [--seed S] [--json FILE] [--markdown FILE]
//
// Exit status 1 when any op breaks its bound (docs/NUMERICS.md).
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/construct.h"
#include "runtime/context.h"
#include "runtime/transfer.h"

namespace {

using tlrt::Backend;
using tlrt::Buffer;
using tlrt::Dtype;

struct Result {
  std::string op;
  Dtype dtype;
  uint64_t elements = 0;
  uint64_t mismatching = 0;  // elements whose bits differ (NaN vs NaN counts as equal)
  double max_ulp = 0;
  double max_rel = 0;
  double bound_ulp = 0;       // allowed ULP distance; 0 = bit-exact
  bool pass() const { return bound_ulp == 0 ? mismatching == 0 : max_ulp <= bound_ulp; }
};

// Distance in units in the last place of the dtype, measured on the ordered integer line.
double ulp_distance(double a, double b, Dtype dt) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return INFINITY;
  auto ordered = [](int64_t bits, int64_t sign_mask) { return bits < 0 ? sign_mask - bits : bits; };
  if (dt == Dtype::f32) {
    int32_t x, y;
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    std::memcpy(&x, &fa, 4);
    std::memcpy(&y, &fb, 4);
    const int64_t ox = ordered(x, INT32_MIN), oy = ordered(y, INT32_MIN);
    return std::fabs(static_cast<double>(ox - oy));
  }
  int64_t x, y;
  std::memcpy(&x, &a, 8);
  std::memcpy(&y, &b, 8);
  const int64_t ox = x < 0 ? INT64_MIN - x : x, oy = y < 0 ? INT64_MIN - y : y;
  return std::fabs(static_cast<double>(ox) - static_cast<double>(oy));
}

// One unit in the last place of the dtype at the magnitude of x.
double ulp_at(double x, Dtype dt) {
  const int digits = dt == Dtype::f32 ? 24 : 53;
  const int min_exp = dt == Dtype::f32 ? -126 : -1022;
  int e = 0;
  std::frexp(std::fabs(x), &e);
  return std::ldexp(1.0, std::max(e - 1, min_exp) - (digits - 1));
}

// scale: when given, errors are measured in ULPs at that magnitude (for results that are sums
// whose terms are larger than the result, where ULPs of the result overstate a rounding error).
void compare(Result& r, const std::vector<double>& got, const std::vector<double>& want,
             const std::function<double(uint64_t)>& scale) {
  r.elements = got.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const bool same_bits = std::memcmp(&got[i], &want[i], 8) == 0 ||
                           (std::isnan(got[i]) && std::isnan(want[i]));
    if (!same_bits) ++r.mismatching;
    const double ulps = scale && std::isfinite(got[i]) && std::isfinite(want[i])
                            ? std::fabs(got[i] - want[i]) / ulp_at(scale(i), r.dtype)
                            : ulp_distance(got[i], want[i], r.dtype);
    r.max_ulp = std::fmax(r.max_ulp, ulps);
    const double magnitude = scale ? scale(i) : std::fabs(want[i]);
    if (magnitude != 0 && std::isfinite(want[i]) && std::isfinite(got[i])) {
      r.max_rel = std::fmax(r.max_rel, std::fabs(got[i] - want[i]) / magnitude);
    }
  }
}

std::vector<double> download(const Buffer& b) {
  std::vector<double> v(b.size());
  tlrt::download_f64(b, v.data(), "parity");
  return v;
}

double round_to(double v, Dtype dt) { return dt == Dtype::f32 ? static_cast<float>(v) : v; }

// The binary64 oracle for one op when no second backend is available.
using Oracle = std::function<double(uint64_t i)>;
using Make = std::function<std::unique_ptr<Buffer>(Backend, Dtype)>;

struct Case {
  std::string op;
  double bound_f32, bound_f64;
  Make make;
  std::function<Oracle(Dtype)> oracle;
  std::function<double(uint64_t)> scale;  // empty: ULPs of the result itself
};

void print_bar(uint64_t done, uint64_t total) {
  const int width = 30;
  const int filled = static_cast<int>(width * done / (total ? total : 1));
  std::fprintf(stderr, "\r[%.*s%*s] %" PRIu64 "/%" PRIu64, filled,
               "==============================", width - filled, "", done, total);
  if (done == total) std::fprintf(stderr, "\n");
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t n = 1 << 20;
  uint64_t seed = std::random_device{}();
  std::string json_path, md_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) n = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "--markdown" && i + 1 < argc) md_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: tlrt-parity [--n N] [--seed S] [--json FILE] [--markdown FILE]\n");
      return 2;
    }
  }

  const bool gpu = tlrt::built_with_cuda() && tlrt::default_backend() == Backend::cuda &&
                   tlrt::cuda_device_count() > 0;
  const Backend subject = gpu ? Backend::cuda : Backend::reference;
  try {
    if (gpu) tlrt::ensure_initialized();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlrt-parity: %s\n", e.what());
    return 1;
  }
  std::printf("tlrt-parity: %s vs %s, n = %" PRIu64 ", seed = %" PRIu64
              " (replay with --seed %" PRIu64 ")\n",
              tlrt::backend_name(subject), gpu ? "reference backend" : "binary64 formulas", n, seed,
              seed);

  std::mt19937_64 rng(seed);
  const uint64_t key = rng();
  std::vector<double> host(n);
  std::uniform_real_distribution<double> dist(-1e3, 1e3);
  for (double& v : host) v = dist(rng);
  const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 4.9e-324, 1.17549435e-38,
                            1.4e-45, 3.4028234663852886e38, 1.7976931348623157e308};
  for (size_t i = 0; i < sizeof(special) / sizeof(special[0]) && i < n; ++i) host[i] = special[i];
  const double mean = 0.25, deviation = 2.0, p = 0.375, fill = 0.1;

  const std::vector<Case> cases = {
      {"rand_uniform", 0, 0,
       [&](Backend b, Dtype d) { return tlrt::make_rand_uniform(b, d, n, key, "parity"); },
       [&](Dtype d) -> Oracle {
         return [=](uint64_t i) { return round_to(tlrt::random::draw(key, i) * 0x1p-32, d); };
       }, {}},
      {"bernoulli_mask", 0, 0,
       [&](Backend b, Dtype d) { return tlrt::make_bernoulli_mask(b, d, n, p, key, "parity"); },
       [&](Dtype d) -> Oracle {
         return [=](uint64_t i) {
           return round_to(tlrt::random::draw(key, i) * 0x1p-32, d) < round_to(p, d) ? 1.0 : 0.0;
         };
       },
       {}},
      // Normal: the oracle takes the contract's staged roundings of the draws (a, s, u1, u2,
      // theta) exactly and evaluates log, sqrt and cos in binary64, so the distance measures the
      // libm error of the staged formula (docs/NUMERICS.md).
      {"rand_normal", 16, 16,
       [&](Backend b, Dtype d) {
         return tlrt::make_rand_normal(b, d, n, mean, deviation, key, "parity");
       },
       [&](Dtype d) -> Oracle {
         return [=](uint64_t i) {
           const double r1 = tlrt::random::draw(key, 2 * i), r2 = tlrt::random::draw(key, 2 * i + 1);
           const double k = d == Dtype::f32 ? 0x1p-32 : round_to(1.0 / 4294967297.0, d);
           const double s = round_to(round_to(r1, d) + 1.0, d);
           const double u1 = round_to(s * k, d), u2 = round_to(r2 * 0x1p-32, d);
           const double theta = round_to(u2 * round_to(6.2831853071795864769, d), d);
           const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(theta);
           return round_to(std::fma(round_to(deviation, d), z, round_to(mean, d)), d);
         };
       },
       // mean + deviation * z cancels near zero: measure at the magnitude of the terms.
       [&](uint64_t i) {
         const double r1 = tlrt::random::draw(key, 2 * i), r2 = tlrt::random::draw(key, 2 * i + 1);
         const double z = std::sqrt(-2.0 * std::log((r1 + 1.0) / 4294967297.0)) *
                          std::cos(6.283185307179586 * r2 * 0x1p-32);
         return std::fabs(mean) + std::fabs(deviation * z);
       }},
      {"full", 0, 0, [&](Backend b, Dtype d) { return tlrt::make_full(b, d, n, fill, "parity"); },
       [&](Dtype d) -> Oracle { return [=](uint64_t) { return round_to(fill, d); }; }, {}},
      {"of_float_array", 0, 0,
       [&](Backend b, Dtype d) { return tlrt::upload_f64(b, d, host.data(), n, "parity"); },
       [&](Dtype d) -> Oracle { return [&, d](uint64_t i) { return round_to(host[i], d); }; },
       {}},
      {"copy_and_release (x*1)", 0, 0,
       [&](Backend b, Dtype d) {
         auto src = tlrt::upload_f64(b, d, host.data(), n, "parity");
         return tlrt::multiply_by_one(*src, "parity");
       },
       [&](Dtype d) -> Oracle {
         return [&, d](uint64_t i) { return round_to(host[i], d) * 1.0; };
       },
       {}},
  };

  std::vector<Result> results;
  const uint64_t total = cases.size() * 2;
  uint64_t done = 0;
  for (const Case& c : cases) {
    for (Dtype d : {Dtype::f32, Dtype::f64}) {
      Result r;
      r.op = c.op;
      r.dtype = d;
      r.bound_ulp = d == Dtype::f32 ? c.bound_f32 : c.bound_f64;
      try {
        const std::vector<double> got = download(*c.make(subject, d));
        std::vector<double> want;
        if (gpu) {
          want = download(*c.make(Backend::reference, d));
        } else {
          want.resize(n);
          const Oracle f = c.oracle(d);
          for (uint64_t i = 0; i < n; ++i) want[i] = f(i);
        }
        compare(r, got, want, c.scale);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "\n%s %s: %s\n", c.op.c_str(), tlrt::dtype_name(d), e.what());
        r.mismatching = r.elements = 1;
        r.max_ulp = INFINITY;
      }
      results.push_back(r);
      print_bar(++done, total);
    }
  }

  bool ok = true;
  std::string md = "| op | dtype | elements | mismatching bits | max ULP | max rel. error | bound | result |\n"
                   "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n";
  std::printf("\n%-24s %-8s %10s %12s %10s %14s %10s  %s\n", "op", "dtype", "elements",
              "mismatching", "max ULP", "max rel err", "bound", "result");
  for (const Result& r : results) {
    ok = ok && r.pass();
    const std::string bound = r.bound_ulp == 0 ? "bit-exact" : "<= " + std::to_string(int(r.bound_ulp)) + " ULP";
    std::printf("%-24s %-8s %10" PRIu64 " %12" PRIu64 " %10.3g %14.3g %10s  %s\n", r.op.c_str(),
                tlrt::dtype_name(r.dtype), r.elements, r.mismatching, r.max_ulp, r.max_rel,
                bound.c_str(), r.pass() ? "ok" : "FAIL");
    char line[512];
    std::snprintf(line, sizeof(line), "| %s | %s | %" PRIu64 " | %" PRIu64 " | %.3g | %.3g | %s | %s |\n",
                  r.op.c_str(), tlrt::dtype_name(r.dtype), r.elements, r.mismatching, r.max_ulp,
                  r.max_rel, bound.c_str(), r.pass() ? "ok" : "FAIL");
    md += line;
  }
  std::printf("\n%zu ops checked, %s\n", results.size(), ok ? "all within bounds" : "FAILURES");
  if (!md_path.empty()) {
    if (FILE* f = std::fopen(md_path.c_str(), "w")) {
      std::fprintf(f, "tlrt-parity: %s, n = %" PRIu64 ", seed = %" PRIu64 "\n\n%s",
                   tlrt::backend_name(subject), n, seed, md.c_str());
      std::fclose(f);
    }
  }
  if (!json_path.empty()) {
    if (FILE* f = std::fopen(json_path.c_str(), "w")) {
      std::fprintf(f, "{\"backend\":\"%s\",\"n\":%" PRIu64 ",\"seed\":%" PRIu64 ",\"results\":[",
                   tlrt::backend_name(subject), n, seed);
      for (size_t i = 0; i < results.size(); ++i) {
        const Result& r = results[i];
        std::fprintf(f,
                     "%s{\"op\":\"%s\",\"dtype\":\"%s\",\"elements\":%" PRIu64
                     ",\"mismatching\":%" PRIu64 ",\"max_ulp\":%.6g,\"max_rel\":%.6g,"
                     "\"bound_ulp\":%g,\"pass\":%s}",
                     i ? "," : "", r.op.c_str(), tlrt::dtype_name(r.dtype), r.elements,
                     r.mismatching, std::isfinite(r.max_ulp) ? r.max_ulp : -1.0, r.max_rel,
                     r.bound_ulp, r.pass() ? "true" : "false");
      }
      std::fprintf(f, "]}\n");
      std::fclose(f);
    }
  }
  return ok ? 0 : 1;
}
