// The FFT family (rfft1d_packed, irfft1d_packed, irfft1d_packed_unnormalized, and the legacy
// spectral_conv1d_rfft_fwd / _bwd) through the Lean boundary, on the backend TLRT_DEVICE selects
// (ctest runs this binary once with cpu and once with cuda). Results are tolerance-level (SPEC-ops
// 5, 12), so they are compared with an independent direct DFT evaluated here in long double with
// twiddles indexed by k*t mod n, within the bound of docs/NUMERICS.md ("FFT"): per element,
// K(n) * u * ||exact row||_2. Closed-form spectra (impulse, constant, one cosine),
// the endpoint rule, the normalization factor, round trips, both dtypes, the spectral pair against
// a direct evaluation and the adjoint identities, 10-run repeatability, ownership, and every
// panic with its message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "abi_test_support.h"

using namespace abi_test;

namespace {

using Ld = long double;
using Vec = std::vector<double>;

template <class T>
Obj make(const Vec& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    const T v = static_cast<T>(values[i]);
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
  Io io = take_io(
      torchlean_cuda_buffer_of_bytes_io(byte_array(bytes).get(), Dt<T>::kCode, Dt<T>::kCode));
  EXPECT_TRUE(io.ok) << io.message;
  return std::move(io.value);
}

template <class T>
Vec read(lean_object* buffer) {
  EXPECT_EQ(torchlean_cuda_buffer_dtype(buffer), Dt<T>::kCode);
  Io io = take_io(torchlean_cuda_buffer_to_bytes_io(buffer, Dt<T>::kCode));
  EXPECT_TRUE(io.ok) << io.message;
  if (!io.ok) return {};
  const std::vector<uint8_t> bytes = bytes_of(io.value.get());
  Vec out(bytes.size() / sizeof(T));
  for (size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
  return out;
}

template <class T>
std::vector<uint8_t> raw(lean_object* buffer) {
  Io io = take_io(torchlean_cuda_buffer_to_bytes_io(buffer, Dt<T>::kCode));
  EXPECT_TRUE(io.ok) << io.message;
  return io.ok ? bytes_of(io.value.get()) : std::vector<uint8_t>{};
}

// Values representable in float32 (so both dtypes see the same input).
Vec random_values(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Vec v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

const Ld kPiL = 3.141592653589793238462643383279502884L;

// cos / sin of 2 pi r / n for r = 0..n-1.
struct Roots {
  std::vector<Ld> c, s;
  explicit Roots(uint64_t n) : c(n), s(n) {
    for (uint64_t r = 0; r < n; ++r) {
      const Ld a = 2 * kPiL * static_cast<Ld>(r) / static_cast<Ld>(n);
      c[r] = std::cos(a);
      s[r] = std::sin(a);
    }
  }
};

// Direct DFT of each row: packed (batch, n/2+1, 2).
Vec direct_rfft(const Vec& x, uint64_t batch, uint64_t n) {
  const Roots w(n);
  const uint64_t bins = n / 2 + 1;
  Vec out(batch * bins * 2);
  for (uint64_t b = 0; b < batch; ++b) {
    for (uint64_t k = 0; k < bins; ++k) {
      Ld re = 0, im = 0;
      for (uint64_t t = 0; t < n; ++t) {
        const uint64_t r = (k * t) % n;
        re += x[b * n + t] * w.c[r];
        im -= x[b * n + t] * w.s[r];
      }
      out[(b * bins + k) * 2] = static_cast<double>(re);
      out[(b * bins + k) * 2 + 1] = static_cast<double>(im);
    }
  }
  return out;
}

// The spec's Hermitian inverse formula, directly, times scale.
Vec direct_irfft(const Vec& spec, uint64_t batch, uint64_t n, Ld scale) {
  const Roots w(n);
  const uint64_t bins = n / 2 + 1;
  Vec out(batch * n);
  const uint64_t interior_last = (n + 1) / 2 - 1;  // K = ceil(n/2) - 1
  for (uint64_t b = 0; b < batch; ++b) {
    const double* s = spec.data() + b * bins * 2;
    for (uint64_t t = 0; t < n; ++t) {
      Ld acc = s[0];
      for (uint64_t k = 1; k <= interior_last; ++k) {
        const uint64_t r = (k * t) % n;
        acc += 2 * (s[2 * k] * w.c[r] - s[2 * k + 1] * w.s[r]);
      }
      if (n % 2 == 0) acc += (t % 2 == 0 ? 1 : -1) * static_cast<Ld>(s[2 * (n / 2)]);
      out[b * n + t] = static_cast<double>(acc * scale);
    }
  }
  return out;
}

template <class T>
double unit_roundoff() {
  return std::numeric_limits<T>::epsilon() / 2;
}

bool smooth(uint64_t n) {
  for (uint64_t p : {2u, 3u, 5u, 7u}) {
    while (n % p == 0) n /= p;
  }
  return n == 1;
}

// K(n) of docs/NUMERICS.md ("FFT"): 8 (ceil(log2 n) + 2) for lengths whose prime factors are 2, 3,
// 5, 7; 3 K(2n) for the others (Bluestein).
double transform_constant(uint64_t n) {
  const auto lg = [](uint64_t m) { return std::ceil(std::log2(static_cast<double>(m))); };
  return smooth(n) ? 8 * (lg(n) + 2) : 3 * 8 * (lg(2 * n) + 2);
}

// Row-wise comparison within c * K(n) * u * sqrt(2) * ||exact row||_2 (a packed half spectrum
// holds at least half of the full spectrum's energy, hence sqrt(2)).
template <class T>
void expect_rows_near(const Vec& got, const Vec& want, uint64_t rows, uint64_t n_transform,
                      const std::string& what, double c = 1.0) {
  ASSERT_EQ(got.size(), want.size()) << what;
  if (rows == 0) return;
  const uint64_t len = want.size() / rows;
  for (uint64_t r = 0; r < rows; ++r) {
    double norm = 0;
    for (uint64_t i = 0; i < len; ++i) norm += want[r * len + i] * want[r * len + i];
    norm = std::sqrt(2 * norm);
    const double tol = c * transform_constant(n_transform) * unit_roundoff<T>() * norm + 1e-300;
    for (uint64_t i = 0; i < len; ++i) {
      ASSERT_NEAR(got[r * len + i], want[r * len + i], tol)
          << what << " row " << r << " index " << i << " (n = " << n_transform << ")";
    }
  }
}

template <class T>
Vec rfft(const Vec& x, uint32_t batch, uint32_t n) {
  const Obj in = make<T>(x);
  Obj r(torchlean_cuda_buffer_rfft1d_packed(in.get(), batch, n));
  return read<T>(r.get());
}

template <class T>
Vec irfft(const Vec& s, uint32_t batch, uint32_t n, bool normalized) {
  const Obj in = make<T>(s);
  Obj r(normalized ? torchlean_cuda_buffer_irfft1d_packed(in.get(), batch, n)
                   : torchlean_cuda_buffer_irfft1d_packed_unnormalized(in.get(), batch, n));
  return read<T>(r.get());
}

// Rounds values through T (the inputs the ABI actually sees).
template <class T>
Vec through(const Vec& v) {
  Vec out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<double>(static_cast<T>(v[i]));
  return out;
}

class Fft : public BackendSuite {};
using FftDeathTest = Fft;

const uint32_t kLengths[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 97, 128, 1000};

// ---------------------------------------------------------------------------------------------
// rfft / irfft against the direct DFT

template <class T>
void forward_against_direct() {
  for (uint32_t n : kLengths) {
    for (uint32_t batch : {1u, 3u}) {
      const Vec x = through<T>(random_values(uint64_t{batch} * n, n * 31 + batch));
      expect_rows_near<T>(rfft<T>(x, batch, n), direct_rfft(x, batch, n), batch, n, "rfft");
    }
  }
}

template <class T>
void inverse_against_direct() {
  for (uint32_t n : kLengths) {
    for (uint32_t batch : {1u, 4u}) {
      const uint64_t bins = n / 2 + 1;
      const Vec s = through<T>(random_values(uint64_t{batch} * bins * 2, n * 17 + batch));
      const Ld inv = static_cast<Ld>(static_cast<T>(1.0 / static_cast<double>(n)));
      expect_rows_near<T>(irfft<T>(s, batch, n, true), direct_irfft(s, batch, n, inv), batch, n,
                          "irfft");
      expect_rows_near<T>(irfft<T>(s, batch, n, false), direct_irfft(s, batch, n, 1), batch, n,
                          "irfft unnormalized");
    }
  }
}

TEST_F(Fft, ForwardMatchesDirectDftFloat32) {
  forward_against_direct<float>();
}
TEST_F(Fft, ForwardMatchesDirectDftFloat64) {
  forward_against_direct<double>();
}
TEST_F(Fft, InverseMatchesTheHermitianFormulaFloat32) {
  inverse_against_direct<float>();
}
TEST_F(Fft, InverseMatchesTheHermitianFormulaFloat64) {
  inverse_against_direct<double>();
}

// Closed forms: impulse -> all ones; constant c -> n*c at DC; cos(2 pi m t / n) -> n/2 at bin m.
template <class T>
void closed_forms() {
  for (uint32_t n : {1u, 2u, 3u, 5u, 8u, 17u, 97u, 1000u}) {
    const uint64_t bins = n / 2 + 1;
    Vec impulse(n, 0.0);
    impulse[0] = 1;
    Vec ones(bins * 2, 0.0);
    for (uint64_t k = 0; k < bins; ++k) ones[2 * k] = 1;
    expect_rows_near<T>(rfft<T>(impulse, 1, n), ones, 1, n, "impulse");
    // The impulse back from its spectrum.
    expect_rows_near<T>(irfft<T>(ones, 1, n, true), impulse, 1, n, "impulse inverse");

    const Vec constant(n, 0.75);
    Vec dc(bins * 2, 0.0);
    dc[0] = 0.75 * n;
    expect_rows_near<T>(rfft<T>(constant, 1, n), dc, 1, n, "constant");
    expect_rows_near<T>(irfft<T>(dc, 1, n, false), Vec(n, 0.75 * n), 1, n, "constant inverse");

    if (n >= 3) {
      const uint32_t m = 1;
      Vec cosine(n);
      for (uint32_t t = 0; t < n; ++t) {
        cosine[t] = static_cast<double>(static_cast<T>(
            std::cos(2 * kPiL * static_cast<Ld>((uint64_t{m} * t) % n) / static_cast<Ld>(n))));
      }
      Vec line(bins * 2, 0.0);
      line[2 * m] = n / 2.0;
      // The rounded cosine is not exactly the cosine: compare against the direct DFT of what
      // the ABI received, and the line itself loosely.
      expect_rows_near<T>(rfft<T>(cosine, 1, n), direct_rfft(cosine, 1, n), 1, n, "cosine");
      expect_rows_near<T>(rfft<T>(cosine, 1, n), line, 1, n, "cosine line", 8.0 * n);
    }
  }
}

TEST_F(Fft, ClosedFormSpectraFloat32) {
  closed_forms<float>();
}
TEST_F(Fft, ClosedFormSpectraFloat64) {
  closed_forms<double>();
}

// Imaginary parts of bin 0 and (n even) bin n/2 are ignored: the spectrum is never assumed
// Hermitian-consistent.
template <class T>
void endpoint_rule() {
  for (uint32_t n : {1u, 2u, 7u, 8u, 97u, 128u}) {
    const uint64_t bins = n / 2 + 1;
    const uint32_t batch = 3;
    Vec clean = through<T>(random_values(batch * bins * 2, n + 5));
    Vec dirty = clean;
    for (uint32_t b = 0; b < batch; ++b) {
      clean[b * bins * 2 + 1] = 0;
      dirty[b * bins * 2 + 1] = 123.5;
      if (n % 2 == 0) {
        clean[(b * bins + n / 2) * 2 + 1] = 0;
        dirty[(b * bins + n / 2) * 2 + 1] = -77.25;
      }
    }
    const Vec a = irfft<T>(clean, batch, n, true);
    const Vec b = irfft<T>(dirty, batch, n, true);
    expect_rows_near<T>(b, a, batch, n, "endpoint rule");
    expect_rows_near<T>(irfft<T>(dirty, batch, n, false), irfft<T>(clean, batch, n, false), batch,
                        n, "endpoint rule unnormalized");
  }
}

TEST_F(Fft, EndpointImaginaryPartsAreIgnoredFloat32) {
  endpoint_rule<float>();
}
TEST_F(Fft, EndpointImaginaryPartsAreIgnoredFloat64) {
  endpoint_rule<double>();
}

// normalized = unnormalized * fl(1/n), within tolerance; round trips.
template <class T>
void normalization_and_round_trip() {
  for (uint32_t n : kLengths) {
    const uint32_t batch = 2;
    const uint64_t bins = n / 2 + 1;
    const Vec s = through<T>(random_values(batch * bins * 2, n * 3));
    const Vec un = irfft<T>(s, batch, n, false);
    const double inv = static_cast<double>(static_cast<T>(1.0 / n));
    Vec scaled(un.size());
    for (size_t i = 0; i < un.size(); ++i) scaled[i] = un[i] * inv;
    expect_rows_near<T>(irfft<T>(s, batch, n, true), scaled, batch, n, "normalized");

    const Vec x = through<T>(random_values(batch * n, n * 7));
    const Vec spectrum = rfft<T>(x, batch, n);
    expect_rows_near<T>(irfft<T>(spectrum, batch, n, true), x, batch, n, "round trip", 2.0);
  }
}

TEST_F(Fft, NormalizationAndRoundTripFloat32) {
  normalization_and_round_trip<float>();
}
TEST_F(Fft, NormalizationAndRoundTripFloat64) {
  normalization_and_round_trip<double>();
}

TEST_F(Fft, EmptyBatchesGiveEmptyResults) {
  for (uint8_t dtype : {uint8_t{0}, uint8_t{1}}) {
    for (uint32_t n : {1u, 2u, 5u, 4096u}) {
      Obj x(torchlean_cuda_buffer_zeros(0, dtype));
      Obj a(torchlean_cuda_buffer_rfft1d_packed(x.get(), 0, n));
      Obj b(torchlean_cuda_buffer_irfft1d_packed(x.get(), 0, n));
      Obj c(torchlean_cuda_buffer_irfft1d_packed_unnormalized(x.get(), 0, n));
      for (const Obj* r : {&a, &b, &c}) {
        EXPECT_EQ(torchlean_cuda_buffer_size(r->get()), 0u);
        EXPECT_EQ(torchlean_cuda_buffer_dtype(r->get()), dtype);
        EXPECT_NE(r->get(), x.get());
      }
    }
  }
}

// Non-finite inputs: a NaN anywhere in a row makes that row's transform NaN somewhere and leaves
// the other rows alone.
TEST_F(Fft, NaNStaysInItsRow) {
  const uint32_t n = 16, batch = 2;
  Vec x = random_values(batch * n, 9);
  x[3] = std::numeric_limits<double>::quiet_NaN();
  const Vec s = rfft<float>(x, batch, n);
  bool any_nan = false;
  for (uint32_t i = 0; i < (n / 2 + 1) * 2; ++i) any_nan |= std::isnan(s[i]);
  EXPECT_TRUE(any_nan);
  for (uint32_t i = (n / 2 + 1) * 2; i < s.size(); ++i) EXPECT_FALSE(std::isnan(s[i])) << i;
}

// ---------------------------------------------------------------------------------------------
// Spectral convolution (legacy pair) against a direct evaluation

struct Spectral {
  uint32_t grid, width, modes;
};

// Direct forward, in long double: X = rfft of each column, Z = per-mode mixing, y = normalized
// Hermitian inverse.
Vec direct_spectral_fwd(const Vec& x, const Vec& wr, const Vec& wi, const Spectral& p) {
  const uint64_t g = p.grid, w = p.width, bins = g / 2 + 1;
  Vec cols(w * g);
  for (uint64_t t = 0; t < g; ++t)
    for (uint64_t i = 0; i < w; ++i) cols[i * g + t] = x[t * w + i];
  const Vec xs = direct_rfft(cols, w, g);  // (w, bins, 2)
  Vec z(w * bins * 2, 0.0);
  for (uint64_t k = 0; k < p.modes; ++k) {
    for (uint64_t o = 0; o < w; ++o) {
      Ld re = 0, im = 0;
      for (uint64_t i = 0; i < w; ++i) {
        const Ld a = xs[(i * bins + k) * 2], b = xs[(i * bins + k) * 2 + 1];
        const Ld c = wr[(k * w + i) * w + o], d = wi[(k * w + i) * w + o];
        re += a * c - b * d;
        im += a * d + b * c;
      }
      z[(o * bins + k) * 2] = static_cast<double>(re);
      z[(o * bins + k) * 2 + 1] = static_cast<double>(im);
    }
  }
  const Vec ycols = direct_irfft(z, w, g, 1.0L / g);
  Vec y(g * w);
  for (uint64_t t = 0; t < g; ++t)
    for (uint64_t i = 0; i < w; ++i) y[t * w + i] = ycols[i * g + t];
  return y;
}

template <class T>
Vec spectral_fwd(const Vec& x, const Vec& wr, const Vec& wi, const Spectral& p) {
  const Obj a = make<T>(x), b = make<T>(wr), c = make<T>(wi);
  Obj r(torchlean_cuda_buffer_spectral_conv1d_rfft_fwd(a.get(), b.get(), c.get(), p.grid, p.width,
                                                       p.modes));
  return read<T>(r.get());
}

template <class T>
void spectral_bwd(const Vec& x, const Vec& wr, const Vec& wi, const Vec& dy, const Spectral& p,
                  Vec* dx, Vec* dwr, Vec* dwi) {
  const Obj a = make<T>(x), b = make<T>(wr), c = make<T>(wi), d = make<T>(dy);
  Obj r(torchlean_cuda_buffer_spectral_conv1d_rfft_bwd(a.get(), b.get(), c.get(), d.get(), p.grid,
                                                       p.width, p.modes));
  ASSERT_TRUE(lean_is_ctor(r.get()));
  lean_object* inner = lean_ctor_get(r.get(), 1);
  *dx = read<T>(lean_ctor_get(r.get(), 0));
  *dwr = read<T>(lean_ctor_get(inner, 0));
  *dwi = read<T>(lean_ctor_get(inner, 1));
}

double dot(const Vec& a, const Vec& b) {
  Ld s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<Ld>(a[i]) * b[i];
  return static_cast<double>(s);
}

double norm(const Vec& a) {
  return std::sqrt(dot(a, a));
}

const Spectral kSpectral[] = {{1, 1, 1}, {1, 3, 1}, {2, 2, 2},  {4, 3, 2},  {5, 2, 3},
                              {8, 4, 5}, {7, 3, 4}, {16, 5, 3}, {17, 2, 9}, {6, 3, 0}};

template <class T>
void spectral_forward_direct() {
  for (const Spectral& p : kSpectral) {
    const Vec x = through<T>(random_values(p.grid * p.width, p.grid * 100 + p.width));
    const Vec wr = through<T>(random_values(p.modes * p.width * p.width, 11 + p.modes));
    const Vec wi = through<T>(random_values(p.modes * p.width * p.width, 13 + p.modes));
    const Vec y = spectral_fwd<T>(x, wr, wi, p);
    const Vec want = direct_spectral_fwd(x, wr, wi, p);
    // Whole-output bound: the mixing adds width terms per bin.
    const double tol = (2 * transform_constant(p.grid) + 2.0 * p.width + 8) * unit_roundoff<T>() *
                           std::sqrt(2.0) * norm(x) * (1 + norm(wr) + norm(wi)) +
                       1e-300;
    ASSERT_EQ(y.size(), want.size());
    for (size_t i = 0; i < y.size(); ++i) {
      EXPECT_NEAR(y[i], want[i], tol)
          << "grid " << p.grid << " width " << p.width << " modes " << p.modes << " index " << i;
    }
  }
}

TEST_F(Fft, SpectralForwardMatchesDirectEvaluationFloat32) {
  spectral_forward_direct<float>();
}
TEST_F(Fft, SpectralForwardMatchesDirectEvaluationFloat64) {
  spectral_forward_direct<double>();
}

// The backward is the exact adjoint: with the forward linear in x for fixed w and linear in w for
// fixed x, <fwd(x, w), dy> = <x, dx> = <wRe, dWRe> + <wIm, dWIm>.
template <class T>
void spectral_adjoint() {
  for (const Spectral& p : kSpectral) {
    const Vec x = through<T>(random_values(p.grid * p.width, p.grid * 7 + p.width));
    const Vec wr = through<T>(random_values(p.modes * p.width * p.width, 21 + p.modes));
    const Vec wi = through<T>(random_values(p.modes * p.width * p.width, 23 + p.modes));
    const Vec dy = through<T>(random_values(p.grid * p.width, 29 + p.grid));
    const Vec y = spectral_fwd<T>(x, wr, wi, p);
    Vec dx, dwr, dwi;
    spectral_bwd<T>(x, wr, wi, dy, p, &dx, &dwr, &dwi);
    ASSERT_EQ(dx.size(), x.size());
    ASSERT_EQ(dwr.size(), wr.size());
    ASSERT_EQ(dwi.size(), wi.size());
    const double lhs = dot(y, dy);
    const double scale = norm(y) * norm(dy) + norm(x) * norm(dx) + norm(wr) * norm(dwr) +
                         norm(wi) * norm(dwi) + 1e-300;
    const double tol =
        4 * (2 * transform_constant(p.grid) + 2.0 * p.width + 8) * unit_roundoff<T>() * scale;
    EXPECT_NEAR(lhs, dot(x, dx), tol)
        << "x-adjoint grid " << p.grid << " width " << p.width << " modes " << p.modes;
    EXPECT_NEAR(lhs, dot(wr, dwr) + dot(wi, dwi), tol)
        << "w-adjoint grid " << p.grid << " width " << p.width << " modes " << p.modes;
    if (p.modes == 0) {
      for (double v : y) EXPECT_EQ(v, 0.0);
      for (double v : dx) EXPECT_EQ(v, 0.0);
    }
  }
}

TEST_F(Fft, SpectralBackwardIsTheAdjointFloat32) {
  spectral_adjoint<float>();
}
TEST_F(Fft, SpectralBackwardIsTheAdjointFloat64) {
  spectral_adjoint<double>();
}

// ---------------------------------------------------------------------------------------------
// Repeatability and ownership

TEST_F(Fft, TenRunsGiveIdenticalBits) {
  const uint32_t n = 1000, batch = 5;
  const Obj x = make<float>(random_values(batch * n, 77));
  const Obj s = make<double>(random_values(batch * (n / 2 + 1) * 2, 78));
  std::vector<uint8_t> first_f, first_i;
  for (int run = 0; run < 10; ++run) {
    Obj f(torchlean_cuda_buffer_rfft1d_packed(x.get(), batch, n));
    Obj i(torchlean_cuda_buffer_irfft1d_packed(s.get(), batch, n));
    if (run == 0) {
      first_f = raw<float>(f.get());
      first_i = raw<double>(i.get());
    } else {
      EXPECT_EQ(raw<float>(f.get()), first_f) << run;
      EXPECT_EQ(raw<double>(i.get()), first_i) << run;
    }
  }
}

TEST_F(Fft, EachCallCreatesFreshBuffersAndLeaksNothing) {
  const Obj x = make<float>(random_values(3 * 8, 1));
  const Obj s = make<double>(random_values(3 * 5 * 2, 2));
  const Obj g = make<float>(random_values(4 * 2, 3));
  const Obj w = make<float>(random_values(2 * 2 * 2, 4));
  struct Case {
    const char* name;
    std::function<lean_object*()> call;
    uint64_t payloads, bytes, wrappers;
  };
  const Case cases[] = {
      {"rfft", [&] { return torchlean_cuda_buffer_rfft1d_packed(x.get(), 3, 8); }, 1, 3 * 5 * 2 * 4,
       1},
      {"irfft", [&] { return torchlean_cuda_buffer_irfft1d_packed(s.get(), 3, 8); }, 1, 3 * 8 * 8,
       1},
      {"irfft unnormalized",
       [&] { return torchlean_cuda_buffer_irfft1d_packed_unnormalized(s.get(), 3, 9); }, 1,
       3 * 9 * 8, 1},
      {"spectral fwd",
       [&] {
         return torchlean_cuda_buffer_spectral_conv1d_rfft_fwd(g.get(), w.get(), w.get(), 4, 2, 2);
       },
       1, 4 * 2 * 4, 1},
      {"spectral bwd",
       [&] {
         return torchlean_cuda_buffer_spectral_conv1d_rfft_bwd(g.get(), w.get(), w.get(), g.get(),
                                                               4, 2, 2);
       },
       3, (8 + 8 + 8) * 4, 3},
  };
  for (const Case& c : cases) {
    expect_fresh_result(c.name, c.call, FreshResult{c.wrappers, c.bytes, c.payloads},
                        {x.get(), s.get(), g.get(), w.get()});
  }
  // Borrowed inputs unchanged (C2R overwrites its input: the spectrum must have been copied).
  const Vec s_before = read<double>(s.get());
  Obj again(torchlean_cuda_buffer_irfft1d_packed(s.get(), 3, 8));
  EXPECT_EQ(read<double>(s.get()), s_before);
}

// ---------------------------------------------------------------------------------------------
// Bad inputs: pure symbols panic, naming the op and the sizes

TEST_F(FftDeathTest, ZeroLengthPanics) {
  EXPECT_EXIT(torchlean_cuda_buffer_rfft1d_packed(torchlean_cuda_buffer_zeros(0, 0), 0, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: rfft1d_packed: rfft1dPacked: length must be positive");
  EXPECT_EXIT(torchlean_cuda_buffer_irfft1d_packed(torchlean_cuda_buffer_zeros(2, 1), 1, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: irfft1d_packed: irfft1dPacked: length must be positive");
  EXPECT_EXIT(
      torchlean_cuda_buffer_irfft1d_packed_unnormalized(torchlean_cuda_buffer_zeros(2, 0), 1, 0),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: irfft1d_packed_unnormalized: irfft1dPacked: length must be positive");
  // The length comes before the operand is looked at, as TorchLean checks.
  EXPECT_EXIT(torchlean_cuda_buffer_rfft1d_packed(released_buffer(4, 0), 1, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: rfft1d_packed: rfft1dPacked: length must be positive");
  EXPECT_EXIT(torchlean_cuda_buffer_irfft1d_packed(released_buffer(4, 1), 1, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: irfft1d_packed: irfft1dPacked: length must be positive");
  EXPECT_EXIT(torchlean_cuda_buffer_irfft1d_packed_unnormalized(lean_box(0), 1, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: irfft1d_packed_unnormalized: irfft1dPacked: length must be "
              "positive");
}

TEST_F(FftDeathTest, SizesMustMatchTheArguments) {
  EXPECT_EXIT(torchlean_cuda_buffer_rfft1d_packed(torchlean_cuda_buffer_zeros(7, 0), 2, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: rfft1d_packed: buffer size does not match shape "
              "\\(size\\(x\\) = 7 but prod\\(\\[batch, n\\]\\) = 8");
  EXPECT_EXIT(torchlean_cuda_buffer_irfft1d_packed(torchlean_cuda_buffer_zeros(8, 0), 2, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: irfft1d_packed: buffer size does not match shape "
              "\\(size\\(spec\\) = 8 but prod\\(\\[batch, n/2 \\+ 1, 2\\]\\) = 12");
  // Odd and even n share the packed length: n = 5 wants 3 bins as n = 4 does, n = 6 wants 4.
  EXPECT_EXIT(
      torchlean_cuda_buffer_irfft1d_packed_unnormalized(torchlean_cuda_buffer_zeros(6, 1), 1, 6),
      ::testing::ExitedWithCode(1),
      "INTERNAL PANIC: tlrt: irfft1d_packed_unnormalized: buffer size does not match "
      "shape \\(size\\(spec\\) = 6 but prod\\(\\[batch, n/2 \\+ 1, 2\\]\\) = 8");
  EXPECT_EXIT(torchlean_cuda_buffer_rfft1d_packed(torchlean_cuda_buffer_zeros(0, 0), 4294967295u,
                                                  4294967295u),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: rfft1d_packed: shape size overflow");
}

TEST_F(FftDeathTest, ReleasedAndMixedOperandsPanic) {
  EXPECT_EXIT(torchlean_cuda_buffer_rfft1d_packed(released_buffer(4, 0), 1, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: rfft1d_packed: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_irfft1d_packed(released_buffer(6, 0), 1, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: irfft1d_packed: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_irfft1d_packed_unnormalized(released_buffer(6, 1), 1, 4),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: irfft1d_packed_unnormalized: buffer has been released");
  EXPECT_EXIT(torchlean_cuda_buffer_spectral_conv1d_rfft_fwd(
                  torchlean_cuda_buffer_zeros(4, 0), torchlean_cuda_buffer_zeros(2, 1),
                  torchlean_cuda_buffer_zeros(2, 0), 4, 1, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: spectral_conv1d_rfft_fwd: dtypes differ");
  EXPECT_EXIT(torchlean_cuda_buffer_spectral_conv1d_rfft_bwd(
                  torchlean_cuda_buffer_zeros(4, 0), torchlean_cuda_buffer_zeros(2, 0),
                  torchlean_cuda_buffer_zeros(2, 0), torchlean_cuda_buffer_zeros(4, 1), 4, 1, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: spectral_conv1d_rfft_bwd: dtypes differ \\(float32 vs "
              "float64\\)");
}

TEST_F(FftDeathTest, SpectralShapesAreCheckedInTorchLeansOrder) {
  EXPECT_EXIT(torchlean_cuda_buffer_spectral_conv1d_rfft_fwd(
                  torchlean_cuda_buffer_zeros(0, 0), torchlean_cuda_buffer_zeros(0, 0),
                  torchlean_cuda_buffer_zeros(0, 0), 0, 3, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: spectral_conv1d_rfft_fwd: spectralConv1dRfft: grid and "
              "width must be positive \\(grid = 0, width = 3\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_spectral_conv1d_rfft_bwd(
                  torchlean_cuda_buffer_zeros(8, 0), torchlean_cuda_buffer_zeros(4, 0),
                  torchlean_cuda_buffer_zeros(4, 0), torchlean_cuda_buffer_zeros(8, 0), 8, 1, 6),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: spectral_conv1d_rfft_bwd: spectralConv1dRfft: modes exceeds "
              "rfft frequency count \\(modes = 6 but grid/2 \\+ 1 = 5\\)");
  EXPECT_EXIT(torchlean_cuda_buffer_spectral_conv1d_rfft_fwd(
                  torchlean_cuda_buffer_zeros(8, 0), torchlean_cuda_buffer_zeros(7, 0),
                  torchlean_cuda_buffer_zeros(8, 0), 4, 2, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: spectral_conv1d_rfft_fwd: buffer size does not match shape "
              "\\(size\\(wRe\\) = 7 but prod\\(\\[modes, width, width\\]\\) = 8");
  EXPECT_EXIT(torchlean_cuda_buffer_spectral_conv1d_rfft_bwd(
                  torchlean_cuda_buffer_zeros(8, 0), torchlean_cuda_buffer_zeros(8, 0),
                  torchlean_cuda_buffer_zeros(8, 0), torchlean_cuda_buffer_zeros(9, 0), 4, 2, 2),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: spectral_conv1d_rfft_bwd: buffer size does not match shape "
              "\\(size\\(dY\\) = 9 but prod\\(\\[grid, width\\]\\) = 8");
  // The scalar checks come before the operands are looked at.
  EXPECT_EXIT(torchlean_cuda_buffer_spectral_conv1d_rfft_fwd(
                  released_buffer(0, 0), torchlean_cuda_buffer_zeros(0, 0),
                  torchlean_cuda_buffer_zeros(0, 0), 0, 3, 0),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: spectral_conv1d_rfft_fwd: spectralConv1dRfft: grid and "
              "width must be positive");
  EXPECT_EXIT(torchlean_cuda_buffer_spectral_conv1d_rfft_bwd(
                  torchlean_cuda_buffer_zeros(8, 0), torchlean_cuda_buffer_zeros(4, 0),
                  torchlean_cuda_buffer_zeros(4, 0), released_buffer(8, 0), 8, 1, 6),
              ::testing::ExitedWithCode(1),
              "INTERNAL PANIC: tlrt: spectral_conv1d_rfft_bwd: spectralConv1dRfft: modes exceeds "
              "rfft frequency count");
}

}  // namespace
