// Convolution symbols through the ABI (SPEC-ops 14.1, 14.2, 14.6), on both backends: hand-computed
// cases for spatial rank 1, 2 and 3, the empty rules, conv_io with leading batch axes, groups,
// dilation and asymmetric padding against a host oracle written from the contract, the adjoint
// identities between conv, its backward and the transposed conv, ownership, and every panic and
// IO error in TorchLean's order.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "abi_test_support.h"

using namespace abi_test;

namespace {

using Dims = std::vector<uint64_t>;

Obj nats(const Dims& values) {
  lean_object* a = lean_alloc_array(values.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    lean_array_set_core(a, i, lean_box(static_cast<size_t>(values[i])));
  }
  return Obj(a);
}

uint64_t prod(const Dims& d) {
  uint64_t v = 1;
  for (uint64_t e : d) v *= e;
  return v;
}

template <class T>
std::vector<T> values(lean_object* b) {
  return read_values<T>(b);
}

// The (dKernel, dBias, dInput) triple of a backward call, each read back.
template <class T>
struct Triple {
  std::vector<T> dk, db, dx;
};

template <class T>
Triple<T> read_triple(lean_object* r) {
  Triple<T> t;
  lean_object* rest = lean_ctor_get(r, 1);
  t.dk = values<T>(lean_ctor_get(r, 0));
  t.db = values<T>(lean_ctor_get(rest, 0));
  t.dx = values<T>(lean_ctor_get(rest, 1));
  return t;
}

struct Geo {
  Dims in, k, s, p;
  uint32_t cin, cout;
};

template <class T>
std::vector<T> conv_fwd(const std::vector<T>& x, const std::vector<T>& w, const std::vector<T>& b,
                        const Geo& g, bool transposed = false) {
  Obj xb = make_buffer(x), wb = make_buffer(w), bb = make_buffer(b);
  Obj in = nats(g.in), k = nats(g.k), s = nats(g.s), p = nats(g.p);
  Obj r(transposed ? torchlean_cuda_convtranspose_fwd(xb.get(), wb.get(), bb.get(), in.get(),
                                                      k.get(), s.get(), p.get(), g.cin, g.cout)
                   : torchlean_cuda_conv_fwd(xb.get(), wb.get(), bb.get(), in.get(), k.get(),
                                             s.get(), p.get(), g.cin, g.cout));
  EXPECT_NE(r.get(), xb.get());
  EXPECT_NE(r.get(), bb.get());
  return values<T>(r.get());
}

template <class T>
Triple<T> conv_bwd(const std::vector<T>& x, const std::vector<T>& w, const std::vector<T>& dy,
                   const Geo& g, bool transposed = false) {
  Obj xb = make_buffer(x), wb = make_buffer(w), gb = make_buffer(dy);
  Obj in = nats(g.in), k = nats(g.k), s = nats(g.s), p = nats(g.p);
  Obj r(transposed ? torchlean_cuda_convtranspose_bwd(xb.get(), wb.get(), gb.get(), in.get(),
                                                      k.get(), s.get(), p.get(), g.cin, g.cout)
                   : torchlean_cuda_conv_bwd(xb.get(), wb.get(), gb.get(), in.get(), k.get(),
                                             s.get(), p.get(), g.cin, g.cout));
  return read_triple<T>(r.get());
}

// Output extents (14.1).
Dims conv_out(const Geo& g) {
  Dims o;
  for (size_t a = 0; a < g.in.size(); ++a) {
    const uint64_t padded = g.in[a] + 2 * g.p[a];
    o.push_back(padded < g.k[a] ? 0 : (padded - g.k[a]) / g.s[a] + 1);
  }
  return o;
}

Dims convt_out(const Geo& g) {
  Dims o;
  for (size_t a = 0; a < g.in.size(); ++a) {
    if (g.in[a] == 0) {
      o.push_back(0);
      continue;
    }
    const uint64_t t = (g.in[a] - 1) * g.s[a] + g.k[a];
    o.push_back(t >= 2 * g.p[a] ? t - 2 * g.p[a] : 0);
  }
  return o;
}

// Host oracle of conv_io's formula (14.6), in double: y[n,o,q] = bias[o] + sum over the group's
// channels and the kernel of W[o,c,kappa] * xpad[n, c, q*stride + kappa*dil].
std::vector<double> oracle_io(const std::vector<double>& x, const std::vector<double>& w,
                              const std::vector<double>& bias, uint64_t batch, uint64_t cin,
                              uint64_t cout, uint64_t groups, const Dims& in, const Dims& k,
                              const Dims& stride, const Dims& before, const Dims& after,
                              const Dims& dil) {
  const size_t r = in.size();
  Dims out(r);
  for (size_t a = 0; a < r; ++a) {
    const uint64_t eff = (k[a] - 1) * dil[a] + 1, padded = in[a] + before[a] + after[a];
    out[a] = padded < eff ? 0 : (padded - eff) / stride[a] + 1;
  }
  const uint64_t ov = prod(out), iv = prod(in), kv = prod(k);
  std::vector<double> y(batch * cout * ov);
  const uint64_t cig = cin / groups, cog = cout / groups;
  for (uint64_t n = 0; n < batch; ++n) {
    for (uint64_t o = 0; o < cout; ++o) {
      for (uint64_t q = 0; q < ov; ++q) {
        double acc = bias[o];
        for (uint64_t c = (o / cog) * cig; c < (o / cog + 1) * cig; ++c) {
          for (uint64_t kk = 0; kk < kv; ++kk) {
            uint64_t qr = q, kr = kk, offset = 0, scale = 1;
            bool inside = true;
            for (size_t a = r; a-- > 0;) {
              const uint64_t qa = qr % out[a], ka = kr % k[a];
              qr /= out[a];
              kr /= k[a];
              const int64_t pos = static_cast<int64_t>(qa * stride[a] + ka * dil[a]) -
                                  static_cast<int64_t>(before[a]);
              if (pos < 0 || pos >= static_cast<int64_t>(in[a])) inside = false;
              offset += static_cast<uint64_t>(pos) * scale;
              scale *= in[a];
            }
            if (!inside) continue;
            acc += w[(o * cin + c) * kv + kk] * x[(n * cin + c) * iv + offset];
          }
        }
        y[(n * cout + o) * ov + q] = acc;
      }
    }
  }
  return y;
}

std::vector<double> random_values(size_t n, std::mt19937& gen) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& e : v) e = d(gen);
  return v;
}

template <class T>
std::vector<T> as(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <class T>
double dot(const std::vector<T>& a, const std::vector<T>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

double tolerance(double) {
  return 1e-4;
}

class Conv : public BackendSuite {};
using ConvDeathTest = Conv;

// ---------------------------------------------------------------------------------------------
// Hand-computed forward cases

TEST_F(Conv, Rank1PaddingHalfTheKernel) {
  const Geo g{{4}, {3}, {1}, {1}, 1, 1};
  EXPECT_EQ(conv_fwd<float>({1, 2, 3, 4}, {1, 0, -1}, {0.5f}, g),
            (std::vector<float>{-1.5f, -1.5f, -1.5f, 3.5f}));
  EXPECT_EQ(conv_fwd<double>({1, 2, 3, 4}, {1, 0, -1}, {0.5}, g),
            (std::vector<double>{-1.5, -1.5, -1.5, 3.5}));
}

TEST_F(Conv, Rank1StrideLargerThanKernel) {
  const Geo g{{7}, {1}, {3}, {0}, 1, 1};
  EXPECT_EQ(conv_fwd<float>({1, 2, 3, 4, 5, 6, 7}, {2}, {1}, g), (std::vector<float>{3, 9, 15}));
}

TEST_F(Conv, Rank1KernelLargerThanInput) {
  EXPECT_EQ(conv_fwd<double>({1, 2}, {1, 2, 3, 4, 5}, {0}, Geo{{2}, {5}, {1}, {2}, 1, 1}),
            (std::vector<double>{11, 8}));
  // Without padding there is no window: an empty buffer.
  EXPECT_TRUE(
      conv_fwd<double>({1, 2}, {1, 2, 3, 4, 5}, {0}, Geo{{2}, {5}, {1}, {0}, 1, 1}).empty());
}

TEST_F(Conv, Rank2TwoChannelsStrideTwo) {
  // x: 2 channels of 3x3; W (1, 2, 2, 2): ones on channel 0, twos on channel 1.
  std::vector<float> x(18);
  for (int i = 0; i < 18; ++i) x[i] = static_cast<float>(i + 1);
  const std::vector<float> w{1, 1, 1, 1, 2, 2, 2, 2};
  // channel 0 window: 1+2+4+5 = 12; channel 1: 2*(10+11+13+14) = 96.
  EXPECT_EQ(conv_fwd<float>(x, w, {-1}, Geo{{3, 3}, {2, 2}, {2, 2}, {0, 0}, 2, 1}),
            (std::vector<float>{107}));
}

TEST_F(Conv, Rank3) {
  std::vector<double> x(8);
  for (int i = 0; i < 8; ++i) x[i] = i + 1;
  EXPECT_EQ(conv_fwd<double>(x, std::vector<double>(8, 1.0), {1},
                             Geo{{2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, 1, 1}),
            (std::vector<double>{37}));
  // Padding 1 on every axis: 3x3x3 outputs; the centre sees the whole input.
  const std::vector<double> y = conv_fwd<double>(
      x, std::vector<double>(8, 1.0), {0}, Geo{{2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, 1, 1});
  ASSERT_EQ(y.size(), 27u);
  EXPECT_EQ(y[13], 36);
  EXPECT_EQ(y[0], 1);
  EXPECT_EQ(y[26], 8);
}

TEST_F(Conv, TransposedRank1) {
  // y[q] = sum over q = 2i + kappa of W[kappa] x[i].
  EXPECT_EQ(conv_fwd<float>({1, 2}, {1, 10, 100}, {0.5f}, Geo{{2}, {3}, {2}, {0}, 1, 1}, true),
            (std::vector<float>{1.5f, 10.5f, 102.5f, 20.5f, 200.5f}));
  // Padding 1 crops one position on each side.
  EXPECT_EQ(conv_fwd<float>({1, 2}, {1, 10, 100}, {0}, Geo{{2}, {3}, {2}, {1}, 1, 1}, true),
            (std::vector<float>{10, 102, 20}));
}

// ---------------------------------------------------------------------------------------------
// Empty rules (14.1, 14.2)

TEST_F(Conv, EmptyOutputsAreEmptyBuffers) {
  for (bool t : {false, true}) {
    // outC = 0
    EXPECT_TRUE(conv_fwd<float>({1, 2, 3}, {}, {}, Geo{{3}, {1}, {1}, {0}, 1, 0}, t).empty());
  }
  // An empty input extent without padding: output extent 0.
  EXPECT_TRUE(conv_fwd<float>({}, {1, 2}, {3, 4}, Geo{{0}, {1}, {1}, {0}, 1, 2}).empty());
  EXPECT_TRUE(conv_fwd<float>({}, {1, 2}, {3, 4}, Geo{{0}, {1}, {1}, {0}, 1, 2}, true).empty());
}

TEST_F(Conv, EmptyInputBroadcastsTheBias) {
  // inC = 0: the bias over the output.
  EXPECT_EQ(conv_fwd<float>({}, {}, {3, -0.0f}, Geo{{3}, {2}, {1}, {0}, 0, 2}),
            (std::vector<float>{3, 3, -0.0f, -0.0f}));
  const std::vector<float> z = conv_fwd<float>({}, {}, {3, -0.0f}, Geo{{3}, {2}, {1}, {0}, 0, 2});
  EXPECT_TRUE(std::signbit(z[3]));
  // An empty axis with padding: out = (0 + 2 - 1) + 1 = 2 positions.
  EXPECT_EQ(conv_fwd<double>({}, {5}, {7}, Geo{{0}, {1}, {1}, {1}, 1, 1}),
            (std::vector<double>{7, 7}));
  // Transposed with inC = 0.
  EXPECT_EQ(conv_fwd<double>({}, {}, {1, 2}, Geo{{2}, {2}, {1}, {0}, 0, 2}, true),
            (std::vector<double>{1, 1, 1, 2, 2, 2}));
}

TEST_F(Conv, EmptyBackwardRules) {
  // Empty dY (outC = 0): zeros of the input-side sizes, empty dBias.
  Triple<float> a = conv_bwd<float>({1, 2, 3}, {}, {}, Geo{{3}, {1}, {1}, {0}, 1, 0});
  EXPECT_TRUE(a.dk.empty());
  EXPECT_TRUE(a.db.empty());
  EXPECT_EQ(a.dx, (std::vector<float>{0, 0, 0}));
  // Empty dY by extent (kernel larger than the unpadded input): dB zeros.
  Triple<double> b =
      conv_bwd<double>({1, 2}, {1, 2, 3, 4, 5, 6}, {}, Geo{{2}, {3}, {1}, {0}, 1, 2});
  EXPECT_EQ(b.dk, std::vector<double>(6, 0.0));
  EXPECT_EQ(b.db, (std::vector<double>{0, 0}));
  EXPECT_EQ(b.dx, (std::vector<double>{0, 0}));
  // Empty input with a nonempty dY: dW = 0, dX = 0, dB = sum dY.
  Triple<double> c = conv_bwd<double>({}, {5, 6}, {1, 2, 3, 4}, Geo{{0}, {1}, {1}, {1}, 1, 2});
  EXPECT_EQ(c.dk, (std::vector<double>{0, 0}));
  EXPECT_EQ(c.db, (std::vector<double>{3, 7}));
  EXPECT_TRUE(c.dx.empty());
  // Transposed, empty input (inC = 0): dB = sum dY.
  Triple<float> d =
      conv_bwd<float>({}, {}, {1, 2, 3, 4, 5, 6}, Geo{{2}, {2}, {1}, {0}, 0, 2}, true);
  EXPECT_TRUE(d.dk.empty());
  EXPECT_EQ(d.db, (std::vector<float>{6, 15}));
  EXPECT_TRUE(d.dx.empty());
}

// ---------------------------------------------------------------------------------------------
// Backward by hand and the adjoint identities

TEST_F(Conv, BackwardRank1ByHand) {
  // x = [1, 2, 3], W = [1, 2] (k = 2), s = 1, p = 0: y = [x0 + 2 x1, x1 + 2 x2].
  Triple<double> t = conv_bwd<double>({1, 2, 3}, {1, 2}, {10, 100}, Geo{{3}, {2}, {1}, {0}, 1, 1});
  EXPECT_EQ(t.dk, (std::vector<double>{10 * 1 + 100 * 2, 10 * 2 + 100 * 3}));
  EXPECT_EQ(t.db, (std::vector<double>{110}));
  EXPECT_EQ(t.dx, (std::vector<double>{10, 20 + 100, 200}));
}

template <class T>
void check_adjoints(const Geo& g, std::mt19937& gen) {
  const Dims out = conv_out(g);
  const uint64_t xs = g.cin * prod(g.in), ws = uint64_t{g.cout} * g.cin * prod(g.k),
                 ys = g.cout * prod(out);
  const std::vector<T> x = as<T>(random_values(xs, gen)), w = as<T>(random_values(ws, gen)),
                       dy = as<T>(random_values(ys, gen)), zero_c(g.cout, T(0)),
                       zero_i(g.cin, T(0));
  const std::vector<T> y = conv_fwd<T>(x, w, zero_c, g);
  // The transposed conv from (outC, out) back to (inC, in) with the same kernel buffer.
  const Geo gt{out, g.k, g.s, g.p, g.cout, g.cin};
  const std::vector<T> xt = conv_fwd<T>(dy, w, zero_i, gt, true);
  ASSERT_EQ(y.size(), dy.size());
  const Dims back = convt_out(gt);
  if (prod(back) != prod(g.in)) return;  // the transposed extent differs when windows drop rows
  ASSERT_EQ(xt.size(), x.size());
  const double lhs = dot(y, dy), rhs = dot(x, xt);
  EXPECT_NEAR(lhs, rhs, tolerance(lhs) * (1 + std::fabs(lhs)));
  // conv_bwd: dX is the transposed conv of dY, dW satisfies <conv(x, W'), dY> = <W', dW>.
  const Triple<T> t = conv_bwd<T>(x, w, dy, g);
  ASSERT_EQ(t.dx.size(), xt.size());
  for (size_t i = 0; i < xt.size(); ++i) EXPECT_NEAR(t.dx[i], xt[i], 1e-4) << i;
  const std::vector<T> w2 = as<T>(random_values(ws, gen));
  const double lw = dot(conv_fwd<T>(x, w2, zero_c, g), dy), rw = dot(w2, t.dk);
  EXPECT_NEAR(lw, rw, tolerance(lw) * (1 + std::fabs(lw)));
  double sum0 = 0;
  for (uint64_t q = 0; q < prod(out); ++q) sum0 += dy[q];
  EXPECT_NEAR(t.db[0], sum0, 1e-4);
  // convtranspose_bwd on the transposed geometry: dX = conv(dY_t), dW as above.
  const Triple<T> tt = conv_bwd<T>(dy, w, x, gt, true);
  const std::vector<T> yx = conv_fwd<T>(x, w, zero_c, g);
  ASSERT_EQ(tt.dx.size(), yx.size());
  for (size_t i = 0; i < yx.size(); ++i) EXPECT_NEAR(tt.dx[i], yx[i], 1e-4) << i;
  const double lt = dot(conv_fwd<T>(dy, w2, zero_i, gt, true), x), rt = dot(w2, tt.dk);
  EXPECT_NEAR(lt, rt, tolerance(lt) * (1 + std::fabs(lt)));
}

TEST_F(Conv, AdjointIdentities) {
  std::mt19937 gen(7);
  const std::vector<Geo> geos{{{9}, {3}, {2}, {1}, 2, 3},
                              {{5}, {5}, {1}, {2}, 1, 2},
                              {{6, 5}, {3, 2}, {1, 3}, {1, 0}, 2, 2},
                              {{4, 4}, {1, 1}, {3, 3}, {0, 0}, 3, 1},
                              {{3, 4, 4}, {2, 3, 2}, {1, 1, 2}, {1, 1, 0}, 2, 2}};
  for (const Geo& g : geos) {
    check_adjoints<double>(g, gen);
    check_adjoints<float>(g, gen);
  }
}

// ---------------------------------------------------------------------------------------------
// conv_io

template <class T>
std::vector<T> conv_io(const std::vector<T>& x, const std::vector<T>& w, const std::vector<T>& b,
                       const Dims& in_dims, const Dims& k_dims, const Dims& stride,
                       const Dims& before, const Dims& after, const Dims& dil, uint32_t groups) {
  Obj xb = make_buffer(x), wb = make_buffer(w), bb = make_buffer(b);
  Io io = take_io(torchlean_cuda_buffer_conv_io(
      xb.get(), wb.get(), bb.get(), nats(in_dims).get(), nats(k_dims).get(), nats(stride).get(),
      nats(before).get(), nats(after).get(), nats(dil).get(), groups));
  EXPECT_TRUE(io.ok) << io.message;
  if (!io.ok) return {};
  EXPECT_NE(io.value.get(), xb.get());
  return values<T>(io.value.get());
}

template <class T>
void check_io(uint64_t lead0, uint64_t lead1, uint64_t cin, uint64_t cout, uint32_t groups,
              const Dims& in, const Dims& k, const Dims& stride, const Dims& before,
              const Dims& after, const Dims& dil, std::mt19937& gen) {
  Dims in_dims{lead0, lead1, cin};
  in_dims.insert(in_dims.end(), in.begin(), in.end());
  Dims k_dims{cout, cin};
  k_dims.insert(k_dims.end(), k.begin(), k.end());
  const uint64_t batch = lead0 * lead1;
  const std::vector<double> x = random_values(prod(in_dims), gen),
                            w = random_values(prod(k_dims), gen), b = random_values(cout, gen);
  const std::vector<T> xt = as<T>(x), wt = as<T>(w), bt = as<T>(b);
  const std::vector<double> expect = oracle_io(
      std::vector<double>(xt.begin(), xt.end()), std::vector<double>(wt.begin(), wt.end()),
      std::vector<double>(bt.begin(), bt.end()), batch, cin, cout, groups, in, k, stride, before,
      after, dil);
  const std::vector<T> got =
      conv_io<T>(xt, wt, bt, in_dims, k_dims, stride, before, after, dil, groups);
  ASSERT_EQ(got.size(), expect.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expect[i], sizeof(T) == 4 ? 1e-5 : 1e-12) << i;
  }
}

TEST_F(Conv, ConvIoGroupsDilationAsymmetricPaddingLeadingAxes) {
  std::mt19937 gen(11);
  check_io<float>(2, 1, 4, 6, 2, {7}, {3}, {2}, {1}, {0}, {2}, gen);
  check_io<double>(1, 3, 4, 4, 4, {5, 6}, {2, 3}, {1, 2}, {2, 0}, {0, 3}, {2, 1}, gen);
  check_io<float>(2, 2, 3, 3, 1, {4, 3, 5}, {2, 1, 3}, {1, 1, 2}, {0, 1, 2}, {1, 0, 0}, {1, 1, 2},
                  gen);
  check_io<double>(1, 1, 6, 3, 3, {8, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, gen);
}

TEST_F(Conv, ConvIoOnlyGroupDiagonalBlocksCount) {
  // Cin = Cout = 2, groups 2, kernel 1: off-diagonal weights (100) must be ignored.
  EXPECT_EQ(conv_io<float>({1, 2, 3, 4}, {2, 100, 100, 3}, {0, 1}, {2, 2}, {2, 2, 1}, {1}, {0}, {0},
                           {1}, 2),
            (std::vector<float>{2, 4, 10, 13}));
}

TEST_F(Conv, ConvIoEmptyRules) {
  // Output volume 0 -> empty.
  EXPECT_TRUE(
      conv_io<float>({1, 2}, {1, 1, 1}, {0}, {1, 2}, {1, 1, 3}, {1}, {0}, {0}, {1}, 1).empty());
  // Empty input (an empty leading axis keeps the output empty; an empty spatial axis with
  // padding broadcasts the bias).
  EXPECT_TRUE(
      conv_io<float>({}, {1, 1, 1}, {0}, {0, 1, 2}, {1, 1, 3}, {1}, {1}, {1}, {1}, 1).empty());
  EXPECT_EQ(conv_io<double>({}, {1, 2}, {5, 6}, {1, 0}, {2, 1, 1}, {1}, {1}, {1}, {1}, 1),
            (std::vector<double>{5, 5, 6, 6}));
}

std::string io_error(lean_object* x, lean_object* w, lean_object* b, const Dims& in_dims,
                     const Dims& k_dims, const Dims& stride, const Dims& before, const Dims& after,
                     const Dims& dil, uint32_t groups) {
  Io io = take_io(torchlean_cuda_buffer_conv_io(x, w, b, nats(in_dims).get(), nats(k_dims).get(),
                                                nats(stride).get(), nats(before).get(),
                                                nats(after).get(), nats(dil).get(), groups));
  EXPECT_FALSE(io.ok);
  EXPECT_EQ(io.error_tag, kOtherError);
  return io.message;
}

TEST_F(Conv, ConvIoErrorsInTorchLeansOrder) {
  Obj x = make_buffer<float>({1, 2, 3, 4}), w = make_buffer<float>({1, 1}),
      b = make_buffer<float>({0});
  const std::string p = "tlrt: conv_io: ";
  auto has = [](const std::string& m, const std::string& what) {
    return m.find(what) != std::string::npos;
  };
  // Not an array (each of the six in turn), an entry above UInt32.
  {
    Io io = take_io(torchlean_cuda_buffer_conv_io(
        x.get(), w.get(), b.get(), lean_box(1), nats({1, 4}).get(), nats({1}).get(),
        nats({0}).get(), nats({0}).get(), nats({1}).get(), 1));
    EXPECT_TRUE(has(io.message, p + "LibTorch: expected dimension array")) << io.message;
    Io io2 = take_io(torchlean_cuda_buffer_conv_io(
        x.get(), w.get(), b.get(), nats({1, 4}).get(), nats({1, 1, 2}).get(), nats({1}).get(),
        nats({0}).get(), nats({0}).get(), lean_box(0), 1));
    EXPECT_TRUE(has(io2.message, p + "LibTorch: expected dimension array")) << io2.message;
  }
  EXPECT_TRUE(has(
      io_error(x.get(), w.get(), b.get(), {1, 4}, {1, 1, 2}, {1}, {0}, {uint64_t{1} << 32}, {1}, 1),
      p + "LibTorch: dimension exceeds UInt32 ABI"));
  // Rank.
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 4}, {1, 1, 2}, {}, {}, {}, {}, 1),
                  p + "LibTorch conv: spatial rank must be one, two, or three"));
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 1, 1, 1, 4}, {1, 1, 1, 1, 1, 2},
                           {1, 1, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 1, 1, 1}, 1),
                  p + "LibTorch conv: spatial rank must be one, two, or three"));
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {4}, {1, 1, 2}, {1}, {0}, {0}, {1}, 1),
                  p + "LibTorch conv: rank mismatch"));
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 4}, {1, 2}, {1}, {0}, {0}, {1}, 1),
                  p + "LibTorch conv: rank mismatch"));
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 4}, {1, 1, 2}, {1}, {0, 0}, {0}, {1}, 1),
                  p + "LibTorch conv: rank mismatch"));
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 4}, {1, 1, 2}, {1}, {0}, {0}, {}, 1),
                  p + "LibTorch conv: rank mismatch"));
  // Channels and groups.
  for (const auto& c : std::vector<std::pair<Dims, uint32_t>>{
           {{1, 1, 2}, 0}, {{1, 2, 2}, 1}, {{2, 1, 2}, 2}, {{0, 1, 2}, 1}}) {
    EXPECT_TRUE(
        has(io_error(x.get(), w.get(), b.get(), {1, 4}, c.first, {1}, {0}, {0}, {1}, c.second),
            p + "LibTorch conv: invalid channel groups"));
  }
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {0, 4}, {1, 0, 2}, {1}, {0}, {0}, {1}, 1),
                  p + "LibTorch conv: invalid channel groups"));
  // Batch.
  EXPECT_TRUE(has(
      io_error(x.get(), w.get(), b.get(), {65536, 65536, 1, 4}, {1, 1, 2}, {1}, {0}, {0}, {1}, 1),
      p + "LibTorch conv: batch exceeds ABI"));
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {4294967295u, 4294967295u, 4294967295u, 1, 4},
                           {1, 1, 2}, {1}, {0}, {0}, {1}, 1),
                  p + "LibTorch: dimension product overflow"));
  // Per axis.
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 4}, {1, 1, 0}, {1}, {0}, {0}, {1}, 1),
                  p + "LibTorch conv: kernel, stride and dilation must be positive"));
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 4}, {1, 1, 2}, {0}, {0}, {0}, {1}, 1),
                  p + "LibTorch conv: kernel, stride and dilation must be positive"));
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 4}, {1, 1, 2}, {1}, {0}, {0}, {0}, 1),
                  p + "LibTorch conv: kernel, stride and dilation must be positive"));
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 4294967295u}, {1, 1, 1}, {1},
                           {4294967295u}, {4294967295u}, {1}, 1),
                  p + "LibTorch conv: output dimension exceeds ABI"));
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 65536, 65536}, {1, 1, 1, 1}, {1, 1},
                           {0, 0}, {0, 0}, {1, 1}, 1),
                  p + "LibTorch conv: output exceeds ABI"));
  // Buffers, in argument order.
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 5}, {1, 1, 2}, {1}, {0}, {0}, {1}, 1),
                  p + "LibTorch: buffer size mismatch"));
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b.get(), {1, 4}, {1, 1, 3}, {1}, {0}, {0}, {1}, 1),
                  p + "LibTorch: buffer size mismatch"));
  Obj b2 = make_buffer<float>({0, 0});
  EXPECT_TRUE(has(io_error(x.get(), w.get(), b2.get(), {1, 4}, {1, 1, 2}, {1}, {0}, {0}, {1}, 1),
                  p + "LibTorch: buffer size mismatch (size(bias)"));
  // Mixed dtypes.
  Obj b64 = make_buffer<double>({0});
  const std::string mixed =
      io_error(x.get(), w.get(), b64.get(), {1, 4}, {1, 1, 2}, {1}, {0}, {0}, {1}, 1);
  EXPECT_TRUE(has(mixed, p)) << mixed;
  // A released operand.
  lean_object* gone = torchlean_cuda_buffer_zeros(4, 0);
  torchlean_cuda_buffer_release(gone);
  const std::string released =
      io_error(gone, w.get(), b.get(), {1, 4}, {1, 1, 2}, {1}, {0}, {0}, {1}, 1);
  EXPECT_TRUE(has(released, p)) << released;
  lean_dec(gone);
}

// ---------------------------------------------------------------------------------------------
// Ownership

TEST_F(Conv, EachCallReturnsFreshBuffersAndLeaksNothing) {
  Obj x = make_buffer<float>({1, 2, 3}), w = make_buffer<float>({1, 2}),
      b = make_buffer<float>({1}), dy = make_buffer<float>({1, 1});
  Obj in = nats({3}), k = nats({2}), s = nats({1}), p = nats({0});
  const Counters before = Counters::read();
  {
    Obj y(torchlean_cuda_conv_fwd(x.get(), w.get(), b.get(), in.get(), k.get(), s.get(), p.get(), 1,
                                  1));
    const Counters after = Counters::read();
    EXPECT_EQ(after.wrapper_live, before.wrapper_live + 1);
    Obj t(torchlean_cuda_conv_bwd(x.get(), w.get(), dy.get(), in.get(), k.get(), s.get(), p.get(),
                                  1, 1));
    EXPECT_EQ(Counters::read().wrapper_live, before.wrapper_live + 4);
    for (lean_object* part :
         {lean_ctor_get(t.get(), 0), lean_ctor_get(lean_ctor_get(t.get(), 1), 0),
          lean_ctor_get(lean_ctor_get(t.get(), 1), 1)}) {
      EXPECT_NE(part, x.get());
      EXPECT_NE(part, w.get());
      EXPECT_NE(part, dy.get());
    }
  }
  EXPECT_EQ(Counters::read().wrapper_live, before.wrapper_live);
  EXPECT_EQ(Counters::read().live_bytes, before.live_bytes);
}

// ---------------------------------------------------------------------------------------------
// Panics of the fixed-layout symbols, in TorchLean's order

const char* kPanic = "INTERNAL PANIC: tlrt: conv_fwd: torchlean conv/pool: ";

lean_object* fwd(const Dims& in, const Dims& k, const Dims& s, const Dims& p, uint32_t cin,
                 uint32_t cout, uint32_t nx, uint32_t nw, uint32_t nb, uint8_t bias_dtype = 0) {
  return torchlean_cuda_conv_fwd(torchlean_cuda_buffer_zeros(nx, 0),
                                 torchlean_cuda_buffer_zeros(nw, 0),
                                 torchlean_cuda_buffer_zeros(nb, bias_dtype), nats(in).get(),
                                 nats(k).get(), nats(s).get(), nats(p).get(), cin, cout);
}

TEST_F(ConvDeathTest, ShapeArraysFirst) {
  EXPECT_EXIT(
      torchlean_cuda_conv_fwd(torchlean_cuda_buffer_zeros(1, 0), torchlean_cuda_buffer_zeros(1, 0),
                              torchlean_cuda_buffer_zeros(1, 0), nats({1}).get(), nats({1}).get(),
                              lean_box(1), nats({0}).get(), 1, 1),
      ::testing::ExitedWithCode(1), std::string(kPanic) + "expected shape arrays");
  EXPECT_EXIT(fwd({uint64_t{1} << 32}, {1}, {1}, {0}, 1, 1, 1, 1, 1), ::testing::ExitedWithCode(1),
              std::string(kPanic) + "bad input dimension");
  EXPECT_EXIT(fwd({1}, {uint64_t{1} << 33}, {1}, {0}, 1, 1, 1, 1, 1), ::testing::ExitedWithCode(1),
              std::string(kPanic) + "bad kernel dimension");
  EXPECT_EXIT(fwd({1}, {1}, {uint64_t{1} << 32}, {0}, 1, 1, 1, 1, 1), ::testing::ExitedWithCode(1),
              std::string(kPanic) + "bad stride");
  EXPECT_EXIT(fwd({1}, {1}, {1}, {uint64_t{1} << 32}, 1, 1, 1, 1, 1), ::testing::ExitedWithCode(1),
              std::string(kPanic) + "bad padding");
}

TEST_F(ConvDeathTest, GeometryChecks) {
  EXPECT_EXIT(fwd({}, {}, {}, {}, 1, 1, 1, 1, 1), ::testing::ExitedWithCode(1),
              std::string(kPanic) + "spatial rank must be one, two, or three");
  EXPECT_EXIT(fwd({1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}, 1, 1, 1, 1, 1),
              ::testing::ExitedWithCode(1),
              std::string(kPanic) + "spatial rank must be one, two, or three");
  EXPECT_EXIT(fwd({1, 1}, {1}, {1, 1}, {0, 0}, 1, 1, 1, 1, 1), ::testing::ExitedWithCode(1),
              std::string(kPanic) + "array rank mismatch");
  EXPECT_EXIT(fwd({1}, {0}, {1}, {0}, 1, 1, 1, 1, 1), ::testing::ExitedWithCode(1),
              std::string(kPanic) + "invalid spatial dimension, kernel, stride or padding");
  EXPECT_EXIT(fwd({1}, {1}, {0}, {0}, 1, 1, 1, 1, 1), ::testing::ExitedWithCode(1),
              std::string(kPanic) + "invalid spatial dimension, kernel, stride or padding");
  EXPECT_EXIT(fwd({4294967295u}, {1}, {1}, {4294967295u}, 1, 1, 1, 1, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: conv_fwd: LibTorch conv/pool: outDim overflow");
  EXPECT_EXIT(torchlean_cuda_convtranspose_fwd(
                  torchlean_cuda_buffer_zeros(1, 0), torchlean_cuda_buffer_zeros(1, 0),
                  torchlean_cuda_buffer_zeros(1, 0), nats({4294967295u}).get(), nats({1}).get(),
                  nats({4294967295u}).get(), nats({0}).get(), 1, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: convtranspose_fwd: LibTorch conv/pool: outDimTranspose "
              "overflow");
  EXPECT_EXIT(
      fwd({4294967295u, 4294967295u, 4294967295u}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 1, 1, 1, 1, 1),
      ::testing::ExitedWithCode(1), std::string(kPanic) + "dimension product overflow");
}

TEST_F(ConvDeathTest, BufferChecks) {
  EXPECT_EXIT(fwd({3}, {2}, {1}, {0}, 1, 1, 4, 2, 1), ::testing::ExitedWithCode(1),
              std::string(kPanic) + "buffer size mismatch \\(size\\(input\\) = 4");
  EXPECT_EXIT(fwd({3}, {2}, {1}, {0}, 1, 1, 3, 3, 1), ::testing::ExitedWithCode(1),
              std::string(kPanic) + "buffer size mismatch \\(size\\(kernel\\) = 3");
  EXPECT_EXIT(fwd({3}, {2}, {1}, {0}, 1, 1, 3, 2, 2), ::testing::ExitedWithCode(1),
              std::string(kPanic) + "buffer size mismatch \\(size\\(bias\\) = 2");
  EXPECT_EXIT(fwd({4294967295u, 4294967295u}, {1, 1}, {1, 1}, {0, 0}, 1, 1, 1, 1, 1),
              ::testing::ExitedWithCode(1),
              std::string(kPanic) + "tensor size exceeds ATen indexing");
  EXPECT_EXIT(fwd({3}, {2}, {1}, {0}, 1, 1, 3, 2, 1, 1), ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: conv_fwd: .*");
  EXPECT_EXIT(
      torchlean_cuda_conv_bwd(torchlean_cuda_buffer_zeros(3, 0), torchlean_cuda_buffer_zeros(2, 0),
                              torchlean_cuda_buffer_zeros(3, 0), nats({3}).get(), nats({2}).get(),
                              nats({1}).get(), nats({0}).get(), 1, 1),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: conv_bwd: torchlean conv/pool: buffer size mismatch "
      "\\(size\\(gradOutput\\) = 3");
  lean_object* gone = torchlean_cuda_buffer_zeros(3, 0);
  torchlean_cuda_buffer_release(gone);
  EXPECT_EXIT(torchlean_cuda_convtranspose_bwd(
                  gone, torchlean_cuda_buffer_zeros(2, 0), torchlean_cuda_buffer_zeros(4, 0),
                  nats({3}).get(), nats({2}).get(), nats({1}).get(), nats({0}).get(), 1, 1),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC: tlrt: convtranspose_bwd: .*");
  // Each buffer in turn (TorchLean's checked_tensor): live and real, then its size, before the
  // next buffer is looked at.
  EXPECT_EXIT(torchlean_cuda_conv_fwd(torchlean_cuda_buffer_zeros(4, 0), gone,
                                      torchlean_cuda_buffer_zeros(1, 0), nats({3}).get(),
                                      nats({2}).get(), nats({1}).get(), nats({0}).get(), 1, 1),
              ::testing::ExitedWithCode(1),
              std::string(kPanic) + "buffer size mismatch \\(size\\(input\\) = 4");
  EXPECT_EXIT(torchlean_cuda_conv_fwd(torchlean_cuda_buffer_zeros(3, 0), gone,
                                      torchlean_cuda_buffer_zeros(9, 0), nats({3}).get(),
                                      nats({2}).get(), nats({1}).get(), nats({0}).get(), 1, 1),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: conv_fwd: buffer has been released");
  lean_dec(gone);
}

}  // namespace
