// Configured binary formats (SPEC-runtime 10.8): TLBinary<E, F, Bias, Encoding> stores one word of
// 1 + E + F bits in ceil((1 + E + F) / 8) bytes and implements + - * /, negation and the
// comparisons with round-to-nearest-even and gradual underflow. The generic arithmetic works on
// the fields in unsigned integer limbs of 2F + 16 bits; formats whose word fits 64 bits (F <= 58,
// E <= 28, |Bias| <= 2^29) compute on the word itself in one 32- or 64-bit integer, special
// values included, with the same bits (division with F > 30 stays generic). The same text is
// compiled by NVRTC (registered in memory as "torchlean_binary.cuh", SPEC-runtime 10.4) and as host
// C++17, so the reference backend and the tests run the identical arithmetic. Device code runs the
// hardware instruction for binary16, bfloat16, binary32 and binary64 and replaces only its NaN
// results by the format's NaN. Other formats with F <= 10 compute on the device through one
// binary32 operation and one rounding to the format, branch-free, with the same bits (sums for
// E <= 7 and any bias; products and quotients where 2 (1 - Bias - F) >= -126 and
// 2 (2^E - Bias) <= 128); the host compiles that path too and takes it only where
// TORCHLEAN_BINARY_HOST_F32 is defined. Defining TORCHLEAN_BINARY_SOFTWARE keeps every format in
// integer software.
//
// Self-contained on purpose: no #include, nothing from a standard library.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TLBINARY_HD __host__ __device__
#else
#define TLBINARY_HD
#endif

#if defined(__CUDA_ARCH__) && !defined(TORCHLEAN_BINARY_SOFTWARE)
#define TLBINARY_HARDWARE 1
#else
#define TLBINARY_HARDWARE 0
#endif

// The binary32-assisted arithmetic (Format's *_f32 paths) runs in device code; the host compiles
// it too (its float arithmetic must then be IEEE binary32, round to nearest, subnormals kept) but
// takes it only where TORCHLEAN_BINARY_HOST_F32 is defined.
#if !defined(TORCHLEAN_BINARY_SOFTWARE) && \
    (defined(__CUDA_ARCH__) || defined(TORCHLEAN_BINARY_HOST_F32))
#define TLBINARY_F32 1
#else
#define TLBINARY_F32 0
#endif

namespace tlbinary {

using u64 = unsigned long long;

TLBINARY_HD inline int clz64(u64 x) {  // x != 0
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return __builtin_clzll(x);
#endif
}

TLBINARY_HD inline int clz32(unsigned x) {  // x != 0
#if defined(__CUDA_ARCH__)
  return __clz(static_cast<int>(x));
#else
  return __builtin_clz(x);
#endif
}

// High half of a 64 x 64 bit product.
TLBINARY_HD inline u64 mulhi64(u64 a, u64 b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#elif defined(__SIZEOF_INT128__)
  __extension__ using u128 = unsigned __int128;
  return static_cast<u64>((static_cast<u128>(a) * b) >> 64);
#else
  const u64 al = a & 0xffffffffULL, ah = a >> 32, bl = b & 0xffffffffULL, bh = b >> 32;
  const u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  const u64 mid = (ll >> 32) + (lh & 0xffffffffULL) + (hl & 0xffffffffULL);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
#endif
}

// High half of a 32 x 32 bit product.
TLBINARY_HD inline unsigned mulhi32(unsigned a, unsigned b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return static_cast<unsigned>((static_cast<u64>(a) * b) >> 32);
#endif
}

// IEEE binary32 on bit patterns: one correctly rounded operation each (round to nearest even,
// subnormal operands and results kept whatever the compiler's flush-to-zero setting: explicit PTX
// without .ftz on the device).
TLBINARY_HD inline float f32_of_bits(unsigned u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
#endif
}
TLBINARY_HD inline unsigned bits_of_f32(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  unsigned u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
#endif
}
TLBINARY_HD inline float f32_add(float x, float y) {
#if defined(__CUDA_ARCH__)
  float z;
  asm("add.rn.f32 %0, %1, %2;" : "=f"(z) : "f"(x), "f"(y));
  return z;
#else
  return x + y;
#endif
}
TLBINARY_HD inline float f32_sub(float x, float y) {
#if defined(__CUDA_ARCH__)
  float z;
  asm("sub.rn.f32 %0, %1, %2;" : "=f"(z) : "f"(x), "f"(y));
  return z;
#else
  return x - y;
#endif
}
TLBINARY_HD inline float f32_mul(float x, float y) {
#if defined(__CUDA_ARCH__)
  float z;
  asm("mul.rn.f32 %0, %1, %2;" : "=f"(z) : "f"(x), "f"(y));
  return z;
#else
  return x * y;
#endif
}
TLBINARY_HD inline float f32_div(float x, float y) {
#if defined(__CUDA_ARCH__)
  float z;
  asm("div.rn.f32 %0, %1, %2;" : "=f"(z) : "f"(x), "f"(y));
  return z;
#else
  return x / y;
#endif
}
TLBINARY_HD inline float f32_abs(float x) {
#if defined(__CUDA_ARCH__)
  float z;
  asm("abs.f32 %0, %1;" : "=f"(z) : "f"(x));
  return z;
#else
  return __builtin_fabsf(x);
#endif
}
// 1 / y, exact where y is 0, an infinity or a NaN (device: the approximate reciprocal).
TLBINARY_HD inline float f32_rcp_special(float y) {
#if defined(__CUDA_ARCH__)
  float z;
  asm("rcp.approx.f32 %0, %1;" : "=f"(z) : "f"(y));
  return z;
#else
  return 1.0f / y;
#endif
}
// x * 2^K by one or two multiplications by normal powers of two (both up or both down, so that the
// intermediate is exact whenever the result is).
template <int K>
TLBINARY_HD inline float f32_scale(float x) {
  static_assert(K >= -252 && K <= 254, "f32_scale: 2^K out of reach");
  if constexpr (K == 0) {
    return x;
  } else if constexpr (K > 127) {
    return f32_mul(f32_mul(x, f32_of_bits(254u << 23)),
                   f32_of_bits(static_cast<unsigned>(K) << 23));
  } else if constexpr (K < -126) {
    return f32_mul(f32_mul(x, f32_of_bits(1u << 23)),
                   f32_of_bits(static_cast<unsigned>(K + 126 + 127) << 23));
  } else {
    return f32_mul(x, f32_of_bits(static_cast<unsigned>(K + 127) << 23));
  }
}

// The machine word of the word-level arithmetic (Format's fast paths), with its helpers.
template <bool Narrow>
struct Machine {
  using W = u64;
  static constexpr int kBits = 64;
  TLBINARY_HD static int clz(W x) { return clz64(x); }
  TLBINARY_HD static W mulhi(W a, W b) { return mulhi64(a, b); }
};
template <>
struct Machine<true> {
  using W = unsigned;
  static constexpr int kBits = 32;
  TLBINARY_HD static int clz(W x) { return clz32(x); }
  TLBINARY_HD static W mulhi(W a, W b) { return mulhi32(a, b); }
};

template <class T>
TLBINARY_HD inline T min_of(T a, T b) {
  return a < b ? a : b;
}
template <class T>
TLBINARY_HD inline T max_of(T a, T b) {
  return a > b ? a : b;
}

// An unsigned integer of at least Bits bits in 64-bit limbs, least significant first. One limb
// (2F + 16 <= 64, every format up to binary32) takes the scalar branches of `if constexpr`.
template <int Bits>
struct UInt {
  static constexpr int N = (Bits + 63) / 64;
  u64 w[N];
};

template <int Bits>
TLBINARY_HD inline UInt<Bits> zero_uint() {
  UInt<Bits> r;
  for (int i = 0; i < UInt<Bits>::N; ++i) r.w[i] = 0;
  return r;
}

template <int Bits>
TLBINARY_HD inline bool is_zero(const UInt<Bits>& x) {
  if constexpr (UInt<Bits>::N == 1) {
    return x.w[0] == 0;
  } else {
    for (int i = 0; i < UInt<Bits>::N; ++i)
      if (x.w[i] != 0) return false;
    return true;
  }
}

template <int Bits>
TLBINARY_HD inline long long bit_length(const UInt<Bits>& x) {
  if constexpr (UInt<Bits>::N == 1) {
    return x.w[0] == 0 ? 0 : 64 - clz64(x.w[0]);
  } else {
    for (int i = UInt<Bits>::N - 1; i >= 0; --i)
      if (x.w[i] != 0) return 64LL * i + 64 - clz64(x.w[i]);
    return 0;
  }
}

template <int Bits>
TLBINARY_HD inline bool test_bit(const UInt<Bits>& x, long long k) {
  if (k < 0 || k >= 64LL * UInt<Bits>::N) return false;
  return ((x.w[k / 64] >> (k % 64)) & 1ULL) != 0;
}

// Whether any bit below position k is set.
template <int Bits>
TLBINARY_HD inline bool any_below(const UInt<Bits>& x, long long k) {
  if (k <= 0) return false;
  if constexpr (UInt<Bits>::N == 1) {
    return k >= 64 ? x.w[0] != 0 : (x.w[0] & ((1ULL << k) - 1ULL)) != 0;
  } else {
    for (int i = 0; i < UInt<Bits>::N; ++i) {
      const long long low = 64LL * i;
      if (k >= low + 64) {
        if (x.w[i] != 0) return true;
      } else {
        const long long n = k - low;
        if (n > 0 && (x.w[i] & ((1ULL << n) - 1ULL)) != 0) return true;
        return false;
      }
    }
    return false;
  }
}

template <int Bits>
TLBINARY_HD inline UInt<Bits> shift_left(const UInt<Bits>& x, long long k) {
  constexpr int N = UInt<Bits>::N;
  if constexpr (N == 1) {
    UInt<Bits> r;
    r.w[0] = k >= 64 ? 0 : x.w[0] << k;
    return r;
  } else {
    UInt<Bits> r = zero_uint<Bits>();
    if (k >= 64LL * N) return r;
    const int limbs = static_cast<int>(k / 64), bits = static_cast<int>(k % 64);
    for (int i = N - 1; i >= limbs; --i) {
      u64 v = x.w[i - limbs] << bits;
      if (bits != 0 && i - limbs - 1 >= 0) v |= x.w[i - limbs - 1] >> (64 - bits);
      r.w[i] = v;
    }
    return r;
  }
}

template <int Bits>
TLBINARY_HD inline UInt<Bits> shift_right(const UInt<Bits>& x, long long k) {
  constexpr int N = UInt<Bits>::N;
  if constexpr (N == 1) {
    UInt<Bits> r;
    r.w[0] = k >= 64 ? 0 : x.w[0] >> k;
    return r;
  } else {
    UInt<Bits> r = zero_uint<Bits>();
    if (k >= 64LL * N) return r;
    const int limbs = static_cast<int>(k / 64), bits = static_cast<int>(k % 64);
    for (int i = 0; i + limbs < N; ++i) {
      u64 v = x.w[i + limbs] >> bits;
      if (bits != 0 && i + limbs + 1 < N) v |= x.w[i + limbs + 1] << (64 - bits);
      r.w[i] = v;
    }
    return r;
  }
}

// Shift right by k and set bit 0 when a nonzero bit was shifted out (sticky).
template <int Bits>
TLBINARY_HD inline UInt<Bits> shift_right_jam(const UInt<Bits>& x, long long k) {
  if (k <= 0) return x;
  UInt<Bits> r = shift_right(x, k);
  if (any_below(x, k)) r.w[0] |= 1ULL;
  return r;
}

template <int Bits>
TLBINARY_HD inline int compare(const UInt<Bits>& a, const UInt<Bits>& b) {
  for (int i = UInt<Bits>::N - 1; i >= 0; --i)
    if (a.w[i] != b.w[i]) return a.w[i] > b.w[i] ? 1 : -1;
  return 0;
}

template <int Bits>
TLBINARY_HD inline UInt<Bits> add(const UInt<Bits>& a, const UInt<Bits>& b) {
  UInt<Bits> r;
  u64 carry = 0;
  for (int i = 0; i < UInt<Bits>::N; ++i) {
    const u64 s = a.w[i] + b.w[i];
    const u64 c1 = s < a.w[i] ? 1ULL : 0ULL;
    r.w[i] = s + carry;
    carry = c1 + (r.w[i] < s ? 1ULL : 0ULL);
  }
  return r;
}

// a - b for a >= b.
template <int Bits>
TLBINARY_HD inline UInt<Bits> sub(const UInt<Bits>& a, const UInt<Bits>& b) {
  UInt<Bits> r;
  u64 borrow = 0;
  for (int i = 0; i < UInt<Bits>::N; ++i) {
    const u64 d = a.w[i] - b.w[i];
    const u64 b1 = a.w[i] < b.w[i] ? 1ULL : 0ULL;
    r.w[i] = d - borrow;
    borrow = b1 + (d < borrow ? 1ULL : 0ULL);
  }
  return r;
}

template <int Bits>
TLBINARY_HD inline UInt<Bits> add_one(const UInt<Bits>& a) {
  UInt<Bits> r = a;
  for (int i = 0; i < UInt<Bits>::N; ++i) {
    r.w[i] += 1ULL;
    if (r.w[i] != 0) break;
  }
  return r;
}

// The product modulo 2^(64 N); callers keep it below that (two (F + 1)-bit significands).
template <int Bits>
TLBINARY_HD inline UInt<Bits> mul(const UInt<Bits>& a, const UInt<Bits>& b) {
  constexpr int N = UInt<Bits>::N;
  if constexpr (N == 1) {
    UInt<Bits> r;
    r.w[0] = a.w[0] * b.w[0];
    return r;
  } else {
    UInt<Bits> r = zero_uint<Bits>();
    int na = N, nb = N;
    while (na > 0 && a.w[na - 1] == 0) --na;
    while (nb > 0 && b.w[nb - 1] == 0) --nb;
    for (int i = 0; i < na; ++i) {
      u64 carry = 0;
      for (int j = 0; j < nb && i + j < N; ++j) {
        const u64 lo = a.w[i] * b.w[j];
        const u64 hi = mulhi64(a.w[i], b.w[j]);
        u64 s = r.w[i + j] + lo;
        u64 c = s < lo ? 1ULL : 0ULL;
        s += carry;
        c += s < carry ? 1ULL : 0ULL;
        r.w[i + j] = s;
        carry = hi + c;  // cannot overflow: hi <= 2^64 - 2
      }
      if (i + nb < N) r.w[i + nb] = carry;
    }
    return r;
  }
}

// Exact quotient and remainder of x / y (y != 0): restoring long division, one quotient bit per
// step, the partial remainder kept in the limbs that the divisor needs.
template <int Bits>
TLBINARY_HD inline UInt<Bits> divide(const UInt<Bits>& x, const UInt<Bits>& y, bool& inexact) {
  constexpr int N = UInt<Bits>::N;
  if constexpr (N == 1) {
    UInt<Bits> q;
    q.w[0] = x.w[0] / y.w[0];
    inexact = x.w[0] % y.w[0] != 0;
    return q;
  } else {
    UInt<Bits> q = zero_uint<Bits>();
    const long long lx = bit_length(x), ly = bit_length(y);
    if (lx < ly) {
      inexact = lx != 0;
      return q;
    }
    // The remainder stays below 2y < 2^(ly + 1): limbs [0, used).
    const int used = static_cast<int>((ly + 1 + 63) / 64);
    // Start with the top ly - 1 bits of x (smaller than y: their quotient bits are zero).
    UInt<Bits> rem = shift_right(x, lx - (ly - 1));
    for (long long k = lx - ly; k >= 0; --k) {
      // rem = 2 rem + bit k of x
      for (int i = used - 1; i > 0; --i) rem.w[i] = (rem.w[i] << 1) | (rem.w[i - 1] >> 63);
      rem.w[0] = (rem.w[0] << 1) | (test_bit(x, k) ? 1ULL : 0ULL);
      int order = 0;
      for (int i = used - 1; i >= 0; --i)
        if (rem.w[i] != y.w[i]) {
          order = rem.w[i] > y.w[i] ? 1 : -1;
          break;
        }
      if (order >= 0) {
        u64 borrow = 0;
        for (int i = 0; i < used; ++i) {
          const u64 d = rem.w[i] - y.w[i];
          const u64 b1 = rem.w[i] < y.w[i] ? 1ULL : 0ULL;
          rem.w[i] = d - borrow;
          borrow = b1 + (d < borrow ? 1ULL : 0ULL);
        }
        q.w[k / 64] |= 1ULL << (k % 64);
      }
    }
    inexact = !is_zero(rem);
    return q;
  }
}

enum class Op { add, mul, div };

// The arithmetic of one format on its fields: sign, biased exponent and fraction (F bits).
template <int E, int F, long long Bias, int Encoding>
struct Format {
  static_assert(E >= 1 && E <= 30, "TLBinary: 1 <= E <= 30");
  static_assert(F >= 1 && F <= 4096, "TLBinary: 1 <= F <= 4096");
  static_assert(Encoding >= 0 && Encoding <= 3, "TLBinary: encoding 0, 1, 2 or 3");
  static constexpr int kBytes = (1 + E + F + 7) / 8;
  static constexpr int kLimbBits = 2 * F + 16;
  static constexpr long long kAll = (1LL << E) - 1;  // exponent all ones
  static constexpr bool kWord = 1 + E + F <= 64;     // the whole word fits one u64
  using U = UInt<kLimbBits>;

  struct Fields {
    U frac;  // the F fraction bits (the hidden bit is added by significand())
    long long exp;
    bool neg;
  };

  TLBINARY_HD static u64 word_of(const unsigned char* p) {
    u64 w = 0;
    for (int i = 0; i < kBytes; ++i) w |= static_cast<u64>(p[i]) << (8 * i);
    return w;
  }

  TLBINARY_HD static Fields load(const unsigned char* p) {
    Fields f;
    if constexpr (kWord) {
      const u64 w = word_of(p);
      f.frac.w[0] = w & ((1ULL << F) - 1ULL);
      if constexpr (U::N > 1)
        for (int i = 1; i < U::N; ++i) f.frac.w[i] = 0;
      f.exp = static_cast<long long>((w >> F) & static_cast<u64>(kAll));
      f.neg = ((w >> (E + F)) & 1ULL) != 0;
    } else {
      f.frac = zero_uint<kLimbBits>();
      constexpr int fbytes = (F + 7) / 8;
      for (int i = 0; i < fbytes; ++i) f.frac.w[i / 8] |= static_cast<u64>(p[i]) << (8 * (i % 8));
      if constexpr (F % 64 != 0) f.frac.w[F / 64] &= (1ULL << (F % 64)) - 1ULL;
      u64 e = 0;  // bytes F / 8 ... (F + E - 1) / 8 hold the exponent: at most 5 of them
      for (int i = F / 8; i <= (F + E - 1) / 8; ++i)
        e |= static_cast<u64>(p[i]) << (8 * (i - F / 8));
      f.exp = static_cast<long long>((e >> (F % 8)) & static_cast<u64>(kAll));
      f.neg = ((p[(E + F) / 8] >> ((E + F) % 8)) & 1) != 0;
    }
    return f;
  }

  TLBINARY_HD static void store(unsigned char* p, bool neg, long long exp, const U& frac) {
    if constexpr (kWord) {
      const u64 w = (frac.w[0] & ((1ULL << F) - 1ULL)) | (static_cast<u64>(exp) << F) |
                    (static_cast<u64>(neg ? 1 : 0) << (E + F));
      for (int i = 0; i < kBytes; ++i) p[i] = static_cast<unsigned char>(w >> (8 * i));
    } else {
      for (int i = 0; i < kBytes; ++i) p[i] = 0;
      for (int i = 0; i < F / 8; ++i)
        p[i] = static_cast<unsigned char>(frac.w[i / 8] >> (8 * (i % 8)));
      if constexpr (F % 8 != 0)
        p[F / 8] = static_cast<unsigned char>((frac.w[F / 64] >> (8 * ((F / 8) % 8))) &
                                              ((1U << (F % 8)) - 1U));
      const u64 e = static_cast<u64>(exp) << (F % 8);
      for (int i = F / 8; i <= (F + E - 1) / 8; ++i)
        p[i] |= static_cast<unsigned char>(e >> (8 * (i - F / 8)));
      if (neg) p[(E + F) / 8] |= static_cast<unsigned char>(1U << ((E + F) % 8));
    }
  }

  // Whether bits [0, F) are all ones (bits from F up, such as a hidden bit, are ignored).
  TLBINARY_HD static bool frac_all_ones(const U& frac) {
    if constexpr (U::N == 1) {
      constexpr u64 mask = (1ULL << F) - 1ULL;
      return (frac.w[0] & mask) == mask;
    } else {
      for (int i = 0; i < F / 64; ++i)
        if (frac.w[i] != ~0ULL) return false;
      if constexpr (F % 64 != 0) {
        constexpr u64 mask = (1ULL << (F % 64)) - 1ULL;
        return (frac.w[F / 64] & mask) == mask;
      }
      return true;
    }
  }

  TLBINARY_HD static bool is_nan(const Fields& f) {
    if constexpr (Encoding == 0) return f.exp == kAll && !is_zero(f.frac);
    if constexpr (Encoding == 1) return f.exp == kAll && frac_all_ones(f.frac);
    if constexpr (Encoding == 2) return f.neg && f.exp == 0 && is_zero(f.frac);
    return false;
  }
  TLBINARY_HD static bool is_signalling(const Fields& f) {
    if constexpr (Encoding == 0) return is_nan(f) && !test_bit(f.frac, F - 1);
    return false;
  }
  TLBINARY_HD static bool is_inf(const Fields& f) {
    if constexpr (Encoding == 0) return f.exp == kAll && is_zero(f.frac);
    return false;
  }
  TLBINARY_HD static bool is_zero_value(const Fields& f) {
    return f.exp == 0 && is_zero(f.frac) && !is_nan(f);
  }

  TLBINARY_HD static U significand(const Fields& f) {
    U s = f.frac;
    if (f.exp != 0) s.w[F / 64] |= 1ULL << (F % 64);
    return s;
  }
  TLBINARY_HD static long long scale(const Fields& f) {
    return (f.exp != 0 ? f.exp : 1) - Bias - F;
  }

  // Results written into p.
  TLBINARY_HD static void put_zero(unsigned char* p, bool neg) {
    store(p, Encoding == 2 ? false : neg, 0, zero_uint<kLimbBits>());
  }
  TLBINARY_HD static void put_all_ones(unsigned char* p, bool neg) {
    U ones = zero_uint<kLimbBits>();
    for (int i = 0; i < F / 64; ++i) ones.w[i] = ~0ULL;
    if constexpr (F % 64 != 0) ones.w[F / 64] = (1ULL << (F % 64)) - 1ULL;
    store(p, neg, kAll, ones);
  }
  TLBINARY_HD static void put_inf(unsigned char* p, bool neg) {  // encoding 0 only
    store(p, neg, kAll, zero_uint<kLimbBits>());
  }
  TLBINARY_HD static void put_invalid(unsigned char* p) {
    if constexpr (Encoding == 0) {
      U f = zero_uint<kLimbBits>();
      f.w[(F - 1) / 64] = 1ULL << ((F - 1) % 64);
      store(p, false, kAll, f);
    } else if constexpr (Encoding == 1) {
      put_all_ones(p, false);
    } else if constexpr (Encoding == 2) {
      store(p, true, 0, zero_uint<kLimbBits>());
    } else {
      store(p, false, 0, zero_uint<kLimbBits>());
    }
  }
  TLBINARY_HD static void put_overflow(unsigned char* p, bool neg) {
    if constexpr (Encoding == 0) {
      put_inf(p, neg);
    } else if constexpr (Encoding == 2) {
      store(p, true, 0, zero_uint<kLimbBits>());
    } else {
      put_all_ones(p, neg);
    }
  }

  // NaN operands (10.8): a signalling first operand quieted, else a signalling second operand
  // quieted, else the first NaN, else the second. Returns false when neither is a NaN.
  TLBINARY_HD static bool pick_nan(const Fields& fa, const Fields& fb, unsigned char* r) {
    if constexpr (Encoding == 3) {
      return false;
    } else {
      const bool na = is_nan(fa), nb = is_nan(fb);
      if (!na && !nb) return false;
      Fields f = (na && is_signalling(fa)) ? fa : (nb && is_signalling(fb)) ? fb : na ? fa : fb;
      if constexpr (Encoding == 0) f.frac.w[(F - 1) / 64] |= 1ULL << ((F - 1) % 64);
      store(r, f.neg, f.exp, f.frac);
      return true;
    }
  }

  // Negation on fields: the sign flips, except encoding 2's zero and NaN.
  TLBINARY_HD static void negate_fields(Fields& f) {
    if constexpr (Encoding == 2) {
      if (f.exp == 0 && is_zero(f.frac)) return;
    }
    f.neg = !f.neg;
  }

  // Round m * 2^s (plus a sticky tail below bit 0 of m when `sticky`) to the format: nearest,
  // ties to even, gradual underflow, then the encoding's overflow rule.
  TLBINARY_HD static void round(unsigned char* p, bool neg, const U& m, long long s, bool sticky) {
    const long long length = bit_length(m);
    if (length == 0) {
      put_zero(p, neg);
      return;
    }
    constexpr long long kMinScale = 1 - Bias - F;
    long long shift = length - 1 - F;
    if (s + shift < kMinScale) shift = kMinScale - s;
    U q;
    if (shift > 0) {
      q = shift_right(m, shift);
      const bool half = test_bit(m, shift - 1);
      const bool rest = sticky || any_below(m, shift - 1);
      if (half && (rest || (q.w[0] & 1ULL) != 0)) q = add_one(q);
    } else {
      q = shift_left(m, -shift);
    }
    s += shift;
    if (test_bit(q, F + 1)) {  // rounding carried into a new bit: q is 2^(F + 1)
      q = shift_right(q, 1);
      ++s;
    }
    if (is_zero(q)) {
      put_zero(p, neg);
      return;
    }
    const bool normal = test_bit(q, F);
    const long long e = normal ? s + F + Bias : 0;
    if (e > kAll || (Encoding == 0 && e == kAll) ||
        (Encoding == 1 && e == kAll && frac_all_ones(q))) {
      put_overflow(p, neg);
      return;
    }
    store(p, neg, e, q);
  }

  // ---- the generic arithmetic: every format, every operand -------------------------------------

  // a + b; `flip` negates b first (subtraction), with encoding 2's negation rule.
  TLBINARY_HD static void generic_add(const unsigned char* a, const unsigned char* b, bool flip,
                                      unsigned char* r) {
    const Fields fa = load(a);
    Fields fb = load(b);
    if (flip) negate_fields(fb);
    if (pick_nan(fa, fb, r)) return;
    if constexpr (Encoding == 0) {
      if (is_inf(fa)) {
        if (is_inf(fb) && fa.neg != fb.neg) {
          put_invalid(r);
        } else {
          put_inf(r, fa.neg);
        }
        return;
      }
      if (is_inf(fb)) {
        put_inf(r, fb.neg);
        return;
      }
    }
    const long long sa = scale(fa), sb = scale(fb);
    const long long common = sa > sb ? sa : sb;
    // Three guard bits, the smaller operand's shifted-out bits jammed into bit 0.
    const U x = shift_right_jam(shift_left(significand(fa), 3), common - sa);
    const U y = shift_right_jam(shift_left(significand(fb), 3), common - sb);
    if (fa.neg == fb.neg) {
      round(r, fa.neg, add(x, y), common - 3, false);
      return;
    }
    const int order = compare(x, y);
    if (order == 0) {
      put_zero(r, false);  // exact cancellation (and +0 + -0) is +0
    } else if (order > 0) {
      round(r, fa.neg, sub(x, y), common - 3, false);
    } else {
      round(r, fb.neg, sub(y, x), common - 3, false);
    }
  }

  TLBINARY_HD static void generic_mul(const unsigned char* a, const unsigned char* b,
                                      unsigned char* r) {
    const Fields fa = load(a), fb = load(b);
    if (pick_nan(fa, fb, r)) return;
    const bool neg = fa.neg != fb.neg;
    if constexpr (Encoding == 0) {
      if (is_inf(fa) || is_inf(fb)) {
        if (is_zero_value(fa) || is_zero_value(fb)) {
          put_invalid(r);
        } else {
          put_inf(r, neg);
        }
        return;
      }
    }
    round(r, neg, mul(significand(fa), significand(fb)), scale(fa) + scale(fb), false);
  }

  TLBINARY_HD static void generic_div(const unsigned char* a, const unsigned char* b,
                                      unsigned char* r) {
    const Fields fa = load(a), fb = load(b);
    if (pick_nan(fa, fb, r)) return;
    const bool neg = fa.neg != fb.neg;
    if constexpr (Encoding == 0) {
      if (is_inf(fa)) {
        if (is_inf(fb)) {
          put_invalid(r);
        } else {
          put_inf(r, neg);
        }
        return;
      }
      if (is_inf(fb)) {
        put_zero(r, neg);
        return;
      }
    }
    const bool za = is_zero_value(fa);
    if (is_zero_value(fb)) {
      if (za) {
        put_invalid(r);
      } else {
        put_overflow(r, neg);
      }
      return;
    }
    if (za) {
      put_zero(r, neg);
      return;
    }
    const U x = significand(fa), y = significand(fb);
    // Scale the dividend so that the quotient has at least F + 2 bits (one below the rounding
    // position); the remainder is the sticky tail. x << k has at most 2F + 4 bits.
    const long long k = F + 3 + bit_length(y) - bit_length(x);
    bool inexact = false;
    const U q = divide(shift_left(x, k), y, inexact);
    round(r, neg, q, scale(fa) - scale(fb) - k, inexact);
  }

  // ---- word-level arithmetic --------------------------------------------------------------------
  // Formats whose word fits a machine word of B = 32 or 64 bits with F <= B - 6 (three guard bits
  // and a carry for addition), E <= 28 and |Bias| <= 2^29 (exponent sums fit an int) compute on
  // the word itself: finite operands (zeros and subnormals included) on the main path, NaN and
  // infinite operands and division by zero on a short branch that applies the table of 10.8 to
  // the words. The results are the generic path's bits.

  static constexpr int kMachineBits = 1 + E + F <= 32 && F <= 26 ? 32 : 64;
  static constexpr bool kFast = 1 + E + F <= kMachineBits && F <= kMachineBits - 6 && E <= 28 &&
                                Bias >= -(1LL << 29) && Bias <= (1LL << 29);
  using M = Machine<kMachineBits == 32>;
  using W = typename M::W;
  static constexpr int kB = M::kBits;
  static constexpr W kSign = W(1) << ((E + F) % kB);
  static constexpr W kMag = kSign - 1;  // the bits below the sign
  static constexpr W kHid = W(1) << (F % kB);
  static constexpr W kTop = static_cast<W>(kAll) << (F % kB);  // exponent all ones, fraction 0
  // The magnitudes of finite words lie below kFinite (encoding 0: the infinity; encoding 1: the
  // NaN; encodings 2 and 3: every magnitude, encoding 2's NaN being the word kSign).
  static constexpr W kFinite = Encoding == 0 ? kTop : Encoding == 1 ? kMag : kMag + 1;
  // Significands reach round_word with their leading bit at kT and kR = kT - F >= 4 bits below
  // the last kept one; kT + 1 < B leaves room for the rounding increment.
  static constexpr int kT = kB - 2;
  static constexpr int kR = kT - F;

  TLBINARY_HD static W load_word(const unsigned char* p) {
    if constexpr (kB == 64 && kBytes > 4) {  // two 32-bit halves: byte permutes on the device
      unsigned lo = 0, hi = 0;
      for (int i = 0; i < 4; ++i) lo |= static_cast<unsigned>(p[i]) << (8 * i);
      for (int i = 4; i < kBytes; ++i) hi |= static_cast<unsigned>(p[i]) << (8 * (i - 4));
      return (static_cast<W>(hi) << 32) | lo;
    } else {
      W w = 0;
      for (int i = 0; i < kBytes; ++i) w |= static_cast<W>(p[i]) << (8 * i);
      return w;
    }
  }
  TLBINARY_HD static void store_word(unsigned char* p, W w) {
    for (int i = 0; i < kBytes; ++i) p[i] = static_cast<unsigned char>(w >> (8 * i));
  }

  // Whether a or b is a NaN or an infinity. A magnitude compares like its value among the
  // finite words of every encoding, and the specials of encodings 0 and 1 sit above them all.
  TLBINARY_HD static bool any_special(W a, W b) {
    if constexpr (Encoding == 0) return max_of(a & kMag, b & kMag) >= kTop;
    if constexpr (Encoding == 1) return max_of(a & kMag, b & kMag) == kMag;
    if constexpr (Encoding == 2) return a == kSign || b == kSign;
    return false;
  }

  // Whether both magnitudes are normal and finite (subtracting kHid wraps zero and subnormal
  // magnitudes around to the top): the common case, which needs neither the generic path nor
  // normalisation.
  TLBINARY_HD static bool both_normal(W ma, W mb) {
    if constexpr (kFinite > kHid) {
      return max_of(ma - kHid, mb - kHid) < kFinite - kHid;
    } else {
      return false;  // E = 1, encoding 0: no normal finite values
    }
  }

  // The significand of a normal word (its hidden bit and fraction), with the hidden bit at bit
  // Top.
  template <int Top>
  TLBINARY_HD static W significand_at(W w) {
    return ((w & (kHid - 1)) << (Top - F)) + (W(1) << Top);
  }

  // The signed zero of a result (encoding 2 has +0 only).
  TLBINARY_HD static W zero_word(W sign) { return Encoding == 2 ? W(0) : sign; }

  // The biased exponent max(exp, 1) and the significand (hidden bit included) of a magnitude.
  TLBINARY_HD static int unpack(W mag, W& sig) {
    const int e = max_of(static_cast<int>(mag >> F), 1);
    sig = mag - (static_cast<W>(e - 1) << F);
    return e;
  }
  // A subnormal significand (nonzero) moved up to the hidden bit; the exponent goes below 1.
  TLBINARY_HD static void normalise(W& sig, int& e) {
    const int lz = M::clz(sig) - (kB - 1 - F);
    sig <<= lz;
    e -= lz;
  }

  // Shift right by s (0 <= s < B), any bit shifted out set into bit 0.
  TLBINARY_HD static W shift_jam(W m, int s) {
    const W t = m >> s;
    return t | ((t << s) != m ? W(1) : W(0));
  }

  // Round m * 2^(e - Bias - kT) to the format (m's leading bit at kT, a sticky tail jammed into
  // its low bits): nearest, ties to even, gradual underflow, then the encoding's overflow rule.
  // Exponents below 1 only reach here with Tiny, above 2^E with Huge. The fields are packed
  // as ((e - 1) << F) plus the rounded significand, so that a carry out of the significand (and a
  // subnormal rounding up to the hidden bit) moves into the exponent.
  template <bool Tiny, bool Huge>
  TLBINARY_HD static W round_word(W sign, int e, W m) {
    if constexpr (Tiny) {
      if (e < 1) {
        m = shift_jam(m, min_of(1 - e, kB - 1));
        e = 1;
      }
    }
    const W q = (m + ((W(1) << (kR - 1)) - 1) + ((m >> kR) & 1)) >> kR;
    if constexpr (Huge) e = min_of(e, static_cast<int>(kAll) + 1);  // beyond it, overflow anyway
    const W mag = (static_cast<W>(e - 1) << F) + q;
    // Overflow: encoding 0 reaches the infinity; encodings 1 and 3 stop at the all-ones
    // magnitude (the NaN of the result's sign, the largest finite value); encoding 2 gives its
    // NaN and has no -0.
    if constexpr (Encoding == 0) {
      return sign | min_of(mag, kTop);
    } else if constexpr (Encoding == 2) {
      return mag > kMag ? kSign : mag == 0 ? W(0) : sign | mag;
    } else {
      return sign | min_of(mag, kMag);
    }
  }

  // ---- special operands on words (the table of 10.8, as the generic path applies it)

  TLBINARY_HD static bool is_nan_word(W w) {
    if constexpr (Encoding == 0) return (w & kMag) > kTop;
    if constexpr (Encoding == 1) return (w & kMag) == kMag;
    if constexpr (Encoding == 2) return w == kSign;
    return false;
  }
  static constexpr W kInvalid = Encoding == 0   ? kTop | (W(1) << ((F - 1) % kB))
                                : Encoding == 1 ? kMag
                                : Encoding == 2 ? kSign
                                                : W(0);
  TLBINARY_HD static W overflow_word(W sign) {
    if constexpr (Encoding == 0) return sign | kTop;
    if constexpr (Encoding == 2) return kSign;
    return sign | kMag;
  }

  // a or b a NaN: a signalling a quieted, else a signalling b quieted, else the first NaN
  // (quieting sets fraction bit F - 1 and only applies to encoding 0).
  TLBINARY_HD static W pick_nan_word(W a, W b) {
    const bool na = is_nan_word(a), nb = is_nan_word(b);
    if constexpr (Encoding == 0) {
      constexpr W kQuiet = W(1) << ((F - 1) % kB);
      const bool sa = na && (a & kQuiet) == 0, sb = nb && (b & kQuiet) == 0;
      return (sa ? a : sb ? b : na ? a : b) | kQuiet;
    } else {
      return na ? a : b;
    }
  }

  // Results with a NaN or infinite operand (b already negated for a subtraction); only encoding 0
  // has infinities.
  TLBINARY_HD static W special_add(W a, W b) {
    if (Encoding != 0 || is_nan_word(a) || is_nan_word(b)) return pick_nan_word(a, b);
    // An infinity wins, except against the opposite infinity.
    if ((a & kMag) != kTop) return b;
    return (b & kMag) == kTop && (a ^ b) >= kSign ? kInvalid : a;
  }
  TLBINARY_HD static W special_mul(W a, W b) {
    if (Encoding != 0 || is_nan_word(a) || is_nan_word(b)) return pick_nan_word(a, b);
    // An infinity times zero is invalid, else the infinity of the XOR sign.
    if ((a & kMag) == 0 || (b & kMag) == 0) return kInvalid;
    return ((a ^ b) & kSign) | kTop;
  }
  // Also for a zero divisor.
  TLBINARY_HD static W special_div(W a, W b) {
    if (is_nan_word(a) || is_nan_word(b)) return pick_nan_word(a, b);
    const W sign = (a ^ b) & kSign;
    if constexpr (Encoding == 0) {
      if ((a & kMag) == kTop) return (b & kMag) == kTop ? kInvalid : sign | kTop;
      if ((b & kMag) == kTop) return sign;  // x / inf is a zero
    }
    return (a & kMag) == 0 ? kInvalid : overflow_word(sign);  // 0 / 0, x / 0
  }

  TLBINARY_HD static W add_word(W a, W b, bool flip) {
    if (flip && (Encoding != 2 || (b & kMag) != 0)) b ^= kSign;  // encoding 2 keeps +0, NaN
    if (any_special(a, b)) return special_add(a, b);
    const W ma = a & kMag, mb = b & kMag;
    W x, y;
    const int ex = unpack(max_of(ma, mb), x), ey = unpack(min_of(ma, mb), y);
    // Leading bits at kT - 1 (a sum may carry into kT); the smaller operand's shifted-out bits
    // jammed into bit 0, below the rounding bits.
    x <<= kT - 1 - F;
    y = shift_jam(y << (kT - 1 - F), min_of(ex - ey, kB - 1));
    const W m = (a ^ b) >= kSign ? x - y : x + y;
    if (m == 0) return a & b & kSign;  // (-0) + (-0) is -0; other zero sums are +0
    // Normalise to kT, but not below exponent 1: a sum below the normal range is exact (both
    // operands are multiples of the smallest subnormal), so it packs with exponent field 0.
    const int shift = min_of(M::clz(m) - 1, ex);
    return round_word<false, false>((ma >= mb ? a : b) & kSign, ex + 1 - shift, m << shift);
  }

  TLBINARY_HD static W mul_word(W a, W b) {
    const W sign = (a ^ b) & kSign;
    const W ma = a & kMag, mb = b & kMag;
    // Significands with their leading bits at B - 1.
    W u, v;
    int ex, ey;
    if (both_normal(ma, mb)) {
      ex = static_cast<int>(ma >> F);
      ey = static_cast<int>(mb >> F);
      u = significand_at<kB - 1>(a);
      v = significand_at<kB - 1>(b);
    } else {
      if (any_special(a, b)) return special_mul(a, b);
      if (min_of(ma, mb) == 0) return zero_word(sign);
      ex = unpack(ma, u);
      ey = unpack(mb, v);
      if (u < kHid) normalise(u, ex);
      if (v < kHid) normalise(v, ey);
      u <<= kB - 1 - F;
      v <<= kB - 1 - F;
    }
    // The product lies in [2^(2B - 2), 2^(2B)): its high word has its leading bit at B - 1 or
    // kT = B - 2; in the first case it moves down to kT, the bit shifted out joining the low
    // word in the sticky tail. (u and v end in B - 1 - F zero bits each: for F <= B / 2 - 1 the
    // low word is zero.)
    const W hi = M::mulhi(u, v);
    const W top = hi >> (kB - 1);
    W m = (hi >> top) | (hi & top);
    if constexpr (2 * (kB - 1 - F) < kB) m |= u * v != 0 ? W(1) : W(0);
    return round_word<true, true>(sign, ex + ey - static_cast<int>(Bias) + static_cast<int>(top),
                                  m);
  }

  // Division on words needs the dividend x << (F + 2) of 2F + 4 bits in one integer.
  static constexpr bool kFastDiv = kFast && 2 * F + 4 <= 64;
  using D = typename Machine<2 * F + 4 <= 32>::W;

  TLBINARY_HD static W div_word(W a, W b) {
    if (any_special(a, b) || (b & kMag) == 0) return special_div(a, b);
    const W sign = (a ^ b) & kSign;
    W x, y;
    int ex = unpack(a & kMag, x), ey = unpack(b & kMag, y);
    if (min_of(x, y) < kHid) {
      if (x == 0) return zero_word(sign);
      if (x < kHid) normalise(x, ex);
      if (y < kHid) normalise(y, ey);
    }
    if (x < y) {  // then x / y is in [1, 2)
      x <<= 1;
      --ex;
    }
    // The quotient has its leading bit at F + 2: two bits below the last kept one, then the
    // remainder as the sticky bit.
    const D n = static_cast<D>(x) << (F + 2), d = static_cast<D>(y);
    const D q = n / d;
    const W m = (static_cast<W>(q) << (kT - F - 2)) | (n - q * d != 0 ? W(1) : W(0));
    return round_word<true, true>(sign, ex - ey + static_cast<int>(Bias), m);
  }

  // ---- binary32-assisted arithmetic ------------------------------------------------------------
  // For p = F + 1 <= 11 every value of a moderate exponent range is a binary32 number, and one
  // binary32 operation followed by one rounding to the format gives the correctly rounded result
  // (double rounding is innocuous: Figueroa, + - with 24 >= 2p + 1, / with 24 >= 2p). The two
  // roundings can only disagree if binary32 rounds the exact result z onto one of the format's
  // rounding midpoints m (binade e), which needs |z - m| <= 2^(e - 24). A sum that close to m is
  // exact in binary32 or lies at least 2^(e - 2p) from m (the smaller operand is then a multiple
  // of 2^(e - 2p)); a quotient x / y lies more than 2^(e - 2p) from m (x - m y is a multiple of
  // 2^(e - p) ulp(y)), on the subnormal grid as well; products of two p-bit significands and
  // sums below the normal range are exact. Rounding is monotonic and every midpoint is a binary32
  // number, so otherwise both roundings fall on the same side of every midpoint. NaN and infinite
  // words enter as binary32 NaN and infinities, so the instruction resolves special operands as
  // the table of 10.8 does except for which NaN comes out; that choice is made on the words. No
  // branches.
  //
  // Addition works on the words' "scaled" values (value * 2^(Bias - 127)): the magnitude shifted
  // so that the exponent field becomes binary32's, the format's subnormals landing on binary32's
  // subnormals, whose grid (2^-149) is finer than the format's (2^(-126 - F)); a sum below 2^-126
  // is then exact, and above it binary32 rounds relative to the binade as without the scaling.
  // That holds for any bias, so the condition is E <= 7 (the largest sum stays finite). Products
  // and quotients are formed on the values themselves (the scaled value times 2^(127 - Bias)):
  // every nonzero product, quotient and value, with L = 1 - Bias - F (the smallest subnormal is
  // 2^L) and H = 2^E - Bias (every finite value is below 2^H), must lie in binary32's normal
  // range: 2L >= -126 and 2H <= 128 (hence H - L = 2^E - 1 + F <= 73, E <= 6).
  static constexpr long long kL = 1 - Bias - F;
  static constexpr long long kH = (1LL << E) - Bias;
  static constexpr bool kF32Add = F <= 10 && E <= 7;
  static constexpr bool kF32Mul = F <= 10 && 2 * kL >= -126 && 2 * kH <= 128;
  static constexpr bool kF32Div = kF32Mul;

  // The binary32 bits of a word's scaled value, NaN and infinite words as binary32 NaN and
  // infinities. The word moves up to put its sign at bit 31, then arithmetically down to put the
  // exponent field at bit 23, and the copies of the sign inside binary32's exponent field are
  // cleared; for encodings 0 and 1 binary32's all-ones exponent is ORed in.
  TLBINARY_HD static unsigned f32_scaled_bits(W w) {
    const unsigned top = static_cast<unsigned>(w) << (31 - E - F);
    const unsigned u = static_cast<unsigned>(static_cast<int>(top) >> (8 - E)) &
                       ~(((1u << (8 - E)) - 1u) << (23 + E));
    // The magnitude at the top, for the special words.
    const unsigned mag = top << 1;
    if constexpr (Encoding == 0)
      return u | (mag >= static_cast<unsigned>(kTop) << (32 - E - F) ? 0x7f800000u : 0u);
    if constexpr (Encoding == 1) return u | (mag == ~0u << (32 - E - F) ? 0x7fc00000u : 0u);
    if constexpr (Encoding == 2) return w == kSign ? 0x7fc00000u : u;
    return u;
  }
  // A word's value (not scaled) as a binary32.
  TLBINARY_HD static float f32_value(W w) {
    return f32_scale<static_cast<int>(127 - Bias)>(f32_of_bits(f32_scaled_bits(w)));
  }

  // The word of a binary32 result r of operands a and b: r's value (Scaled: r times
  // 2^(127 - Bias)) rounded to the format, or the table's NaN when r is a NaN.
  template <bool Scaled>
  TLBINARY_HD static W f32_result(W a, W b, float r) {
    const unsigned u = bits_of_f32(r);
    // Round |r| to the format's quantum at its binade: adding c = 1.5 * 2^(23 - F) quanta leaves
    // exactly one quantum as c's unit in the last place (binary32 rounds to nearest even there),
    // subtracting c again is exact. Products and quotients below the smallest normal binade take
    // its quantum, the smallest subnormal; scaled sums there need no floor, being exact multiples
    // of the smallest subnormal, which a finer quantum leaves as they are. An infinite |r| stays
    // infinite (c is then some finite number) and overflows below, as every |r| of at least 2^H
    // does; where the largest finite products or quotients would push c's exponent to binary32's
    // top, the binade is capped at 2^H's.
    constexpr unsigned kMinBinade = static_cast<unsigned>(1 - Bias + 127) << 23;
    constexpr long long kTopField =
        126 + (2 * kH > kH - kL ? 2 * kH : kH - kL);  // of finite products, quotients
    unsigned binade = u & 0x7f800000u;
    if constexpr (!Scaled) binade = max_of(binade, kMinBinade);
    if constexpr (!Scaled && kTopField + 23 - F >= 255)
      binade = min_of(binade, static_cast<unsigned>(kH + 127) << 23);
    const float c = f32_of_bits(binade + ((23u - F) << 23) + 0x00400000u);
    float s = f32_sub(f32_add(f32_abs(r), c), c);
    // To the scaled value, whose bits are the word's magnitude shifted (exact: s is a multiple
    // of the format's smallest subnormal).
    if constexpr (!Scaled) s = f32_scale<static_cast<int>(Bias - 127)>(s);
    const W q = static_cast<W>(bits_of_f32(s) >> (23 - F));
    const W sign = static_cast<W>(u >> (31 - E - F)) & kSign;
    W w;
    if constexpr (Encoding == 0) {
      w = sign | min_of(q, kTop);
    } else if constexpr (Encoding == 2) {
      w = q > kMag ? kSign : q == 0 ? W(0) : sign | q;
    } else {
      w = sign | min_of(q, kMag);
    }
    // A NaN result comes from a NaN operand or an invalid operation. The table's NaN is computed
    // on every lane and selected (random words make a branch diverge in most warps).
    W nan;
    if constexpr (Encoding == 2) {
      nan = kSign;
    } else if constexpr (Encoding == 3) {
      nan = kInvalid;
    } else if constexpr (Encoding == 1) {
      nan = is_nan_word(a) ? a : is_nan_word(b) ? b : kInvalid;
    } else {
      // pick_nan_word's choice in fewer steps: b, unless a is a NaN and not (a quiet and b a
      // signalling NaN); the infinity kTop stands for b when neither is a NaN (kTop | kQuiet is
      // the invalid result).
      constexpr W kQuiet = W(1) << (F - 1);
      const bool na = (a & kMag) > kTop, nb = (b & kMag) > kTop;
      const bool take_b = (!na) | (nb & ((a & ~b & kQuiet) != 0));  // no short-circuit branches
      nan = (take_b ? (nb ? b : kTop) : a) | kQuiet;
    }
    return r == r ? w : nan;
  }

  TLBINARY_HD static W add_f32(W a, W b, bool flip) {
    if (flip && (Encoding != 2 || (b & kMag) != 0)) b ^= kSign;  // encoding 2 keeps +0, NaN
    const float r = f32_add(f32_of_bits(f32_scaled_bits(a)), f32_of_bits(f32_scaled_bits(b)));
    return f32_result<true>(a, b, r);
  }
  TLBINARY_HD static W mul_f32(W a, W b) {
    return f32_result<false>(a, b, f32_mul(f32_value(a), f32_value(b)));
  }
  // The division instruction sequence leaves zeros, infinities and NaNs to a slow path, which
  // random words would send most warps through: those operands take x * (1 / y) instead (exact
  // for them on the device's approximate reciprocal too: 1 / 0, 1 / inf and 1 / NaN are inf, 0
  // and NaN, and x is then 0, inf or NaN if y is not), and the division sees 1 / 1.
  TLBINARY_HD static W div_f32(W a, W b) {
    const float x = f32_value(a), y = f32_value(b), inf = f32_of_bits(0x7f800000u);
    const bool ordinary = f32_abs(x) < inf && f32_abs(y) < inf && !(x == 0.0f) && !(y == 0.0f);
    const float one = 1.0f, q = f32_div(ordinary ? x : one, ordinary ? y : one);
    return f32_result<false>(a, b, ordinary ? q : f32_mul(x, f32_rcp_special(y)));
  }

#if TLBINARY_HARDWARE
  static constexpr bool kSingle = E == 8 && F == 23 && Bias == 127 && Encoding == 0;
  static constexpr bool kDouble = E == 11 && F == 52 && Bias == 1023 && Encoding == 0;
#if __CUDA_ARCH__ >= 530
  static constexpr bool kHalf = E == 5 && F == 10 && Bias == 15 && Encoding == 0;
#else
  static constexpr bool kHalf = false;
#endif
#if __CUDA_ARCH__ >= 800
  static constexpr bool kBfloat = E == 8 && F == 7 && Bias == 127 && Encoding == 0;
#else
  static constexpr bool kBfloat = false;
#endif
  static constexpr bool kHardware = kHalf || kBfloat || kSingle || kDouble;
  static constexpr bool kHardwareDiv = kSingle || kDouble;

  // One hardware instruction on finite operands (IEEE formats: every special operand goes to the
  // generic path first, so NaN results, whose bits differ, cannot come from here).
  template <Op O>
  __device__ static W hardware(W a, W b) {
    if constexpr (kSingle) {
      const float x = __uint_as_float(a), y = __uint_as_float(b);
      float z;
      if constexpr (O == Op::add) z = __fadd_rn(x, y);
      if constexpr (O == Op::mul) z = __fmul_rn(x, y);
      if constexpr (O == Op::div) z = __fdiv_rn(x, y);
      return __float_as_uint(z);
    } else if constexpr (kDouble) {
      const double x = __longlong_as_double(static_cast<long long>(a));
      const double y = __longlong_as_double(static_cast<long long>(b));
      double z;
      if constexpr (O == Op::add) z = __dadd_rn(x, y);
      if constexpr (O == Op::mul) z = __dmul_rn(x, y);
      if constexpr (O == Op::div) z = __ddiv_rn(x, y);
      return static_cast<W>(__double_as_longlong(z));
    } else {
      const unsigned short x = static_cast<unsigned short>(a), y = static_cast<unsigned short>(b);
      unsigned short z = 0;
      if constexpr (kHalf) {
        if constexpr (O == Op::add) asm("add.rn.f16 %0, %1, %2;" : "=h"(z) : "h"(x), "h"(y));
        if constexpr (O == Op::mul) asm("mul.rn.f16 %0, %1, %2;" : "=h"(z) : "h"(x), "h"(y));
      } else {
#if __CUDA_ARCH__ >= 900
        if constexpr (O == Op::add) asm("add.rn.bf16 %0, %1, %2;" : "=h"(z) : "h"(x), "h"(y));
        if constexpr (O == Op::mul) asm("mul.rn.bf16 %0, %1, %2;" : "=h"(z) : "h"(x), "h"(y));
#else
        // x * 1 + y and x * y + (-0): one rounding each; the -0 addend keeps a -0 product.
        const unsigned short one = 0x3f80, negzero = 0x8000;
        if constexpr (O == Op::add)
          asm("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(z) : "h"(x), "h"(one), "h"(y));
        if constexpr (O == Op::mul)
          asm("fma.rn.bf16 %0, %1, %2, %3;" : "=h"(z) : "h"(x), "h"(y), "h"(negzero));
#endif
      }
      return z;
    }
  }

  // The instruction's result is the format's except for NaN results: those come from a NaN
  // operand (whose choice and quieting 10.8 fixes) or from an invalid operation (whose NaN 10.8
  // fixes too); infinite operands and zero divisors give IEEE's infinities and zeros.
  template <Op O>
  __device__ static W hardware_word(W a, W b) {
    const W r = hardware<O>(a, b);
    if (is_nan_word(r)) return is_nan_word(a) || is_nan_word(b) ? pick_nan_word(a, b) : kInvalid;
    return r;
  }
#endif

  // ---- the operators ----------------------------------------------------------------------------

  // a + b; `flip` negates b first (subtraction).
  TLBINARY_HD static void add_op(const unsigned char* a, const unsigned char* b, bool flip,
                                 unsigned char* r) {
#if TLBINARY_HARDWARE
    if constexpr (kHardware) {
      const W x = load_word(a), y = load_word(b) ^ (flip ? kSign : W(0));
      store_word(r, hardware_word<Op::add>(x, y));
      return;
    }
#endif
#if TLBINARY_F32
    if constexpr (kF32Add) {
      store_word(r, add_f32(load_word(a), load_word(b), flip));
      return;
    }
#endif
    if constexpr (kFast) {
      store_word(r, add_word(load_word(a), load_word(b), flip));
    } else {
      generic_add(a, b, flip, r);
    }
  }

  TLBINARY_HD static void mul_op(const unsigned char* a, const unsigned char* b, unsigned char* r) {
#if TLBINARY_HARDWARE
    if constexpr (kHardware) {
      store_word(r, hardware_word<Op::mul>(load_word(a), load_word(b)));
      return;
    }
#endif
#if TLBINARY_F32
    if constexpr (kF32Mul) {
      store_word(r, mul_f32(load_word(a), load_word(b)));
      return;
    }
#endif
    if constexpr (kFast) {
      store_word(r, mul_word(load_word(a), load_word(b)));
    } else {
      generic_mul(a, b, r);
    }
  }

  TLBINARY_HD static void div_op(const unsigned char* a, const unsigned char* b, unsigned char* r) {
#if TLBINARY_HARDWARE
    if constexpr (kHardwareDiv) {
      store_word(r, hardware_word<Op::div>(load_word(a), load_word(b)));
      return;
    }
#endif
#if TLBINARY_F32
    if constexpr (kF32Div) {
      store_word(r, div_f32(load_word(a), load_word(b)));
      return;
    }
#endif
    if constexpr (kFastDiv) {
      store_word(r, div_word(load_word(a), load_word(b)));
    } else {
      generic_div(a, b, r);
    }
  }

  // Negation and the comparisons (on words for the word-level formats).
  TLBINARY_HD static void negate(const unsigned char* a, unsigned char* r) {
    if constexpr (kFast) {
      const W w = load_word(a);
      // Encoding 2 keeps +0 and its NaN (the words with a zero magnitude).
      store_word(r, Encoding == 2 && (w & kMag) == 0 ? w : w ^ kSign);
    } else {
      for (int i = 0; i < kBytes; ++i) r[i] = a[i];
      if constexpr (Encoding == 2) {
        const Fields f = load(a);
        if (f.exp == 0 && is_zero(f.frac)) return;  // +0 and the NaN stay as they are
      }
      r[(E + F) / 8] ^= static_cast<unsigned char>(1U << ((E + F) % 8));
    }
  }

  TLBINARY_HD static bool equal(const unsigned char* a, const unsigned char* b) {
    if constexpr (kFast) {
      const W x = load_word(a), y = load_word(b);
      if (is_nan_word(x) || is_nan_word(y)) return false;
      return x == y || ((x | y) & kMag) == 0;  // +0 == -0
    } else {
      const Fields fa = load(a), fb = load(b);
      if (is_nan(fa) || is_nan(fb)) return false;
      if (is_zero_value(fa) && is_zero_value(fb)) return true;
      for (int i = 0; i < kBytes; ++i)
        if (a[i] != b[i]) return false;
      return true;
    }
  }

  TLBINARY_HD static bool less(const unsigned char* a, const unsigned char* b) {
    if constexpr (kFast) {
      const W x = load_word(a), y = load_word(b);
      if (is_nan_word(x) || is_nan_word(y) || ((x | y) & kMag) == 0) return false;
      const bool nx = (x & kSign) != 0, ny = (y & kSign) != 0;
      if (nx != ny) return nx;
      // Same sign: the magnitudes, reversed for negatives.
      return nx ? (x & kMag) > (y & kMag) : (x & kMag) < (y & kMag);
    } else {
      if (equal(a, b)) return false;
      const Fields fa = load(a), fb = load(b);
      if (is_nan(fa) || is_nan(fb)) return false;
      if (fa.neg != fb.neg) return fa.neg;
      // Same sign: compare exponent and fraction from the top, reversed for negatives.
      int order = fa.exp != fb.exp ? (fa.exp > fb.exp ? 1 : -1) : compare(fa.frac, fb.frac);
      return fa.neg ? order > 0 : order < 0;
    }
  }
};

}  // namespace tlbinary

template <int E, int F, long long Bias, int Encoding>
struct TLBinary {
  unsigned char b[(1 + E + F + 7) / 8]{};

  using Fmt = tlbinary::Format<E, F, Bias, Encoding>;

  TLBINARY_HD TLBinary operator-() const {
    TLBinary r;
    Fmt::negate(b, r.b);
    return r;
  }
  TLBINARY_HD TLBinary operator+(const TLBinary& y) const {
    TLBinary r;
    Fmt::add_op(b, y.b, false, r.b);
    return r;
  }
  TLBINARY_HD TLBinary operator-(const TLBinary& y) const {
    TLBinary r;
    Fmt::add_op(b, y.b, true, r.b);
    return r;
  }
  TLBINARY_HD TLBinary operator*(const TLBinary& y) const {
    TLBinary r;
    Fmt::mul_op(b, y.b, r.b);
    return r;
  }
  TLBINARY_HD TLBinary operator/(const TLBinary& y) const {
    TLBinary r;
    Fmt::div_op(b, y.b, r.b);
    return r;
  }
  TLBINARY_HD bool operator==(const TLBinary& y) const { return Fmt::equal(b, y.b); }
  TLBINARY_HD bool operator<(const TLBinary& y) const { return Fmt::less(b, y.b); }
  TLBINARY_HD bool operator<=(const TLBinary& y) const {
    return Fmt::less(b, y.b) || Fmt::equal(b, y.b);
  }
};
