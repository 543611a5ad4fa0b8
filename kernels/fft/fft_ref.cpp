// Reference backend of the FFT family (kernels/fft/fft.h). Every transform runs in long double
// (x87 80-bit extended: 64-bit significand, u = 2^-64, well below binary64's 2^-53) by an
// O(n log n) algorithm and each output is rounded once to the dtype:
//
//   n a power of two   iterative radix-2 decimation in time (bit-reversed input order, butterflies
//                      of span 1, 2, 4, ...), twiddles w_j = e^{-2 pi i j / n} for j < n/2;
//   any other n        Bluestein's chirp-z: kt = (k^2 + t^2 - (k - t)^2) / 2 turns the DFT into
//                      X_k = c_k sum_t (x_t c_t) conj(c_{k-t}) with c_j = e^{-pi i j^2 / n}, a
//                      cyclic convolution of length M = the power of two >= 2n - 1, evaluated by
//                      three radix-2 transforms of length M.
//
// Every twiddle and chirp is cosl / sinl of pi times an exact rational: j^2 is reduced modulo 2n
// in 64-bit integers before it becomes an angle, so no angle carries more than one rounding.
// Complex arithmetic is spelled out (no C99 Annex G recovery of infinities), so a NaN or an
// infinity anywhere in a row turns the transform of that row into NaN, as a plain FFT does.
// The packed transforms run their rows in contiguous ranges on several host threads
// (kernels/common/host_parallel.h); a row's result does not depend on the thread count.
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/common/host_parallel.h"
#include "kernels/fft/fft.h"

namespace tlrt::kernels {
namespace {

using Real = long double;

struct Cx {
  Real re = 0;
  Real im = 0;
};

inline Cx mul(Cx a, Cx b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
inline Cx conj(Cx a) {
  return {a.re, -a.im};
}

const Real kPi = 3.141592653589793238462643383279502884L;

// e^{-pi i r / d} for integers 0 <= r < 2d.
Cx unit_root(uint64_t r, uint64_t d) {
  const Real angle = kPi * static_cast<Real>(r) / static_cast<Real>(d);
  return {std::cos(angle), -std::sin(angle)};
}

bool power_of_two(uint64_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}

// Forward radix-2 transform of a power-of-two length, in place.
class Radix2 {
 public:
  explicit Radix2(uint64_t m) : m_(m) {
    twiddles_.resize(m / 2);
    for (uint64_t j = 0; j < m / 2; ++j) twiddles_[j] = unit_root(2 * j, m);  // e^{-2 pi i j/m}
  }

  void forward(std::vector<Cx>& a) const {
    const uint64_t m = m_;
    for (uint64_t i = 1, j = 0; i < m; ++i) {
      uint64_t bit = m >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(a[i], a[j]);
    }
    for (uint64_t len = 2; len <= m; len <<= 1) {
      const uint64_t half = len / 2;
      const uint64_t step = m / len;
      for (uint64_t start = 0; start < m; start += len) {
        for (uint64_t j = 0; j < half; ++j) {
          const Cx w = twiddles_[j * step];
          const Cx u = a[start + j];
          const Cx v = mul(a[start + j + half], w);
          a[start + j] = {u.re + v.re, u.im + v.im};
          a[start + j + half] = {u.re - v.re, u.im - v.im};
        }
      }
    }
  }

 private:
  uint64_t m_;
  std::vector<Cx> twiddles_;
};

// Forward complex DFT of any length n >= 1, in place.
class ComplexFft {
 public:
  explicit ComplexFft(uint64_t n) : n_(n) {
    if (power_of_two(n)) {
      direct_ = true;
      radix2_ = std::make_unique<Radix2>(n);
      return;
    }
    uint64_t m = 1;
    while (m < 2 * n - 1) m <<= 1;
    m_ = m;
    radix2_ = std::make_unique<Radix2>(m);
    chirp_.resize(n);
    const uint64_t two_n = 2 * n;
    for (uint64_t j = 0; j < n; ++j) chirp_[j] = unit_root((j * j) % two_n, n);
    kernel_.assign(m, Cx{});
    kernel_[0] = conj(chirp_[0]);
    for (uint64_t j = 1; j < n; ++j) kernel_[j] = kernel_[m - j] = conj(chirp_[j]);
    radix2_->forward(kernel_);
    work_.resize(m);
  }

  void forward(std::vector<Cx>& a) {
    if (direct_) {
      radix2_->forward(a);
      return;
    }
    const uint64_t n = n_, m = m_;
    for (uint64_t t = 0; t < n; ++t) work_[t] = mul(a[t], chirp_[t]);
    for (uint64_t t = n; t < m; ++t) work_[t] = Cx{};
    radix2_->forward(work_);
    // Inverse transform of the product through conj(F(conj(.))), then 1/M (a power of two:
    // exact).
    for (uint64_t j = 0; j < m; ++j) work_[j] = conj(mul(work_[j], kernel_[j]));
    radix2_->forward(work_);
    const Real inv_m = Real(1) / static_cast<Real>(m);
    for (uint64_t k = 0; k < n; ++k) {
      const Cx conv{work_[k].re * inv_m, -work_[k].im * inv_m};
      a[k] = mul(chirp_[k], conv);
    }
  }

 private:
  uint64_t n_;
  uint64_t m_ = 0;
  bool direct_ = false;
  std::unique_ptr<Radix2> radix2_;
  std::vector<Cx> chirp_, kernel_, work_;
};

// Packed-row transforms of one length, reusing the twiddles over every row.
class RealFft {
 public:
  explicit RealFft(uint64_t n) : n_(n), fft_(n), a_(n) {}

  // Bins 0..n/2 of the DFT of the n reals at x[0], x[stride], ...
  template <class Load>
  const std::vector<Cx>& forward(Load&& load) {
    for (uint64_t t = 0; t < n_; ++t) a_[t] = Cx{load(t), 0};
    fft_.forward(a_);
    return a_;
  }

  // The Hermitian inverse (unnormalized) of the half spectrum bin(k), k = 0..n/2, with the
  // endpoint imaginary parts taken as 0; returns the n real values in a_[t].re.
  template <class Bin>
  const std::vector<Cx>& inverse(Bin&& bin) {
    const uint64_t n = n_, bins = fft_bins(n);
    for (uint64_t k = 0; k < bins; ++k) a_[k] = bin(k);
    a_[0].im = 0;
    if (n % 2 == 0) a_[n / 2].im = 0;
    for (uint64_t k = bins; k < n; ++k) a_[k] = conj(a_[n - k]);
    // x_t = sum_k X_k e^{+2 pi i k t / n} = conj(F(conj(X)))_t; only the real part is kept.
    for (uint64_t k = 0; k < n; ++k) a_[k].im = -a_[k].im;
    fft_.forward(a_);
    return a_;
  }

 private:
  uint64_t n_;
  ComplexFft fft_;
  std::vector<Cx> a_;
};

// Multiplicity of bin k in the Hermitian sum: 1 at DC and (n even) Nyquist, 2 elsewhere.
Real multiplicity(uint64_t k, uint64_t n) {
  return (k == 0 || 2 * k == n) ? Real(1) : Real(2);
}

}  // namespace

namespace {

// Rows are independent: contiguous ranges of them on several host threads, each range with its
// own transform object (the same twiddles, computed the same way), each row as in one loop.
template <class F>
void each_row_range(uint64_t batch, uint64_t n, F&& rows) {
  uint64_t levels = 1;
  while ((uint64_t{1} << levels) < n) ++levels;
  parallel_ranges(batch, grain_for_work(n * levels, uint64_t{1} << 18), rows);
}

}  // namespace

template <class T>
void rfft1d_ref(const T* x, uint64_t batch, uint64_t n, T* out) {
  if (batch == 0) return;
  const uint64_t bins = fft_bins(n);
  each_row_range(batch, n, [&](uint64_t begin, uint64_t end) {
    RealFft fft(n);
    for (uint64_t b = begin; b < end; ++b) {
      const T* row = x + b * n;
      const std::vector<Cx>& s = fft.forward([&](uint64_t t) { return static_cast<Real>(row[t]); });
      T* o = out + b * bins * 2;
      for (uint64_t k = 0; k < bins; ++k) {
        o[2 * k] = static_cast<T>(s[k].re);
        o[2 * k + 1] = static_cast<T>(s[k].im);
      }
    }
  });
}

template <class T>
void irfft1d_ref(const T* spec, uint64_t batch, uint64_t n, bool normalize, T* out) {
  if (batch == 0) return;
  const uint64_t bins = fft_bins(n);
  const Real scale = normalize ? static_cast<Real>(fft_inverse_scale<T>(n)) : Real(1);
  each_row_range(batch, n, [&](uint64_t begin, uint64_t end) {
    RealFft fft(n);
    for (uint64_t b = begin; b < end; ++b) {
      const T* row = spec + b * bins * 2;
      const std::vector<Cx>& s = fft.inverse([&](uint64_t k) {
        return Cx{static_cast<Real>(row[2 * k]), static_cast<Real>(row[2 * k + 1])};
      });
      T* o = out + b * n;
      for (uint64_t t = 0; t < n; ++t) o[t] = static_cast<T>(normalize ? s[t].re * scale : s[t].re);
    }
  });
}

namespace {

// Spectra of the columns of a (grid, width) matrix: result[k * width + i] = bin k of column i.
template <class T>
std::vector<Cx> column_spectra(RealFft& fft, const T* m, uint64_t grid, uint64_t width) {
  const uint64_t bins = fft_bins(grid);
  std::vector<Cx> s(bins * width);
  for (uint64_t i = 0; i < width; ++i) {
    const std::vector<Cx>& c =
        fft.forward([&](uint64_t t) { return static_cast<Real>(m[t * width + i]); });
    for (uint64_t k = 0; k < bins; ++k) s[k * width + i] = c[k];
  }
  return s;
}

// out[t * width + i] = scale * inverse of column i of s (layout as column_spectra).
template <class T>
void column_inverses(RealFft& fft, const std::vector<Cx>& s, uint64_t grid, uint64_t width,
                     Real scale, T* out) {
  for (uint64_t i = 0; i < width; ++i) {
    const std::vector<Cx>& c = fft.inverse([&](uint64_t k) { return s[k * width + i]; });
    for (uint64_t t = 0; t < grid; ++t) out[t * width + i] = static_cast<T>(c[t].re * scale);
  }
}

}  // namespace

template <class T>
void spectral_conv1d_fwd_ref(const T* x, const T* wre, const T* wim, uint64_t grid, uint64_t width,
                             uint64_t modes, T* y) {
  RealFft fft(grid);
  const uint64_t bins = fft_bins(grid);
  const std::vector<Cx> xs = column_spectra(fft, x, grid, width);
  std::vector<Cx> z(bins * width);
  for (uint64_t k = 0; k < modes; ++k) {
    for (uint64_t o = 0; o < width; ++o) {
      Cx acc{};
      for (uint64_t i = 0; i < width; ++i) {
        const uint64_t w = (k * width + i) * width + o;
        const Cx p =
            mul(xs[k * width + i], Cx{static_cast<Real>(wre[w]), static_cast<Real>(wim[w])});
        acc.re += p.re;
        acc.im += p.im;
      }
      z[k * width + o] = acc;
    }
  }
  column_inverses(fft, z, grid, width, Real(1) / static_cast<Real>(grid), y);
}

template <class T>
void spectral_conv1d_bwd_ref(const T* x, const T* wre, const T* wim, const T* dy, uint64_t grid,
                             uint64_t width, uint64_t modes, T* dx, T* dwre, T* dwim) {
  RealFft fft(grid);
  const uint64_t bins = fft_bins(grid);
  const std::vector<Cx> xs = column_spectra(fft, x, grid, width);
  std::vector<Cx> dz = column_spectra(fft, dy, grid, width);
  for (uint64_t k = 0; k < bins; ++k) {
    const Real f = multiplicity(k, grid) / static_cast<Real>(grid);
    const bool endpoint = k == 0 || 2 * k == grid;
    for (uint64_t o = 0; o < width; ++o) {
      Cx& d = dz[k * width + o];
      d = {d.re * f, endpoint ? Real(0) : d.im * f};
    }
  }
  std::vector<Cx> dxs(bins * width);
  for (uint64_t k = 0; k < modes; ++k) {
    const Real inv_w = Real(1) / multiplicity(k, grid);
    for (uint64_t i = 0; i < width; ++i) {
      const Cx xc = conj(xs[k * width + i]);
      Cx acc{};
      for (uint64_t o = 0; o < width; ++o) {
        const uint64_t w = (k * width + i) * width + o;
        const Cx d = dz[k * width + o];
        const Cx g = mul(xc, d);
        dwre[w] = static_cast<T>(g.re);
        dwim[w] = static_cast<T>(g.im);
        const Cx p = mul(Cx{static_cast<Real>(wre[w]), -static_cast<Real>(wim[w])}, d);
        acc.re += p.re;
        acc.im += p.im;
      }
      dxs[k * width + i] = {acc.re * inv_w, acc.im * inv_w};
    }
  }
  column_inverses(fft, dxs, grid, width, Real(1), dx);
}

template void rfft1d_ref<float>(const float*, uint64_t, uint64_t, float*);
template void rfft1d_ref<double>(const double*, uint64_t, uint64_t, double*);
template void irfft1d_ref<float>(const float*, uint64_t, uint64_t, bool, float*);
template void irfft1d_ref<double>(const double*, uint64_t, uint64_t, bool, double*);
template void spectral_conv1d_fwd_ref<float>(const float*, const float*, const float*, uint64_t,
                                             uint64_t, uint64_t, float*);
template void spectral_conv1d_fwd_ref<double>(const double*, const double*, const double*, uint64_t,
                                              uint64_t, uint64_t, double*);
template void spectral_conv1d_bwd_ref<float>(const float*, const float*, const float*, const float*,
                                             uint64_t, uint64_t, uint64_t, float*, float*, float*);
template void spectral_conv1d_bwd_ref<double>(const double*, const double*, const double*,
                                              const double*, uint64_t, uint64_t, uint64_t, double*,
                                              double*, double*);

}  // namespace tlrt::kernels
