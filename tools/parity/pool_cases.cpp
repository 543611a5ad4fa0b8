// Parity cases of the pooling ops (SPEC-ops 14.3-14.5), all six in float32 and float64:
//   * maxpool_fwd / maxpool_bwd / avgpool_fwd / avgpool_bwd: the subject against the reference
//     backend bit for bit ("equal bits or both NaN"): selections, folds from +0 in a fixed order
//     and one IEEE division, identical on both backends (docs/NUMERICS.md, "Pooling");
//   * smooth_maxpool_fwd / smooth_maxpool_bwd: within the per-element bound of docs/NUMERICS.md
//     derived from the exp/log accuracy of the device libm (the only values that may differ):
//     forward |dy| <= eps (2n + 4 + 5 ln n) / |b| + 3 eps |y|, backward
//     |ddx| <= eps (4n + 12) sum_{o containing i} |dY[o]| + 2 eps |dx|, n = prod(kernel), eps the
//     unit roundoff; a NaN reference needs a NaN result.
// Geometries: random rank 1-3 windows (kernel 1-4, stride 1-5 including stride > kernel, padding
// 0..kernel/2 including kernel/2), kernels larger than the input, zero channels, empty extents,
// the bench shapes scaled down (2x2 stride 2 and 3x3 stride 1 padding 1 on 112x112) and a rank-3
// case, and with --shapes N more drawn from the seed, each with finite inputs and with NaN, +-inf
// and -0 sprinkled into the input (and into dY for the bit-exact ops; half of the drawn ones). The
// oracle (without a GPU, or with --oracle) checks the reference backend bit for bit against an
// independent host evaluation of the contract over the given rank.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/pool_dispatch.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;
using Dims = std::vector<uint64_t>;

enum class PoolOp { max_fwd, max_bwd, avg_fwd, avg_bwd, smooth_fwd, smooth_bwd };

const char* op_name(PoolOp op) {
  switch (op) {
    case PoolOp::max_fwd:
      return "maxpool_fwd";
    case PoolOp::max_bwd:
      return "maxpool_bwd";
    case PoolOp::avg_fwd:
      return "avgpool_fwd";
    case PoolOp::avg_bwd:
      return "avgpool_bwd";
    case PoolOp::smooth_fwd:
      return "smooth_maxpool_fwd";
    case PoolOp::smooth_bwd:
      return "smooth_maxpool_bwd";
  }
  return "?";
}

bool is_smooth(PoolOp op) {
  return op == PoolOp::smooth_fwd || op == PoolOp::smooth_bwd;
}
bool is_backward(PoolOp op) {
  return op == PoolOp::max_bwd || op == PoolOp::avg_bwd || op == PoolOp::smooth_bwd;
}

struct Recipe {
  PoolArguments args;
  bool specials = false;
  double beta = 1.0;
  uint64_t key = 0;
};

uint64_t prod(const Dims& d) {
  uint64_t v = 1;
  for (uint64_t e : d) v *= e;
  return v;
}

uint64_t out_dim(uint64_t in, uint64_t k, uint64_t s, uint64_t p) {
  if (in == 0 || p > k / 2 || in + 2 * p < k) return 0;
  return (in + 2 * p - k) / s + 1;
}

Dims out_dims(const PoolArguments& a) {
  Dims o;
  for (size_t i = 0; i < a.in.size(); ++i) {
    o.push_back(out_dim(a.in[i], a.kernel[i], a.stride[i], a.padding[i]));
  }
  return o;
}

std::string dims_of(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

std::vector<int64_t> unflat(uint64_t f, const Dims& e) {
  std::vector<int64_t> idx(e.size());
  for (size_t a = e.size(); a-- > 0;) {
    idx[a] = static_cast<int64_t>(f % e[a]);
    f /= e[a];
  }
  return idx;
}

// The host evaluation of the contract over the given rank: per output window the kernel offsets
// in row-major order with the input offset in the channel, or -1 for padding.
class HostPool {
 public:
  explicit HostPool(const PoolArguments& a)
      : a_(a), out_(out_dims(a)), iv_(prod(a.in)), ov_(prod(out_)), kv_(prod(a.kernel)) {}

  uint64_t in_volume() const { return iv_; }
  uint64_t out_volume() const { return ov_; }
  uint64_t kernel_volume() const { return kv_; }

  std::vector<int64_t> window(uint64_t q) const {
    const std::vector<int64_t> o = unflat(q, out_);
    std::vector<int64_t> result;
    for (uint64_t kappa = 0; kappa < kv_; ++kappa) {
      const std::vector<int64_t> kk = unflat(kappa, a_.kernel);
      int64_t at = 0;
      bool inside = true;
      for (size_t d = 0; d < a_.in.size(); ++d) {
        const int64_t i =
            o[d] * static_cast<int64_t>(a_.stride[d]) - static_cast<int64_t>(a_.padding[d]) + kk[d];
        if (i < 0 || i >= static_cast<int64_t>(a_.in[d])) inside = false;
        at = at * static_cast<int64_t>(a_.in[d]) + i;
      }
      result.push_back(inside ? at : -1);
    }
    return result;
  }

  template <class T>
  static int64_t select(const T* xc, const std::vector<int64_t>& w) {
    int64_t sel = -1;
    T best = T(0);
    for (int64_t at : w) {
      if (at < 0) continue;
      if (sel < 0 || xc[at] > best || std::isnan(xc[at])) {
        best = xc[at];
        sel = at;
      }
    }
    return sel;
  }

  template <class T>
  static T pivot_step(T p, T v, bool upper) {
    if (std::isnan(v)) return p;
    if (std::isnan(p)) return v;
    if (v == p) return upper ? (std::signbit(p) ? v : p) : (std::signbit(p) ? p : v);
    return upper ? std::max(p, v) : std::min(p, v);
  }

  template <class T>
  static T exp_t(T v) {
    return static_cast<T>(std::exp(static_cast<long double>(v)));
  }

  template <class T>
  void stats(const T* xc, const std::vector<int64_t>& w, T b, T& pivot, T& d) const {
    const bool upper = b > T(0);
    pivot = upper ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    for (int64_t at : w) pivot = pivot_step(pivot, at < 0 ? T(0) : xc[at], upper);
    d = T(0);
    for (int64_t at : w) d = d + exp_t(((at < 0 ? T(0) : xc[at]) - pivot) * b);
  }

  // The op's output for inputs x, dy (unused ones ignored).
  template <class T>
  std::vector<T> eval(PoolOp op, const T* x, const T* dy, T b) const {
    const uint64_t c_count = a_.channels;
    const bool bwd = is_backward(op);
    std::vector<T> r(bwd ? c_count * iv_ : c_count * ov_, T(0));
    const T div = static_cast<T>(kv_);
    for (uint64_t c = 0; c < c_count; ++c) {
      const T* xc = x == nullptr ? nullptr : x + c * iv_;
      T* rc = r.data() + (bwd ? c * iv_ : c * ov_);
      for (uint64_t q = 0; q < ov_; ++q) {
        const std::vector<int64_t> w = window(q);
        const T g = bwd ? dy[c * ov_ + q] : T(0);
        switch (op) {
          case PoolOp::max_fwd:
            rc[q] = xc[select(xc, w)];
            break;
          case PoolOp::max_bwd: {
            const int64_t s = select(xc, w);
            rc[s] = rc[s] + g;
            break;
          }
          case PoolOp::avg_fwd: {
            T s = T(0);
            for (int64_t at : w) {
              if (at >= 0) s = s + xc[at];
            }
            rc[q] = s / div;
            break;
          }
          case PoolOp::avg_bwd:
            for (int64_t at : w) {
              if (at >= 0) rc[at] = rc[at] + g / div;
            }
            break;
          case PoolOp::smooth_fwd: {
            T p, d;
            stats(xc, w, b, p, d);
            const T l = static_cast<T>(std::log(static_cast<long double>(d)));
            const T t = l * (T(1) / b);
            rc[q] = p + t;
            break;
          }
          case PoolOp::smooth_bwd:
            break;
        }
      }
      if (op == PoolOp::smooth_bwd) {
        // Increasing kernel offset: every kappa reaches each input from at most one window.
        std::vector<T> piv(ov_), den(ov_);
        std::vector<std::vector<int64_t>> windows(ov_);
        for (uint64_t q = 0; q < ov_; ++q) {
          windows[q] = window(q);
          stats(xc, windows[q], b, piv[q], den[q]);
        }
        for (uint64_t kappa = 0; kappa < kv_; ++kappa) {
          for (uint64_t q = 0; q < ov_; ++q) {
            const int64_t at = windows[q][kappa];
            if (at < 0) continue;
            const T weight = exp_t((xc[at] - piv[q]) * b) / den[q];
            rc[at] = rc[at] + dy[c * ov_ + q] * weight;
          }
        }
      }
    }
    return r;
  }

  // sum over the windows o containing each input of |dY[o]| (the backward bound's scale).
  template <class T>
  std::vector<double> cotangent_mass(const T* dy) const {
    std::vector<double> m(a_.channels * iv_, 0.0);
    for (uint64_t c = 0; c < a_.channels; ++c) {
      for (uint64_t q = 0; q < ov_; ++q) {
        for (int64_t at : window(q)) {
          if (at >= 0) m[c * iv_ + at] += std::fabs(static_cast<double>(dy[c * ov_ + q]));
        }
      }
    }
    return m;
  }

 private:
  PoolArguments a_;
  Dims out_;
  uint64_t iv_, ov_, kv_;
};

class PoolCase : public ComparedCase {
 public:
  PoolCase(PoolOp op, Dtype dtype, Recipe r) : op_(op), dtype_(dtype), r_(std::move(r)) {}

  std::string op() const override { return op_name(op_); }
  Dtype dtype() const override { return dtype_; }
  std::string shape() const override {
    const PoolArguments& a = r_.args;
    return "C = " + std::to_string(a.channels) + ", in " + dims_of(a.in) + ", kernel " +
           dims_of(a.kernel) + ", stride " + dims_of(a.stride) + ", padding " + dims_of(a.padding) +
           (r_.specials ? ", NaN/inf" : "");
  }
  std::vector<double> host_scalars() const override {
    return is_smooth(op_) ? std::vector<double>{r_.beta} : std::vector<double>{};
  }
  Bound bound() const override {
    if (!is_smooth(op_)) return Bound::bit_exact();
    return Bound::relative(0, op_ == PoolOp::smooth_fwd ? "<= eps((2n+4+5ln n)/|b| + 3|y|)"
                                                        : "<= eps((4n+12) sum|dY| + 2|dx|)");
  }
  std::string oracle_name() const override { return "host pooling loops"; }
  std::string oracle_label() const override { return "ref vs host"; }
  Bound oracle_bound() const override { return Bound::bit_exact(); }

  void make_inputs(uint64_t seed) override {
    const HostPool host(r_.args);
    const uint64_t nx = r_.args.channels * host.in_volume();
    const uint64_t ny = r_.args.channels * host.out_volume();
    const uint64_t key = splitmix64_finalize(seed ^ r_.key);
    uint64_t counter = 0;
    auto next = [&]() { return splitmix64_finalize(key + counter++); };
    auto value = [&](bool specials) {
      const uint64_t h = next();
      if (specials) {
        switch (h % 29) {
          case 0:
            return static_cast<double>(NAN);
          case 1:
            return static_cast<double>(INFINITY);
          case 2:
            return -static_cast<double>(INFINITY);
          case 3:
            return -0.0;
          default:
            break;
        }
      }
      // Quarter steps make ties common; a few wide values exercise the pivot.
      const double u = static_cast<double>(h >> 11) / static_cast<double>(uint64_t{1} << 53);
      if (h % 13 == 5) return (u * 2 - 1) * 1e6;
      return std::round((u * 2 - 1) * 32) / 4;
    };
    x_ = HostArray(dtype_, nx);
    dy_ = HostArray(dtype_, ny);
    for (uint64_t i = 0; i < nx; ++i) set(x_, i, value(r_.specials));
    for (uint64_t i = 0; i < ny; ++i) set(dy_, i, value(r_.specials && !is_smooth(op_)));
    mass_.clear();
    if (op_ == PoolOp::smooth_bwd) {
      mass_ = dtype_ == Dtype::f32 ? host.cotangent_mass(dy_.as<float>())
                                   : host.cotangent_mass(dy_.as<double>());
    }
  }

  HostArrays run(Backend backend) override {
    const auto x = upload(backend, x_, 0, x_.size());
    const auto dy = upload(backend, dy_, 0, dy_.size());
    const char* op = "parity";
    const PoolArguments& a = r_.args;
    switch (op_) {
      case PoolOp::max_fwd:
        return {download(*maxpool_fwd(*x, a, op))};
      case PoolOp::max_bwd:
        return {download(*maxpool_bwd(*x, *dy, a, op))};
      case PoolOp::avg_fwd:
        return {download(*avgpool_fwd(*x, a, op))};
      case PoolOp::avg_bwd:
        return {download(*avgpool_bwd(*dy, a, op))};
      case PoolOp::smooth_fwd:
        return {download(*smooth_maxpool_fwd(*x, r_.beta, a, op))};
      case PoolOp::smooth_bwd:
        return {download(*smooth_maxpool_bwd(*x, *dy, r_.beta, a, op))};
    }
    return {};
  }

  Deviation measure(size_t, uint64_t i, double got, double want,
                    const Bound& bound) const override {
    Deviation d;
    d.ulps = ulps_between(got, want, dtype_);
    if (std::isfinite(got) && std::isfinite(want) && want != 0) {
      d.rel = std::fabs(got - want) / std::fabs(want);
    }
    if (bound.kind != Bound::Kind::relative) return d;
    if (std::isnan(want) || std::isnan(got) || !std::isfinite(want) || !std::isfinite(got)) {
      d.within = false;  // non-finite results must agree bit for bit (or both be NaN)
      return d;
    }
    d.within = std::fabs(got - want) <= allowed(i, want);
    return d;
  }

  std::string describe(size_t output, uint64_t i, double got, double want) const override {
    std::string s = "output " + std::to_string(output) + " element " + std::to_string(i) + ": " +
                    number(got, dtype_) + ", expected " + number(want, dtype_);
    if (is_smooth(op_)) s += ", bound " + number(allowed(i, want), Dtype::f64);
    return s;
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    const HostPool host(r_.args);
    HostArray want(dtype_, 0);
    if (dtype_ == Dtype::f32) {
      want = to_host(
          host.eval<float>(op_, x_.as<float>(), dy_.as<float>(), static_cast<float>(r_.beta)));
    } else {
      want = to_host(host.eval<double>(op_, x_.as<double>(), dy_.as<double>(), r_.beta));
    }
    if (reference.empty()) return;
    const HostArray& got = reference[0];
    for (uint64_t i = 0; i < want.size() && i < got.size(); ++i) {
      const double g = got.at(i), w = want.at(i);
      if (same_bits(g, w) || (std::isnan(g) && std::isnan(w))) {
        stats.record_equal();
      } else {
        Deviation d;
        d.ulps = ulps_between(g, w, dtype_);
        stats.record(d, [&] { return describe(0, i, g, w); });
      }
    }
  }

 private:
  double eps() const { return dtype_ == Dtype::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53); }

  double allowed(uint64_t i, double want) const {
    const double n = static_cast<double>(prod(r_.args.kernel));
    const double b = std::fabs(
        dtype_ == Dtype::f32 ? static_cast<double>(static_cast<float>(r_.beta)) : r_.beta);
    if (op_ == PoolOp::smooth_fwd) {
      return eps() * ((2 * n + 4 + 5 * std::log(n)) / b + 3 * std::fabs(want));
    }
    const double m = i < mass_.size() ? mass_[i] : 0.0;
    return eps() * ((4 * n + 12) * m + 2 * std::fabs(want));
  }

  template <class T>
  HostArray to_host(const std::vector<T>& v) const {
    HostArray h(dtype_, v.size());
    for (uint64_t i = 0; i < v.size(); ++i) h.as<T>()[i] = v[i];
    return h;
  }

  static void set(HostArray& a, uint64_t i, double v) {
    if (a.dtype() == Dtype::f32) {
      a.as<float>()[i] = static_cast<float>(v);
    } else {
      a.as<double>()[i] = v;
    }
  }

  PoolOp op_;
  Dtype dtype_;
  Recipe r_;
  HostArray x_, dy_;
  std::vector<double> mass_;  // smooth_bwd: sum of |dY| over the windows containing each input
};

PoolArguments geometry(const Dims& in, const Dims& k, const Dims& s, const Dims& p, uint32_t c) {
  PoolArguments a;
  a.in = in;
  a.kernel = k;
  a.stride = s;
  a.padding = p;
  a.channels = c;
  return a;
}

// --shapes: rank 1-3, per axis a kernel, a stride (also above the kernel), padding 0, kernel/2 or
// between (and in a few draws kernel/2 + 1: an empty result) and an extent (0 included; kernels
// larger than it included), 0-16 channels, one of the fixed recipes' betas. The largest extent or
// the channel count is halved until input and output fit the budget and the windows' positions
// (channels x outputs x kernel) fit `work`.
PoolArguments random_geometry(ShapeDraw& draw, uint64_t budget, uint64_t work) {
  PoolArguments a;
  const size_t rank = 1 + draw.below(3);
  uint64_t channels = draw.extent(16, 5);
  uint64_t room = budget / std::max<uint64_t>(channels, 1);
  for (size_t d = 0; d < rank; ++d) {
    const uint64_t k = draw.extent(rank == 1 ? 9 : rank == 2 ? 5 : 4);
    a.kernel.push_back(k);
    a.stride.push_back(draw.extent(6));
    const uint64_t pick = draw.below(20);
    a.padding.push_back(pick == 0   ? k / 2 + 1
                        : pick < 7  ? 0
                        : pick < 13 ? k / 2
                                    : draw.below(k / 2 + 1));
    a.in.push_back(draw.extent(integer_root(room, rank - d), 4));
    room /= std::max<uint64_t>(a.in.back(), 1);
  }
  for (;;) {
    const uint64_t iv = prod(a.in), ov = prod(out_dims(a)), kv = prod(a.kernel);
    const uint64_t c = std::max<uint64_t>(channels, 1);
    if (c * iv <= budget && c * ov <= budget && c * ov * kv <= work) break;
    uint64_t* largest = channels > 1 ? &channels : nullptr;
    for (uint64_t& e : a.in) {
      if (e > 1 && (largest == nullptr || e > *largest)) largest = &e;
    }
    if (largest == nullptr) break;
    *largest /= 2;
  }
  a.channels = static_cast<uint32_t>(channels);
  return a;
}

CaseList make_pool_cases(const Options& options) {
  std::vector<Recipe> recipes;
  uint64_t key = 0x9001;
  auto add = [&](const PoolArguments& a, double beta) {
    for (bool specials : {false, true}) recipes.push_back({a, specials, beta, key++});
  };
  // The bench geometries, channels scaled to about n input elements.
  const uint32_t planes = static_cast<uint32_t>(std::max<uint64_t>(1, options.n / (112 * 112)));
  add(geometry({112, 112}, {2, 2}, {2, 2}, {0, 0}, planes), 1.0);
  add(geometry({112, 112}, {3, 3}, {1, 1}, {1, 1}, planes), -0.5);
  // Odd extents beside the vector path, stride > kernel, padding = kernel/2, rank 3, rank 1.
  add(geometry({37, 41}, {2, 2}, {2, 2}, {0, 0}, 5), 2.0);
  add(geometry({30, 31}, {3, 2}, {4, 3}, {1, 1}, 4), 1.0);
  add(geometry({9, 10, 11}, {3, 2, 3}, {2, 2, 1}, {1, 1, 1}, 3), 0.25);
  add(geometry({6, 6, 6}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, 7), 1.0);
  add(geometry({1000}, {5}, {2}, {2}, 9), -3.0);
  add(geometry({1000}, {4}, {7}, {2}, 3), 1.0);
  // Kernels larger than the input (with padding) and a 3-D input smaller than its kernel.
  add(geometry({3, 2}, {5, 4}, {1, 2}, {2, 2}, 6), 1.0);
  add(geometry({1, 2, 1}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, 4), 1.0);
  // Empty: zero channels, an empty extent, padding beyond half the kernel, kernel past the input.
  add(geometry({8, 8}, {2, 2}, {2, 2}, {0, 0}, 0), 1.0);
  add(geometry({0, 8}, {2, 2}, {2, 2}, {0, 0}, 3), 1.0);
  add(geometry({8}, {2}, {1}, {2}, 3), 1.0);
  add(geometry({3}, {9}, {1}, {2}, 3), 1.0);
  // Random geometries of rank 1-3.
  uint64_t h = 0x51ed;
  auto draw = [&](uint64_t m) {
    h = splitmix64_finalize(h + 1);
    return h % m;
  };
  for (int n = 0; n < 24; ++n) {
    PoolArguments a;
    const size_t rank = 1 + draw(3);
    for (size_t d = 0; d < rank; ++d) {
      const uint64_t k = 1 + draw(4);
      a.kernel.push_back(k);
      a.stride.push_back(1 + draw(5));
      a.padding.push_back(draw(k / 2 + 1));
      a.in.push_back(1 + draw(rank == 1 ? 300 : rank == 2 ? 40 : 12));
    }
    a.channels = static_cast<uint32_t>(1 + draw(6));
    add(a, draw(2) == 0 ? 1.5 : -0.75);
  }
  // --shapes: the drawn geometries, half of them with special values; their window positions stay
  // within 64 x 2^16 (the host oracle walks each one).
  ShapeDraw shape_draw(options.seed, "pool");
  const uint64_t budget = random_shape_budget(options);
  const uint64_t positions = 64 * std::min<uint64_t>(budget, uint64_t{1} << 16);
  const std::vector<double> betas{1.0, -0.5, 2.0, 0.25, -3.0, 1.5, -0.75};
  for (uint64_t i = 0; i < options.shapes; ++i) {
    const PoolArguments a = random_geometry(shape_draw, budget, positions);
    const double beta = shape_draw.pick(betas);
    recipes.push_back({a, shape_draw.percent(50), beta, key++});
  }
  CaseList list;
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    for (PoolOp op : {PoolOp::max_fwd, PoolOp::max_bwd, PoolOp::avg_fwd, PoolOp::avg_bwd,
                      PoolOp::smooth_fwd, PoolOp::smooth_bwd}) {
      for (const Recipe& r : recipes) list.push_back(std::make_unique<PoolCase>(op, dtype, r));
    }
  }
  return list;
}

}  // namespace

const FamilyRegistration kPoolFamily("pool", &make_pool_cases);

}  // namespace tlrt::parity
