// The MPFR oracle of binary_oracle.h. Its special-value logic follows SPEC-runtime 10.8's table
// row by row; the finite results come from MPFR.
#include "binary_oracle.h"

#include <gmp.h>
#include <mpfr.h>

#include <stdexcept>

namespace tlrt::binary_oracle {

namespace {

bool get_bit(const Word& w, long long k) {
  return (w[k / 8] >> (k % 8)) & 1;
}
void put_bit(Word& w, long long k, bool v) {
  if (v) {
    w[k / 8] = static_cast<std::uint8_t>(w[k / 8] | (1u << (k % 8)));
  } else {
    w[k / 8] = static_cast<std::uint8_t>(w[k / 8] & ~(1u << (k % 8)));
  }
}

enum class Kind { nan, inf, zero, finite };

}  // namespace

struct Oracle::State {
  mpfr_t x, y, r, top;
  mpz_t m, frac, t;
};

Oracle::Oracle(const Format& format) : format_(format), state_(std::make_unique<State>()) {
  const mpfr_prec_t p = format.f + 1;
  mpfr_inits2(p, state_->x, state_->y, state_->r, state_->top, static_cast<mpfr_ptr>(nullptr));
  mpz_inits(state_->m, state_->frac, state_->t, static_cast<mpz_ptr>(nullptr));
}

Oracle::~Oracle() {
  mpfr_clears(state_->x, state_->y, state_->r, state_->top, static_cast<mpfr_ptr>(nullptr));
  mpz_clears(state_->m, state_->frac, state_->t, static_cast<mpz_ptr>(nullptr));
}

namespace {

struct Decoded {
  Kind kind;
  bool neg;
  long long exp;
  bool frac_zero;
  bool frac_ones;
  bool quiet_bit;
};

Decoded decode(const Format& fm, const Word& w) {
  Decoded d{};
  d.neg = get_bit(w, fm.e + fm.f);
  d.exp = 0;
  for (int i = 0; i < fm.e; ++i)
    if (get_bit(w, fm.f + i)) d.exp |= 1LL << i;
  d.frac_zero = true;
  d.frac_ones = true;
  for (int i = 0; i < fm.f; ++i) {
    if (get_bit(w, i)) {
      d.frac_zero = false;
    } else {
      d.frac_ones = false;
    }
  }
  d.quiet_bit = get_bit(w, fm.f - 1);
  const long long ones = (1LL << fm.e) - 1;
  // The table of 10.8, one encoding at a time.
  switch (fm.encoding) {
    case 0:
      if (d.exp == ones) {
        d.kind = d.frac_zero ? Kind::inf : Kind::nan;
        return d;
      }
      break;
    case 1:
      if (d.exp == ones && d.frac_ones) {
        d.kind = Kind::nan;
        return d;
      }
      break;
    case 2:
      if (d.neg && d.exp == 0 && d.frac_zero) {
        d.kind = Kind::nan;
        return d;
      }
      break;
    default:
      break;
  }
  d.kind = d.exp == 0 && d.frac_zero ? Kind::zero : Kind::finite;
  return d;
}

Word make_word(const Format& fm, bool neg, long long exp, const mpz_t frac) {
  Word w(fm.bytes(), 0);
  for (int i = 0; i < fm.f; ++i) put_bit(w, i, mpz_tstbit(frac, i));
  for (int i = 0; i < fm.e; ++i) put_bit(w, fm.f + i, (exp >> i) & 1);
  put_bit(w, fm.e + fm.f, neg);
  return w;
}

Word fill_word(const Format& fm, bool neg, long long exp, bool frac_ones) {
  Word w(fm.bytes(), 0);
  for (int i = 0; i < fm.f; ++i) put_bit(w, i, frac_ones);
  for (int i = 0; i < fm.e; ++i) put_bit(w, fm.f + i, (exp >> i) & 1);
  put_bit(w, fm.e + fm.f, neg);
  return w;
}

long long ones_exp(const Format& fm) {
  return (1LL << fm.e) - 1;
}

Word zero_word(const Format& fm, bool neg) {
  return fill_word(fm, fm.encoding == 2 ? false : neg, 0, false);
}

Word invalid_word(const Format& fm) {
  switch (fm.encoding) {
    case 0: {
      Word w = fill_word(fm, false, ones_exp(fm), false);
      put_bit(w, fm.f - 1, true);
      return w;
    }
    case 1:
      return fill_word(fm, false, ones_exp(fm), true);
    case 2:
      return fill_word(fm, true, 0, false);
    default:
      return fill_word(fm, false, 0, false);
  }
}

Word overflow_word(const Format& fm, bool neg) {
  switch (fm.encoding) {
    case 0:
      return fill_word(fm, neg, ones_exp(fm), false);
    case 1:
      return fill_word(fm, neg, ones_exp(fm), true);
    case 2:
      return fill_word(fm, true, 0, false);
    default:
      return fill_word(fm, neg, ones_exp(fm), true);
  }
}

Word inf_word(const Format& fm, bool neg) {
  return fill_word(fm, neg, ones_exp(fm), false);
}

Word quieted(const Format& fm, Word w) {
  if (fm.encoding == 0) put_bit(w, fm.f - 1, true);
  return w;
}

}  // namespace

bool Oracle::is_nan(const Word& a) const {
  return decode(format_, a).kind == Kind::nan;
}

Word Oracle::negate(const Word& a) const {
  const Decoded d = decode(format_, a);
  Word r = a;
  if (format_.encoding == 2 && (d.kind == Kind::nan || d.kind == Kind::zero)) return r;
  put_bit(r, format_.e + format_.f, !d.neg);
  return r;
}

namespace {

// The exact value of a finite (or zero) word into an MPFR variable of precision F + 1.
void to_mpfr(const Format& fm, const Word& w, mpfr_t out, mpz_t scratch) {
  const Decoded d = decode(fm, w);
  if (d.kind == Kind::inf) {
    mpfr_set_inf(out, d.neg ? -1 : 1);
    return;
  }
  if (d.kind == Kind::zero) {
    mpfr_set_zero(out, d.neg ? -1 : 1);
    return;
  }
  mpz_set_ui(scratch, 0);
  for (int i = 0; i < fm.f; ++i)
    if (get_bit(w, i)) mpz_setbit(scratch, i);
  if (d.exp != 0) mpz_setbit(scratch, fm.f);
  const long long scale = (d.exp != 0 ? d.exp : 1) - fm.bias - fm.f;
  if (mpfr_set_z_2exp(out, scratch, scale, MPFR_RNDN) != 0)
    throw std::logic_error("binary oracle: a word's value is not exact at precision F + 1");
  if (d.neg) mpfr_neg(out, out, MPFR_RNDN);
}

}  // namespace

Word Oracle::compute(Op op, const Word& a0, const Word& b0) {
  const Format& fm = format_;
  const Word b1 = op == Op::sub ? negate(b0) : b0;
  const Decoded a = decode(fm, a0), b = decode(fm, b1);
  // NaN operands: signalling first, signalling second, first NaN, second NaN.
  const bool a_snan = a.kind == Kind::nan && fm.encoding == 0 && !a.quiet_bit;
  const bool b_snan = b.kind == Kind::nan && fm.encoding == 0 && !b.quiet_bit;
  if (a_snan) return quieted(fm, a0);
  if (b_snan) return quieted(fm, b1);
  if (a.kind == Kind::nan) return quieted(fm, a0);
  if (b.kind == Kind::nan) return quieted(fm, b1);
  const bool sign_xor = a.neg != b.neg;
  switch (op) {
    case Op::add:
    case Op::sub:
      if (a.kind == Kind::inf && b.kind == Kind::inf && a.neg != b.neg) return invalid_word(fm);
      if (a.kind == Kind::inf) return a0;
      if (b.kind == Kind::inf) return b1;
      break;
    case Op::mul:
      if ((a.kind == Kind::inf && b.kind == Kind::zero) ||
          (a.kind == Kind::zero && b.kind == Kind::inf))
        return invalid_word(fm);
      if (a.kind == Kind::inf || b.kind == Kind::inf) return inf_word(fm, sign_xor);
      break;
    case Op::div:
      if (a.kind == Kind::inf && b.kind == Kind::inf) return invalid_word(fm);
      if (a.kind == Kind::zero && b.kind == Kind::zero) return invalid_word(fm);
      if (a.kind == Kind::inf) return inf_word(fm, sign_xor);
      if (b.kind == Kind::inf) return zero_word(fm, sign_xor);
      if (b.kind == Kind::zero) return overflow_word(fm, sign_xor);
      if (a.kind == Kind::zero) return zero_word(fm, sign_xor);
      break;
  }
  // Both finite (zeros included): MPFR at precision F + 1 in the format's exponent range.
  // MPFR's exponent of x is e with 2^(e-1) <= |x| < 2^e. The smallest subnormal 2^(1-bias-F)
  // has e = 2 - bias - F; an all-ones exponent field with a full significand stays below
  // 2^(ones - bias + 1).
  const mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
  const long long emin = 2 - fm.bias - fm.f;
  const long long emax = ones_exp(fm) - fm.bias + 1;
  mpfr_set_emin(static_cast<mpfr_exp_t>(emin));
  mpfr_set_emax(static_cast<mpfr_exp_t>(emax));
  State& s = *state_;
  to_mpfr(fm, a0, s.x, s.m);
  to_mpfr(fm, b1, s.y, s.m);
  mpfr_clear_flags();
  int t = 0;
  switch (op) {
    case Op::add:
    case Op::sub:
      t = mpfr_add(s.r, s.x, s.y, MPFR_RNDN);
      break;
    case Op::mul:
      t = mpfr_mul(s.r, s.x, s.y, MPFR_RNDN);
      break;
    case Op::div:
      t = mpfr_div(s.r, s.x, s.y, MPFR_RNDN);
      break;
  }
  t = mpfr_check_range(s.r, t, MPFR_RNDN);
  mpfr_subnormalize(s.r, t, MPFR_RNDN);
  Word out;
  const bool neg = mpfr_signbit(s.r) != 0;
  if (mpfr_inf_p(s.r)) {
    out = overflow_word(fm, neg);
  } else if (mpfr_zero_p(s.r)) {
    out = zero_word(fm, neg);
  } else {
    // Encoding 0: an exponent field reaching all ones overflows; encoding 1: the all-ones
    // pattern is the NaN, so a result rounding to it overflows.
    mpfr_abs(s.top, s.r, MPFR_RNDN);
    bool overflow = false;
    if (fm.encoding == 0 && mpfr_get_exp(s.r) == static_cast<mpfr_exp_t>(emax)) overflow = true;
    if (fm.encoding == 1) {
      mpz_set_ui(s.t, 1);
      mpz_mul_2exp(s.t, s.t, fm.f + 1);
      mpz_sub_ui(s.t, s.t, 1);
      mpfr_t largest;
      mpfr_init2(largest, fm.f + 1);
      mpfr_set_z_2exp(largest, s.t, ones_exp(fm) - fm.bias - fm.f, MPFR_RNDN);
      overflow = mpfr_equal_p(s.top, largest) != 0;
      mpfr_clear(largest);
    }
    if (overflow) {
      out = overflow_word(fm, neg);
    } else {
      const mpfr_exp_t e2 = mpfr_get_z_2exp(s.m, s.top);  // |r| = m * 2^e2
      const long long lead = static_cast<long long>(e2) + mpz_sizeinbase(s.m, 2) - 1;
      long long exp_field = 0, scale = 1 - fm.bias - fm.f;
      if (lead >= 1 - fm.bias) {
        exp_field = lead + fm.bias;
        scale = lead - fm.f;
      }
      if (e2 >= scale) {
        mpz_mul_2exp(s.frac, s.m, e2 - scale);
      } else {
        if (!mpz_divisible_2exp_p(s.m, scale - e2))
          throw std::logic_error("binary oracle: MPFR result below the format's grid");
        mpz_fdiv_q_2exp(s.frac, s.m, scale - e2);
      }
      if (exp_field != 0) mpz_clrbit(s.frac, fm.f);
      out = make_word(fm, neg, exp_field, s.frac);
    }
  }
  mpfr_set_emin(old_min);
  mpfr_set_emax(old_max);
  return out;
}

bool Oracle::equal(const Word& a, const Word& b) {
  if (decode(format_, a).kind == Kind::nan || decode(format_, b).kind == Kind::nan) return false;
  const mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  to_mpfr(format_, a, state_->x, state_->m);
  to_mpfr(format_, b, state_->y, state_->m);
  const bool r = mpfr_equal_p(state_->x, state_->y) != 0;
  mpfr_set_emin(old_min);
  mpfr_set_emax(old_max);
  return r;
}

bool Oracle::less(const Word& a, const Word& b) {
  if (decode(format_, a).kind == Kind::nan || decode(format_, b).kind == Kind::nan) return false;
  const mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  to_mpfr(format_, a, state_->x, state_->m);
  to_mpfr(format_, b, state_->y, state_->m);
  const bool r = mpfr_less_p(state_->x, state_->y) != 0;
  mpfr_set_emin(old_min);
  mpfr_set_emax(old_max);
  return r;
}

}  // namespace tlrt::binary_oracle
