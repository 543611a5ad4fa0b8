// The inverse real FFT of one power-of-two length n (irfft_pow2_supported: 256 <= n <= 8192, 4096
// for float64) in one kernel, without cuFFT: a block reads a packed spectrum row once and writes
// its n reals once.
//
// For even n and h = n/2, the reals x of the Hermitian inverse of X (bins 0..h) satisfy
// x_2j + i x_2j+1 = sum_k Z_k e^{2 pi i j k / h}, k = 0..h-1, with
//   Z_k = E_k + i w^k D_k,  E_k = X_k + conj(X_{h-k}),  D_k = X_k - conj(X_{h-k}),  w = e^{2 pi i /
//   n},
// and the imaginary parts of X_0 and X_h taken as 0 (SPEC-ops 12's endpoint rule). The length-h
// complex inverse runs as Stockham passes in shared memory, one radix-2 pass when log2 h is odd,
// then radix-4 passes: the pass with sub-transform size ns takes butterfly j (0 <= j < h/R) from
// positions j + r h/R, multiplies input r by e^{2 pi i (j mod ns) r / (ns R)} and writes output r
// to (j - j mod ns) R + j mod ns + r ns. Twiddles come from one table of e^{pi i k / h}, 0 <= k <
// h, built per block in binary64 and rounded once to the dtype. The helpers below are the kernel's
// arithmetic, shared with the host model of tests/fft_pow2_test.cpp.
#pragma once

#include <cstdint>

#include "common/host_device.h"

struct CUstream_st;

namespace tlrt::kernels {

constexpr uint64_t kPow2InverseMin = 256;
constexpr uint64_t kPow2InverseMax = 8192;

// A block holds the twiddle table and the row, n complex values in all; at most 64 KiB of them, so
// that at least three blocks share an SM (float64 stops at n = 4096).
constexpr uint64_t kPow2InverseSharedBytes = uint64_t{64} << 10;

inline bool irfft_pow2_supported(uint64_t n, uint64_t element_bytes) {
  return n >= kPow2InverseMin && n <= kPow2InverseMax && (n & (n - 1)) == 0 &&
         n * 2 * element_bytes <= kPow2InverseSharedBytes;
}

template <class T>
struct alignas(2 * sizeof(T)) Cplx {
  T re, im;
};

template <class T>
TLRT_HOST_DEVICE Cplx<T> cadd(Cplx<T> a, Cplx<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class T>
TLRT_HOST_DEVICE Cplx<T> csub(Cplx<T> a, Cplx<T> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class T>
TLRT_HOST_DEVICE Cplx<T> cmul(Cplx<T> a, Cplx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
// i a
template <class T>
TLRT_HOST_DEVICE Cplx<T> times_i(Cplx<T> a) {
  return {-a.im, a.re};
}

// e^{2 pi i m / h}, 0 <= m < h, from the table of e^{pi i k / h}, 0 <= k < h.
template <class T>
TLRT_HOST_DEVICE Cplx<T> root_of_half(const Cplx<T>* table, uint64_t h, uint64_t m) {
  const uint64_t twice = 2 * m;
  if (twice < h) return table[twice];
  const Cplx<T> w = table[twice - h];
  return {-w.re, -w.im};
}

// Z_k from the packed row (bins 0..h) and w^k = table[k]; times `scale` when scaled.
template <class T>
TLRT_HOST_DEVICE Cplx<T> half_input(const Cplx<T>* row, uint64_t h, uint64_t k, Cplx<T> w,
                                    bool scaled, T scale) {
  Cplx<T> a = row[k];
  Cplx<T> c = row[h - k];
  if (k == 0) {
    a.im = T(0);
    c.im = T(0);
  }
  const Cplx<T> e = {a.re + c.re, a.im - c.im};
  const Cplx<T> d = {a.re - c.re, a.im + c.im};
  Cplx<T> z = cadd(e, times_i(cmul(w, d)));
  if (scaled) {
    z.re = z.re * scale;
    z.im = z.im * scale;
  }
  return z;
}

// Output position of input 0 of butterfly j in the pass with sub-transform size ns (a power of
// two) and radix R; output r goes to that plus r ns.
TLRT_HOST_DEVICE uint64_t stockham_out(uint64_t j, uint64_t ns, uint64_t radix) {
  return (j & ~(ns - 1)) * radix + (j & (ns - 1));
}

// Butterfly j of the pass (ns, R), in place on its R inputs v[r] = data[j + r h / R].
template <class T, int R>
TLRT_HOST_DEVICE void stockham_butterfly(Cplx<T> (&v)[R], const Cplx<T>* table, uint64_t h,
                                         uint64_t ns, uint64_t j) {
  static_assert(R == 2 || R == 4, "radix 2 or 4");
  const uint64_t step = (j & (ns - 1)) * (h / (ns * R));
  for (int r = 1; r < R; ++r) v[r] = cmul(v[r], root_of_half(table, h, step * r));
  if constexpr (R == 2) {
    const Cplx<T> s = cadd(v[0], v[1]);
    v[1] = csub(v[0], v[1]);
    v[0] = s;
  } else {
    const Cplx<T> a0 = cadd(v[0], v[2]), a1 = csub(v[0], v[2]);
    const Cplx<T> a2 = cadd(v[1], v[3]), a3 = times_i(csub(v[1], v[3]));
    v[0] = cadd(a0, a2);
    v[1] = cadd(a1, a3);
    v[2] = csub(a0, a2);
    v[3] = csub(a1, a3);
  }
}

// CUDA backend: out[b, 0..n) from the packed rows spec[b, 0..n/2]; irfft_pow2_supported(n,
// sizeof(T)). scale multiplies every Z_k when scaled (fl(1/n) for the normalized inverse).
template <class T>
void irfft_pow2_cuda(const T* spec, uint64_t batch, uint64_t n, bool scaled, T scale, T* out,
                     CUstream_st* stream, const char* op);

}  // namespace tlrt::kernels
