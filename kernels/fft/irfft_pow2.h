// The inverse real FFT of one power-of-two length n (irfft_pow2_supported: 256 <= n <= 8192, 4096
// for float64) in one kernel, without cuFFT: a block reads a packed spectrum row once and writes
// its n reals once.
//
// For even n and h = n/2, the reals x of the Hermitian inverse of X (bins 0..h) satisfy
// x_2j + i x_2j+1 = sum_k Z_k e^{2 pi i j k / h}, k = 0..h-1, with
//   Z_k = E_k + i w^k D_k,  E_k = X_k + conj(X_{h-k}),  D_k = X_k - conj(X_{h-k}),  w = e^{2 pi i /
//   n},
// and the imaginary parts of X_0 and X_h taken as 0 (SPEC-ops 12's endpoint rule). The length-h
// complex inverse runs as Stockham passes in shared memory: a first pass of radix 2, 4 or 8 (as
// log2 h mod 3 is 1, 2 or 0), then radix-8 passes. The pass with sub-transform size ns takes
// butterfly j (0 <= j < h/R) from positions j + r h/R, multiplies input r by
// e^{2 pi i (j mod ns) r / (ns R)} and writes output r to (j - j mod ns) R + j mod ns + r ns.
// Twiddles are the values of one table of e^{pi i k / h},
// 0 <= k < h, built per block in binary64 and rounded once to the dtype (each pass reads its own
// copy of the entries it needs, pass_twiddle_offset). The helpers below are the kernel's
// arithmetic, shared with the host model of tests/fft_pow2_test.cpp.
#pragma once

#include <cstdint>

#include "common/host_device.h"

struct CUstream_st;

namespace tlrt::kernels {

constexpr uint64_t kPow2InverseMin = 256;
constexpr uint64_t kPow2InverseMax = 8192;

// The Stockham passes of a length-h transform, h = 2^log_h: a first pass (sub-transform size ns =
// 1) of radix 2^first_pass_log_radix(log_h), then radix-8 passes with ns = 2^l, l growing by 3.
TLRT_HOST_DEVICE constexpr int first_pass_log_radix(int log_h) {
  return log_h % 3 == 0 ? 3 : log_h % 3;
}

// A block keeps the twiddles of pass (ns, R) in a table of its own, (R - 1) ns entries, entry
// (r - 1) ns + m holding e^{2 pi i m r / (ns R)}: consecutive butterflies read consecutive entries
// (the first pass's entries are all 1 and go unread). This is the offset of the pass with
// sub-transform size 2^log_ns in the concatenation of those tables, in pass order;
// pass_twiddle_offset(log_h, log_h) = h - 1 is the length of the whole.
TLRT_HOST_DEVICE constexpr uint32_t pass_twiddle_offset(int log_h, int log_ns) {
  uint32_t offset = 0;
  for (int l = 0, lr = first_pass_log_radix(log_h); l < log_ns; l += lr, lr = 3) {
    offset += ((uint32_t{1} << lr) - 1) << l;
  }
  return offset;
}

// Shared memory of a block for a length-n inverse: the table of e^{pi i k / h} (h entries), the
// passes' twiddle tables and the row of h complex values with one padding entry per 128 bytes
// (so that the strided writes of the early passes spread over the banks).
constexpr uint64_t irfft_pow2_shared_bytes(uint64_t n, uint64_t element_bytes) {
  const uint64_t h = n / 2, cplx = 2 * element_bytes;
  int log_h = 0;
  while ((uint64_t{1} << log_h) < h) ++log_h;
  return (h + pass_twiddle_offset(log_h, log_h) + h + h * cplx / 128) * cplx;
}

// At most 112 KiB of shared memory a block, so that two blocks share an SM (float64 stops at
// n = 4096).
constexpr uint64_t kPow2InverseSharedBytes = uint64_t{112} << 10;

constexpr bool irfft_pow2_supported(uint64_t n, uint64_t element_bytes) {
  return n >= kPow2InverseMin && n <= kPow2InverseMax && (n & (n - 1)) == 0 &&
         irfft_pow2_shared_bytes(n, element_bytes) <= kPow2InverseSharedBytes;
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

// Z_k from a = X_k, c = X_{h-k} and w^k (first: k == 0, whose endpoint imaginary parts are taken
// as 0); times `scale` when scaled. Z_{h-k} is the same with a and c exchanged and w^{h-k}.
template <class T>
TLRT_HOST_DEVICE Cplx<T> half_input_values(Cplx<T> a, Cplx<T> c, bool first, Cplx<T> w, bool scaled,
                                           T scale) {
  if (first) {
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

// The first pass (radix R0 = 2^first_pass_log_radix(log h), ns = 1, B = h / R0 butterflies) takes
// its inputs straight from the spectrum. Input r of butterfly j is Z_k, k = j + r B, formed from
// X_k and X_{h-k}, and h - k is input R0-1-r of butterfly B - j (j != 0). So butterflies pair up:
// j with first_pass_partner(j) for 0 <= j < B/2, 0 with B/2, each pair's 2 R0 inputs formed from
// the same 2 R0 spectrum values (and X_h for butterfly 0).
TLRT_HOST_DEVICE constexpr uint64_t first_pass_partner(uint64_t j, uint64_t butterflies) {
  return j == 0 ? butterflies / 2 : butterflies - j;
}

// The inputs zj of butterfly j (0 <= j < B/2) and zm of its partner m from xj[r] = X_{j + r B},
// xm[r] = X_{m + r B} and xh = X_h (used when j == 0, where butterflies 0 and B/2 are each their
// own mirror: input r of butterfly 0 pairs with input R0-r, its input 0 with X_h; input r of
// butterfly B/2 with its input R0-1-r). The same half_input_values as Z_k from its pair.
template <class T, int R0>
TLRT_HOST_DEVICE void first_pass_inputs(uint64_t h, uint64_t j, const Cplx<T> (&xj)[R0],
                                        const Cplx<T> (&xm)[R0], Cplx<T> xh, const Cplx<T>* table,
                                        bool scaled, T scale, Cplx<T> (&zj)[R0],
                                        Cplx<T> (&zm)[R0]) {
  const uint64_t b = h / R0;
  if (j != 0) {
    for (int r = 0; r < R0; ++r) {
      const uint64_t k = j + r * b;
      zj[r] = half_input_values(xj[r], xm[R0 - 1 - r], false, table[k], scaled, scale);
      zm[R0 - 1 - r] = half_input_values(xm[R0 - 1 - r], xj[r], false, table[h - k], scaled, scale);
    }
    return;
  }
  zj[0] = half_input_values(xj[0], xh, true, table[0], scaled, scale);
  for (int r = 1; r < R0; ++r) {
    zj[r] = half_input_values(xj[r], xj[R0 - r], false, table[r * b], scaled, scale);
  }
  for (int r = 0; r < R0; ++r) {
    zm[r] = half_input_values(xm[r], xm[R0 - 1 - r], false, table[b / 2 + r * b], scaled, scale);
  }
}

// Output position of input 0 of butterfly j in the pass with sub-transform size ns (a power of
// two) and radix R; output r goes to that plus r ns.
TLRT_HOST_DEVICE constexpr uint32_t stockham_out(uint32_t j, uint32_t ns, uint32_t radix) {
  return (j & ~(ns - 1)) * radix + (j & (ns - 1));
}

// fl(sqrt(2) / 2) in the dtype.
template <class T>
TLRT_HOST_DEVICE constexpr T half_sqrt2() {
  return static_cast<T>(0.70710678118654752440084436210484903928L);
}

// The inverse DFT of R = 2, 4 or 8 points, y_q = sum_r v_r e^{2 pi i r q / R}, on inputs already
// multiplied by their twiddles. Radix 8 is a radix-2 level (pairs r, r + 4), the differences
// multiplied by e^{2 pi i r / 8} (r = 2: times i, exact; r = 1, 3: sums and differences of the
// parts times fl(sqrt(2)/2)), then two radix-4 butterflies giving the even and the odd outputs.
template <class T, int R>
TLRT_HOST_DEVICE void radix_butterfly(Cplx<T> (&v)[R]) {
  static_assert(R == 2 || R == 4 || R == 8, "radix 2, 4 or 8");
  if constexpr (R == 2) {
    const Cplx<T> s = cadd(v[0], v[1]);
    v[1] = csub(v[0], v[1]);
    v[0] = s;
  } else if constexpr (R == 4) {
    const Cplx<T> a0 = cadd(v[0], v[2]), a1 = csub(v[0], v[2]);
    const Cplx<T> a2 = cadd(v[1], v[3]), a3 = times_i(csub(v[1], v[3]));
    v[0] = cadd(a0, a2);
    v[1] = cadd(a1, a3);
    v[2] = csub(a0, a2);
    v[3] = csub(a1, a3);
  } else {
    constexpr T c = half_sqrt2<T>();
    Cplx<T> a[4], b[4];
    for (int r = 0; r < 4; ++r) {
      a[r] = cadd(v[r], v[r + 4]);
      b[r] = csub(v[r], v[r + 4]);
    }
    b[1] = {(b[1].re - b[1].im) * c, (b[1].re + b[1].im) * c};   // times e^{i pi / 4}
    b[2] = times_i(b[2]);                                        // times e^{i pi / 2}
    b[3] = {-(b[3].re + b[3].im) * c, (b[3].re - b[3].im) * c};  // times e^{3 i pi / 4}
    radix_butterfly<T, 4>(a);
    radix_butterfly<T, 4>(b);
    for (int q = 0; q < 4; ++q) {
      v[2 * q] = a[q];
      v[2 * q + 1] = b[q];
    }
  }
}

// The twiddle of input r of butterfly j in the pass (ns, R): e^{2 pi i (j mod ns) r / (ns R)},
// entry (r - 1) ns + j mod ns of the pass's table. The first pass (ns = 1) multiplies by none.
template <class T>
TLRT_HOST_DEVICE Cplx<T> stockham_twiddle(const Cplx<T>* table, uint64_t h, uint64_t ns,
                                          uint64_t radix, uint64_t j, uint64_t r) {
  return root_of_half(table, h, (j & (ns - 1)) * (h / (ns * radix)) * r);
}

// CUDA backend: out[b, 0..n) from the packed rows spec[b, 0..n/2]; irfft_pow2_supported(n,
// sizeof(T)). scale multiplies every Z_k when scaled (fl(1/n) for the normalized inverse).
template <class T>
void irfft_pow2_cuda(const T* spec, uint64_t batch, uint64_t n, bool scaled, T scale, T* out,
                     CUstream_st* stream, const char* op);

}  // namespace tlrt::kernels
