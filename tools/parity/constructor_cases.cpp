// Parity cases of the runtime constructors and transfers: rand_uniform, bernoulli_mask,
// rand_normal, full and of_float_array, --n elements in float32 and float64. On a GPU run the CUDA
// backend is compared with the reference backend; without a GPU (or with --oracle) the reference
// backend is measured against the binary64 formulas of SPEC-runtime section 7, written here from
// the contract. Bounds and their reasons: docs/NUMERICS.md, "Runtime constructors and transfers".
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/construct.h"
#include "runtime/transfer.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

// What every constructor case of a run shares: the stream key and the host values that
// of_float_array uploads, both drawn from the run's seed by the first case that runs.
struct ConstructorInputs {
  explicit ConstructorInputs(uint64_t n_) : n(n_) {}
  void draw(uint64_t seed) {
    if (drawn) return;
    drawn = true;
    std::mt19937_64 rng(seed);
    key = rng();
    std::uniform_real_distribution<double> dist(-1e3, 1e3);
    host.resize(n);
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
    for (size_t i = 0; i < std::size(special) && i < n; ++i) host[i] = special[i];
  }

  uint64_t n;
  bool drawn = false;
  uint64_t key = 0;
  std::vector<double> host;
};

double round_to(double v, Dtype dt) {
  return dt == Dtype::f32 ? static_cast<float>(v) : v;
}

constexpr double kMean = 0.25, kDeviation = 2.0, kProbability = 0.375, kFill = 0.1;

using Formula = std::function<double(uint64_t i)>;

// One constructor: how to make its buffer, its binary64 formula and, where ULPs of the result
// overstate an error (a cancelling sum), the magnitude to count them at.
struct Constructor {
  const char* op;
  double bound_ulp;
  std::function<std::unique_ptr<Buffer>(const ConstructorInputs&, Backend, Dtype)> make;
  std::function<Formula(const ConstructorInputs&, Dtype)> formula;
  std::function<double(const ConstructorInputs&, uint64_t)> scale;  // empty: |result|
};

std::vector<Constructor> constructors() {
  using tlrt::random::draw;
  return {
      {"rand_uniform",
       0,
       [](const ConstructorInputs& in, Backend b, Dtype d) {
         return make_rand_uniform(b, d, in.n, in.key, "parity");
       },
       [](const ConstructorInputs& in, Dtype d) -> Formula {
         return [key = in.key, d](uint64_t i) { return round_to(draw(key, i) * 0x1p-32, d); };
       },
       {}},
      {"bernoulli_mask",
       0,
       [](const ConstructorInputs& in, Backend b, Dtype d) {
         return make_bernoulli_mask(b, d, in.n, kProbability, in.key, "parity");
       },
       [](const ConstructorInputs& in, Dtype d) -> Formula {
         return [key = in.key, d](uint64_t i) {
           return round_to(draw(key, i) * 0x1p-32, d) < round_to(kProbability, d) ? 1.0 : 0.0;
         };
       },
       {}},
      // Normal: the formula takes the contract's staged roundings of the draws (a, s, u1, u2,
      // theta) exactly and evaluates log, sqrt and cos in binary64, so the distance measures the
      // libm error of the staged formula (docs/NUMERICS.md).
      {"rand_normal", 16,
       [](const ConstructorInputs& in, Backend b, Dtype d) {
         return make_rand_normal(b, d, in.n, kMean, kDeviation, in.key, "parity");
       },
       [](const ConstructorInputs& in, Dtype d) -> Formula {
         return [key = in.key, d](uint64_t i) {
           const double r1 = draw(key, 2 * i), r2 = draw(key, 2 * i + 1);
           const double k = d == Dtype::f32 ? 0x1p-32 : round_to(1.0 / 4294967297.0, d);
           const double s = round_to(round_to(r1, d) + 1.0, d);
           const double u1 = round_to(s * k, d), u2 = round_to(r2 * 0x1p-32, d);
           const double theta = round_to(u2 * round_to(6.2831853071795864769, d), d);
           const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(theta);
           return round_to(std::fma(round_to(kDeviation, d), z, round_to(kMean, d)), d);
         };
       },
       // mean + deviation * z cancels near zero: measure at the magnitude of the terms.
       [](const ConstructorInputs& in, uint64_t i) {
         const double r1 = draw(in.key, 2 * i), r2 = draw(in.key, 2 * i + 1);
         const double z = std::sqrt(-2.0 * std::log((r1 + 1.0) / 4294967297.0)) *
                          std::cos(6.283185307179586 * r2 * 0x1p-32);
         return std::fabs(kMean) + std::fabs(kDeviation * z);
       }},
      {"full",
       0,
       [](const ConstructorInputs& in, Backend b, Dtype d) {
         return make_full(b, d, in.n, kFill, "parity");
       },
       [](const ConstructorInputs&, Dtype d) -> Formula {
         return [d](uint64_t) { return round_to(kFill, d); };
       },
       {}},
      {"of_float_array",
       0,
       [](const ConstructorInputs& in, Backend b, Dtype d) {
         return upload_f64(b, d, in.host.data(), in.n, "parity");
       },
       [](const ConstructorInputs& in, Dtype d) -> Formula {
         return [&in, d](uint64_t i) { return round_to(in.host[i], d); };
       },
       {}},
  };
}

class ConstructorCase : public ComparedCase {
 public:
  ConstructorCase(Constructor constructor, Dtype dtype, std::shared_ptr<ConstructorInputs> inputs)
      : c_(std::move(constructor)), dtype_(dtype), inputs_(std::move(inputs)) {}

  std::string op() const override { return c_.op; }
  Dtype dtype() const override { return dtype_; }
  Bound bound() const override { return Bound::ulps(c_.bound_ulp); }
  std::string shape() const override { return "n = " + std::to_string(inputs_->n); }
  // The reference backend against itself says nothing the formula does not: without a GPU the
  // formula is the only comparison.
  bool compares_with_reference(const RunContext& ctx) const override { return ctx.gpu; }
  std::string oracle_name() const override { return "binary64 formulas"; }
  std::string oracle_label() const override { return "binary64 formula"; }

  void make_inputs(uint64_t seed) override { inputs_->draw(seed); }

  HostArrays run(Backend backend) override {
    std::unique_ptr<Buffer> b = c_.make(*inputs_, backend, dtype_);
    HostArrays out;
    out.push_back(download(*b));
    return out;
  }

  Deviation measure(size_t, uint64_t i, double got, double want,
                    const Bound& bound) const override {
    Deviation d;
    const double magnitude = c_.scale ? c_.scale(*inputs_, i) : std::fabs(want);
    const bool finite = std::isfinite(got) && std::isfinite(want);
    const double diff = std::fabs(got - want);
    d.ulps =
        c_.scale && finite ? diff / ulp_of(dtype_, magnitude) : ulps_between(got, want, dtype_);
    if (magnitude != 0 && finite) d.rel = diff / magnitude;
    d.within = bound.kind != Bound::Kind::bit_exact && d.ulps <= bound.limit;
    return d;
  }

  std::string describe(size_t, uint64_t i, double got, double want) const override {
    return "element " + std::to_string(i) + ": " + number(got, dtype_) + ", expected " +
           number(want, dtype_);
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    const Formula f = c_.formula(*inputs_, dtype_);
    HostArrays want(1, HostArray(Dtype::f64, reference[0].size()));
    for (uint64_t i = 0; i < want[0].size(); ++i) want[0].as<double>()[i] = f(i);
    compare(reference, want, oracle_bound(), stats);
  }

 private:
  Constructor c_;
  Dtype dtype_;
  std::shared_ptr<ConstructorInputs> inputs_;
};

CaseList make_constructor_cases(const Options& options) {
  const auto inputs = std::make_shared<ConstructorInputs>(options.n);
  CaseList cases;
  for (const Constructor& c : constructors()) {
    for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
      cases.push_back(std::make_unique<ConstructorCase>(c, dtype, inputs));
    }
  }
  return cases;
}

const FamilyRegistration kConstructorFamily("constructor", &make_constructor_cases);

}  // namespace
}  // namespace tlrt::parity
