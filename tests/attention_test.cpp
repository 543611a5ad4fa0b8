// The legacy attention pair through the Lean boundary, on the backend TLRT_DEVICE selects (ctest
// runs this binary once with cpu and once with cuda). Covered: forward and backward values against
// the long double oracle within the backend's bound of docs/NUMERICS.md ("Legacy attention") for
// float32 and float64, with and without masks (blocked -0 and allowed NaN mask entries, fully
// blocked rows), scale 0 and negative; blocked rows exactly +0 in out and dQ with NaN in their Q
// and cotangent rows, contributing nothing to dK and dV; NaN rows; the empty shapes; the context
// (not counted as a payload, freed with the output, surviving the release of Q, K and V, absent
// from copies); ten runs giving the same bits; every `Except.error` of both symbols with its
// message, in TorchLean's check order, and failed calls moving no counter.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "abi_test_support.h"
#include "tools/parity/attention_oracle.h"

using namespace abi_test;
namespace oracle = tlrt::parity::attention;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A decoded `Except String α`; consumes the result object.
struct Except {
  bool ok = false;
  Obj value;
  std::string message;
};

Except take_except(lean_object* r) {
  Except e;
  e.ok = lean_obj_tag(r) == 1;
  lean_object* field = lean_ctor_get(r, 0);
  if (e.ok) {
    lean_inc(field);
    e.value = Obj(field);
  } else {
    e.message = lean_string_cstr(field);
  }
  lean_dec(r);
  return e;
}

// A new reference to the object `o` holds.
lean_object* owned(const Obj& o) {
  lean_inc(o.get());
  return o.get();
}

// The three buffers of a (dQ, (dK, dV)) triple, borrowed from `triple`.
std::vector<lean_object*> parts(lean_object* triple) {
  std::vector<lean_object*> out;
  buffers_of(triple, out);
  return out;
}

template <class T>
struct Inputs {
  uint32_t batch = 0, n = 0, d = 0;
  double scale = 1;
  bool has_mask = false;
  std::vector<T> q, k, v, mask, g;
};

template <class T>
Inputs<T> random_inputs(uint32_t batch, uint32_t n, uint32_t d, bool has_mask, uint64_t seed,
                        double spread = 1.0) {
  Inputs<T> in;
  in.batch = batch;
  in.n = n;
  in.d = d;
  in.scale = d == 0 ? 1.0 : 1.0 / std::sqrt(static_cast<double>(d));
  in.has_mask = has_mask;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(-spread, spread);
  const uint64_t e = uint64_t{batch} * n * d;
  for (auto* x : {&in.q, &in.k, &in.v, &in.g}) {
    x->resize(e);
    for (T& y : *x) y = static_cast<T>(uni(rng));
  }
  in.mask.assign(uint64_t{batch} * n * n, T(1));
  if (has_mask) {
    std::bernoulli_distribution half(0.5);
    for (uint64_t i = 0; i < in.mask.size(); ++i) {
      in.mask[i] = half(rng) ? T(1) : T(0);
      if (i % 11 == 3) in.mask[i] = T(-0.0);               // blocked
      if (i % 13 == 5) in.mask[i] = static_cast<T>(kNaN);  // allowed
    }
    // Every third row fully blocked.
    for (uint64_t r = 0; r < uint64_t{batch} * n; r += 3) {
      for (uint32_t j = 0; j < n; ++j) in.mask[r * n + j] = (j % 2 == 0) ? T(0) : T(-0.0);
    }
  }
  return in;
}

template <class T>
oracle::Problem problem_of(const Inputs<T>& in) {
  oracle::Problem p;
  p.batch = in.batch;
  p.n = in.n;
  p.d = in.d;
  p.alpha = static_cast<T>(in.scale);
  p.has_mask = in.has_mask;
  auto widen = [](const std::vector<T>& x) { return std::vector<long double>(x.begin(), x.end()); };
  p.q = widen(in.q);
  p.k = widen(in.k);
  p.v = widen(in.v);
  p.mask = widen(in.mask);
  p.g = widen(in.g);
  return p;
}

template <class T>
oracle::Unit backend_unit() {
  return cuda_requested() ? oracle::cuda_unit<T>() : oracle::reference_unit<T>();
}

struct Operands {
  Obj q, k, v, mask;
};

template <class T>
Operands upload(const Inputs<T>& in) {
  return {make_buffer(in.q), make_buffer(in.k), make_buffer(in.v), make_buffer(in.mask)};
}

Except forward(const Operands& o, uint32_t has_mask, uint32_t batch, uint32_t n, uint32_t d,
               double scale) {
  return take_except(torchlean_libtorch_attention_fwd(o.q.get(), o.k.get(), o.v.get(), o.mask.get(),
                                                      has_mask, batch, n, d, scale));
}

Except backward(lean_object* out, lean_object* dout) {
  return take_except(torchlean_libtorch_attention_bwd(out, dout));
}

// Each value within its bound of the exact one; exact NaN wants NaN; an exact value of a blocked
// row (bound 0, value 0) wants +0 bits.
template <class T>
void expect_within(const std::vector<T>& got, const std::vector<long double>& want,
                   const std::vector<long double>& bound, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    bool good;
    if (std::isnan(want[i])) {
      good = std::isnan(got[i]);
    } else if (bound[i] == 0 && want[i] == 0) {
      good = bits_of(got[i]) == bits_of(T(0));
    } else {
      good = std::fabs(static_cast<long double>(got[i]) - want[i]) <= bound[i];
    }
    if (!good && reported++ < 5) {
      ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", exact "
                    << static_cast<double>(want[i]) << ", bound " << static_cast<double>(bound[i]);
    }
  }
}

template <class T>
void check_values(const Inputs<T>& in, const std::string& what) {
  const Operands o = upload(in);
  Except f = forward(o, in.has_mask ? 1 : 0, in.batch, in.n, in.d, in.scale);
  ASSERT_TRUE(f.ok) << what << ": " << f.message;
  // The backend's bound plus the oracle's own error (for float64 the reference computes in the
  // oracle's format).
  oracle::Exact ex = oracle::evaluate(problem_of(in), backend_unit<T>());
  const oracle::Exact own = oracle::evaluate(problem_of(in), oracle::oracle_unit<T>());
  for (auto [b, o] :
       {std::pair{&ex.out_bound, &own.out_bound}, std::pair{&ex.dq_bound, &own.dq_bound},
        std::pair{&ex.dk_bound, &own.dk_bound}, std::pair{&ex.dv_bound, &own.dv_bound}}) {
    for (size_t i = 0; i < b->size(); ++i) (*b)[i] += (*o)[i];
  }
  expect_within(read_values<T>(f.value.get()), ex.out, ex.out_bound, what + " out");
  Obj g = make_buffer(in.g);
  Except b = backward(f.value.get(), g.get());
  ASSERT_TRUE(b.ok) << what << ": " << b.message;
  const std::vector<lean_object*> grads = parts(b.value.get());
  ASSERT_EQ(grads.size(), 3u);
  expect_within(read_values<T>(grads[0]), ex.dq, ex.dq_bound, what + " dQ");
  expect_within(read_values<T>(grads[1]), ex.dk, ex.dk_bound, what + " dK");
  expect_within(read_values<T>(grads[2]), ex.dv, ex.dv_bound, what + " dV");
}

using AttentionTest = BackendSuite;
using AttentionDeathTest = BackendSuite;

template <class T>
void values_for_dtype() {
  struct Shape {
    uint32_t batch, n, d;
  };
  uint64_t seed = sizeof(T);
  for (const Shape s :
       {Shape{1, 1, 1}, Shape{2, 5, 3}, Shape{3, 33, 17}, Shape{2, 128, 64}, Shape{1, 257, 40}}) {
    for (bool mask : {false, true}) {
      const std::string what = std::string(sizeof(T) == 4 ? "float32 " : "float64 ") +
                               std::to_string(s.batch) + "x" + std::to_string(s.n) + "x" +
                               std::to_string(s.d) + (mask ? " masked" : "");
      check_values(random_inputs<T>(s.batch, s.n, s.d, mask, ++seed), what);
    }
  }
  // Peaked softmax rows, a negative scale and scale 0 (uniform rows).
  Inputs<T> peaked = random_inputs<T>(2, 64, 64, true, ++seed, 4.0);
  check_values(peaked, "peaked");
  Inputs<T> negative = random_inputs<T>(2, 31, 9, false, ++seed);
  negative.scale = -0.75;
  check_values(negative, "negative scale");
  Inputs<T> zero = random_inputs<T>(2, 31, 9, true, ++seed);
  zero.scale = 0.0;
  check_values(zero, "scale 0");
}

TEST_F(AttentionTest, Float32ValuesWithinTheBound) {
  values_for_dtype<float>();
}

TEST_F(AttentionTest, Float64ValuesWithinTheBound) {
  values_for_dtype<double>();
}

// Row 1 of each batch is fully blocked and has NaN in its Q and cotangent rows: out and dQ are +0
// there, and nothing of it reaches dK or dV. Row 0 allows a NaN score: a NaN row.
TEST_F(AttentionTest, BlockedRowsAreZeroAndContributeNothing) {
  Inputs<float> in = random_inputs<float>(2, 6, 4, true, 77);
  for (uint32_t b = 0; b < 2; ++b) {
    for (uint32_t j = 0; j < 6; ++j) {
      in.mask[(b * 6 + 0) * 6 + j] = 1.0f;
      in.mask[(b * 6 + 1) * 6 + j] = 0.0f;
      in.mask[(b * 6 + 2) * 6 + j] = 1.0f;
    }
    for (uint32_t l = 0; l < 4; ++l) {
      in.q[(b * 6 + 1) * 4 + l] = static_cast<float>(kNaN);
      in.g[(b * 6 + 1) * 4 + l] = static_cast<float>(kNaN);
    }
  }
  in.q[0] = static_cast<float>(kInf);  // batch 0, row 0: an infinite score, a NaN row
  const Operands o = upload(in);
  Except f = forward(o, 1, 2, 6, 4, 0.5);
  ASSERT_TRUE(f.ok) << f.message;
  const std::vector<float> out = read_values<float>(f.value.get());
  Obj g = make_buffer(in.g);
  Except b = backward(f.value.get(), g.get());
  ASSERT_TRUE(b.ok) << b.message;
  const std::vector<lean_object*> grads = parts(b.value.get());
  const std::vector<float> dq = read_values<float>(grads[0]);
  const std::vector<float> dk = read_values<float>(grads[1]);
  const std::vector<float> dv = read_values<float>(grads[2]);
  for (uint32_t b2 = 0; b2 < 2; ++b2) {
    for (uint32_t l = 0; l < 4; ++l) {
      EXPECT_EQ(bits_of(out[(b2 * 6 + 1) * 4 + l]), 0u) << "out, batch " << b2;
      EXPECT_EQ(bits_of(dq[(b2 * 6 + 1) * 4 + l]), 0u) << "dQ, batch " << b2;
    }
  }
  for (uint32_t l = 0; l < 4; ++l) EXPECT_TRUE(std::isnan(out[l])) << "row 0 of batch 0";
  // Batch 1 has no NaN row: its dK and dV are finite (the NaN rows of Q and g are blocked).
  for (uint32_t x = 24; x < 48; ++x) {
    EXPECT_TRUE(std::isfinite(dk[x])) << "dK " << x;
    EXPECT_TRUE(std::isfinite(dv[x])) << "dV " << x;
    EXPECT_TRUE(std::isfinite(out[x])) << "out " << x;
  }
  // And everything agrees with the oracle, which drops blocked rows by the contract.
  const oracle::Exact ex = oracle::evaluate(problem_of(in), backend_unit<float>());
  expect_within(out, ex.out, ex.out_bound, "out");
  expect_within(dv, ex.dv, ex.dv_bound, "dV");
}

// Scale 0 gives +0 scores without reading Q and K (a BLAS product with alpha = 0): NaN in Q does
// not reach out, which is then the mean of V's rows, and dQ and dK are +0.
TEST_F(AttentionTest, ScaleZeroReadsNeitherQNorK) {
  Inputs<float> in = random_inputs<float>(1, 4, 2, false, 21);
  in.q[3] = static_cast<float>(kNaN);
  in.k[0] = static_cast<float>(kInf);
  const Operands o = upload(in);
  Except f = forward(o, 0, 1, 4, 2, 0.0);
  ASSERT_TRUE(f.ok) << f.message;
  const std::vector<float> out = read_values<float>(f.value.get());
  for (uint32_t i = 0; i < 4; ++i) {
    for (uint32_t l = 0; l < 2; ++l) {
      double mean = 0;
      for (uint32_t j = 0; j < 4; ++j) mean += in.v[j * 2 + l] / 4.0;
      EXPECT_NEAR(out[i * 2 + l], mean, 1e-6) << i << ", " << l;
    }
  }
  Obj g = make_buffer(in.g);
  Except b = backward(f.value.get(), g.get());
  ASSERT_TRUE(b.ok) << b.message;
  const std::vector<lean_object*> grads = parts(b.value.get());
  for (int r : {0, 1}) {
    for (float x : read_values<float>(grads[r])) EXPECT_EQ(bits_of(x), 0u) << "result " << r;
  }
  for (float x : read_values<float>(grads[2])) EXPECT_TRUE(std::isfinite(x));
}

TEST_F(AttentionTest, EmptyShapesGiveEmptyResults) {
  for (const auto& s : std::vector<std::vector<uint32_t>>{{0, 4, 3}, {2, 0, 3}, {2, 4, 0}}) {
    Inputs<float> in = random_inputs<float>(s[0], s[1], s[2], false, 5);
    const Operands o = upload(in);
    Except f = forward(o, 0, s[0], s[1], s[2], 1.0);
    ASSERT_TRUE(f.ok) << f.message;
    EXPECT_EQ(torchlean_cuda_buffer_size(f.value.get()), 0u);
    Obj g = make_buffer(in.g);
    Except b = backward(f.value.get(), g.get());
    ASSERT_TRUE(b.ok) << b.message;
    for (lean_object* x : parts(b.value.get())) EXPECT_EQ(torchlean_cuda_buffer_size(x), 0u);
  }
}

// One wrapper and one payload for the forward (the context is not a payload), three of each for
// the backward; the context's memory goes back to the allocator with the output.
TEST_F(AttentionTest, OwnershipAndTheContextsMemory) {
  const Inputs<float> in = random_inputs<float>(2, 16, 8, true, 9);
  const Operands o = upload(in);
  const uint64_t bytes = 2 * 16 * 8 * sizeof(float);
  expect_fresh_result("attention_fwd",
                      [&] {
                        Except f = forward(o, 1, 2, 16, 8, 0.25);
                        EXPECT_TRUE(f.ok) << f.message;
                        return owned(f.value);
                      },
                      fresh_buffer(bytes), {o.q.get(), o.k.get(), o.v.get(), o.mask.get()});
  Obj g = make_buffer(in.g);
  const uint64_t allocated = torchlean_libtorch_allocated_bytes(0);
  Except f = forward(o, 1, 2, 16, 8, 0.25);
  ASSERT_TRUE(f.ok) << f.message;
  EXPECT_GT(torchlean_libtorch_allocated_bytes(0), allocated + bytes) << "the context holds memory";
  expect_fresh_result("attention_bwd",
                      [&] {
                        Except b = backward(f.value.get(), g.get());
                        EXPECT_TRUE(b.ok) << b.message;
                        return owned(b.value);
                      },
                      FreshResult{3, 3 * bytes, 3}, {f.value.get(), g.get()});
  EXPECT_EQ(torchlean_cuda_buffer_release(f.value.get()), 1u);
  EXPECT_EQ(torchlean_libtorch_allocated_bytes(0), allocated) << "release frees the context";
}

// The backward reads the forward's own copies: releasing Q, K and V changes nothing, and a
// second backward gives the same bits.
TEST_F(AttentionTest, ContextSurvivesTheInputsAndRepeats) {
  const Inputs<double> in = random_inputs<double>(2, 20, 6, true, 11);
  Operands o = upload(in);
  Except f = forward(o, 1, 2, 20, 6, 0.4);
  ASSERT_TRUE(f.ok) << f.message;
  Obj g = make_buffer(in.g);
  Except first = backward(f.value.get(), g.get());
  ASSERT_TRUE(first.ok) << first.message;
  for (Obj* x : {&o.q, &o.k, &o.v, &o.mask}) torchlean_cuda_buffer_release(x->get());
  Except second = backward(f.value.get(), g.get());
  ASSERT_TRUE(second.ok) << second.message;
  const auto a = parts(first.value.get());
  const auto b = parts(second.value.get());
  for (size_t i = 0; i < 3; ++i) {
    const std::vector<double> x = read_values<double>(a[i]);
    const std::vector<double> y = read_values<double>(b[i]);
    ASSERT_EQ(x.size(), y.size());
    for (size_t e = 0; e < x.size(); ++e) {
      EXPECT_TRUE(same_bits_or_nan(x[e], y[e])) << "result " << i << " [" << e << "]";
    }
  }
}

TEST_F(AttentionTest, TenRunsGiveTheSameBits) {
  const Inputs<float> in = random_inputs<float>(3, 70, 16, true, 13);
  const Operands o = upload(in);
  Obj g = make_buffer(in.g);
  std::vector<std::vector<float>> first;
  for (int run = 0; run < 10; ++run) {
    Except f = forward(o, 1, 3, 70, 16, 0.25);
    ASSERT_TRUE(f.ok) << f.message;
    Except b = backward(f.value.get(), g.get());
    ASSERT_TRUE(b.ok) << b.message;
    std::vector<std::vector<float>> now{read_values<float>(f.value.get())};
    for (lean_object* x : parts(b.value.get())) now.push_back(read_values<float>(x));
    if (run == 0) {
      first = now;
      continue;
    }
    for (size_t i = 0; i < now.size(); ++i) {
      for (size_t e = 0; e < now[i].size(); ++e) {
        ASSERT_TRUE(same_bits_or_nan(now[i][e], first[i][e]))
            << "run " << run << ", result " << i << " [" << e << "]";
      }
    }
  }
}

// The call fails with exactly `message` and moves no ownership counter.
template <class Call>
void expect_error(Call&& call, const std::string& message) {
  const Counters before = Counters::read();
  Except e = call();
  const Counters after = Counters::read();
  EXPECT_FALSE(e.ok);
  EXPECT_EQ(e.message, message);
  EXPECT_EQ(after.alloc_count, before.alloc_count) << message;
  EXPECT_EQ(after.live_bytes, before.live_bytes) << message;
  EXPECT_EQ(after.wrapper_alloc, before.wrapper_alloc) << message;
}

TEST_F(AttentionTest, ForwardErrorsInTorchLeansOrder) {
  const Inputs<float> in = random_inputs<float>(1, 2, 3, true, 3);
  const Operands o = upload(in);
  const std::string p = "tlrt: attention_fwd: LibTorch attention: ";
  expect_error([&] { return forward(o, 2, 1, 2, 3, kNaN); },
               p + "hasMask must be 0 or 1 (hasMask = 2)");
  expect_error([&] { return forward(o, 1, 1, 2, 3, kNaN); }, p + "scale must be finite");
  expect_error([&] { return forward(o, 1, 1, 2, 3, -kInf); }, p + "scale must be finite");
  expect_error([&] { return forward(o, 1, 1, 2, 3, 1e39); }, p + "scale exceeds the float32 range");
  expect_error([&] { return forward(o, 1, 0xffffffffu, 0xffffffffu, 0xffffffffu, 1.0); },
               p + "shape exceeds ATen's signed element count (batch * n * d = 4294967295 * "
                   "4294967295 * 4294967295)");
  expect_error([&] { return forward(o, 1, 0x80000000u, 0x80000000u, 1, 1.0); },
               p + "buffer byte size overflow (batch * n * d = 4611686018427387904 scalars)");
  expect_error([&] { return forward(o, 1, 1, 2, 4, 1.0); },
               p + "Q buffer size mismatch (expected 8, got 6)");
  // K released, V of another dtype, the mask of another size.
  {
    Operands bad = upload(in);
    torchlean_cuda_buffer_release(bad.k.get());
    expect_error([&] { return forward(bad, 1, 1, 2, 3, 1.0); }, p + "K was released");
    bad.k = make_buffer(in.k);
    bad.v = make_buffer(std::vector<double>(6, 1.0));
    expect_error([&] { return forward(bad, 1, 1, 2, 3, 1.0); },
                 p + "V has dtype float64 but Q has float32");
    bad.v = make_buffer(in.v);
    bad.mask = make_buffer(std::vector<float>(5, 1.0f));
    expect_error([&] { return forward(bad, 1, 1, 2, 3, 1.0); },
                 p + "mask buffer size mismatch (expected 4, got 5)");
    // Without a mask, the mask argument is not read.
    Except ok = forward(bad, 0, 1, 2, 3, 1.0);
    EXPECT_TRUE(ok.ok) << ok.message;
  }
}

// Out of memory (the memory-fraction cap) is an Except.error that moves no counter: the context's
// probabilities are allocated before the output.
TEST_F(AttentionTest, OutOfMemoryIsAnErrorAndMovesNoCounter) {
  const double fraction = memory_fraction();
  ASSERT_GE(fraction, 0);
  const uint64_t cap = reserved_plus(uint64_t{32} << 20);
  // n * n float32 probabilities of twice the cap.
  const auto n = static_cast<uint32_t>(std::sqrt(static_cast<double>(cap) / 2.0) + 1);
  const Inputs<float> in = random_inputs<float>(1, n, 1, false, 17);
  const Operands o = upload(in);
  ASSERT_TRUE(set_memory_cap(cap));
  const uint64_t allocated = torchlean_libtorch_allocated_bytes(0);
  const Counters before = Counters::read();
  Except f = forward(o, 0, 1, n, 1, 1.0);
  const Counters after = Counters::read();
  ASSERT_TRUE(take_io(torchlean_libtorch_set_memory_fraction(fraction)).ok);
  EXPECT_FALSE(f.ok);
  EXPECT_NE(f.message.find("tlrt: attention_fwd: out of memory"), std::string::npos) << f.message;
  EXPECT_EQ(after.alloc_count, before.alloc_count);
  EXPECT_EQ(after.free_count, before.free_count);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_EQ(after.wrapper_alloc, before.wrapper_alloc);
  EXPECT_EQ(torchlean_libtorch_allocated_bytes(0), allocated);
}

TEST_F(AttentionTest, NoEnabledProviderIsAnError) {
  const Inputs<float> in = random_inputs<float>(1, 2, 3, false, 3);
  const Operands o = upload(in);
  auto set = [](uint32_t id, uint32_t on) {
    EXPECT_TRUE(take_io(torchlean_libtorch_set_setting(id, on)).ok);
  };
  set(6, 0);  // math off: the memory-efficient provider still takes float32
  Except f32 = forward(o, 0, 1, 2, 3, 1.0);
  EXPECT_TRUE(f32.ok) << f32.message;
  const Inputs<double> in64 = random_inputs<double>(1, 2, 3, false, 3);
  const Operands o64 = upload(in64);
  expect_error([&] { return forward(o64, 0, 1, 2, 3, 1.0); },
               "tlrt: attention_fwd: LibTorch attention: No available kernel: no enabled attention "
               "provider takes float64 inputs (math = 0, efficient = 1, flash = 1, cuDNN = 1)");
  set(5, 0);
  expect_error([&] { return forward(o, 0, 1, 2, 3, 1.0); },
               "tlrt: attention_fwd: LibTorch attention: No available kernel: no enabled attention "
               "provider takes float32 inputs (math = 0, efficient = 0, flash = 1, cuDNN = 1)");
  set(5, 1);
  set(6, 1);
}

TEST_F(AttentionTest, BackwardErrors) {
  const Inputs<float> in = random_inputs<float>(1, 2, 3, false, 3);
  const Operands o = upload(in);
  Obj g = make_buffer(in.g);
  const std::string p = "tlrt: attention_bwd: LibTorch attention: ";
  const std::string original = p + "backward requires the original, unreleased forward buffer";
  expect_error([&] { return backward(o.q.get(), g.get()); }, original);
  Except f = forward(o, 0, 1, 2, 3, 1.0);
  ASSERT_TRUE(f.ok) << f.message;
  Obj copy(torchlean_cuda_buffer_copy(f.value.get()));
  expect_error([&] { return backward(copy.get(), g.get()); }, original);
  Obj short_g = make_buffer(std::vector<float>(5, 1.0f));
  expect_error([&] { return backward(f.value.get(), short_g.get()); },
               p + "dOut buffer size mismatch (expected 6, got 5)");
  Obj wide_g = make_buffer(std::vector<double>(6, 1.0));
  expect_error([&] { return backward(f.value.get(), wide_g.get()); },
               p + "dOut has dtype float64 but forward output has float32");
  {
    Io io = take_io(torchlean_libtorch_get_setting(2));
    const bool deterministic = io.ok && lean_unbox(io.value.get()) != 0;
    DeterministicScope flip(!deterministic);
    expect_error([&] { return backward(f.value.get(), g.get()); },
                 p + "deterministic policy changed between forward and backward");
  }
  Except ok = backward(f.value.get(), g.get());
  EXPECT_TRUE(ok.ok) << ok.message;
  torchlean_cuda_buffer_release(f.value.get());
  expect_error([&] { return backward(f.value.get(), g.get()); }, original);
}

TEST_F(AttentionDeathTest, NonBufferObjectPanics) {
  const Inputs<float> in = random_inputs<float>(1, 2, 3, false, 3);
  const Operands o = upload(in);
  EXPECT_EXIT(torchlean_libtorch_attention_fwd(lean_box(0), o.k.get(), o.v.get(), o.mask.get(), 0,
                                               1, 2, 3, 1.0),
              ::testing::ExitedWithCode(1), "INTERNAL PANIC");
}

}  // namespace
