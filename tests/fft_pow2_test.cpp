// The arithmetic of the power-of-two inverse kernel (kernels/fft/irfft_pow2.h) on the host: the
// same helpers (Z_k, the Stockham butterflies and output positions, the twiddle table lookups)
// driven pass by pass over whole rows, against the reference backend's long double inverse within
// the family's bound K(n) u N_row (docs/NUMERICS.md, "FFT"). The device kernel runs the same
// helpers with the butterflies spread over a block (tests/fft_gpu_test.cpp checks it on a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/fft/fft.h"
#include "kernels/fft/irfft_pow2.h"

namespace {

using tlrt::kernels::Cplx;

template <class T>
std::vector<Cplx<T>> twiddle_table(uint64_t h) {
  std::vector<Cplx<T>> table(h);
  const long double pi = 3.141592653589793238462643383279502884L;
  for (uint64_t k = 0; k < h; ++k) {
    const long double a = pi * static_cast<long double>(k) / static_cast<long double>(h);
    table[k] = {static_cast<T>(static_cast<double>(std::cos(a))),
                static_cast<T>(static_cast<double>(std::sin(a)))};
  }
  return table;
}

// The passes' own twiddle tables, laid out as the kernel builds them (pass_twiddle_offset).
template <class T>
std::vector<Cplx<T>> pass_tables(const std::vector<Cplx<T>>& table, uint64_t h, int log_h,
                                 int later) {
  std::vector<Cplx<T>> tw(tlrt::kernels::pass_twiddle_offset(log_h, later, log_h));
  EXPECT_EQ(tw.size(), h - 1);
  for (int l = 0, lr = tlrt::kernels::first_pass_log_radix(log_h, later); l < log_h;
       l += lr, lr = later) {
    const uint64_t ns = uint64_t{1} << l, radix = uint64_t{1} << lr;
    const uint64_t offset = tlrt::kernels::pass_twiddle_offset(log_h, later, l);
    for (uint64_t e = 0; e < (radix - 1) * ns; ++e) {
      tw[offset + e] =
          tlrt::kernels::stockham_twiddle(table.data(), h, ns, radix, e % ns, e / ns + 1);
    }
  }
  return tw;
}

// One pass as the kernel runs it: twiddles from the pass's own table (none when ns = 1), then
// the butterfly, outputs to the Stockham positions.
template <class T, int R>
void pass(std::vector<Cplx<T>>& data, const Cplx<T>* tw, uint64_t h, uint64_t ns) {
  const std::vector<Cplx<T>> in = data;
  for (uint64_t j = 0; j < h / R; ++j) {
    Cplx<T> v[R];
    for (int r = 0; r < R; ++r) v[r] = in[j + r * (h / R)];
    const uint64_t m = j & (ns - 1);
    if (ns > 1) {
      for (int r = 1; r < R; ++r) v[r] = tlrt::kernels::cmul(v[r], tw[(r - 1) * ns + m]);
    }
    tlrt::kernels::radix_butterfly<T, R>(v);
    const uint64_t o = tlrt::kernels::stockham_out(j, ns, R);
    for (int r = 0; r < R; ++r) data[o + r * ns] = v[r];
  }
}

// The spectrum values of first-pass butterfly j of b and of its mirror partner m (returned), as a
// thread of the kernel fetches them: xj[r] = X[j + r b], xm[r] = X[m + r b].
template <class T, int R0>
uint64_t pair_spectrum(const Cplx<T>* row, uint64_t j, uint64_t b, Cplx<T> (&xj)[R0],
                       Cplx<T> (&xm)[R0]) {
  const uint64_t m = tlrt::kernels::first_pass_partner(j, b);
  for (int r = 0; r < R0; ++r) {
    xj[r] = row[j + r * b];
    xm[r] = row[m + r * b];
  }
  return m;
}

// The first pass as the kernel runs it: butterfly j < B/2 with its partner, inputs formed from
// the spectrum by first_pass_inputs, outputs to positions j R0 + r (ns = 1). `written` counts the
// writes per position.
template <class T, int R0>
void first_pass(const Cplx<T>* row, std::vector<Cplx<T>>& data, const std::vector<Cplx<T>>& table,
                uint64_t h, bool scaled, T scale, std::vector<int>& written) {
  const uint64_t b = h / R0;
  for (uint64_t j = 0; j < b / 2; ++j) {
    Cplx<T> xj[R0], xm[R0], zj[R0], zm[R0];
    const uint64_t m = pair_spectrum<T, R0>(row, j, b, xj, xm);
    tlrt::kernels::first_pass_inputs<T, R0>(h, j, xj, xm, row[h], table.data(), scaled, scale, zj,
                                            zm);
    tlrt::kernels::radix_butterfly<T, R0>(zj);
    tlrt::kernels::radix_butterfly<T, R0>(zm);
    for (int r = 0; r < R0; ++r) {
      data[j * R0 + r] = zj[r];
      data[m * R0 + r] = zm[r];
      ++written[j * R0 + r];
      ++written[m * R0 + r];
    }
  }
}

// The kernel's schedule on one thread, under the plan `later` (3: radix-8 passes after the first,
// 4: radix 16).
template <class T>
std::vector<T> host_model(const std::vector<T>& spec, uint64_t batch, uint64_t n, bool scaled,
                          int later = 3) {
  const uint64_t h = n / 2;
  const T scale = tlrt::kernels::fft_inverse_scale<T>(n);
  const std::vector<Cplx<T>> table = twiddle_table<T>(h);
  const int log_h = 63 - __builtin_clzll(h);
  const std::vector<Cplx<T>> tw = pass_tables(table, h, log_h, later);
  std::vector<T> out(batch * n);
  for (uint64_t b = 0; b < batch; ++b) {
    const Cplx<T>* row = reinterpret_cast<const Cplx<T>*>(spec.data()) + b * (h + 1);
    std::vector<Cplx<T>> data(h);
    std::vector<int> written(h, 0);
    const int first = tlrt::kernels::first_pass_log_radix(log_h, later);
    if (first == 1) first_pass<T, 2>(row, data, table, h, scaled, scale, written);
    if (first == 2) first_pass<T, 4>(row, data, table, h, scaled, scale, written);
    if (first == 3) first_pass<T, 8>(row, data, table, h, scaled, scale, written);
    EXPECT_EQ(std::count(written.begin(), written.end(), 1), static_cast<ptrdiff_t>(h))
        << "the first pass writes every position once, h = " << h;
    for (int l = first; l < log_h; l += later) {
      const Cplx<T>* t = tw.data() + tlrt::kernels::pass_twiddle_offset(log_h, later, l);
      if (later == 3) pass<T, 8>(data, t, h, uint64_t{1} << l);
      if (later == 4) pass<T, 16>(data, t, h, uint64_t{1} << l);
    }
    for (uint64_t j = 0; j < h; ++j) {
      out[b * n + 2 * j] = data[j].re;
      out[b * n + 2 * j + 1] = data[j].im;
    }
  }
  return out;
}

// first_pass_inputs gives, bit for bit, Z_k of each input's position k = j + r B from its own pair
// (X_k, X_{h-k}).
template <class T, int R0>
void inputs_are_the_z_of_their_positions(uint64_t h) {
  std::mt19937_64 gen(h);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<Cplx<T>> row(h + 1);
  for (Cplx<T>& x : row) x = {static_cast<T>(dist(gen)), static_cast<T>(dist(gen))};
  const std::vector<Cplx<T>> table = twiddle_table<T>(h);
  const T scale = tlrt::kernels::fft_inverse_scale<T>(2 * h);
  auto z = [&](uint64_t k) {
    return tlrt::kernels::half_input_values(row[k], row[h - k], k == 0, table[k], true, scale);
  };
  const uint64_t b = h / R0;
  for (uint64_t j = 0; j < b / 2; ++j) {
    Cplx<T> xj[R0], xm[R0], zj[R0], zm[R0];
    const uint64_t m = pair_spectrum<T, R0>(row.data(), j, b, xj, xm);
    tlrt::kernels::first_pass_inputs<T, R0>(h, j, xj, xm, row[h], table.data(), true, scale, zj,
                                            zm);
    for (int r = 0; r < R0; ++r) {
      const Cplx<T> want_j = z(j + r * b), want_m = z(m + r * b);
      EXPECT_EQ(std::memcmp(&zj[r], &want_j, sizeof want_j), 0)
          << "h " << h << " j " << j << " r " << r;
      EXPECT_EQ(std::memcmp(&zm[r], &want_m, sizeof want_m), 0)
          << "h " << h << " m " << m << " r " << r;
    }
  }
}

TEST(FftPow2, FirstPassInputsAreTheZOfTheirPositions) {
  inputs_are_the_z_of_their_positions<float, 2>(128);
  inputs_are_the_z_of_their_positions<float, 4>(256);
  inputs_are_the_z_of_their_positions<float, 8>(512);
  inputs_are_the_z_of_their_positions<double, 2>(1024);
  inputs_are_the_z_of_their_positions<double, 4>(2048);
  inputs_are_the_z_of_their_positions<double, 8>(4096);
}

template <class T>
void check(uint64_t n, bool scaled, int later) {
  const uint64_t batch = 3, bins = n / 2 + 1;
  std::mt19937_64 gen(n * 7 + (scaled ? 1 : 0));
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> spec(batch * bins * 2);
  for (T& v : spec) v = static_cast<T>(dist(gen));
  std::vector<T> want(batch * n);
  tlrt::kernels::irfft1d_ref(spec.data(), batch, n, scaled, want.data());
  const std::vector<T> got = host_model(spec, batch, n, scaled, later);
  const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  const double k_n = 8 * (std::ceil(std::log2(static_cast<double>(n))) + 2);
  for (uint64_t b = 0; b < batch; ++b) {
    long double s = 0;
    for (uint64_t k = 0; k < bins; ++k) {
      const long double re = spec[(b * bins + k) * 2], im = spec[(b * bins + k) * 2 + 1];
      s += (k == 0 || k == n / 2) ? re * re : 2 * (re * re + im * im);
    }
    double norm = static_cast<double>(std::sqrt(s * n));
    if (scaled) norm *= static_cast<double>(tlrt::kernels::fft_inverse_scale<T>(n));
    double worst = 0;
    for (uint64_t t = 0; t < n; ++t) {
      const double e = std::fabs(static_cast<double>(got[b * n + t]) - want[b * n + t]);
      ASSERT_LE(e, k_n * u * norm)
          << "n = " << n << ", plan " << later << ", row " << b << ", element " << t;
      worst = std::max(worst, e / (u * norm));
    }
    // The bound is a budget for every schedule; this one stays far inside it.
    EXPECT_LT(worst, k_n / 4) << "n = " << n << ", plan " << later << ", row " << b;
  }
}

TEST(FftPow2, HostModelWithinTheBound) {
  for (uint64_t n = tlrt::kernels::kPow2InverseMin; n <= tlrt::kernels::kPow2InverseMax; n *= 2) {
    const int log_h = 63 - __builtin_clzll(n / 2);
    for (int later : {3, 4}) {
      if (later == 4 && log_h % 4 == 0) continue;  // radix 16 takes log2 h mod 4 != 0
      for (bool scaled : {true, false}) {
        check<float>(n, scaled, later);
        check<double>(n, scaled, later);
      }
    }
  }
}

// The endpoint rule: the imaginary parts of bins 0 and n/2 never reach the result.
TEST(FftPow2, EndpointImaginaryPartsIgnored) {
  const uint64_t n = 1024, bins = n / 2 + 1;
  std::vector<float> spec(bins * 2);
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : spec) v = dist(gen);
  for (int later : {3, 4}) {
    const std::vector<float> first = host_model(spec, 1, n, true, later);
    std::vector<float> changed = spec;
    changed[1] = 1e30f;
    changed[2 * (bins - 1) + 1] = -std::numeric_limits<float>::infinity();
    EXPECT_EQ(host_model(changed, 1, n, true, later), first) << "plan " << later;
  }
}

// The butterflies are the inverse DFTs of their points: within a few roundings of a long double
// DFT (radix 16's constant products by fl(cos pi/8), fl(sin pi/8) included).
template <class T, int R>
void butterfly_is_the_dft() {
  std::mt19937_64 gen(R);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  const long double pi = 3.141592653589793238462643383279502884L;
  const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  for (int trial = 0; trial < 200; ++trial) {
    Cplx<T> v[R], in[R];
    long double norm = 0;
    for (int r = 0; r < R; ++r) {
      in[r] = v[r] = {static_cast<T>(dist(gen)), static_cast<T>(dist(gen))};
      norm += static_cast<long double>(in[r].re) * in[r].re +
              static_cast<long double>(in[r].im) * in[r].im;
    }
    tlrt::kernels::radix_butterfly<T, R>(v);
    for (int q = 0; q < R; ++q) {
      long double re = 0, im = 0;
      for (int r = 0; r < R; ++r) {
        const long double a = 2 * pi * static_cast<long double>((r * q) % R) / R;
        re += in[r].re * std::cos(a) - in[r].im * std::sin(a);
        im += in[r].re * std::sin(a) + in[r].im * std::cos(a);
      }
      const double e = static_cast<double>(std::hypot(static_cast<long double>(v[q].re) - re,
                                                      static_cast<long double>(v[q].im) - im));
      // log2 R levels, each within 8 u of the norm (docs/NUMERICS.md, "FFT").
      const int levels = R == 2 ? 1 : R == 4 ? 2 : R == 8 ? 3 : 4;
      EXPECT_LE(e, 8 * levels * u * static_cast<double>(std::sqrt(norm)))
          << "radix " << R << ", output " << q << ", trial " << trial;
    }
  }
}

TEST(FftPow2, ButterfliesAreInverseDfts) {
  butterfly_is_the_dft<float, 2>();
  butterfly_is_the_dft<float, 4>();
  butterfly_is_the_dft<float, 8>();
  butterfly_is_the_dft<float, 16>();
  butterfly_is_the_dft<double, 8>();
  butterfly_is_the_dft<double, 16>();
}

// The pass plans: the passes add up to log2 h and their tables to h - 1 entries under both; radix
// 16 saves a pass at h = 128, 1024 and 2048 and is taken at h = 1024 (float32) and 2048.
TEST(FftPow2, PassPlans) {
  for (int log_h = 7; log_h <= 12; ++log_h) {
    for (int later : {3, 4}) {
      if (later == 4 && log_h % 4 == 0) continue;
      const int first = tlrt::kernels::first_pass_log_radix(log_h, later);
      EXPECT_GE(first, 1);
      EXPECT_LE(first, 3);
      EXPECT_EQ((log_h - first) % later, 0) << "log2 h " << log_h << ", plan " << later;
      EXPECT_EQ(tlrt::kernels::pass_twiddle_offset(log_h, later, log_h),
                (uint32_t{1} << log_h) - 1);
    }
    EXPECT_EQ(tlrt::kernels::radix16_saves_a_pass(log_h), log_h == 7 || log_h == 10 || log_h == 11)
        << "log2 h " << log_h;
    const bool f32 = log_h == 10 || log_h == 11, f64 = log_h == 11;
    EXPECT_EQ(tlrt::kernels::pow2_later_log_radix(log_h, 4), f32 ? 4 : 3) << log_h;
    EXPECT_EQ(tlrt::kernels::pow2_later_log_radix(log_h, 8), f64 ? 4 : 3) << log_h;
  }
  EXPECT_EQ(tlrt::kernels::pow2_pass_count(11, 4), 3);
  EXPECT_EQ(tlrt::kernels::pow2_pass_count(11, 3), 4);
  EXPECT_EQ(tlrt::kernels::first_pass_log_radix(11, 4), 3);
  EXPECT_EQ(tlrt::kernels::first_pass_log_radix(10, 4), 2);
  EXPECT_EQ(tlrt::kernels::first_pass_log_radix(12, 3), 3);
  EXPECT_EQ(tlrt::kernels::first_pass_log_radix(7, 3), 1);
}

TEST(FftPow2, SupportedLengths) {
  EXPECT_FALSE(tlrt::kernels::irfft_pow2_supported(128, 4));
  EXPECT_TRUE(tlrt::kernels::irfft_pow2_supported(256, 4));
  EXPECT_TRUE(tlrt::kernels::irfft_pow2_supported(8192, 4));
  EXPECT_TRUE(tlrt::kernels::irfft_pow2_supported(4096, 8));
  EXPECT_FALSE(tlrt::kernels::irfft_pow2_supported(8192, 8));
  EXPECT_FALSE(tlrt::kernels::irfft_pow2_supported(16384, 4));
  EXPECT_FALSE(tlrt::kernels::irfft_pow2_supported(1000, 4));
  EXPECT_FALSE(tlrt::kernels::irfft_pow2_supported(0, 4));
}

}  // namespace
