// The parity case machinery shared by every family: rows and their statistics, host arrays and
// their transfers, the default comparison and evaluation, and the family registry.
#include "tools/parity/parity_case.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <sstream>
#include <thread>

#include "common/uniform_below.h"
#include "kernels/random/splitmix.h"
#include "runtime/context.h"
#include "runtime/transfer.h"
#include "tools/parity/ulp.h"

namespace tlrt::parity {

ShapeDraw::ShapeDraw(uint64_t seed, const std::string& family) : key_(seed) {
  for (char ch : family) key_ = random::splitmix64_finalize(key_ ^ static_cast<uint8_t>(ch));
}

uint64_t ShapeDraw::next() {
  return random::splitmix64_finalize(key_ + 0x9e3779b97f4a7c15ull * ++counter_);
}

uint64_t ShapeDraw::below(uint64_t bound) {
  return uniform_below([this] { return next(); }, bound);
}

uint64_t ShapeDraw::between(uint64_t lo, uint64_t hi) {
  return hi <= lo ? lo : lo + below(hi - lo + 1);
}

uint64_t ShapeDraw::extent(uint64_t max, unsigned zero_percent) {
  if (zero_percent > 0 && percent(zero_percent)) return 0;
  if (max <= 1) return 1;
  switch (below(3)) {
    case 0:
      return between(1, std::min<uint64_t>(max, 8));
    case 1: {
      unsigned top = 0;
      while (top < 62 && (uint64_t{2} << top) <= max) ++top;  // 2^top <= max
      const uint64_t p = uint64_t{1} << below(top + 1);
      return std::min(max, std::max<uint64_t>(1, p - 1 + below(3)));
    }
    default:
      return between(1, max);
  }
}

std::vector<uint64_t> ShapeDraw::dims(size_t rank, uint64_t budget, unsigned zero_percent) {
  std::vector<uint64_t> d(rank, 1);
  std::vector<size_t> order(rank);
  for (size_t j = 0; j < rank; ++j) order[j] = j;
  for (size_t j = rank; j > 1; --j) std::swap(order[j - 1], order[below(j)]);
  uint64_t room = std::max<uint64_t>(1, budget);
  for (size_t k = 0; k < rank; ++k) {
    const size_t left = rank - k;
    const uint64_t share =
        left == 1 || percent(40) ? room : std::max<uint64_t>(2, integer_root(room, left));
    const size_t j = order[k];
    d[j] = extent(share, zero_percent);
    room = std::max<uint64_t>(1, room / std::max<uint64_t>(d[j], 1));
  }
  return d;
}

ShapeDraw::Broadcast ShapeDraw::broadcast(size_t max_in_rank, size_t max_inserted,
                                          uint64_t budget) {
  Broadcast b;
  const size_t in_rank = below(max_in_rank + 1), inserted = below(max_inserted + 1);
  b.out = dims(in_rank + inserted, budget);
  std::vector<uint64_t> order(b.out.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = j;
  for (size_t j = order.size(); j > 1; --j) std::swap(order[j - 1], order[below(j)]);
  b.in.assign(in_rank, 1);
  for (size_t j = 0; j < order.size(); ++j) {
    const bool mapped = order[j] < in_rank;
    b.map.push_back(mapped ? order[j] + 1 : 0);
    if (mapped && !percent(25)) b.in[order[j]] = b.out[j];
  }
  return b;
}

uint64_t integer_root(uint64_t v, size_t k) {
  if (v < 2 || k == 0) return 1;
  // x^k, or v + 1 once it passes v.
  auto power = [&](uint64_t x) {
    uint64_t p = 1;
    for (size_t i = 0; i < k; ++i) p = p > v / x ? v + 1 : p * x;
    return p;
  };
  uint64_t x = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::pow(static_cast<double>(v), 1.0 / static_cast<double>(k))));
  while (x > 1 && power(x) > v) --x;
  while (power(x + 1) <= v) ++x;
  return x;
}

uint64_t random_shape_budget(const Options& options) {
  return std::max<uint64_t>(4096, std::min<uint64_t>(options.n, uint64_t{1} << 22));
}

std::string Bound::text() const {
  switch (kind) {
    case Kind::bit_exact:
      return "bit-exact";
    case Kind::ulp: {
      std::ostringstream s;
      s << "<= " << limit << " ULP";
      return s.str();
    }
    case Kind::relative:
      break;
  }
  if (!label.empty()) return label;
  char s[48];
  std::snprintf(s, sizeof s, "rel <= %.3g", limit);
  return s;
}

void Stats::record(const Deviation& d, const std::function<std::string()>& describe) {
  ++elements;
  ++mismatching;
  if (!d.within) ++outside;
  if (d.ulps > max_ulp || worst.empty()) worst = describe();
  max_ulp = std::fmax(max_ulp, d.ulps);
  max_rel = std::fmax(max_rel, d.rel);  // fmax ignores a NaN rel
}

void Stats::merge(const Stats& o) {
  elements += o.elements;
  mismatching += o.mismatching;
  outside += o.outside;
  if (o.max_ulp > max_ulp || (worst.empty() && !o.worst.empty())) worst = o.worst;
  max_ulp = std::fmax(max_ulp, o.max_ulp);
  max_rel = std::fmax(max_rel, o.max_rel);
}

Row& RowTable::row(const std::string& label, Dtype dtype, const std::string& against,
                   const Bound& bound) {
  for (Row& r : rows_) {
    if (r.label == label && r.dtype == dtype && r.against == against) return r;
  }
  rows_.emplace_back(label, dtype, against, bound);
  return rows_.back();
}

HostArray::HostArray(Dtype dtype, uint64_t n)
    : dtype_(dtype), size_(n), words_((n * dtype_width(dtype) + 7) / 8) {}

std::unique_ptr<Buffer> upload(Backend backend, const HostArray& values, uint64_t offset,
                               uint64_t n) {
  const uint8_t* first = values.bytes() + offset * dtype_width(values.dtype());
  return upload_words(backend, values.dtype(), first, n, values.dtype(), "parity");
}

HostArray download(const Buffer& buffer) {
  HostArray values(buffer.dtype(), buffer.size());
  if (buffer.size() > 0) download_words(buffer, values.bytes(), buffer.dtype(), "parity");
  return values;
}

double ulps_between(double a, double b, Dtype dtype) {
  return dtype == Dtype::f32 ? ulp_distance<float>(static_cast<float>(a), static_cast<float>(b))
                             : ulp_distance<double>(a, b);
}

double ulp_of(Dtype dtype, double x) {
  return dtype == Dtype::f32 ? ulp_at<float>(x) : ulp_at<double>(x);
}

bool same_bits(double a, double b) {
  return parity::same_bits<double>(a, b);
}

std::string hex_word(const uint8_t* w, uint64_t width) {
  std::string s = "0x";
  char byte[4];
  for (uint64_t k = std::min<uint64_t>(width, 16); k-- > 0;) {
    std::snprintf(byte, sizeof byte, "%02x", w[k]);
    s += byte;
  }
  if (width > 16) s += "...";
  return s;
}

std::string number(double v, Dtype dtype) {
  char s[48];
  std::snprintf(s, sizeof s, dtype == Dtype::f32 ? "%.9g" : "%.17g", v);
  return s;
}

int worker_count() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void parallel_chunks(uint64_t n, uint64_t chunk,
                     const std::function<void(uint64_t, uint64_t, int)>& body,
                     const std::function<void(uint64_t)>& finished) {
  const int workers = worker_count();
  const uint64_t chunks = (n + chunk - 1) / chunk;
  std::atomic<uint64_t> next{0}, done{0};
  auto work = [&](int w) {
    for (uint64_t c; (c = next++) < chunks;) {
      body(c * chunk, std::min(n, (c + 1) * chunk), w);
      ++done;
      if (w == 0 && finished) finished(done.load());
    }
  };
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(work, w);
  work(0);
  for (std::thread& t : threads) t.join();
  if (finished) finished(chunks);
}

Deviation ComparedCase::measure(size_t, uint64_t, double got, double want,
                                const Bound& bound) const {
  Deviation d;
  d.ulps = ulps_between(got, want, dtype());
  if (std::isfinite(got) && std::isfinite(want) && want != 0) {
    d.rel = std::fabs(got - want) / std::fabs(want);
  }
  switch (bound.kind) {
    case Bound::Kind::bit_exact:
      d.within = false;
      break;
    case Bound::Kind::ulp:
      d.within = d.ulps <= bound.limit;
      break;
    case Bound::Kind::relative:
      d.within = d.rel <= bound.limit;
      break;
  }
  return d;
}

std::string ComparedCase::describe(size_t output, uint64_t i, double got, double want) const {
  return "output " + std::to_string(output) + " element " + std::to_string(i) + ": " +
         number(got, dtype()) + ", expected " + number(want, dtype());
}

void ComparedCase::check_oracle(const HostArrays&, Stats&) const {}

void ComparedCase::compare(const HostArrays& got, const HostArrays& want, const Bound& bound,
                           Stats& stats) const {
  for (size_t o = 0; o < std::min(got.size(), want.size()); ++o) {
    const uint64_t n = std::min(got[o].size(), want[o].size());
    for (uint64_t i = 0; i < n; ++i) {
      const double g = got[o].at(i), w = want[o].at(i);
      if (same_bits(g, w)) {
        stats.record_equal();
        continue;
      }
      stats.record(measure(o, i, g, w, bound), [&] { return describe(o, i, g, w); });
    }
  }
}

void ComparedCase::evaluate(const RunContext& ctx, RowTable& rows) {
  Row* vs_reference =
      compares_with_reference(ctx) ? &rows.row(label(), dtype(), "reference", bound()) : nullptr;
  Row* vs_oracle = ctx.with_oracle && !oracle_name().empty()
                       ? &rows.row(label(), dtype(), oracle_label(), oracle_bound())
                       : nullptr;
  Row* first = vs_reference != nullptr ? vs_reference : vs_oracle;
  if (first == nullptr) return;
  try {
    make_inputs(ctx.options.seed);
    const HostArrays want = run(Backend::reference);
    if (vs_reference != nullptr) {
      compare(run(ctx.subject), want, vs_reference->bound, vs_reference->stats);
    }
    if (vs_oracle != nullptr) check_oracle(want, vs_oracle->stats);
  } catch (const std::exception& e) {
    if (first->error.empty()) first->error = (shape().empty() ? "" : shape() + ": ") + e.what();
  }
}

namespace {

std::vector<ParityFamily>& registry() {
  static std::vector<ParityFamily> families;
  return families;
}

}  // namespace

FamilyRegistration::FamilyRegistration(const char* name, CaseMaker make_cases) {
  registry().push_back({name, make_cases});
}

std::vector<ParityFamily> parity_families() {
  std::vector<ParityFamily> families = registry();
  std::sort(families.begin(), families.end(),
            [](const ParityFamily& a, const ParityFamily& b) { return a.name < b.name; });
  return families;
}

bool large_case_fits(const RunContext& ctx, uint64_t host_bytes, uint64_t device_bytes, Row& row) {
  size_t host_free = 0, host_total = 0, dev_free = 0, dev_total = 0;
  memory_info(Backend::reference, &host_free, &host_total);
  const bool on_device = ctx.subject == Backend::cuda;
  if (on_device) memory_info(Backend::cuda, &dev_free, &dev_total);
  if (host_bytes <= host_free && (!on_device || device_bytes <= dev_free)) return true;
  row.skipped = true;
  row.error = "needs " + std::to_string(host_bytes >> 30) + " GiB host memory (" +
              std::to_string(host_free >> 30) + " GiB free)";
  if (on_device) {
    row.error += " and " + std::to_string(device_bytes >> 30) + " GiB device memory (" +
                 std::to_string(dev_free >> 30) + " GiB free)";
  }
  return false;
}

}  // namespace tlrt::parity
