// The inverse real FFT of one power-of-two length n (irfft_pow2_supported: 256 <= n <= 8192, 4096
// for float64) in one kernel, without cuFFT: a block reads a packed spectrum row once and writes
// its n reals once.
//
// For even n and h = n/2, the reals x of the Hermitian inverse of X (bins 0..h) satisfy
// x_2j + i x_2j+1 = sum_k Z_k e^{2 pi i j k / h}, k = 0..h-1, with
//   Z_k = E_k + i w^k D_k,  E_k = X_k + conj(X_{h-k}),  D_k = X_k - conj(X_{h-k}),  w = e^{2 pi i /
//   n},
// and the imaginary parts of X_0 and X_h taken as 0 (SPEC-ops 12's endpoint rule). The length-h
// complex inverse runs as Stockham passes in shared memory: a first pass of radix 2, 4 or 8, then
// passes of radix 8 or 16 (the plan, pow2_later_log_radix). The pass with sub-transform size ns
// takes butterfly j (0 <= j < h/R) from positions j + r h/R, multiplies input r by
// e^{2 pi i (j mod ns) r / (ns R)} and writes output r to (j - j mod ns) R + j mod ns + r ns.
// Twiddles are the values of one table of e^{pi i k / h}, 0 <= k < h, built per block in binary64
// and rounded once to the dtype (each pass reads its own copy of the entries it needs,
// pass_twiddle_offset). The helpers below are the kernel's arithmetic, shared with the host model
// of tests/fft_pow2_test.cpp.
#pragma once

#include <cstdint>

#include "common/host_device.h"

struct CUstream_st;

namespace tlrt::kernels {

constexpr uint64_t kPow2InverseMin = 256;
constexpr uint64_t kPow2InverseMax = 8192;

// The Stockham passes of a length-h transform, h = 2^log_h, under the plan `later` (3 or 4): a
// first pass (sub-transform size ns = 1) of radix 2^first_pass_log_radix(log_h, later), then passes
// of radix 2^later with ns = 2^l, l growing by later. Radix 8 (later = 3) takes every length; radix
// 16 (later = 4) the lengths with log2 h mod 4 != 0, and saves a pass where radix16_saves_a_pass:
// h = 1024 as 2 + 4 + 4 instead of 1 + 3 + 3 + 3, h = 2048 as 3 + 4 + 4 instead of 2 + 3 + 3 + 3.
TLRT_HOST_DEVICE constexpr int first_pass_log_radix(int log_h, int later) {
  return log_h % later == 0 ? 3 : log_h % later;
}
TLRT_HOST_DEVICE constexpr int pow2_pass_count(int log_h, int later) {
  return 1 + (log_h - first_pass_log_radix(log_h, later)) / later;
}
TLRT_HOST_DEVICE constexpr bool radix16_saves_a_pass(int log_h) {
  return log_h % 4 != 0 && pow2_pass_count(log_h, 4) < pow2_pass_count(log_h, 3);
}

// The plan of a length and dtype: radix 16 where it saves a pass and its block (one thread a
// radix-16 butterfly, h / 16) has at least 64 threads in float32 and 128 in float64, radix 8
// otherwise. Radix 16 moves the row through shared memory once less; float64 blocks of 64 threads
// (244 registers, three an SM for their shared memory) leave too few warps resident and are
// slower than radix 8 (docs/BENCH.md). The plan depends on nothing else, so neither do the bits
// of a row.
TLRT_HOST_DEVICE constexpr int pow2_later_log_radix(int log_h, uint64_t element_bytes) {
  return radix16_saves_a_pass(log_h) && log_h >= (element_bytes == 4 ? 10 : 11) ? 4 : 3;
}

// A block keeps the twiddles of pass (ns, R) in a table of its own, (R - 1) ns entries, entry
// (r - 1) ns + m holding e^{2 pi i m r / (ns R)}: consecutive butterflies read consecutive entries
// (the first pass's entries are all 1 and go unread). This is the offset of the pass with
// sub-transform size 2^log_ns in the concatenation of those tables, in pass order; under either
// plan pass_twiddle_offset(log_h, later, log_h) = h - 1 is the length of the whole.
TLRT_HOST_DEVICE constexpr uint32_t pass_twiddle_offset(int log_h, int later, int log_ns) {
  uint32_t offset = 0;
  for (int l = 0, lr = first_pass_log_radix(log_h, later); l < log_ns; l += lr, lr = later) {
    offset += ((uint32_t{1} << lr) - 1) << l;
  }
  return offset;
}

// Shared memory of a block for a length-n inverse: the table of e^{pi i k / h} (h entries), the
// passes' twiddle tables (h - 1 entries under either plan) and the row of h complex values with one
// padding entry per 128 bytes (so that the strided writes of the early passes spread over the
// banks).
constexpr uint64_t irfft_pow2_shared_bytes(uint64_t n, uint64_t element_bytes) {
  const uint64_t h = n / 2, cplx = 2 * element_bytes;
  return (h + (h - 1) + h + h * cplx / 128) * cplx;
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

// The first pass (radix R0 = 2^first_pass_log_radix(log h, later), ns = 1, B = h / R0 butterflies)
// takes its inputs straight from the spectrum. Input r of butterfly j is Z_k, k = j + r B, formed
// from X_k and X_{h-k}, and h - k is input R0-1-r of butterfly B - j (j != 0). So butterflies pair
// up: j with first_pass_partner(j) for 0 <= j < B/2, 0 with B/2, each pair's 2 R0 inputs formed
// from the same 2 R0 spectrum values (and X_h for butterfly 0).
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

// The inverse DFT of R = 2, 4, 8 or 16 points, y_q = sum_r v_r e^{2 pi i r q / R}, on inputs
// already multiplied by their twiddles. Radix 8 is a radix-2 level (pairs r, r + 4), the
// differences multiplied by e^{2 pi i r / 8} (r = 2: times i, exact; r = 1, 3: sums and
// differences of the parts times fl(sqrt(2)/2)), then two radix-4 butterflies giving the even and
// the odd outputs. Radix 16 is four radix-4 butterflies over the inputs q, q + 4, q + 8, q + 12,
// their output k times e^{2 pi i q k / 16} (times_e16), then four radix-4 butterflies over the
// four results of each k, whose output p is y_{k + 4 p}.
template <class T>
TLRT_HOST_DEVICE constexpr T cos_pi8() {
  return static_cast<T>(0.92387953251128675612818318939678828682L);
}
template <class T>
TLRT_HOST_DEVICE constexpr T sin_pi8() {
  return static_cast<T>(0.38268343236508977172845998403039886676L);
}
// a e^{2 pi i m / 16} for 0 < m < 16 with m = q k (q, k < 4): i, e^{i pi/4}, e^{3 i pi/4} as in
// radix 8, the others as products with fl(cos pi/8), fl(sin pi/8).
template <class T, int M>
TLRT_HOST_DEVICE Cplx<T> times_e16(Cplx<T> a) {
  constexpr T c = half_sqrt2<T>(), c8 = cos_pi8<T>(), s8 = sin_pi8<T>();
  if constexpr (M == 1) return {a.re * c8 - a.im * s8, a.re * s8 + a.im * c8};
  if constexpr (M == 2) return {(a.re - a.im) * c, (a.re + a.im) * c};
  if constexpr (M == 3) return {a.re * s8 - a.im * c8, a.re * c8 + a.im * s8};
  if constexpr (M == 4) return times_i(a);
  if constexpr (M == 6) return {-(a.re + a.im) * c, (a.re - a.im) * c};
  if constexpr (M == 9) return {a.im * s8 - a.re * c8, -(a.re * s8 + a.im * c8)};
  static_assert(M == 1 || M == 2 || M == 3 || M == 4 || M == 6 || M == 9, "q k of radix 16");
  return a;
}

template <class T, int R>
TLRT_HOST_DEVICE void radix_butterfly(Cplx<T> (&v)[R]) {
  static_assert(R == 2 || R == 4 || R == 8 || R == 16, "radix 2, 4, 8 or 16");
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
  } else if constexpr (R == 8) {
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
  } else {
    Cplx<T> a[4][4];  // a[q][k]: output k of the radix-4 butterfly over inputs q + 4 r
    for (int q = 0; q < 4; ++q) {
      for (int r = 0; r < 4; ++r) a[q][r] = v[q + 4 * r];
      radix_butterfly<T, 4>(a[q]);
    }
    a[1][1] = times_e16<T, 1>(a[1][1]);
    a[1][2] = times_e16<T, 2>(a[1][2]);
    a[1][3] = times_e16<T, 3>(a[1][3]);
    a[2][1] = times_e16<T, 2>(a[2][1]);
    a[2][2] = times_e16<T, 4>(a[2][2]);
    a[2][3] = times_e16<T, 6>(a[2][3]);
    a[3][1] = times_e16<T, 3>(a[3][1]);
    a[3][2] = times_e16<T, 6>(a[3][2]);
    a[3][3] = times_e16<T, 9>(a[3][3]);
    for (int k = 0; k < 4; ++k) {
      Cplx<T> b[4] = {a[0][k], a[1][k], a[2][k], a[3][k]};
      radix_butterfly<T, 4>(b);
      for (int p = 0; p < 4; ++p) v[k + 4 * p] = b[p];
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
