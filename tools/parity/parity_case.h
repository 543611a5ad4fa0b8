// The extension point of tlrt-parity: a parity case is one op at one dtype on one input recipe
// (sizes, host scalars, a special-value pattern), and an op family contributes its cases through
// the registry below. The driver (parity_main.cpp) knows no family: it asks every registered family
// for its cases, evaluates them one at a time and prints one row per (op, dtype, comparison).
//
// A ComparedCase declares what it is (op, dtype, bound, optional oracle) and supplies three steps:
//   make_inputs(seed)  draw the host inputs from the run's seed (counter-based, replayable alone);
//   run(backend)       run the op on that backend and return every output as host values;
//   check_oracle(...)  optional: measure the reference backend's results against an independent
//                      evaluation (a wide format, a formula), for runs without a GPU.
// Its evaluate() runs the subject backend (CUDA when a device is visible) and the reference
// backend on the same inputs and compares them element by element within the bound. Cases whose
// results do not fit on the host (the 2^31 + 17 element modes) implement ParityCase::evaluate()
// themselves.
//
// Adding a family is one new file, tools/parity/<family>_cases.cpp, holding a
// `const FamilyRegistration` object at namespace scope; CMake finds it by its name and compiles it
// into tlrt-parity, so the static object registers the family before main() runs.
#pragma once

#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/buffer.h"
#include "runtime/dtype.h"
#include "tools/parity/progress_bar.h"

namespace tlrt::parity {

// The command line (parity_main.cpp).
struct Options {
  uint64_t n = 1 << 20;  // random elements per case, after the special values
  uint64_t seed = 0;
  std::set<std::string> only;  // ops to run; empty: all
  bool large = false;          // also the 2^31 + 17 element modes
  uint64_t shapes = 0;         // random recipes per family on top of the fixed ones (--shapes)
  bool oracle = false;         // oracle rows even when a GPU is the subject
  std::string json_path, md_path;
  bool selected(const std::string& op) const { return only.empty() || only.count(op) > 0; }
};

// The shapes of a family's random recipes (--shapes N): a counter-based stream keyed by the run's
// seed and the family's name, so the shapes replay with --seed and do not depend on which other
// families run. Families add the N recipes to their fixed ones; their rows are the same rows.
class ShapeDraw {
 public:
  ShapeDraw(uint64_t seed, const std::string& family);
  uint64_t next();
  // Uniform in [0, bound) (0 when bound is 0), and in [lo, hi].
  uint64_t below(uint64_t bound);
  uint64_t between(uint64_t lo, uint64_t hi);
  bool percent(unsigned p) { return below(100) < p; }
  // An extent in [1, max] (0 in zero_percent of the draws): equally often small (1-8), around a
  // power of two (2^k - 1, 2^k, 2^k + 1), or uniform up to max.
  uint64_t extent(uint64_t max, unsigned zero_percent = 0);
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(below(items.size()))];
  }
  // `rank` extents whose product is at most `budget`: drawn in a random order of the axes, each
  // within what the ones before it leave and, 60% of the time, within its even share of that (so
  // that long axes meet long axes); zero_percent of them 0.
  std::vector<uint64_t> dims(size_t rank, uint64_t budget, unsigned zero_percent = 3);
  // A broadcast geometry (broadcast_to, reduce_from_broadcast): input rank up to max_in_rank, up to
  // max_inserted inserted output axes, the input axes in a random order among the output axes,
  // a quarter of them of extent 1 (broadcast); the output within `budget`.
  struct Broadcast {
    std::vector<uint64_t> in, out, map;  // map[j] = a + 1 when output axis j reads input axis a
  };
  Broadcast broadcast(size_t max_in_rank, size_t max_inserted, uint64_t budget);

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

// The largest x >= 1 with x^k <= v (1 when v < 2): an even share of v over k extents.
uint64_t integer_root(uint64_t v, size_t k);

// The most elements one random recipe's largest operand may have: min(--n, 2^22), at least 4096.
uint64_t random_shape_budget(const Options& options);

// How far a result may be from what it is compared with.
struct Bound {
  enum class Kind { bit_exact, ulp, relative };
  Kind kind = Kind::bit_exact;
  double limit = 0;   // ULPs (ulp), or the largest relative error (relative)
  std::string label;  // the table's text for a relative bound whose limit varies per result

  static Bound bit_exact() { return {}; }
  // 0 ULP means bit-exact, as in the op lists.
  static Bound ulps(double limit) { return limit == 0 ? Bound{} : Bound{Kind::ulp, limit, ""}; }
  static Bound relative(double limit, std::string label) {
    return Bound{Kind::relative, limit, std::move(label)};
  }
  std::string text() const;  // "bit-exact", "<= 2.5 ULP", the label
};

// One compared element whose bits differ from the expected value.
struct Deviation {
  double ulps = 0;      // in ULPs of the dtype (at the case's error scale where it has one)
  double rel = NAN;     // relative error at the same scale; NaN where none is defined
  bool within = false;  // inside the bound
};

// What a row accumulates.
struct Stats {
  uint64_t elements = 0;
  uint64_t mismatching = 0;  // elements whose bits differ (NaN against NaN counts as equal)
  uint64_t outside = 0;      // elements outside their bound
  double max_ulp = 0;
  double max_rel = 0;
  std::string worst;  // the element at max_ulp (or the first mismatch): inputs, result, expected

  void record_equal() { ++elements; }
  // `describe` is called only when the element becomes the worst one.
  void record(const Deviation& d, const std::function<std::string()>& describe);
  void merge(const Stats& other);
};

struct Row {
  Row(std::string label_, Dtype dtype_, std::string against_, Bound bound_)
      : label(std::move(label_)),
        dtype(dtype_),
        against(std::move(against_)),
        bound(std::move(bound_)) {}
  std::string label;  // the op, with a suffix for special modes ("add [2^31+17]")
  Dtype dtype;
  std::string against;  // what the results were compared with
  Bound bound;
  Stats stats;
  std::string error;  // the run itself failed (the first failure's message)
  bool skipped = false;
  bool pass() const { return skipped || (error.empty() && stats.outside == 0); }
  const char* verdict() const { return skipped ? "skipped" : pass() ? "ok" : "FAIL"; }
};

// The rows of a run, in the order cases first name them; cases of one op and dtype add to the same
// row (references stay valid while rows are added).
class RowTable {
 public:
  Row& row(const std::string& label, Dtype dtype, const std::string& against, const Bound& bound);
  const std::deque<Row>& rows() const { return rows_; }

 private:
  std::deque<Row> rows_;
};

// What a case runs with.
struct RunContext {
  const Options& options;
  Backend subject;   // CUDA when a device is visible, else the reference backend
  bool gpu;          // the subject is the CUDA backend
  bool with_oracle;  // oracle rows wanted (always without a GPU, with --oracle otherwise)
  ProgressBar& progress;
};

// The large modes' guard: true when `host_bytes` of host memory and, for a CUDA subject,
// `device_bytes` of device memory are free; otherwise marks `row` skipped with what it needs and
// what is free, and returns false.
bool large_case_fits(const RunContext& ctx, uint64_t host_bytes, uint64_t device_bytes, Row& row);

// A host array of one dtype, kept as the dtype's own words, so that inputs keep their exact bits
// (signalling NaNs, payloads) on the way to a backend; at() widens to binary64 exactly.
class HostArray {
 public:
  HostArray() = default;
  HostArray(Dtype dtype, uint64_t n);
  Dtype dtype() const { return dtype_; }
  uint64_t size() const { return size_; }
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(words_.data());
  }
  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(words_.data());
  }
  double at(uint64_t i) const { return dtype_ == Dtype::f32 ? as<float>()[i] : as<double>()[i]; }
  const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(words_.data()); }
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(words_.data()); }

 private:
  Dtype dtype_ = Dtype::f32;
  uint64_t size_ = 0;
  std::vector<double> words_;  // 8-byte storage serves both widths with their alignment
};

using HostArrays = std::vector<HostArray>;

// Host values -> a fresh buffer on `backend` (a bit copy), and back.
std::unique_ptr<Buffer> upload(Backend backend, const HostArray& values, uint64_t offset,
                               uint64_t n);
HostArray download(const Buffer& buffer);

// ULPs of dtype between two values representable in it (NaN handling as ulp_distance).
double ulps_between(double a, double b, Dtype dtype);
// One ULP of dtype at magnitude |x|.
double ulp_of(Dtype dtype, double x);
bool same_bits(double a, double b);
// "%.9g" for float32, "%.17g" for float64.
std::string number(double v, Dtype dtype);
// A little-endian word of `width` bytes as "0x..." from its top byte (the top 16 bytes of wider
// words, then "...").
std::string hex_word(const uint8_t* w, uint64_t width);

// For the modes past 2^31 elements: body(begin, end, worker) over [0, n) in chunks on every core
// (worker < worker_count()); worker 0 passes the count of finished chunks to `finished` (when
// given) after each of its chunks, and once more at the end.
int worker_count();
void parallel_chunks(uint64_t n, uint64_t chunk,
                     const std::function<void(uint64_t, uint64_t, int)>& body,
                     const std::function<void(uint64_t)>& finished);

// One op at one dtype on one input recipe. The driver needs only this much; ComparedCase below is
// the usual shape.
class ParityCase {
 public:
  virtual ~ParityCase() = default;
  // The op as --only names it.
  virtual std::string op() const = 0;
  // The table's label: the op, with a suffix for special modes.
  virtual std::string label() const { return op(); }
  virtual Dtype dtype() const = 0;
  // The sizes and parameters of this instance ("n = 1023, mixed signs"), put in front of the
  // message of a failed run.
  virtual std::string shape() const { return {}; }
  // Host scalars this case passes to the op (listed before the table); empty when none.
  virtual std::vector<double> host_scalars() const { return {}; }
  // The independent evaluation the case measures the reference backend against when oracle rows
  // are wanted ("binary128 (libquadmath)"); empty when it has none.
  virtual std::string oracle_name() const { return {}; }
  // Progress units evaluate() reports (the driver completes them when a case reports fewer).
  virtual uint64_t steps() const { return 1; }
  // Runs the case and adds its results to its rows; failures go into a row, never out.
  virtual void evaluate(const RunContext& ctx, RowTable& rows) = 0;
};

// The usual case: inputs drawn on the host, the op run on the subject and on the reference backend,
// the results compared element by element within a bound, and optionally the reference results
// measured against an oracle.
class ComparedCase : public ParityCase {
 public:
  // The bound against the reference backend.
  virtual Bound bound() const = 0;
  // Whether the subject is compared with the reference backend (a case may rely on its oracle
  // alone where the subject is the reference itself).
  virtual bool compares_with_reference(const RunContext&) const { return true; }
  // Draws the host inputs from the run's seed.
  virtual void make_inputs(uint64_t seed) = 0;
  // Runs the op on `backend` and returns every output as host values.
  virtual HostArrays run(Backend backend) = 0;
  // Output `output`, element i, whose bits differ from the expected value, measured against
  // `bound`: by default ULPs on the dtype's ordered integer line, relative to |want|.
  virtual Deviation measure(size_t output, uint64_t i, double got, double want,
                            const Bound& bound) const;
  // The inputs of element i and the two values, for the worst-element line.
  virtual std::string describe(size_t output, uint64_t i, double got, double want) const;

  // The oracle (optional): oracle_name() not empty.
  virtual std::string oracle_label() const { return {}; }  // the table's "against" column
  virtual Bound oracle_bound() const { return bound(); }
  // Adds one record per checked value of the reference backend's results to `stats`.
  virtual void check_oracle(const HostArrays& reference, Stats& stats) const;

  // Inputs, the subject and reference runs compared within bound(), and the oracle check when
  // ctx.with_oracle; a failed run is reported in the case's first row.
  void evaluate(const RunContext& ctx, RowTable& rows) override;

 protected:
  // got against want, element by element, through measure().
  void compare(const HostArrays& got, const HostArrays& want, const Bound& bound,
               Stats& stats) const;
};

using CaseList = std::vector<std::unique_ptr<ParityCase>>;

// A family's cases for this run (every op; the driver applies --only). Making a case draws no
// inputs yet, so lists are cheap.
using CaseMaker = CaseList (*)(const Options& options);

struct ParityFamily {
  std::string name;
  CaseMaker make_cases;
};

// Registers a family when constructed; define one at namespace scope in <family>_cases.cpp.
class FamilyRegistration {
 public:
  FamilyRegistration(const char* name, CaseMaker make_cases);
};

// Every registered family, ordered by name (registration order depends on the link order).
std::vector<ParityFamily> parity_families();

}  // namespace tlrt::parity
