// Parity cases of the elementwise family: every op of ops/elementwise_ops.def in float32 and
// float64, on the inputs of elementwise_inputs.h (a leading block of special values, then --n
// values drawn for the op), once over the whole input and once each over 0, 1, 3, 5 and 1023
// elements starting in the middle of the special block, for every host scalar set of the op.
// Bounds come from the op list (0: bit-exact); where the reference gives an error scale larger
// than the result (gelu, gelu_bwd) ULPs are counted at that scale. The toleranced ops also measure
// the reference against the binary128 oracle of elementwise_inputs.h.
//
// --large adds add and exp at 2^31 + 17 float32 elements: the host inputs stay float, and the
// reference runs chunk by chunk on all cores while being compared, so host memory holds only the
// inputs and the subject's result.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/elementwise/elementwise.h"
#include "runtime/context.h"
#include "runtime/elementwise_dispatch.h"
#include "runtime/transfer.h"
#include "tools/parity/case_key.h"
#include "tools/parity/elementwise_inputs.h"
#include "tools/parity/parity_case.h"
#include "tools/parity/ulp.h"

namespace tlrt::parity {
namespace {

using kernels::ElementwiseInfo;
using kernels::kMaxElementwiseInputs;
using kernels::kMaxElementwiseOutputs;
using kernels::kMaxElementwiseScalars;

constexpr uint64_t kSmallSizes[] = {0, 1, 3, 5, 1023};

// One element whose bits differ: where the reference's error scale exceeds |want| (a cancelling
// sum), ULPs are counted at that scale; otherwise on the dtype's ordered integer line.
template <class T>
Deviation elementwise_deviation(ElementwiseOp op, const T* x, const T* scalars, T got, T want,
                                const Bound& bound) {
  Deviation d;
  const double scale = kernels::elementwise_error_scale<T>(op, x, scalars, want);
  const double diff = std::fabs(static_cast<double>(got) - static_cast<double>(want));
  const bool finite = std::isfinite(got) && std::isfinite(want) && std::isfinite(scale);
  const bool at_scale = finite && scale > std::fabs(static_cast<double>(want));
  d.ulps = at_scale ? diff / ulp_at<T>(scale) : ulp_distance<T>(got, want);
  if (finite && scale > 0) d.rel = diff / scale;
  d.within = bound.kind != Bound::Kind::bit_exact && d.ulps <= bound.limit;
  return d;
}

template <class T>
std::string elementwise_element(const T* x, int inputs, const T* scalars, int scalar_count,
                                size_t output, T got, T want) {
  const Dtype dt = sizeof(T) == 4 ? Dtype::f32 : Dtype::f64;
  std::string w = "x = (";
  for (int k = 0; k < inputs; ++k) w += (k ? ", " : "") + number(x[k], dt);
  if (scalar_count > 0) {
    w += "), scalars = (";
    for (int k = 0; k < scalar_count; ++k) w += (k ? ", " : "") + number(scalars[k], dt);
  }
  return w + "): output " + std::to_string(output) + " = " + number(got, dt) + ", expected " +
         number(want, dt);
}

// One op, dtype and scalar set over elements [offset, offset + n) of the op's parity inputs.
class ElementwiseCase : public ComparedCase {
 public:
  ElementwiseCase(ElementwiseOp op, Dtype dtype, std::vector<double> scalars,
                  std::vector<double> first_scalars, uint64_t offset, uint64_t n, bool whole)
      : op_(op),
        info_(kernels::elementwise_info(op)),
        dtype_(dtype),
        scalars_(std::move(scalars)),
        first_scalars_(std::move(first_scalars)),
        offset_(offset),
        n_(n),
        whole_(whole) {}

  std::string op() const override { return info_.name; }
  Dtype dtype() const override { return dtype_; }
  std::vector<double> host_scalars() const override { return scalars_; }
  std::string shape() const override {
    std::string s = "n = " + std::to_string(n_) + " from element " + std::to_string(offset_);
    for (size_t k = 0; k < scalars_.size(); ++k) {
      s += (k ? ", " : ", scalars (") + number(scalars_[k], Dtype::f64);
    }
    return scalars_.empty() ? s : s + ")";
  }
  Bound bound() const override {
    return Bound::ulps(dtype_ == Dtype::f32 ? info_.ulp_f32 : info_.ulp_f64);
  }
  // The oracle measures the whole input only: the short runs repeat its elements.
  std::string oracle_name() const override {
    return whole_ && has_oracle(op_) ? parity::oracle_name() : std::string();
  }
  std::string oracle_label() const override {
    return std::string("ref vs ") + parity::oracle_format();
  }

  void make_inputs(uint64_t seed) override {
    dtype_ == Dtype::f32 ? fill<float>(seed) : fill<double>(seed);
  }

  HostArrays run(Backend backend) override {
    std::vector<std::unique_ptr<Buffer>> owned;
    const Buffer* operands[kMaxElementwiseInputs] = {};
    for (size_t k = 0; k < inputs_.size(); ++k) {
      owned.push_back(upload(backend, inputs_[k], offset_, n_));
      operands[k] = owned.back().get();
    }
    HostArrays results;
    for (const auto& out : run_elementwise(op_, operands, scalars_.data())) {
      results.push_back(download(*out));
    }
    return results;
  }

  Deviation measure(size_t, uint64_t i, double got, double want,
                    const Bound& bound) const override {
    return dtype_ == Dtype::f32 ? typed_measure<float>(i, got, want, bound)
                                : typed_measure<double>(i, got, want, bound);
  }

  std::string describe(size_t output, uint64_t i, double got, double want) const override {
    return dtype_ == Dtype::f32 ? typed_describe<float>(output, i, got, want)
                                : typed_describe<double>(output, i, got, want);
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    dtype_ == Dtype::f32 ? typed_oracle<float>(reference, stats)
                         : typed_oracle<double>(reference, stats);
  }

 private:
  template <class T>
  void fill(uint64_t seed) {
    inputs_.assign(info_.inputs, HostArray(dtype_, offset_ + n_));
    std::vector<T*> ptrs;
    for (HostArray& a : inputs_) ptrs.push_back(a.as<T>());
    fill_inputs<T>(op_, case_key(seed, info_.name, dtype_ == Dtype::f32), first_scalars_.data(),
                   ptrs.data(), offset_, offset_ + n_);
  }

  template <class T>
  void typed_scalars(T* s) const {
    for (int k = 0; k < info_.scalars; ++k) s[k] = static_cast<T>(scalars_[k]);
  }

  template <class T>
  void typed_inputs(uint64_t i, T* x) const {
    for (int k = 0; k < info_.inputs; ++k) x[k] = inputs_[k].as<T>()[offset_ + i];
  }

  template <class T>
  Deviation typed_measure(uint64_t i, double got, double want, const Bound& bound) const {
    T x[kMaxElementwiseInputs], s[kMaxElementwiseScalars] = {};
    typed_inputs<T>(i, x);
    typed_scalars<T>(s);
    return elementwise_deviation<T>(op_, x, s, static_cast<T>(got), static_cast<T>(want), bound);
  }

  template <class T>
  std::string typed_describe(size_t output, uint64_t i, double got, double want) const {
    T x[kMaxElementwiseInputs], s[kMaxElementwiseScalars] = {};
    typed_inputs<T>(i, x);
    typed_scalars<T>(s);
    return elementwise_element<T>(x, info_.inputs, s, info_.scalars, output, static_cast<T>(got),
                                  static_cast<T>(want));
  }

  template <class T>
  void typed_oracle(const HostArrays& reference, Stats& stats) const {
    const Bound b = oracle_bound();
    T x[kMaxElementwiseInputs], s[kMaxElementwiseScalars] = {}, y[kMaxElementwiseOutputs];
    typed_scalars<T>(s);
    const T* want = reference[0].as<T>();
    for (uint64_t i = 0; i < n_; ++i) {
      typed_inputs<T>(i, x);
      oracle<T>(op_, x, s, y);
      if (same_bits<T>(want[i], y[0])) {
        stats.record_equal();
        continue;
      }
      stats.record(elementwise_deviation<T>(op_, x, s, want[i], y[0], b), [&] {
        return elementwise_element<T>(x, info_.inputs, s, info_.scalars, 0, want[i], y[0]);
      });
    }
  }

  ElementwiseOp op_;
  const ElementwiseInfo& info_;
  Dtype dtype_;
  std::vector<double> scalars_;        // the set this case runs with
  std::vector<double> first_scalars_;  // the op's first set, which the inputs are drawn for
  uint64_t offset_, n_;
  bool whole_;         // the whole input (the oracle's slice)
  HostArrays inputs_;  // offset_ + n_ elements each; the case reads [offset_, offset_ + n_)
};

// ---------------------------------------------------------------------------------------------
// Past 2^31 elements: one binary and one unary op in float32.

constexpr uint64_t kLargeN = (uint64_t{1} << 31) + 17;
constexpr uint64_t kLargeChunk = uint64_t{1} << 18;  // the reference launcher's one-thread size
constexpr uint64_t kLargeChunks = (kLargeN + kLargeChunk - 1) / kLargeChunk;

class ElementwiseLargeCase : public ParityCase {
 public:
  explicit ElementwiseLargeCase(ElementwiseOp op) : op_(op), info_(kernels::elementwise_info(op)) {}

  std::string op() const override { return info_.name; }
  std::string label() const override { return std::string(info_.name) + " [2^31+17]"; }
  Dtype dtype() const override { return Dtype::f32; }
  uint64_t steps() const override { return kLargeChunks; }

  void evaluate(const RunContext& ctx, RowTable& rows) override {
    Row& row = rows.row(label(), Dtype::f32, "reference", Bound::ulps(info_.ulp_f32));
    try {
      compare(ctx, row);
    } catch (const std::exception& e) {
      if (row.error.empty()) row.error = e.what();
    }
  }

 private:
  void compare(const RunContext& ctx, Row& row) const {
    const Backend subject = ctx.subject;
    const int inputs = info_.inputs;
    const uint64_t bytes = kLargeN * sizeof(float);
    const uint64_t host_need = bytes * (inputs + 1) * (subject == Backend::reference ? 2 : 1);
    if (!large_case_fits(ctx, host_need, bytes * (inputs + 1), row)) return;
    std::vector<std::unique_ptr<float[]>> host;
    std::vector<float*> in;
    for (int k = 0; k < inputs; ++k) {
      host.emplace_back(new float[kLargeN]);
      in.push_back(host.back().get());
    }
    // Keyed by the label: inputs of their own, replayed alone with --only.
    const uint64_t key = case_key(ctx.options.seed, label().c_str(), true);
    parallel_chunks(kLargeN, kLargeChunk,
                    [&](uint64_t b, uint64_t e, int) {
                      fill_inputs<float>(op_, key, nullptr, in.data(), b, e);
                    },
                    {});

    std::unique_ptr<float[]> got(new float[kLargeN]);
    {
      std::vector<std::unique_ptr<Buffer>> owned;
      const Buffer* operands[kMaxElementwiseInputs] = {};
      for (int k = 0; k < inputs; ++k) {
        owned.push_back(upload_words(subject, Dtype::f32, reinterpret_cast<const uint8_t*>(in[k]),
                                     kLargeN, Dtype::f32, "parity"));
        operands[k] = owned.back().get();
      }
      auto outs = run_elementwise(op_, operands, nullptr);
      owned.clear();  // device memory for the download's staging
      download_words(*outs[0], reinterpret_cast<uint8_t*>(got.get()), Dtype::f32, "parity");
    }

    const int workers = worker_count();
    std::vector<Stats> partial(workers);
    std::vector<std::vector<float>> want(workers, std::vector<float>(kLargeChunk));
    const uint64_t progress_base = ctx.progress.done();
    const Bound bound = row.bound;
    parallel_chunks(
        kLargeN, kLargeChunk,
        [&](uint64_t b, uint64_t e, int w) {
          const float* at[kMaxElementwiseInputs];
          for (int k = 0; k < inputs; ++k) at[k] = in[k] + b;
          float* out = want[w].data();
          kernels::elementwise_ref<float>(op_, at, &out, nullptr, e - b);
          float x[kMaxElementwiseInputs];
          for (uint64_t i = b; i < e; ++i) {
            for (int k = 0; k < inputs; ++k) x[k] = in[k][i];
            if (same_bits<float>(got[i], out[i - b])) {
              partial[w].record_equal();
              continue;
            }
            partial[w].record(
                elementwise_deviation<float>(op_, x, nullptr, got[i], out[i - b], bound), [&] {
                  return elementwise_element<float>(x, inputs, nullptr, 0, 0, got[i], out[i - b]);
                });
          }
        },
        [&](uint64_t chunks) { ctx.progress.show(progress_base + chunks); });
    for (const Stats& s : partial) row.stats.merge(s);
  }

  ElementwiseOp op_;
  const ElementwiseInfo& info_;
};

CaseList make_elementwise_cases(const Options& options) {
  CaseList cases;
  int count = 0;
  const ElementwiseOp* ops = kernels::elementwise_ops(&count);
  for (int k = 0; k < count; ++k) {
    const ElementwiseOp op = ops[k];
    const std::vector<std::vector<double>> sets = scalar_sets(op);
    for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
      const uint64_t block = special_block(op, dtype == Dtype::f32);
      const uint64_t total = block + options.n;
      // The whole input, then short runs from the middle of the special block into the random
      // values (one element, odd sizes and a tail that no vector width divides).
      std::vector<std::pair<uint64_t, uint64_t>> slices = {{0, total}};
      for (uint64_t size : kSmallSizes) {
        if (size <= total) slices.emplace_back(std::min(block / 2, total - size), size);
      }
      for (const std::vector<double>& set : sets) {
        for (size_t s = 0; s < slices.size(); ++s) {
          cases.push_back(std::make_unique<ElementwiseCase>(
              op, dtype, set, sets[0], slices[s].first, slices[s].second, s == 0));
        }
      }
    }
  }
  if (options.large) {
    for (ElementwiseOp op : {ElementwiseOp::add, ElementwiseOp::exp}) {
      cases.push_back(std::make_unique<ElementwiseLargeCase>(op));
    }
  }
  return cases;
}

const FamilyRegistration kElementwiseFamily("elementwise", &make_elementwise_cases);

}  // namespace
}  // namespace tlrt::parity
