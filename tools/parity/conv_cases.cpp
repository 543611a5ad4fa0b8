// Parity cases of the convolution symbols (SPEC-ops 14.2, 14.6): conv_fwd, conv_bwd,
// convtranspose_fwd, convtranspose_bwd and conv_io in float32 and float64 over fixed random
// geometries: rank 1, 2 and 3, stride larger than the kernel, padding = kernel/2, kernels larger
// than the input, zero channels, empty extents, and for conv_io groups, dilation, asymmetric
// padding and leading batch axes, and with --shapes N more geometries drawn from the seed. Inputs
// uniform in [-1, 1].
//   * "<op>": the subject (the CUDA backend on a device) against the reference backend, per
//     element within docs/NUMERICS.md ("Convolution"): |got - want| <= 2 g_{n} M + u |want|, with
//     M the same convolution of the absolute values (run on the reference backend) and n the
//     largest count of terms of one result (+2);
//   * oracle (without a GPU, or with --oracle): the reference backend against a host evaluation
//     of the spec's formulas in scatter form (each input term added to the outputs it reaches), in
//     long double, within 2 g_n(2^-64) M + 1 ULP (both are one rounding of a long double sum; with
//     cancellation the two long double sums may round to neighbouring float64 values).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/random/splitmix.h"
#include "runtime/conv_dispatch.h"
#include "runtime/conv_geometry.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;

enum class Op { fwd, bwd, tfwd, tbwd, io };

const char* op_name(Op op) {
  switch (op) {
    case Op::fwd:
      return "conv_fwd";
    case Op::bwd:
      return "conv_bwd";
    case Op::tfwd:
      return "convtranspose_fwd";
    case Op::tbwd:
      return "convtranspose_bwd";
    case Op::io:
      return "conv_io";
  }
  return "";
}

// One geometry. Fixed-layout ops use in, k, s, p (before), cin, cout; conv_io also lead (the
// leading axes), after, dil, groups.
struct Recipe {
  Dims in, k, s, p;
  uint64_t cin = 1, cout = 1;
  Dims lead, after, dil;
  uint64_t groups = 1;
  uint64_t key = 0;
};

uint64_t volume(const Dims& d) {
  uint64_t v = 1;
  for (uint64_t e : d) v *= e;
  return v;
}

std::string dims_str(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// Row-major multi-index of flat position f over extents e.
Dims unflatten(uint64_t f, const Dims& e) {
  Dims idx(e.size());
  for (size_t a = e.size(); a-- > 0;) {
    idx[a] = f % e[a];
    f /= e[a];
  }
  return idx;
}

uint64_t flatten(const Dims& idx, const Dims& e) {
  uint64_t f = 0;
  for (size_t a = 0; a < e.size(); ++a) f = f * e[a] + idx[a];
  return f;
}

class ConvCase : public ComparedCase {
 public:
  ConvCase(Op op, Dtype dtype, Recipe r) : op_(op), dtype_(dtype), r_(std::move(r)) {
    if (op_ == Op::io) {
      Dims input_dims = r_.lead;
      input_dims.push_back(r_.cin);
      input_dims.insert(input_dims.end(), r_.in.begin(), r_.in.end());
      Dims kernel_dims{r_.cout, r_.cin};
      kernel_dims.insert(kernel_dims.end(), r_.k.begin(), r_.k.end());
      io_ = conv_io_geometry(input_dims, kernel_dims, r_.s, r_.p, r_.after, r_.dil, r_.groups,
                             "parity");
    } else {
      g_ = conv_geometry(r_.in, r_.k, r_.s, r_.p,
                         transposed() ? ConvKind::transposed : ConvKind::convolution, "parity");
    }
  }

  std::string op() const override { return op_name(op_); }
  Dtype dtype() const override { return dtype_; }
  std::string shape() const override {
    std::string s = "in " + dims_str(r_.in) + ", k " + dims_str(r_.k) + ", s " + dims_str(r_.s) +
                    ", p " + dims_str(r_.p) + ", Cin " + std::to_string(r_.cin) + ", Cout " +
                    std::to_string(r_.cout);
    if (op_ == Op::io) {
      s += ", lead " + dims_str(r_.lead) + ", after " + dims_str(r_.after) + ", dil " +
           dims_str(r_.dil) + ", groups " + std::to_string(r_.groups);
    }
    return s;
  }
  Bound bound() const override { return Bound::relative(0, "<= 2 g_n M + u|y|"); }
  std::string oracle_name() const override { return "host scatter form (long double)"; }
  std::string oracle_label() const override { return "ref vs host"; }
  Bound oracle_bound() const override { return Bound::relative(0, "<= 2 g_n(2^-64) M + 1 ULP"); }

  void make_inputs(uint64_t seed) override {
    const uint64_t key = splitmix64_finalize(seed ^ r_.key);
    uint64_t counter = 0;
    auto fill = [&](uint64_t n) {
      HostArray a(dtype_, n);
      for (uint64_t i = 0; i < n; ++i) {
        const double u =
            static_cast<double>(splitmix64_finalize(key + counter++) >> 11) * 0x1p-53 * 2.0 - 1.0;
        set(a, i, u);
      }
      return a;
    };
    if (op_ == Op::io) {
      x_ = fill(volume(io_.input_dims));
      w_ = fill(volume(io_.kernel_dims));
      o_ = fill(io_.cout);
    } else {
      x_ = fill(r_.cin * g_.in_volume);
      w_ = fill(r_.cin * r_.cout * g_.kernel_volume);
      o_ = fill(backward() ? r_.cout * g_.out_volume : r_.cout);
    }
    // The magnitudes: the same op on |inputs|, on the reference backend.
    HostArray ax = absolute(x_), aw = absolute(w_), ao = absolute(o_);
    magnitude_ = run_on(Backend::reference, ax, aw, ao);
  }

  HostArrays run(Backend backend) override { return run_on(backend, x_, w_, o_); }

  Deviation measure(size_t output, uint64_t i, double got, double want,
                    const Bound& bound) const override {
    Deviation d;
    d.ulps = ulps_between(got, want, dtype_);
    if (std::isfinite(got) && std::isfinite(want) && want != 0) {
      d.rel = std::fabs(got - want) / std::fabs(want);
    }
    if (bound.kind == Bound::Kind::ulp) {
      d.within = d.ulps <= bound.limit;
      return d;
    }
    const double allowed = allowed_at(output, i, want);
    d.within = std::isfinite(got) && std::fabs(got - want) <= allowed;
    return d;
  }

  std::string describe(size_t output, uint64_t i, double got, double want) const override {
    return "output " + std::to_string(output) + " element " + std::to_string(i) + ": " +
           number(got, dtype_) + ", expected " + number(want, dtype_) + ", bound " +
           number(allowed_at(output, i, want), Dtype::f64);
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
    const std::vector<std::vector<long double>> want = oracle();
    for (size_t o = 0; o < want.size() && o < reference.size(); ++o) {
      for (uint64_t i = 0; i < want[o].size() && i < reference[o].size(); ++i) {
        const double g = reference[o].at(i);
        const double w = dtype_ == Dtype::f32 ? static_cast<double>(static_cast<float>(want[o][i]))
                                              : static_cast<double>(want[o][i]);
        if (same_bits(g, w)) {
          stats.record_equal();
        } else {
          Deviation d;
          d.ulps = ulps_between(g, w, dtype_);
          if (std::isfinite(g) && std::isfinite(w) && w != 0)
            d.rel = std::fabs(g - w) / std::fabs(w);
          // Both are long double sums rounded once: they differ by the two sums' errors (at
          // most g_n(2^-64) M each) carried through the final rounding (one ULP).
          const double nl = static_cast<double>(terms()) * 0x1p-64;
          const double m =
              o < magnitude_.size() && i < magnitude_[o].size() ? magnitude_[o].at(i) : 0.0;
          d.within = std::fabs(g - w) <= 2 * nl / (1 - nl) * m + ulp_of(dtype_, w);
          stats.record(d, [&] {
            return "output " + std::to_string(o) + " element " + std::to_string(i) + ": " +
                   number(g, dtype_) + ", host " + number(w, dtype_);
          });
        }
      }
    }
  }

 private:
  bool transposed() const { return op_ == Op::tfwd || op_ == Op::tbwd; }
  bool backward() const { return op_ == Op::bwd || op_ == Op::tbwd; }

  static void set(HostArray& a, uint64_t i, double v) {
    if (a.dtype() == Dtype::f32) {
      a.as<float>()[i] = static_cast<float>(v);
    } else {
      a.as<double>()[i] = v;
    }
  }

  static HostArray absolute(const HostArray& a) {
    HostArray r(a.dtype(), a.size());
    for (uint64_t i = 0; i < a.size(); ++i) set(r, i, std::fabs(a.at(i)));
    return r;
  }

  HostArrays run_on(Backend backend, const HostArray& x, const HostArray& w,
                    const HostArray& o) const {
    const auto bx = upload(backend, x, 0, x.size());
    const auto bw = upload(backend, w, 0, w.size());
    const auto bo = upload(backend, o, 0, o.size());
    const char* op = "parity";
    if (op_ == Op::io) return {download(*conv_io(*bx, *bw, *bo, io_, op))};
    if (!backward()) {
      return {download(*conv_forward(*bx, *bw, *bo, g_, r_.cin, r_.cout, transposed(), op))};
    }
    ConvGradients gr = conv_backward(*bx, *bw, *bo, g_, r_.cin, r_.cout, transposed(), op);
    return {download(*gr.kernel), download(*gr.bias), download(*gr.input)};
  }

  // Terms of one result, + 2 (the bias and the final rounding), the largest over the outputs.
  uint64_t terms() const {
    if (op_ == Op::io) return r_.cin / r_.groups * volume(r_.k) + 2;
    return (r_.cin + r_.cout) * g_.kernel_volume + g_.in_volume + g_.out_volume + 2;
  }

  double allowed_at(size_t output, uint64_t i, double want) const {
    const double u = dtype_ == Dtype::f32 ? 0x1p-24 : 0x1p-53;
    const double nu = static_cast<double>(terms()) * u;
    const double m = output < magnitude_.size() && i < magnitude_[output].size()
                         ? magnitude_[output].at(i)
                         : 0.0;
    return 2 * nu / (1 - nu) * m + u * std::fabs(want);
  }

  // The spec's formulas, each input term added to the outputs it reaches.
  std::vector<std::vector<long double>> oracle() const {
    using L = long double;
    if (op_ == Op::io) {
      const uint64_t batch = io_.batch, cin = io_.cin, cout = io_.cout, gr = io_.groups;
      const Dims& in = io_.in;
      const Dims& out = io_.out;
      const Dims& k = io_.kernel;
      const uint64_t iv = volume(in), ov = volume(out), kv = volume(k);
      std::vector<L> y(batch * cout * ov);
      for (uint64_t n = 0; n < batch; ++n) {
        for (uint64_t o = 0; o < cout; ++o) {
          for (uint64_t q = 0; q < ov; ++q) y[(n * cout + o) * ov + q] = o_.at(o);
        }
      }
      for (uint64_t n = 0; n < batch; ++n) {
        for (uint64_t c = 0; c < cin; ++c) {
          const uint64_t g = c / (cin / gr);
          for (uint64_t o = g * (cout / gr); o < (g + 1) * (cout / gr); ++o) {
            for (uint64_t kk = 0; kk < kv; ++kk) {
              const Dims kap = unflatten(kk, k);
              for (uint64_t q = 0; q < ov; ++q) {
                const Dims qi = unflatten(q, out);
                Dims ii(in.size());
                bool inside = true;
                for (size_t a = 0; a < in.size(); ++a) {
                  const int64_t pos =
                      static_cast<int64_t>(qi[a] * io_.stride[a] + kap[a] * io_.dilation[a]) -
                      static_cast<int64_t>(io_.before[a]);
                  inside = inside && pos >= 0 && pos < static_cast<int64_t>(in[a]);
                  ii[a] = static_cast<uint64_t>(pos);
                }
                if (!inside) continue;
                y[(n * cout + o) * ov + q] +=
                    static_cast<L>(w_.at((o * cin + c) * kv + kk)) *
                    static_cast<L>(x_.at((n * cin + c) * iv + flatten(ii, in)));
              }
            }
          }
        }
      }
      return {y};
    }
    // Fixed layout: the conv pairs (input position i, output position q, offset kappa) with
    // q*s + kappa - p = i, for conv (i in g.in, q in g.out) and transposed (i in g.in, q in
    // g.out with q = i*s + kappa - p).
    const Dims& in = g_.in;
    const Dims& out = g_.out;
    const Dims& k = g_.kernel;
    const uint64_t iv = g_.in_volume, ov = g_.out_volume, kv = g_.kernel_volume;
    const uint64_t cin = r_.cin, cout = r_.cout;
    // For each (i, kappa): the q it pairs with, if any.
    auto pair_q = [&](const Dims& ii, const Dims& kap, uint64_t* q) {
      Dims qi(in.size());
      for (size_t a = 0; a < in.size(); ++a) {
        if (!transposed()) {
          // q*s = i + p - kappa
          const int64_t num =
              static_cast<int64_t>(ii[a] + g_.padding[a]) - static_cast<int64_t>(kap[a]);
          if (num < 0 || num % static_cast<int64_t>(g_.stride[a]) != 0) return false;
          qi[a] = static_cast<uint64_t>(num) / g_.stride[a];
        } else {
          const int64_t pos = static_cast<int64_t>(ii[a] * g_.stride[a] + kap[a]) -
                              static_cast<int64_t>(g_.padding[a]);
          if (pos < 0) return false;
          qi[a] = static_cast<uint64_t>(pos);
        }
        if (qi[a] >= out[a]) return false;
      }
      *q = flatten(qi, out);
      return true;
    };
    // W index for input channel c, output channel o.
    auto widx = [&](uint64_t c, uint64_t o, uint64_t kk) {
      return (transposed() ? (c * cout + o) : (o * cin + c)) * kv + kk;
    };
    const bool empty = x_.size() == 0 || w_.size() == 0;
    if (!backward()) {
      std::vector<L> y(cout * ov);
      if (y.empty()) return {y};
      for (uint64_t o = 0; o < cout; ++o) {
        for (uint64_t q = 0; q < ov; ++q) y[o * ov + q] = o_.at(o);
      }
      if (empty) return {y};
      for (uint64_t c = 0; c < cin; ++c) {
        for (uint64_t i = 0; i < iv; ++i) {
          const Dims ii = unflatten(i, in);
          for (uint64_t kk = 0; kk < kv; ++kk) {
            uint64_t q;
            if (!pair_q(ii, unflatten(kk, k), &q)) continue;
            for (uint64_t o = 0; o < cout; ++o) {
              y[o * ov + q] +=
                  static_cast<L>(w_.at(widx(c, o, kk))) * static_cast<L>(x_.at(c * iv + i));
            }
          }
        }
      }
      return {y};
    }
    std::vector<L> dw(w_.size()), db(cout), dx(x_.size());
    for (uint64_t o = 0; o < cout; ++o) {
      for (uint64_t q = 0; q < ov && o_.size() != 0; ++q) db[o] += o_.at(o * ov + q);
    }
    if (empty || o_.size() == 0) return {dw, db, dx};
    for (uint64_t c = 0; c < cin; ++c) {
      for (uint64_t i = 0; i < iv; ++i) {
        const Dims ii = unflatten(i, in);
        for (uint64_t kk = 0; kk < kv; ++kk) {
          uint64_t q;
          if (!pair_q(ii, unflatten(kk, k), &q)) continue;
          for (uint64_t o = 0; o < cout; ++o) {
            const L dy = o_.at(o * ov + q);
            dw[widx(c, o, kk)] += dy * static_cast<L>(x_.at(c * iv + i));
            dx[c * iv + i] += dy * static_cast<L>(w_.at(widx(c, o, kk)));
          }
        }
      }
    }
    return {dw, db, dx};
  }

  Op op_;
  Dtype dtype_;
  Recipe r_;
  ConvGeometry g_;
  ConvIoGeometry io_;
  HostArray x_, w_, o_;
  HostArrays magnitude_;
};

// Halves the largest of the sizes above 1 (false when none is).
bool halve_largest(const std::vector<uint64_t*>& sizes) {
  uint64_t* largest = nullptr;
  for (uint64_t* v : sizes) {
    if (*v > 1 && (largest == nullptr || *v > *largest)) largest = v;
  }
  if (largest == nullptr) return false;
  *largest /= 2;
  return true;
}

// --shapes, fixed layout: rank 1-3, kernel, stride (also above the kernel) and padding (0,
// kernel/2 or up to the kernel) per axis, channels 0-32 and extents 0 included; then the largest
// channel count or extent is halved until every operand of the conv and the transposed conv fits
// the budget and their multiply-adds fit `work`.
Recipe random_fixed(ShapeDraw& draw, uint64_t budget, uint64_t work) {
  Recipe r;
  const size_t rank = 1 + draw.below(3);
  r.cin = draw.extent(32, 5);
  r.cout = draw.extent(32, 5);
  uint64_t room = budget / std::max<uint64_t>({r.cin, r.cout, 1});
  for (size_t a = 0; a < rank; ++a) {
    const uint64_t k = draw.extent(rank == 1 ? 9 : rank == 2 ? 7 : 5);
    r.k.push_back(k);
    r.s.push_back(draw.extent(5));
    const uint64_t pick = draw.below(3);
    r.p.push_back(pick == 0 ? 0 : pick == 1 ? k / 2 : draw.between(0, k));
    r.in.push_back(draw.extent(integer_root(room, rank - a), 4));
    room /= std::max<uint64_t>(r.in.back(), 1);
  }
  std::vector<uint64_t*> sizes{&r.cin, &r.cout};
  for (uint64_t& e : r.in) sizes.push_back(&e);
  std::vector<uint64_t*> kernel;
  for (uint64_t& e : r.k) kernel.push_back(&e);
  for (;;) {
    uint64_t iv = 1, kv = 1, ov = 1, tv = 1;
    for (size_t a = 0; a < rank; ++a) {
      iv *= r.in[a];
      kv *= r.k[a];
      ov *= conv_out_dim(r.in[a], r.k[a], r.s[a], r.p[a], "parity");
      tv *= conv_transpose_out_dim(r.in[a], r.k[a], r.s[a], r.p[a], "parity");
    }
    const uint64_t cin = std::max<uint64_t>(r.cin, 1), cout = std::max<uint64_t>(r.cout, 1);
    const bool fits = cin * iv <= budget && cout * std::max(ov, tv) <= budget &&
                      cin * cout * kv <= budget && cin * cout * kv * std::max(iv, ov) <= work;
    if (fits || !(halve_largest(sizes) || halve_largest(kernel))) break;
  }
  return r;
}

// --shapes, conv_io: 0-2 leading axes (0 included), 1-8 groups of 1-8 input and output channels
// each (depthwise when one), rank 1-3, kernel, stride, dilation 1-3 and padding before and after
// up to the dilated kernel per axis, extents 0 included; shrunk like the fixed layout.
Recipe random_io(ShapeDraw& draw, uint64_t budget, uint64_t work) {
  Recipe r;
  const uint64_t leading = draw.below(3);
  for (uint64_t a = 0; a < leading; ++a) r.lead.push_back(draw.extent(4, 5));
  uint64_t groups = draw.percent(40) ? 1 : draw.extent(8);
  uint64_t cin_per = draw.extent(8), cout_per = draw.extent(8);
  const size_t rank = 1 + draw.below(3);
  uint64_t room =
      budget / std::max<uint64_t>(volume(r.lead) * groups * std::max(cin_per, cout_per), 1);
  for (size_t a = 0; a < rank; ++a) {
    const uint64_t k = draw.extent(rank == 1 ? 9 : rank == 2 ? 5 : 3);
    const uint64_t dil = draw.percent(60) ? 1 : draw.between(2, 3);
    r.k.push_back(k);
    r.dil.push_back(dil);
    r.s.push_back(draw.extent(4));
    r.p.push_back(draw.between(0, (k - 1) * dil + 1));
    r.after.push_back(draw.percent(50) ? r.p.back() : draw.between(0, (k - 1) * dil + 1));
    r.in.push_back(draw.extent(integer_root(room, rank - a), 4));
    room /= std::max<uint64_t>(r.in.back(), 1);
  }
  std::vector<uint64_t*> sizes{&groups, &cin_per, &cout_per};
  for (uint64_t& e : r.lead) sizes.push_back(&e);
  for (uint64_t& e : r.in) sizes.push_back(&e);
  std::vector<uint64_t*> kernel;
  for (uint64_t& e : r.k) kernel.push_back(&e);
  for (;;) {
    const uint64_t batch = volume(r.lead), cin = groups * cin_per, cout = groups * cout_per;
    uint64_t iv = 1, kv = 1, ov = 1;
    for (size_t a = 0; a < rank; ++a) {
      const uint64_t eff = (r.k[a] - 1) * r.dil[a] + 1, padded = r.in[a] + r.p[a] + r.after[a];
      iv *= r.in[a];
      kv *= r.k[a];
      ov *= padded < eff ? 0 : (padded - eff) / r.s[a] + 1;
    }
    const bool fits = batch * cin * iv <= budget && batch * cout * ov <= budget &&
                      cout * cin * kv <= budget && batch * cout * cin_per * kv * ov <= work;
    if (fits || !(halve_largest(sizes) || halve_largest(kernel))) break;
  }
  r.groups = groups;
  r.cin = groups * cin_per;
  r.cout = groups * cout_per;
  return r;
}

CaseList make_conv_cases(const Options& options) {
  // Fixed-layout geometries: in, k, s, p, cin, cout.
  auto fixed_recipe = [](Dims in, Dims k, Dims s, Dims p, uint64_t cin, uint64_t cout) {
    Recipe r;
    r.in = std::move(in);
    r.k = std::move(k);
    r.s = std::move(s);
    r.p = std::move(p);
    r.cin = cin;
    r.cout = cout;
    return r;
  };
  const std::vector<Recipe> fixed{
      fixed_recipe({37}, {3}, {1}, {1}, 4, 5),
      fixed_recipe({40}, {2}, {5}, {0}, 3, 2),               // stride > kernel
      fixed_recipe({3}, {7}, {1}, {3}, 2, 3),                // kernel larger than the input
      fixed_recipe({9}, {3}, {2}, {1}, 0, 3),                // zero input channels: bias
      fixed_recipe({0}, {1}, {1}, {1}, 2, 3),                // empty extent with padding
      fixed_recipe({5}, {3}, {1}, {0}, 2, 0),                // zero output channels
      fixed_recipe({15, 13}, {3, 3}, {1, 1}, {1, 1}, 6, 8),  // padding = kernel/2
      fixed_recipe({11, 12}, {4, 2}, {3, 2}, {2, 1}, 3, 4),  // stride > 1, padding
      fixed_recipe({2, 3}, {5, 5}, {1, 1}, {2, 2}, 2, 2),    // kernel larger than the input
      fixed_recipe({7, 6, 5}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, 3, 4),
      fixed_recipe({6, 6, 6}, {2, 2, 2}, {3, 2, 2}, {0, 1, 0}, 2, 5),
      fixed_recipe({28, 28}, {3, 3}, {1, 1}, {1, 1}, 16, 32)};
  // conv_io geometries: also lead, after, dil, groups.
  std::vector<Recipe> io;
  auto add_io = [&](Dims lead, uint64_t cin, uint64_t cout, uint64_t groups, Dims in, Dims k,
                    Dims s, Dims before, Dims after, Dims dil) {
    Recipe r;
    r.lead = std::move(lead);
    r.cin = cin;
    r.cout = cout;
    r.groups = groups;
    r.in = std::move(in);
    r.k = std::move(k);
    r.s = std::move(s);
    r.p = std::move(before);
    r.after = std::move(after);
    r.dil = std::move(dil);
    io.push_back(std::move(r));
  };
  add_io({2}, 4, 6, 2, {19}, {3}, {2}, {1}, {0}, {2});
  add_io({2, 3}, 8, 8, 8, {9, 10}, {3, 3}, {1, 2}, {1, 2}, {2, 0}, {2, 1});  // depthwise
  add_io({}, 3, 6, 3, {5, 6, 7}, {2, 3, 2}, {1, 1, 2}, {0, 1, 1}, {1, 0, 1}, {1, 2, 1});
  add_io({4}, 16, 32, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1});
  add_io({3}, 2, 4, 1, {6}, {8}, {1}, {0}, {0}, {1});     // kernel larger than the input: empty
  add_io({0, 2}, 2, 2, 1, {5}, {3}, {1}, {1}, {1}, {1});  // empty batch
  add_io({2}, 2, 2, 2, {0, 4}, {1, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1});  // empty input: bias
  CaseList list;
  uint64_t key = 0xc0;
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    for (Op op : {Op::fwd, Op::bwd, Op::tfwd, Op::tbwd}) {
      for (Recipe r : fixed) {
        r.key = key++;
        list.push_back(std::make_unique<ConvCase>(op, dtype, r));
      }
    }
    for (Recipe r : io) {
      r.key = key++;
      list.push_back(std::make_unique<ConvCase>(Op::io, dtype, r));
    }
  }
  // --shapes: one fixed-layout and one conv_io geometry per draw, each operand within the budget
  // and the multiply-adds of one case within 64 times it.
  ShapeDraw draw(options.seed, "conv");
  const uint64_t budget = random_shape_budget(options);
  std::vector<Recipe> drawn_fixed, drawn_io;
  for (uint64_t i = 0; i < options.shapes; ++i) {
    drawn_fixed.push_back(random_fixed(draw, budget, 64 * budget));
    drawn_io.push_back(random_io(draw, budget, 64 * budget));
  }
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    for (Op op : {Op::fwd, Op::bwd, Op::tfwd, Op::tbwd}) {
      for (Recipe r : drawn_fixed) {
        r.key = key++;
        list.push_back(std::make_unique<ConvCase>(op, dtype, r));
      }
    }
    for (Recipe r : drawn_io) {
      r.key = key++;
      list.push_back(std::make_unique<ConvCase>(Op::io, dtype, r));
    }
  }
  return list;
}

}  // namespace

const FamilyRegistration kConvFamily("conv", &make_conv_cases);

}  // namespace tlrt::parity
