// Real FFT of packed half spectra (SPEC-ops 12) and the legacy spectral convolution pair
// (SPEC-ops 16). A packed spectrum of a row of n reals is (n/2 + 1) bins of [Re, Im], which is
// exactly cuFFT's R2C output layout.
//
// Reference backend (fft_ref.cpp): every transform is evaluated in long double (x87 80-bit, 64-bit
// significand) by an O(n log n) algorithm, iterative radix-2 for powers of two and Bluestein's
// chirp-z through a power-of-two convolution for every other length; each result is rounded once
// to the dtype. CUDA backend: cuFFT plans (fft_cuda.cpp) plus the small kernels of fft.cu (the
// spectrum copy of the inverse, the n = 1 transforms, the per-mode mixing of the spectral pair).
// Extents arrive validated (n > 0, products fit in 64 bits).
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

// Bins of a packed spectrum of n reals.
inline uint64_t fft_bins(uint64_t n) {
  return n / 2 + 1;
}

// The multiplier of the normalized inverse: fl(1/n) in the dtype, formed in binary64 from the
// dtype-rounded length (SPEC-ops 2.6, 12).
template <class T>
inline T fft_inverse_scale(uint64_t n) {
  return static_cast<T>(1.0 / static_cast<double>(static_cast<T>(n)));
}

// ---- reference backend

// out[b, k] = sum_t x[b, t] e^{-2 pi i k t / n}, k = 0..n/2, as [Re, Im].
template <class T>
void rfft1d_ref(const T* x, uint64_t batch, uint64_t n, T* out);

// The Hermitian inverse of each packed row (Im of bin 0 and, n even, of bin n/2 ignored); with
// normalize, the long double result times fl(1/n) is rounded once.
template <class T>
void irfft1d_ref(const T* spec, uint64_t batch, uint64_t n, bool normalize, T* out);

// Legacy spectral convolution, x and y (grid, width) row-major, wre / wim (modes, width, width),
// 0 < modes <= grid/2 + 1.
template <class T>
void spectral_conv1d_fwd_ref(const T* x, const T* wre, const T* wim, uint64_t grid, uint64_t width,
                             uint64_t modes, T* y);
template <class T>
void spectral_conv1d_bwd_ref(const T* x, const T* wre, const T* wim, const T* dy, uint64_t grid,
                             uint64_t width, uint64_t modes, T* dx, T* dwre, T* dwim);

// ---- CUDA backend: cuFFT plans (fft_cuda.cpp)

enum class FftDirection : uint8_t { r2c = 0, c2r = 1 };

// What a cuFFT plan is made from: `batch` transforms of length n; element t of transform b of the
// real side is at b*rdist + t*rstride, bin k of the complex side at b*cdist + k*cstride (in
// elements of the real or complex type).
struct FftPlanShape {
  bool f64 = false;
  FftDirection direction = FftDirection::r2c;
  uint64_t n = 0;
  uint64_t batch = 0;
  uint64_t rstride = 1, rdist = 0;
  uint64_t cstride = 1, cdist = 0;
  // c2r only: the input comes through the load callback of irfft_load_callback, which reads the
  // spectrum named by the plan's caller info (FftLoadInfo) instead of the input pointer.
  bool load_callback = false;
};

struct FftPlan {
  int handle = 0;                 // cufftHandle
  size_t work_bytes = 0;          // the work area the caller supplies (auto allocation is off)
  void* callback_info = nullptr;  // device FftLoadInfo of a load-callback plan, else null
};

// The caller info of the inverse's load callback (device memory, one per plan; rewritten on the
// plan's stream before each execution by fft_write_load_info_cuda). The callback source in
// fft_lto_cuda.cpp declares the same layout.
struct FftLoadInfo {
  const void* src;   // the packed spectrum, [Re, Im] pairs
  uint64_t bins;     // n/2 + 1
  uint64_t nyquist;  // n/2 for even n, else bins (no Nyquist bin)
  double scale;      // fl(1/n) of the dtype, widened
  uint32_t scaled;   // 1: multiply by scale
  uint32_t pad;
};

// The LTO-IR of the inverse's load callback for the dtype, compiled with NVRTC on first use for
// the current device's compute capability; ltoir is null (and why says why) where it cannot be
// made.
struct FftLoadCallback {
  const void* ltoir = nullptr;
  size_t size = 0;
  const char* symbol = nullptr;
  const char* why = "";
};
FftLoadCallback irfft_load_callback(bool f64);

// Creates the plan (cufftCreate, cufftSetAutoAllocation(0), for a load-callback shape
// cufftXtSetJITCallback with `callback` and a fresh device FftLoadInfo, cufftMakePlanMany64);
// throws tlrt::Error naming op on failure, leaving nothing behind.
FftPlan fft_plan_create(const FftPlanShape& shape, const char* op,
                        const FftLoadCallback* callback = nullptr);
void fft_plan_destroy(FftPlan& plan);

// Queues the plan's transform on `stream` with `work` (plan.work_bytes bytes, may be null when 0)
// as its work area. r2c reads `real` and writes `complex`; c2r reads and overwrites `complex` and
// writes `real`. T is float (R2C / C2R) or double (D2Z / Z2D); complex points at [Re, Im] pairs.
template <class T>
void fft_exec_cuda(const FftPlan& plan, FftDirection direction, T* real, T* complex, void* work,
                   CUstream_st* stream, const char* op);

// The two halves of fft_exec_cuda, for a caller that runs one plan several times in a row under
// one lock: fft_bind_cuda sets the plan's stream and work area, fft_run_cuda queues the transform
// on them.
void fft_bind_cuda(const FftPlan& plan, void* work, CUstream_st* stream, const char* op);
template <class T>
void fft_run_cuda(const FftPlan& plan, FftDirection direction, T* real, T* complex, const char* op);

// ---- CUDA backend: kernels (fft.cu)

// dst = src with Im of bin 0 and (n even) bin n/2 of every row set to +0, every value multiplied
// by `scale` when `scaled`; src and dst hold `rows` packed rows of n/2 + 1 bins, row r at r*dist,
// bin k at k*stride (in bins), the same layout on both sides.
template <class T>
void irfft_prepare_cuda(const T* src, T* dst, uint64_t rows, uint64_t n, uint64_t stride,
                        uint64_t dist, bool scaled, T scale, CUstream_st* stream, const char* op);

// Queues the write of the load callback's caller info: src, n's bins and Nyquist bin, the factor.
template <class T>
void fft_write_load_info_cuda(void* info, const T* src, uint64_t n, bool scaled, T scale,
                              CUstream_st* stream, const char* op);

// n = 1: out[2b] = x[b], out[2b + 1] = +0 (rfft); out[b] = spec[2b] * (scaled ? scale : 1).
template <class T>
void rfft_length1_cuda(const T* x, uint64_t batch, T* out, CUstream_st* stream, const char* op);
template <class T>
void irfft_length1_cuda(const T* spec, uint64_t batch, bool scaled, T scale, T* out,
                        CUstream_st* stream, const char* op);

// Spectral pair, spectra in (bins, width) complex layout (bin k of channel i at k*width + i).
// Forward mixing: z[k, o] = scale * sum_i xs[k, i] (wre + i wim)[k, i, o] for k < modes, 0 for
// modes <= k < bins, Im of the endpoint bins +0.
template <class T>
void spectral_mix_fwd_cuda(const T* xs, const T* wre, const T* wim, uint64_t grid, uint64_t width,
                           uint64_t modes, T scale, T* z, CUstream_st* stream, const char* op);
// Backward: dz[k, o] = ds[k, o] * fl(w_k / grid) with endpoint Im +0 (ds = rfft(dY));
// dwre + i dwim [k, i, o] = conj(xs[k, i]) dz[k, o];
// dxs[k, i] = sum_o conj(W[k, i, o]) dz[k, o] / w_k for k < modes, 0 above, endpoint Im +0.
template <class T>
void spectral_mix_bwd_cuda(const T* xs, const T* ds, const T* wre, const T* wim, uint64_t grid,
                           uint64_t width, uint64_t modes, T* dxs, T* dwre, T* dwim,
                           CUstream_st* stream, const char* op);

}  // namespace tlrt::kernels
