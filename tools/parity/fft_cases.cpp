// Parity cases of the FFT family (SPEC-ops 12) and the legacy spectral convolution pair (SPEC-ops
// 16): rfft1d_packed, irfft1d_packed and irfft1d_packed_unnormalized in float32 and float64 for
// n in {1, 2, 3, 4, 5, 7, 8, 16, 17, 97, 127, 128, 1000, 1024, 2048, 4096, 4097} and batches from 1
// to 64, and the spectral pair on small FNO-like shapes, and with --shapes N more lengths, batches
// and spectral shapes drawn from the seed. Inputs are mixed-sign values in (-1, 1).
// Special values are left out: a NaN or an infinity anywhere in a row turns the transform of that
// row into NaN or infinity element by element in an order that depends on the algorithm (butterfly
// network, Bluestein, direct), so an element-wise comparison says nothing; the test suite checks
// that a NaN stays inside its row.
//
// FFTs are tolerance-level; the bound (docs/NUMERICS.md, "FFT") is per element through the row's
// 2-norm, computed from the inputs by Parseval:
//   subject vs reference:  |x_s - x_r| <= K(n) * u * N_row
//   reference vs oracle:   |x_r - x_o| <= u * |x_o| + K(n) * 2^-64 * N_row
// with u the dtype's unit roundoff, N_row = sqrt(n) ||x_row||_2 = ||X_full||_2 for the forward
// and sqrt(n) ||X_full||_2 (times fl(1/n) when normalized) for the inverse, where X_full is the
// Hermitian extension of the packed row with its endpoint imaginary parts zeroed, and
// K(n) = 8 (ceil(log2 n) + 2) for n whose prime factors are 2, 3, 5, 7 (Cooley-Tukey / Stockham),
// 3 K(2n) otherwise (Bluestein: three transforms of length >= 2n - 1 and two chirp products).
// The oracle is FFTW's quad-precision build (libfftw3q, binary128) where CMake found it; elsewhere
// (the GPU machine) the oracle rows are listed as skipped.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#if TLRT_HAVE_FFTW3Q
#include <fftw3.h>
#endif

#include "kernels/random/splitmix.h"
#include "runtime/fft_dispatch.h"
#include "tools/parity/case_key.h"
#include "tools/parity/parity_case.h"

namespace tlrt::parity {
namespace {

using tlrt::random::splitmix64_finalize;

enum class FftOp { rfft, irfft, irfft_unnormalized };

const char* op_name(FftOp op) {
  switch (op) {
    case FftOp::rfft:
      return "rfft1d_packed";
    case FftOp::irfft:
      return "irfft1d_packed";
    case FftOp::irfft_unnormalized:
      return "irfft1d_packed_unnormalized";
  }
  return "";
}

double unit_roundoff(Dtype dtype) {
  return dtype == Dtype::f32 ? 0x1p-24 : 0x1p-53;
}

bool smooth(uint64_t n) {
  for (uint64_t p : {2u, 3u, 5u, 7u}) {
    while (n % p == 0) n /= p;
  }
  return n == 1;
}

double ceil_log2(uint64_t n) {
  return std::ceil(std::log2(static_cast<double>(n)));
}

// K(n) of the header.
double transform_constant(uint64_t n) {
  if (smooth(n)) return 8 * (ceil_log2(n) + 2);
  return 3 * 8 * (ceil_log2(2 * n) + 2);
}

double draw(uint64_t key, uint64_t i) {  // [-1, 1)
  return 2 * unit_draw(key, i) - 1;
}

void fill(HostArray& a, uint64_t key) {
  for (uint64_t i = 0; i < a.size(); ++i) {
    if (a.dtype() == Dtype::f32)
      a.as<float>()[i] = static_cast<float>(draw(key, i));
    else
      a.as<double>()[i] = draw(key, i);
  }
}

// Records |got - want| against limit (an absolute error).
Deviation deviation(Dtype dtype, double got, long double want, long double limit) {
  Deviation d;
  const long double error =
      std::isfinite(got) ? std::fabs(static_cast<long double>(got) - want) : INFINITY;
  // ULPs at the scale of the bound: near-zero results of a transform carry the row's error.
  const double at = std::max(static_cast<double>(std::fabs(want)), static_cast<double>(limit));
  d.ulps = static_cast<double>(error / ulp_of(dtype, at));
  if (limit > 0) d.rel = static_cast<double>(error / limit);
  d.within = error <= limit;
  return d;
}

class FftCase : public ComparedCase {
 public:
  FftCase(FftOp op, Dtype dtype, uint32_t n, uint32_t batch, uint64_t key)
      : op_(op), dtype_(dtype), n_(n), batch_(batch), key_(key) {}

  std::string op() const override { return op_name(op_); }
  Dtype dtype() const override { return dtype_; }
  std::string shape() const override {
    return "batch = " + std::to_string(batch_) + ", n = " + std::to_string(n_);
  }
  // The relative column reads error / (K(n) u N_row): at most 1.
  Bound bound() const override { return Bound::relative(0, "K(n)*u*N_row"); }
#if TLRT_HAVE_FFTW3Q
  std::string oracle_name() const override {
    return "FFTW quad (libfftw3q)";
  }
#endif
  std::string oracle_label() const override {
    return "ref vs FFTW quad";
  }
  Bound oracle_bound() const override {
    return Bound::relative(0, "u*|x|+K(n)*2^-64*N_row");
  }

  uint64_t in_row() const {
    return op_ == FftOp::rfft ? n_ : (uint64_t{n_} / 2 + 1) * 2;
  }
  uint64_t out_row() const {
    return op_ == FftOp::rfft ? (uint64_t{n_} / 2 + 1) * 2 : n_;
  }

  void make_inputs(uint64_t) override {
    input_ = HostArray(dtype_, batch_ * in_row());
    fill(input_, key_);
    row_norm_.assign(batch_, 0);
    const uint64_t bins = uint64_t{n_} / 2 + 1;
    for (uint64_t b = 0; b < batch_; ++b) {
      long double s = 0;
      if (op_ == FftOp::rfft) {
        for (uint64_t t = 0; t < n_; ++t) s += std::pow(input_.at(b * n_ + t), 2);
        row_norm_[b] = std::sqrt(static_cast<long double>(n_) * s);
        continue;
      }
      // ||X_full||^2 of the Hermitian extension with the endpoint imaginary parts zeroed.
      for (uint64_t k = 0; k < bins; ++k) {
        const long double re = input_.at((b * bins + k) * 2);
        const long double im = input_.at((b * bins + k) * 2 + 1);
        const bool end = k == 0 || 2 * k == n_;
        s += end ? re * re : 2 * (re * re + im * im);
      }
      // Parseval: sum_t |x_t|^2 = n sum_k |X_k|^2 for x_t = sum_k X_k e^{+2 pi i k t / n}, so the
      // unnormalized inverse has ||x||_2 = sqrt(n) ||X_full||_2, the normalized one fl(1/n) times.
      long double norm = std::sqrt(s * n_);
      if (op_ == FftOp::irfft) {
        norm *= dtype_ == Dtype::f32
                    ? static_cast<float>(1.0 / static_cast<double>(static_cast<float>(n_)))
                    : 1.0 / static_cast<double>(n_);
      }
      row_norm_[b] = norm;
    }
  }

  HostArrays run(Backend backend) override {
    std::unique_ptr<Buffer> in = upload(backend, input_, 0, input_.size());
    HostArrays out;
    if (op_ == FftOp::rfft) {
      out.push_back(download(*rfft1d_packed(*in, batch_, n_, "parity")));
    } else {
      out.push_back(download(*irfft1d_packed(*in, batch_, n_, op_ == FftOp::irfft, "parity")));
    }
    return out;
  }

  Deviation measure(size_t, uint64_t i, double got, double want, const Bound&) const override {
    const uint64_t row = i / out_row();
    const long double limit =
        transform_constant(n_) * unit_roundoff(dtype_) * row_norm_[row] + 1e-300L;
    return deviation(dtype_, got, want, limit);
  }

  std::string describe(size_t, uint64_t i, double got, double want) const override {
    return shape() + ", output " + std::to_string(i) + ": " + number(got, dtype_) + ", expected " +
           number(want, dtype_) +
           ", N_row = " + number(static_cast<double>(row_norm_[i / out_row()]), Dtype::f64);
  }

  void check_oracle(const HostArrays& reference, Stats& stats) const override {
#if TLRT_HAVE_FFTW3Q
    const std::vector<long double> o = oracle();
    const HostArray& r = reference[0];
    for (uint64_t i = 0; i < r.size(); ++i) {
      const double got = r.at(i);
      // One rounding of the long double value, which is itself within e of the oracle:
      // |fl(x_L) - x_o| <= u |x_L| + e <= u |x_o| + (1 + u) e.
      const long double u = unit_roundoff(dtype_);
      const long double e = transform_constant(n_) * 0x1p-64L * row_norm_[i / out_row()];
      const long double limit = u * std::fabs(o[i]) + (1 + u) * e + 1e-300L;
      const Deviation d = deviation(dtype_, got, o[i], limit);
      if (same_bits(got, dtype_ == Dtype::f32 ? static_cast<double>(static_cast<float>(o[i]))
                                              : static_cast<double>(o[i]))) {
        stats.record_equal();
        continue;
      }
      stats.record(d, [&] {
        return shape() + ", output " + std::to_string(i) + ": reference " + number(got, dtype_) +
               ", oracle " + number(static_cast<double>(o[i]), Dtype::f64);
      });
    }
#else
    (void)reference;
    (void)stats;
#endif
  }

  void evaluate(const RunContext& ctx, RowTable& rows) override {
    ComparedCase::evaluate(ctx, rows);
#if !TLRT_HAVE_FFTW3Q
    if (ctx.with_oracle) {
      Row& row = rows.row(label(), dtype(), oracle_label(), oracle_bound());
      row.skipped = true;
      row.error = "FFTW quad (libfftw3q) was not found when tlrt-parity was built";
    }
#endif
  }

 private:
#if TLRT_HAVE_FFTW3Q
  // The oracle's values, rounded from binary128 to long double.
  std::vector<long double> oracle() const {
    const uint64_t n = n_, bins = n / 2 + 1;
    std::vector<long double> out(batch_ * out_row());
    __float128* real = static_cast<__float128*>(fftwq_malloc(sizeof(__float128) * n));
    fftwq_complex* spec = static_cast<fftwq_complex*>(fftwq_malloc(sizeof(fftwq_complex) * bins));
    const int len = static_cast<int>(n);
    fftwq_plan plan = op_ == FftOp::rfft ? fftwq_plan_dft_r2c_1d(len, real, spec, FFTW_ESTIMATE)
                                         : fftwq_plan_dft_c2r_1d(len, spec, real, FFTW_ESTIMATE);
    const __float128 scale =
        op_ == FftOp::irfft
            ? static_cast<__float128>(dtype_ == Dtype::f32
                                          ? static_cast<double>(static_cast<float>(
                                                1.0 / static_cast<double>(static_cast<float>(n))))
                                          : 1.0 / static_cast<double>(n))
            : static_cast<__float128>(1);
    for (uint64_t b = 0; b < batch_; ++b) {
      if (op_ == FftOp::rfft) {
        for (uint64_t t = 0; t < n; ++t) real[t] = input_.at(b * n + t);
        fftwq_execute(plan);
        for (uint64_t k = 0; k < bins; ++k) {
          out[(b * bins + k) * 2] = static_cast<long double>(spec[k][0]);
          out[(b * bins + k) * 2 + 1] = static_cast<long double>(spec[k][1]);
        }
      } else {
        for (uint64_t k = 0; k < bins; ++k) {
          spec[k][0] = input_.at((b * bins + k) * 2);
          spec[k][1] = input_.at((b * bins + k) * 2 + 1);
        }
        spec[0][1] = 0;
        if (n % 2 == 0) spec[n / 2][1] = 0;
        fftwq_execute(plan);
        for (uint64_t t = 0; t < n; ++t) out[b * n + t] = static_cast<long double>(real[t] * scale);
      }
    }
    fftwq_destroy_plan(plan);
    fftwq_free(spec);
    fftwq_free(real);
    return out;
  }
#endif

  FftOp op_;
  Dtype dtype_;
  uint32_t n_, batch_;
  uint64_t key_;
  HostArray input_;
  std::vector<long double> row_norm_;
};

// ---- the legacy spectral pair

struct SpectralShape {
  uint32_t grid, width, modes;
};

class SpectralCase : public ComparedCase {
 public:
  SpectralCase(bool backward, Dtype dtype, SpectralShape s, uint64_t key)
      : backward_(backward), dtype_(dtype), s_(s), key_(key) {}

  std::string op() const override {
    return backward_ ? "spectral_conv1d_rfft_bwd" : "spectral_conv1d_rfft_fwd";
  }
  Dtype dtype() const override { return dtype_; }
  std::string shape() const override {
    return "grid = " + std::to_string(s_.grid) + ", width = " + std::to_string(s_.width) +
           ", modes = " + std::to_string(s_.modes);
  }
  Bound bound() const override { return Bound::relative(0, "(2K+2w+8)*u*S_out"); }

  void make_inputs(uint64_t) override {
    const uint64_t gw = uint64_t{s_.grid} * s_.width;
    const uint64_t weights = uint64_t{s_.modes} * s_.width * s_.width;
    x_ = HostArray(dtype_, gw);
    wre_ = HostArray(dtype_, weights);
    wim_ = HostArray(dtype_, weights);
    dy_ = HostArray(dtype_, gw);
    fill(x_, key_);
    fill(wre_, ~key_);
    fill(wim_, key_ ^ 0x5555555555555555ull);
    fill(dy_, key_ + 0x9e3779b97f4a7c15ull);
    // max_k ||W_k||_F of the complex weights.
    long double w_max = 0;
    for (uint64_t k = 0; k < s_.modes; ++k) {
      long double s = 0;
      for (uint64_t j = 0; j < uint64_t{s_.width} * s_.width; ++j) {
        const uint64_t at = k * s_.width * s_.width + j;
        s += std::pow(static_cast<long double>(wre_.at(at)), 2) +
             std::pow(static_cast<long double>(wim_.at(at)), 2);
      }
      w_max = std::max(w_max, std::sqrt(s));
    }
    auto frobenius = [](const HostArray& a) {
      long double s = 0;
      for (uint64_t i = 0; i < a.size(); ++i) s += std::pow(static_cast<long double>(a.at(i)), 2);
      return std::sqrt(s);
    };
    auto max_column_l1 = [&](const HostArray& a) {
      long double m = 0;
      for (uint64_t i = 0; i < s_.width; ++i) {
        long double s = 0;
        for (uint64_t t = 0; t < s_.grid; ++t) s += std::fabs(a.at(t * s_.width + i));
        m = std::max(m, s);
      }
      return m;
    };
    scale_y_ = std::sqrt(2.0L) * frobenius(x_) * w_max;
    scale_dx_ = std::sqrt(2.0L) * frobenius(dy_) * w_max;
    scale_dw_ = max_column_l1(x_) * max_column_l1(dy_) * 2 / s_.grid;
  }

  HostArrays run(Backend backend) override {
    auto x = upload(backend, x_, 0, x_.size());
    auto wre = upload(backend, wre_, 0, wre_.size());
    auto wim = upload(backend, wim_, 0, wim_.size());
    HostArrays out;
    if (!backward_) {
      out.push_back(download(
          *spectral_conv1d_rfft_fwd(*x, *wre, *wim, s_.grid, s_.width, s_.modes, "parity")));
      return out;
    }
    auto dy = upload(backend, dy_, 0, dy_.size());
    SpectralGrads g =
        spectral_conv1d_rfft_bwd(*x, *wre, *wim, *dy, s_.grid, s_.width, s_.modes, "parity");
    out.push_back(download(*g.dx));
    out.push_back(download(*g.dwre));
    out.push_back(download(*g.dwim));
    return out;
  }

  long double scale_of(size_t output) const {
    if (!backward_) return scale_y_;
    return output == 0 ? scale_dx_ : scale_dw_;
  }

  Deviation measure(size_t output, uint64_t, double got, double want, const Bound&) const override {
    const long double limit = (2 * transform_constant(s_.grid) + 2.0 * s_.width + 8) *
                                  unit_roundoff(dtype_) * scale_of(output) +
                              1e-300L;
    return deviation(dtype_, got, want, limit);
  }

 private:
  bool backward_;
  Dtype dtype_;
  SpectralShape s_;
  uint64_t key_;
  HostArray x_, wre_, wim_, dy_;
  long double scale_y_ = 0, scale_dx_ = 0, scale_dw_ = 0;
};

// The largest prime <= m (2 when m < 3).
uint64_t prime_at_most(uint64_t m) {
  for (; m > 2; --m) {
    bool prime = true;
    for (uint64_t f = 2; f * f <= m && prime; ++f) prime = m % f != 0;
    if (prime) return m;
  }
  return 2;
}

struct Length {
  uint32_t n, batch;
};

// --shapes: n an extent (1, 2, small, powers of two and their neighbours, uniform), a prime or a
// 2-3-5-7-smooth length, with a batch (0 included) that keeps both operands within the budget.
std::vector<Length> random_lengths(ShapeDraw& draw, uint64_t count, uint64_t budget) {
  std::vector<Length> lengths;
  const uint64_t top = budget - 2;  // the packed row, (n/2 + 1) * 2 elements, fits the budget
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t n = 1;
    switch (draw.below(4)) {
      case 0:
        n = prime_at_most(draw.extent(top));
        break;
      case 1:
        for (const uint64_t target = draw.extent(top); n <= target;) {
          const uint64_t f = draw.pick(std::vector<uint64_t>{2, 3, 5, 7});
          if (n * f > target) break;
          n *= f;
        }
        break;
      default:
        n = draw.extent(top);
        break;
    }
    const uint64_t batch = draw.extent(budget / ((n / 2 + 1) * 2), 5);
    lengths.push_back({static_cast<uint32_t>(n), static_cast<uint32_t>(batch)});
  }
  return lengths;
}

CaseList make_fft_cases(const Options& options) {
  CaseList cases;
  const uint32_t lengths[] = {1,  2,   3,   4,    5,    7,    8,    16,  17,
                              97, 127, 128, 1000, 1024, 2048, 4096, 4097};
  // The random recipes stay within 2^18 elements as well: the oracle computes in binary128.
  ShapeDraw draw(options.seed, "fft");
  const uint64_t budget = std::min<uint64_t>(random_shape_budget(options), uint64_t{1} << 18);
  const std::vector<Length> drawn = random_lengths(draw, options.shapes, budget);
  for (FftOp op : {FftOp::rfft, FftOp::irfft, FftOp::irfft_unnormalized}) {
    for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
      const uint64_t base = case_key(options.seed, op_name(op), dtype == Dtype::f32);
      uint64_t k = 0;
      for (uint32_t n : lengths) {
        const std::vector<uint32_t> batches =
            n <= 1024 ? std::vector<uint32_t>{1, 7, 64} : std::vector<uint32_t>{1, 16};
        for (uint32_t batch : batches) {
          cases.push_back(
              std::make_unique<FftCase>(op, dtype, n, batch, splitmix64_finalize(base + k++)));
        }
      }
      for (const Length& l : drawn) {
        cases.push_back(
            std::make_unique<FftCase>(op, dtype, l.n, l.batch, splitmix64_finalize(base + k++)));
      }
    }
  }
  std::vector<SpectralShape> shapes{{1, 3, 1},     {2, 2, 2},     {8, 4, 5},
                                    {17, 3, 9},    {64, 8, 16},   {97, 5, 20},
                                    {128, 16, 65}, {256, 32, 32}, {12, 3, 0}};
  // --shapes: width up to 64, grid within the budget, modes from 0 to all grid/2 + 1 bins with
  // the weights (modes x width x width) within the budget.
  for (uint64_t i = 0; i < options.shapes; ++i) {
    const uint64_t width = draw.extent(64);
    const uint64_t grid = draw.extent(budget / width);
    const uint64_t most = std::min<uint64_t>(grid / 2 + 1, budget / (width * width));
    const uint64_t modes = draw.percent(10) ? 0 : draw.percent(20) ? most : draw.between(1, most);
    shapes.push_back(
        {static_cast<uint32_t>(grid), static_cast<uint32_t>(width), static_cast<uint32_t>(modes)});
  }
  for (bool backward : {false, true}) {
    for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
      const uint64_t base =
          case_key(options.seed, backward ? "spectral_conv1d_rfft_bwd" : "spectral_conv1d_rfft_fwd",
                   dtype == Dtype::f32);
      uint64_t k = 0;
      for (const SpectralShape& s : shapes) {
        cases.push_back(
            std::make_unique<SpectralCase>(backward, dtype, s, splitmix64_finalize(base + k++)));
      }
    }
  }
  return cases;
}

const FamilyRegistration kFftFamily("fft", &make_fft_cases);

}  // namespace
}  // namespace tlrt::parity
