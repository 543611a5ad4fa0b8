// The CUDA backend of the FFT family against the reference backend, in one process: the three
// packed transforms in both dtypes over odd, even, prime and power-of-two lengths and several
// batches, and the spectral pair, within the bound of docs/NUMERICS.md ("FFT"): per element
// K(n) * u * N_row with N_row the row's 2-norm by Parseval. Also: ten runs under the deterministic
// setting give identical bits; a repeated call hits the plan cache (no plan created, no driver
// allocation); the borrowed spectrum is unchanged after the inverse (C2R overwrites its input, so
// the backend must transform a copy); the copy pass in chunks of rows; a batch past 2^31 elements
// (64-bit plan). Without a device
// every test skips with a visible reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/random/random.h"
#include "runtime/caching_allocator.h"
#include "runtime/context.h"
#include "runtime/fft_dispatch.h"
#include "runtime/plan_cache.h"
#include "runtime/settings.h"
#include "runtime/transfer.h"
#include "tests/support/cuda_suite.h"
#include "tests/support/gpu_test_support.h"

namespace {

using gpu_test::dtype_of;
using gpu_test::random_values;
using gpu_test::upload;

using tlrt::Backend;
using tlrt::Buffer;
using tlrt::Dtype;

class FftGpu : public gpu_test::CudaSuite<> {
 protected:
  FftGpu() : CudaSuite("GPU checks of the FFT family") {}
};

template <class T>
std::vector<T> download(const Buffer& b) {
  std::vector<T> v(b.size());
  tlrt::download_words(b, reinterpret_cast<uint8_t*>(v.data()), dtype_of<T>(), "fft_gpu_test");
  return v;
}

bool smooth(uint64_t n) {
  for (uint64_t p : {2u, 3u, 5u, 7u}) {
    while (n % p == 0) n /= p;
  }
  return n == 1;
}

double transform_constant(uint64_t n) {
  const auto lg = [](uint64_t m) { return std::ceil(std::log2(static_cast<double>(m))); };
  return smooth(n) ? 8 * (lg(n) + 2) : 3 * 8 * (lg(2 * n) + 2);
}

enum class Op { rfft, irfft, irfft_unnormalized };

template <class T>
std::unique_ptr<Buffer> run(Op op, const Buffer& in, uint64_t batch, uint64_t n) {
  if (op == Op::rfft) return tlrt::rfft1d_packed(in, batch, n, "fft_gpu_test");
  return tlrt::irfft1d_packed(in, batch, n, op == Op::irfft, "fft_gpu_test");
}

// N_row of each row of the op's output, from its input (Parseval).
template <class T>
std::vector<double> row_norms(Op op, const std::vector<T>& in, uint64_t batch, uint64_t n) {
  std::vector<double> norms(batch);
  const uint64_t bins = n / 2 + 1;
  for (uint64_t b = 0; b < batch; ++b) {
    long double s = 0;
    if (op == Op::rfft) {
      for (uint64_t t = 0; t < n; ++t) s += static_cast<long double>(in[b * n + t]) * in[b * n + t];
      norms[b] = static_cast<double>(std::sqrt(s * n));
      continue;
    }
    for (uint64_t k = 0; k < bins; ++k) {
      const long double re = in[(b * bins + k) * 2], im = in[(b * bins + k) * 2 + 1];
      s += (k == 0 || 2 * k == n) ? re * re : 2 * (re * re + im * im);
    }
    long double norm = std::sqrt(s * n);
    if (op == Op::irfft) norm *= static_cast<T>(1.0 / static_cast<double>(static_cast<T>(n)));
    norms[b] = static_cast<double>(norm);
  }
  return norms;
}

const std::vector<uint64_t> kLengths = {1,  2,  3,   4,   5,    7,    8,    16,
                                        17, 97, 127, 128, 1000, 1024, 4096, 4097};
const std::vector<uint64_t> kBatches = {1, 7, 64};

template <class T>
void against_reference(Op op, const std::vector<uint64_t>& lengths = kLengths,
                       const std::vector<uint64_t>& batches = kBatches) {
  const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  for (uint64_t n : lengths) {
    for (uint64_t batch : batches) {
      const uint64_t bins = n / 2 + 1;
      const uint64_t in_row = op == Op::rfft ? n : bins * 2;
      const uint64_t out_row = op == Op::rfft ? bins * 2 : n;
      const std::vector<T> in = random_values<T>(batch * in_row, n * 1000 + batch);
      auto dev_in = upload(Backend::cuda, in);
      auto ref_in = upload(Backend::reference, in);
      const std::vector<T> got = download<T>(*run<T>(op, *dev_in, batch, n));
      const std::vector<T> want = download<T>(*run<T>(op, *ref_in, batch, n));
      ASSERT_EQ(got.size(), want.size());
      const std::vector<double> norms = row_norms(op, in, batch, n);
      for (uint64_t i = 0; i < got.size(); ++i) {
        const double tol = transform_constant(n) * u * norms[i / out_row] + 1e-300;
        ASSERT_NEAR(got[i], want[i], tol)
            << "n = " << n << ", batch = " << batch << ", element " << i;
      }
    }
  }
}

TEST_F(FftGpu, RfftWithinTheBoundFloat32) {
  against_reference<float>(Op::rfft);
}
TEST_F(FftGpu, RfftWithinTheBoundFloat64) {
  against_reference<double>(Op::rfft);
}
TEST_F(FftGpu, IrfftWithinTheBoundFloat32) {
  against_reference<float>(Op::irfft);
}
TEST_F(FftGpu, IrfftWithinTheBoundFloat64) {
  against_reference<double>(Op::irfft);
}
TEST_F(FftGpu, IrfftUnnormalizedWithinTheBoundFloat32) {
  against_reference<float>(Op::irfft_unnormalized);
}
TEST_F(FftGpu, IrfftUnnormalizedWithinTheBoundFloat64) {
  against_reference<double>(Op::irfft_unnormalized);
}

struct SpectralShape {
  uint64_t grid, width, modes;
};

template <class T>
void spectral_against_reference() {
  const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  const SpectralShape shapes[] = {{1, 3, 1},   {2, 2, 2},   {8, 4, 5},     {17, 3, 9},
                                  {64, 8, 16}, {97, 5, 20}, {128, 16, 65}, {12, 3, 0}};
  for (const SpectralShape& s : shapes) {
    const uint64_t gw = s.grid * s.width, weights = s.modes * s.width * s.width;
    const auto x = random_values<T>(gw, 1 + s.grid);
    const auto wr = random_values<T>(weights, 2 + s.modes);
    const auto wi = random_values<T>(weights, 3 + s.width);
    const auto dy = random_values<T>(gw, 4 + s.grid);
    std::vector<std::vector<T>> results[2];
    for (int side = 0; side < 2; ++side) {
      const Backend be = side == 0 ? Backend::cuda : Backend::reference;
      auto bx = upload(be, x), bwr = upload(be, wr), bwi = upload(be, wi), bdy = upload(be, dy);
      results[side].push_back(download<T>(*tlrt::spectral_conv1d_rfft_fwd(
          *bx, *bwr, *bwi, s.grid, s.width, s.modes, "fft_gpu_test")));
      tlrt::SpectralGrads g = tlrt::spectral_conv1d_rfft_bwd(*bx, *bwr, *bwi, *bdy, s.grid, s.width,
                                                             s.modes, "fft_gpu_test");
      results[side].push_back(download<T>(*g.dx));
      results[side].push_back(download<T>(*g.dwre));
      results[side].push_back(download<T>(*g.dwim));
    }
    // Scales as in tools/parity/fft_cases.cpp.
    auto frob = [](const std::vector<T>& a) {
      long double q = 0;
      for (T v : a) q += static_cast<long double>(v) * v;
      return static_cast<double>(std::sqrt(q));
    };
    double w_max = 0;
    for (uint64_t k = 0; k < s.modes; ++k) {
      long double q = 0;
      for (uint64_t j = 0; j < s.width * s.width; ++j) {
        q +=
            static_cast<long double>(wr[k * s.width * s.width + j]) *
                wr[k * s.width * s.width + j] +
            static_cast<long double>(wi[k * s.width * s.width + j]) * wi[k * s.width * s.width + j];
      }
      w_max = std::max(w_max, static_cast<double>(std::sqrt(q)));
    }
    auto col_l1 = [&](const std::vector<T>& a) {
      double m = 0;
      for (uint64_t i = 0; i < s.width; ++i) {
        double q = 0;
        for (uint64_t t = 0; t < s.grid; ++t) q += std::fabs(a[t * s.width + i]);
        m = std::max(m, q);
      }
      return m;
    };
    const double scales[4] = {std::sqrt(2.0) * frob(x) * w_max, std::sqrt(2.0) * frob(dy) * w_max,
                              col_l1(x) * col_l1(dy) * 2 / s.grid,
                              col_l1(x) * col_l1(dy) * 2 / s.grid};
    const double k = 2 * transform_constant(s.grid) + 2.0 * s.width + 8;
    for (int o = 0; o < 4; ++o) {
      ASSERT_EQ(results[0][o].size(), results[1][o].size());
      for (uint64_t i = 0; i < results[0][o].size(); ++i) {
        ASSERT_NEAR(results[0][o][i], results[1][o][i], k * u * scales[o] + 1e-300)
            << "grid " << s.grid << " width " << s.width << " modes " << s.modes << " output " << o
            << " element " << i;
      }
    }
  }
}

TEST_F(FftGpu, SpectralPairWithinTheBoundFloat32) {
  spectral_against_reference<float>();
}
TEST_F(FftGpu, SpectralPairWithinTheBoundFloat64) {
  spectral_against_reference<double>();
}

std::vector<uint8_t> bytes_of(const Buffer& b) {
  std::vector<uint8_t> v(b.size() * tlrt::dtype_width(b.dtype()));
  tlrt::download_words(b, v.data(), b.dtype(), "fft_gpu_test");
  return v;
}

// The power-of-two inverse kernel (kernels/fft/irfft_pow2.h) switched off while in scope, so that
// the lengths it serves take cuFFT.
struct PowerOfTwoKernelOff {
  bool before = tlrt::fft_pow2_inverse_on();
  PowerOfTwoKernelOff() { tlrt::set_fft_pow2_inverse(false); }
  ~PowerOfTwoKernelOff() { tlrt::set_fft_pow2_inverse(before); }
};

// Every length of the power-of-two kernel, both inverses and dtypes, against the reference in
// batches of one and a few rows; the same lengths through cuFFT with the kernel off. (Small
// enough for compute-sanitizer's racecheck; the next test takes the long batches.)
TEST_F(FftGpu, PowerOfTwoInverseKernelWithinTheBound) {
  ASSERT_TRUE(tlrt::fft_pow2_inverse_on()) << "the kernel is on by default";
  const std::vector<uint64_t> lengths = {256, 512, 1024, 2048, 4096, 8192};
  for (Op op : {Op::irfft, Op::irfft_unnormalized}) {
    against_reference<float>(op, lengths, {1, 3});
    against_reference<double>(op, lengths, {1, 3});
  }
  PowerOfTwoKernelOff cufft_only;
  for (Op op : {Op::irfft, Op::irfft_unnormalized}) {
    against_reference<float>(op, lengths, {3});
    against_reference<double>(op, lengths, {3});
  }
}

// More rows than one wave of the kernel's blocks: each block strides over several rows, fetching
// the next while it transforms the current one.
TEST_F(FftGpu, PowerOfTwoInverseKernelMoreRowsThanOneWave) {
  const std::vector<uint64_t> lengths = {256, 512, 1024, 2048, 4096, 8192};
  for (Op op : {Op::irfft, Op::irfft_unnormalized}) {
    against_reference<float>(op, lengths, {5000});
    against_reference<double>(op, lengths, {5000});
  }
}

// The kernel: identical bits over ten runs, the borrowed spectrum unchanged, no plan-cache use,
// the endpoint imaginary parts ignored.
TEST_F(FftGpu, PowerOfTwoInverseKernelRepeatsAndIgnoresEndpointImaginaryParts) {
  const uint64_t batch = 300, n = 2048, bins = n / 2 + 1;
  auto spec = random_values<float>(batch * bins * 2, 77);
  auto s = upload(Backend::cuda, spec);
  const std::vector<uint8_t> first = bytes_of(*tlrt::irfft1d_packed(*s, batch, n, true, "t"));
  tlrt::synchronize(Backend::cuda, "t");
  const tlrt::PlanCacheCounters p0 = tlrt::plan_cache_counters();
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(bytes_of(*tlrt::irfft1d_packed(*s, batch, n, true, "t")), first) << i;
  }
  EXPECT_EQ(tlrt::plan_cache_counters().creates, p0.creates);
  EXPECT_EQ(tlrt::plan_cache_counters().hits, p0.hits);
  EXPECT_EQ(download<float>(*s), spec);
  for (uint64_t b = 0; b < batch; ++b) {
    spec[(b * bins) * 2 + 1] = 1e30f;
    spec[(b * bins + n / 2) * 2 + 1] = -std::numeric_limits<float>::infinity();
  }
  auto changed = upload(Backend::cuda, spec);
  EXPECT_EQ(bytes_of(*tlrt::irfft1d_packed(*changed, batch, n, true, "t")), first);
}

// The kernel's plan depends on the length and dtype only: a row's bits are the same in a batch of
// one and in a batch of many rows (where each block strides over several rows).
template <class T>
void row_bits_independent_of_batch(uint64_t n) {
  const uint64_t batch = 1500, bins = n / 2 + 1;
  const std::vector<T> spec = random_values<T>(batch * bins * 2, n + sizeof(T));
  const std::vector<T> all =
      download<T>(*tlrt::irfft1d_packed(*upload(Backend::cuda, spec), batch, n, true, "t"));
  for (uint64_t row : {uint64_t{0}, uint64_t{777}, batch - 1}) {
    const std::vector<T> one_spec(spec.begin() + row * bins * 2,
                                  spec.begin() + (row + 1) * bins * 2);
    const std::vector<T> one =
        download<T>(*tlrt::irfft1d_packed(*upload(Backend::cuda, one_spec), 1, n, true, "t"));
    EXPECT_EQ(std::memcmp(one.data(), all.data() + row * n, n * sizeof(T)), 0)
        << "n " << n << ", row " << row << ", " << sizeof(T) * 8 << "-bit";
  }
}

TEST_F(FftGpu, PowerOfTwoInverseKernelRowBitsDoNotDependOnTheBatch) {
  for (uint64_t n : {uint64_t{1024}, uint64_t{2048}, uint64_t{4096}}) {
    row_bits_independent_of_batch<float>(n);
    row_bits_independent_of_batch<double>(n);
  }
}

TEST_F(FftGpu, TenRunsUnderTheDeterministicSettingGiveIdenticalBits) {
  const uint32_t deterministic = static_cast<uint32_t>(tlrt::Setting::deterministic);
  const uint32_t before = tlrt::get_setting(deterministic);
  tlrt::set_setting(deterministic, 1);
  const uint64_t batch = 33, n = 4097, bins = n / 2 + 1;
  auto x = upload(Backend::cuda, random_values<float>(batch * n, 5));
  auto s = upload(Backend::cuda, random_values<double>(batch * bins * 2, 6));
  auto g = upload(Backend::cuda, random_values<float>(64 * 8, 7));
  auto w = upload(Backend::cuda, random_values<float>(16 * 8 * 8, 8));
  std::vector<std::vector<uint8_t>> first;
  for (int run_index = 0; run_index < 10; ++run_index) {
    std::vector<std::vector<uint8_t>> now;
    now.push_back(bytes_of(*tlrt::rfft1d_packed(*x, batch, n, "fft_gpu_test")));
    now.push_back(bytes_of(*tlrt::irfft1d_packed(*s, batch, n, true, "fft_gpu_test")));
    now.push_back(bytes_of(*tlrt::irfft1d_packed(*s, batch, n, false, "fft_gpu_test")));
    now.push_back(bytes_of(*tlrt::spectral_conv1d_rfft_fwd(*g, *w, *w, 64, 8, 16, "fft_gpu_test")));
    tlrt::SpectralGrads gr = tlrt::spectral_conv1d_rfft_bwd(*g, *w, *w, *g, 64, 8, 16, "t");
    now.push_back(bytes_of(*gr.dx));
    now.push_back(bytes_of(*gr.dwre));
    now.push_back(bytes_of(*gr.dwim));
    if (run_index == 0) {
      first = now;
    } else {
      for (size_t i = 0; i < now.size(); ++i) EXPECT_EQ(now[i], first[i]) << run_index << " " << i;
    }
  }
  tlrt::set_setting(deterministic, before);
}

TEST_F(FftGpu, RepeatedCallsHitThePlanCacheAndAllocateNothing) {
  const uint64_t batch = 512, n = 1000;
  auto x = upload(Backend::cuda, random_values<float>(batch * n, 9));
  auto s = upload(Backend::cuda, random_values<float>(batch * (n / 2 + 1) * 2, 10));
  // Warm: plans made, pool blocks cached.
  tlrt::rfft1d_packed(*x, batch, n, "t");
  tlrt::irfft1d_packed(*s, batch, n, true, "t");
  tlrt::synchronize(Backend::cuda, "t");
  const tlrt::PlanCacheCounters p0 = tlrt::plan_cache_counters();
  const uint64_t a0 = tlrt::allocator(Backend::cuda).stats().source_allocs;
  for (int i = 0; i < 5; ++i) {
    tlrt::rfft1d_packed(*x, batch, n, "t");
    tlrt::irfft1d_packed(*s, batch, n, true, "t");
    tlrt::irfft1d_packed(*s, batch, n, false, "t");
  }
  tlrt::synchronize(Backend::cuda, "t");
  const tlrt::PlanCacheCounters p1 = tlrt::plan_cache_counters();
  EXPECT_EQ(p1.creates, p0.creates);
  EXPECT_EQ(p1.hits - p0.hits, 15u);
  // A pass-through allocator (TLRT_CACHING_ALLOCATOR=0, the sanitizer runs) allocates per request.
  if (tlrt::allocator(Backend::cuda).caching()) {
    EXPECT_EQ(tlrt::allocator(Backend::cuda).stats().source_allocs, a0);
  }
}

TEST_F(FftGpu, TheBorrowedSpectrumIsNotOverwritten) {
  for (uint64_t n : {uint64_t{8}, uint64_t{97}, uint64_t{4096}}) {
    const uint64_t batch = 9;
    const auto spec = random_values<float>(batch * (n / 2 + 1) * 2, n);
    auto s = upload(Backend::cuda, spec);
    tlrt::irfft1d_packed(*s, batch, n, true, "t");
    tlrt::irfft1d_packed(*s, batch, n, false, "t");
    const auto x = random_values<double>(batch * n, n + 1);
    auto bx = upload(Backend::cuda, x);
    tlrt::rfft1d_packed(*bx, batch, n, "t");
    EXPECT_EQ(download<float>(*s), spec) << n;
    EXPECT_EQ(download<double>(*bx), x) << n;
  }
}

// The copy pass in chunks of rows, under a chunk size small enough for short test batches: equal
// chunks with a shorter last one (two plans) and chunks that divide the batch (one plan), within
// the bound of the reference, close to the one-piece result, the borrowed spectrum unchanged,
// identical bits over ten runs, no plan or allocation on a repeat.
TEST_F(FftGpu, ChunkedInverseWithinTheBound) {
  const uint64_t before = tlrt::fft_chunk_bytes();
  tlrt::set_fft_chunk_bytes(32 << 10);
  const std::vector<uint64_t> lengths = {64, 97, 127}, batches = {256, 257};
  for (bool f64 : {false, true}) {
    for (uint64_t n : lengths) {
      for (uint64_t batch : batches) {
        const tlrt::IrfftChunking c = tlrt::irfft1d_chunking(f64, batch, n);
        EXPECT_GE(c.chunks, 2u) << f64 << " " << n << " " << batch;
        EXPECT_EQ((c.chunks - 1) * c.rows + c.last_rows, batch);
        EXPECT_LE(c.last_rows, c.rows);
        // cuFFT needs every chunk's output aligned to the complex type: even rows for odd n.
        if (n % 2 == 1) {
          EXPECT_EQ(c.rows % 2, 0u) << f64 << " " << n << " " << batch;
        }
      }
    }
  }
  // float32, n = 97 (392-byte rows, 83 a chunk): 257 rows as 86 + 86 + 85; 256 as 4 x 64.
  const tlrt::IrfftChunking odd = tlrt::irfft1d_chunking(false, 257, 97);
  EXPECT_EQ(odd.chunks, 3u);
  EXPECT_EQ(odd.rows, 86u);
  EXPECT_EQ(odd.last_rows, 85u);
  const tlrt::IrfftChunking even = tlrt::irfft1d_chunking(false, 256, 97);
  EXPECT_EQ(even.chunks, 4u);
  EXPECT_EQ(even.last_rows, even.rows);
  // Small spectra stay one piece.
  EXPECT_EQ(tlrt::irfft1d_chunking(false, 64, 97).chunks, 1u);
  // Past 64 chunks the chunks grow: float32, n = 64 (264-byte rows, 124 a chunk), 12400 rows as
  // 63 x 194 + 178.
  const tlrt::IrfftChunking many = tlrt::irfft1d_chunking(false, 12400, 64);
  EXPECT_EQ(many.chunks, 64u);
  EXPECT_EQ(many.rows, 194u);
  EXPECT_EQ(many.last_rows, 178u);
  against_reference<float>(Op::irfft, {64}, {12400});

  for (Op op : {Op::irfft, Op::irfft_unnormalized}) {
    against_reference<float>(op, lengths, batches);
    against_reference<double>(op, lengths, batches);
  }

  const uint64_t batch = 257, n = 97, bins = n / 2 + 1;
  const auto spec = random_values<float>(batch * bins * 2, 21);
  auto s = upload(Backend::cuda, spec);
  const std::vector<uint8_t> first = bytes_of(*tlrt::irfft1d_packed(*s, batch, n, true, "t"));
  tlrt::synchronize(Backend::cuda, "t");
  const tlrt::PlanCacheCounters p0 = tlrt::plan_cache_counters();
  const uint64_t a0 = tlrt::allocator(Backend::cuda).stats().source_allocs;
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(bytes_of(*tlrt::irfft1d_packed(*s, batch, n, true, "t")), first) << i;
  }
  tlrt::synchronize(Backend::cuda, "t");
  const tlrt::PlanCacheCounters p1 = tlrt::plan_cache_counters();
  EXPECT_EQ(p1.creates, p0.creates);
  EXPECT_EQ(p1.hits - p0.hits, 18u);  // the chunks' plan and the last chunk's
  if (tlrt::allocator(Backend::cuda).caching()) {
    EXPECT_EQ(tlrt::allocator(Backend::cuda).stats().source_allocs, a0);
  }
  EXPECT_EQ(download<float>(*s), spec);

  tlrt::set_fft_chunk_bytes(0);
  EXPECT_EQ(tlrt::irfft1d_chunking(false, batch, n).chunks, 1u);
  const std::vector<float> whole = download<float>(*tlrt::irfft1d_packed(*s, batch, n, true, "t"));
  tlrt::set_fft_chunk_bytes(before);
  std::vector<float> chunked(first.size() / sizeof(float));
  std::memcpy(chunked.data(), first.data(), first.size());
  const std::vector<double> norms = row_norms(Op::irfft, spec, batch, n);
  for (uint64_t i = 0; i < chunked.size(); ++i) {
    ASSERT_NEAR(chunked[i], whole[i], 2 * transform_constant(n) * 0x1p-24 * norms[i / n]) << i;
  }
}

// The inverse through cuFFT's load callback (opt-in): the same bound against the reference, the
// borrowed spectrum unchanged, identical bits over ten runs, no plan or allocation on a repeat.
TEST_F(FftGpu, LoadCallbackPathWithinTheBound) {
  PowerOfTwoKernelOff cufft_only;
  tlrt::set_fft_load_callbacks(true);
  std::string why;
  if (!tlrt::fft_load_callbacks_active(false, &why)) {
    tlrt::set_fft_load_callbacks(false);
    GTEST_SKIP() << "the load-callback path is not available here: " << why;
  }
  // Fewer shapes than the copy pass: every callback plan is JIT-linked when it is made.
  const std::vector<uint64_t> lengths = {2, 3, 8, 17, 97, 1000, 4096, 4097};
  for (Op op : {Op::irfft, Op::irfft_unnormalized}) {
    against_reference<float>(op, lengths, {1, 7});
    against_reference<double>(op, lengths, {1, 7});
  }
  // Where cuFFT cannot make a callback plan the calls above ran the copy pass (and met the
  // bound): the fallback is checked, the callback path is not.
  if (!tlrt::fft_load_callbacks_active(false, &why)) {
    tlrt::set_fft_load_callbacks(false);
    GTEST_SKIP() << "cuFFT could not make a callback plan; the calls fell back to the copy pass "
                    "within the bound: "
                 << why;
  }
  const uint64_t batch = 65, n = 4096, bins = n / 2 + 1;
  const auto spec = random_values<float>(batch * bins * 2, 99);
  auto s = upload(Backend::cuda, spec);
  const std::vector<uint8_t> first = bytes_of(*tlrt::irfft1d_packed(*s, batch, n, true, "t"));
  tlrt::synchronize(Backend::cuda, "t");
  const tlrt::PlanCacheCounters p0 = tlrt::plan_cache_counters();
  const uint64_t a0 = tlrt::allocator(Backend::cuda).stats().source_allocs;
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(bytes_of(*tlrt::irfft1d_packed(*s, batch, n, true, "t")), first) << i;
  }
  EXPECT_EQ(tlrt::plan_cache_counters().creates, p0.creates);
  if (tlrt::allocator(Backend::cuda).caching()) {
    EXPECT_EQ(tlrt::allocator(Backend::cuda).stats().source_allocs, a0);
  }
  EXPECT_EQ(download<float>(*s), spec);
  // The same values as the copy pass, within the bound (both scale the spectrum by fl(1/n)).
  tlrt::set_fft_load_callbacks(false);
  const std::vector<float> copy_pass =
      download<float>(*tlrt::irfft1d_packed(*s, batch, n, true, "t"));
  std::vector<float> callback(first.size() / sizeof(float));
  std::memcpy(callback.data(), first.data(), first.size());
  const std::vector<double> norms = row_norms(Op::irfft, spec, batch, n);
  for (uint64_t i = 0; i < callback.size(); ++i) {
    ASSERT_NEAR(callback[i], copy_pass[i], 2 * transform_constant(n) * 0x1p-24 * norms[i / n]) << i;
  }
}

// batch * (n/2 + 1) * 2 past 2^31: the plan's batch and offsets are 64-bit. Rows at the start, the
// middle and the end are checked against the reference backend on the same rows.
TEST_F(FftGpu, BatchesPast2To31Elements) {
  const uint64_t n = 4, bins = 3, batch = (uint64_t{1} << 29) + 7;  // 2^31 + 28 inputs
  size_t free_bytes = 0, total = 0;
  cudaMemGetInfo(&free_bytes, &total);
  const uint64_t need = batch * (n + bins * 2) * sizeof(float) * 2;
  if (free_bytes < need) GTEST_SKIP() << "needs " << (need >> 30) << " GiB of device memory";
  std::unique_ptr<Buffer> x = Buffer::allocate(Backend::cuda, Dtype::f32, batch * n, "t");
  tlrt::kernels::rand_uniform_cuda(x->as<float>(), batch * n, 77, nullptr);
  cudaDeviceSynchronize();
  std::unique_ptr<Buffer> out = tlrt::rfft1d_packed(*x, batch, n, "t");
  tlrt::synchronize(Backend::cuda, "t");
  for (uint64_t row : {uint64_t{0}, batch / 2, batch - 1}) {
    std::vector<float> xs(n), got(bins * 2);
    ASSERT_EQ(
        cudaMemcpy(xs.data(), x->as<float>() + row * n, n * sizeof(float), cudaMemcpyDeviceToHost),
        cudaSuccess);
    ASSERT_EQ(cudaMemcpy(got.data(), out->as<float>() + row * bins * 2, bins * 2 * sizeof(float),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    // n = 4: X0 = a+b+c+d, X1 = (a-c) - i(b-d), X2 = a-b+c-d.
    const double a = xs[0], b = xs[1], c = xs[2], d = xs[3];
    const double want[6] = {a + b + c + d, 0, a - c, -(b - d), a - b + c - d, 0};
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(got[i], want[i], 4e-6) << "row " << row << " " << i;
  }
}

}  // namespace
