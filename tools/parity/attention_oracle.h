// The legacy attention pair in long double, with the per-element error bounds of
// docs/NUMERICS.md ("Legacy attention"): used by the parity cases
// (tools/parity/attention_cases.cpp) and the ABI suite (tests/attention_test.cpp). Header-only; no
// tlrt dependency.
//
// Inputs are the operands' values (float or double widened exactly); `alpha` is the scale rounded
// to the operands' dtype (0 gives +0 scores, dq and dk without reading q, k or ds, as both backends
// do). `evaluate` gives each result's exact value (to long double accuracy) and
// one backend's bound against it, described by a Unit:
//   unit        the unit roundoff of the format the backend computes in (the dtype's for CUDA,
//               the wide format's for the reference),
//   exp_ulps    its exp's error in ULPs (CUDA: 2 for expf, 1 for exp; the reference: 1),
//   final_unit  the rounding of each result to the dtype at the end (the reference: the dtype's
//               u; CUDA: 0, its last rounding is inside the products' gamma),
//   p_unit      the rounding of the saved probabilities the backward reads (the reference rounds
//               its wide probabilities to the dtype: the dtype's u; CUDA: 0),
//   denorm      the dtype's smallest subnormal (underflow terms),
//   online_from the row length from which the softmax may rescale partial sums (its online path;
//               CUDA: rows past 1024 elements, where the one-warp-per-row kernels end and the
//               device's shared memory decides; 0: never).
// A parity check between two backends allows the sum of both bounds; a check of one backend
// against the values here adds the bound of oracle_unit(), this evaluation's own error.
//
// Every bound is the NUMERICS derivation term for term: the softmax stages' relative errors are
// summed to eps and taken as the factor 1 / (1 - eps) (factors each within [1 - t, 1 / (1 - t)]
// multiply to within [1 - eps, 1 / (1 - eps)]), the scores' perturbation as the factor
// e^{2 delta}, and each value computed from perturbed operands is bounded by its worst case,
// |x~ y~ - x y| <= (|x| + dx)(|y| + dy) - |x y|.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace tlrt::parity::attention {

using LD = long double;
static_assert(std::numeric_limits<LD>::digits >= 64,
              "the attention oracle needs a long double of at least 64 significand bits");

struct Unit {
  LD unit = 0;               // unit roundoff of the working format
  LD exp_ulps = 1;           // exp's error bound in ULPs (one ULP <= 2 unit relative)
  LD final_unit = 0;         // rounding of each result to the dtype
  LD p_unit = 0;             // rounding of the saved probabilities
  LD denorm = 0;             // the dtype's smallest subnormal
  uint64_t online_from = 0;  // row length from which the softmax may rescale (0: never)
};

// `a * x`, except +0 for a = 0 whatever x is: a scale of 0 reads neither operand of its product,
// so non-finite values there do not reach the result (nor its bound).
inline LD scaled(LD a, LD x) {
  return a == 0 ? LD(0) : a * x;
}

inline LD gamma(LD k, LD u) {
  return k * u / (1 - k * u);
}

struct Problem {
  uint64_t batch = 0, n = 0, d = 0;
  LD alpha = 1;
  bool has_mask = false;
  std::vector<LD> q, k, v, mask, g;  // mask: batch * n * n (allowed where != 0, NaN allowed)
};

struct Exact {
  std::vector<LD> out, dq, dk, dv;  // the results
  std::vector<uint8_t> blocked;     // rows without an allowed entry
  std::vector<LD> out_bound, dq_bound, dk_bound, dv_bound;
};

// Exact results and one backend's bounds. A row is a NaN row when its allowed scores' max is NaN
// or infinite (an allowed NaN or +inf score, or every allowed score -inf); its results carry no
// bound (the parity check asks for NaN where the exact value is NaN). An allowed -inf score beside
// finite ones is an exact +0 probability on every backend. Blocked rows have exact +0 in out and
// dq with bound 0.
inline Exact evaluate(const Problem& pr, const Unit& un) {
  const uint64_t B = pr.batch, n = pr.n, d = pr.d;
  Exact e;
  e.out.assign(B * n * d, 0);
  e.dq.assign(B * n * d, 0);
  e.dk.assign(B * n * d, 0);
  e.dv.assign(B * n * d, 0);
  e.out_bound.assign(B * n * d, 0);
  e.dq_bound.assign(B * n * d, 0);
  e.dk_bound.assign(B * n * d, 0);
  e.dv_bound.assign(B * n * d, 0);
  e.blocked.assign(B * n, 0);
  const LD u = un.unit, eta = un.denorm, fu = un.final_unit;
  const LD aa = std::fabs(pr.alpha);
  const LD kx = un.exp_ulps;
  // A probability that underflows carries an absolute error: the exp's k ULPs of the smallest
  // subnormal and the quotient's rounding (NUMERICS, "Softmax"); it also covers the reference's
  // rounding of a wide probability to a subnormal of the dtype (half of eta).
  const LD tiny = (2 * kx + 2) * eta;
  // The online path's rescaling of partial sums (NUMERICS, "Softmax"), on rows long enough.
  const LD online =
      un.online_from != 0 && n >= un.online_from ? (2 * kx + 3) * gamma(static_cast<LD>(n), u) : 0;
  const LD gd1 = gamma(static_cast<LD>(d + 1), u);
  const LD gd = gamma(static_cast<LD>(d), u), gn = gamma(static_cast<LD>(n), u);
  const LD gn1 = gamma(static_cast<LD>(n + 1), u), g2 = gamma(2, u);
  std::vector<LD> s(n), p(n), rho(n), dp(n), e_dp(n), ds(n * n), tau(n * n), pm(n * n), rhom(n * n);
  for (uint64_t b = 0; b < B; ++b) {
    const LD* Q = pr.q.data() + b * n * d;
    const LD* K = pr.k.data() + b * n * d;
    const LD* V = pr.v.data() + b * n * d;
    const LD* G = pr.g.empty() ? nullptr : pr.g.data() + b * n * d;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t r = b * n + i;
      auto allowed = [&](uint64_t j) { return !pr.has_mask || !(pr.mask[r * n + j] == 0); };
      bool any = false;
      LD m = -std::numeric_limits<LD>::infinity();
      bool nan = false;
      LD delta = 0;
      for (uint64_t j = 0; j < n; ++j) {
        if (!allowed(j)) continue;
        LD acc = 0, mag = 0;
        for (uint64_t l = 0; l < d; ++l) {
          acc += Q[i * d + l] * K[j * d + l];
          mag += std::fabs(Q[i * d + l] * K[j * d + l]);
        }
        s[j] = scaled(pr.alpha, acc);
        any = true;
        if (std::isnan(s[j])) nan = true;
        if (s[j] > m) m = s[j];
        // The scores' error: d products and their sum, the product with alpha; underflow of the
        // d products (half of eta each, scaled by alpha) and of the last product.
        if (std::isfinite(s[j])) {
          delta = std::max(delta, scaled(gd1 * aa, mag) + (d * aa + 1) * eta);
        }
      }
      if (!any) {
        e.blocked[r] = 1;
        for (uint64_t j = 0; j < n; ++j) pm[i * n + j] = 0, rhom[i * n + j] = 0;
        continue;  // out and dq are +0
      }
      if (nan || std::isinf(m)) m = std::numeric_limits<LD>::quiet_NaN();
      LD sum = 0, count = 0;
      for (uint64_t j = 0; j < n; ++j) {
        if (!allowed(j)) continue;
        p[j] = std::exp(s[j] - m);
        sum += p[j];
        count += 1;
      }
      // The softmax's own error on the computed scores (NUMERICS, "Softmax", the subject's half,
      // with |s~ - m~| <= |s - m| + 2 delta), then the factor e^{2 delta} by which the scores'
      // errors move an exact softmax.
      const LD row_eps = (2 * delta + std::log(count) + 4 * kx + 1) * u + gamma(count, u) + online;
      const LD moved = std::exp(2 * delta);
      for (uint64_t j = 0; j < n; ++j) {
        p[j] = allowed(j) ? p[j] / sum : 0;
        rho[j] = 0;
        if (allowed(j) && std::isfinite(s[j])) {
          const LD eps = std::fabs(s[j] - m) * u + row_eps;
          rho[j] = moved / (1 - eps) - 1;
        }
        // The forward uses the probabilities as computed; the backward reads them as saved.
        pm[i * n + j] = p[j];
        rhom[i * n + j] = (1 + rho[j]) * (1 + un.p_unit) - 1;
      }
      // out = p v: |p~ - p| <= rho p + tiny, |p~| <= (1 + rho) p + tiny; n products summed.
      LD* out = e.out.data() + r * d;
      LD* out_bound = e.out_bound.data() + r * d;
      for (uint64_t j = 0; j < n; ++j) {
        const LD pe = (1 + rho[j]) * p[j] + tiny;
        const LD w = rho[j] * p[j] + tiny + gn * pe;
        for (uint64_t l = 0; l < d; ++l) {
          out[l] += p[j] * V[j * d + l];
          out_bound[l] += w * std::fabs(V[j * d + l]);
        }
      }
      for (uint64_t l = 0; l < d; ++l) {
        const LD bound = out_bound[l] + n * eta;
        out_bound[l] = bound + fu * (std::fabs(out[l]) + bound);
      }
    }
    if (G == nullptr) continue;
    // Backward over the rows that are not blocked.
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t r = b * n + i;
      if (e.blocked[r] != 0) {
        for (uint64_t j = 0; j < n; ++j) ds[i * n + j] = 0, tau[i * n + j] = 0;
        continue;
      }
      // dp = g v^T (d products), c = sum_j p dp (n products from perturbed factors).
      LD c = 0, kappa = 0;
      for (uint64_t j = 0; j < n; ++j) {
        LD acc = 0, mag = 0;
        for (uint64_t l = 0; l < d; ++l) {
          acc += G[i * d + l] * V[j * d + l];
          mag += std::fabs(G[i * d + l] * V[j * d + l]);
        }
        dp[j] = acc;
        e_dp[j] = gd * mag + d * eta;
        const LD pij = pm[i * n + j], rj = rhom[i * n + j];
        const LD pe = (1 + rj) * pij + tiny, dpe = std::fabs(acc) + e_dp[j];
        c += pij * acc;
        kappa += (pe * dpe - pij * std::fabs(acc)) + gn * pe * dpe;
      }
      kappa += n * eta;
      // ds = p (dp - c): the difference and the product, two roundings.
      for (uint64_t j = 0; j < n; ++j) {
        const LD pij = pm[i * n + j], rj = rhom[i * n + j];
        const LD diff = dp[j] - c;
        const LD pe = (1 + rj) * pij + tiny, de = std::fabs(diff) + e_dp[j] + kappa;
        ds[i * n + j] = pij * diff;
        tau[i * n + j] = (pe * de - pij * std::fabs(diff)) + g2 * pe * de + eta;
      }
    }
    // dq = alpha ds k: n products and the product with alpha; underflow of the n products
    // (scaled by alpha) and of the last product. Each sum in increasing j, accumulated in place.
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t r = b * n + i;
      if (e.blocked[r] != 0) continue;
      LD* dq = e.dq.data() + r * d;
      LD* dq_bound = e.dq_bound.data() + r * d;
      for (uint64_t j = 0; j < n; ++j) {
        const LD dsij = ds[i * n + j], tij = tau[i * n + j];
        const LD w = tij + gn1 * (std::fabs(dsij) + tij);
        for (uint64_t l = 0; l < d; ++l) {
          dq[l] += dsij * K[j * d + l];
          dq_bound[l] += w * std::fabs(K[j * d + l]);
        }
      }
      for (uint64_t l = 0; l < d; ++l) {
        const LD bound = scaled(aa, dq_bound[l]) + (aa * n + 1) * eta;
        dq[l] = scaled(pr.alpha, dq[l]);
        dq_bound[l] = bound + fu * (std::fabs(dq[l]) + bound);
      }
    }
    // dk = alpha ds^T q as dq; dv = p^T g, n products of a perturbed probability. Each sum in
    // increasing i over the rows that are not blocked, accumulated in place.
    LD* dk = e.dk.data() + b * n * d;
    LD* dk_bound = e.dk_bound.data() + b * n * d;
    LD* dv = e.dv.data() + b * n * d;
    LD* dv_bound = e.dv_bound.data() + b * n * d;
    for (uint64_t i = 0; i < n; ++i) {
      if (e.blocked[b * n + i] != 0) continue;
      for (uint64_t j = 0; j < n; ++j) {
        const LD dsij = ds[i * n + j], tij = tau[i * n + j];
        const LD wk = tij + gn1 * (std::fabs(dsij) + tij);
        const LD pij = pm[i * n + j], ri = rhom[i * n + j];
        const LD pe = (1 + ri) * pij + tiny;
        const LD wv = ri * pij + tiny + gn * pe;
        for (uint64_t l = 0; l < d; ++l) {
          dk[j * d + l] += dsij * Q[i * d + l];
          dk_bound[j * d + l] += wk * std::fabs(Q[i * d + l]);
          dv[j * d + l] += pij * G[i * d + l];
          dv_bound[j * d + l] += wv * std::fabs(G[i * d + l]);
        }
      }
    }
    for (uint64_t x = 0; x < n * d; ++x) {
      const LD bound_k = scaled(aa, dk_bound[x]) + (aa * n + 1) * eta;
      dk[x] = scaled(pr.alpha, dk[x]);
      dk_bound[x] = bound_k + fu * (std::fabs(dk[x]) + bound_k);
      const LD bound_v = dv_bound[x] + n * eta;
      dv_bound[x] = bound_v + fu * (std::fabs(dv[x]) + bound_v);
    }
  }
  return e;
}

// The bounds' parameters of the two backends for operands of type T (float or double).
template <class T>
Unit cuda_unit() {
  Unit un;
  un.unit = std::numeric_limits<T>::epsilon() / 2;
  un.exp_ulps = sizeof(T) == 4 ? 2 : 1;
  un.denorm = std::numeric_limits<T>::denorm_min();
  un.online_from = 1025;
  return un;
}
template <class T>
Unit reference_unit() {
  Unit un;
  // float works in binary64, double in the host's long double (x87: 64-bit significand).
  un.unit = sizeof(T) == 4 ? std::numeric_limits<double>::epsilon() / 2
                           : std::numeric_limits<long double>::epsilon() / 2;
  un.exp_ulps = 1;
  un.final_unit = std::numeric_limits<T>::epsilon() / 2;
  un.p_unit = std::numeric_limits<T>::epsilon() / 2;
  un.denorm = std::numeric_limits<T>::denorm_min();
  return un;
}
// The error of evaluate's own values for operands of type T: the same stages in long double (expl
// assumed within 1 ULP), no rounding to a dtype, no online rescaling. Its underflow terms take the
// dtype's smallest subnormal, far above long double's (and long double subnormals, which the x87
// unit handles slowly, stay out of the arithmetic).
template <class T>
Unit oracle_unit() {
  Unit un;
  un.unit = std::numeric_limits<LD>::epsilon() / 2;
  un.exp_ulps = 1;
  un.denorm = std::numeric_limits<T>::denorm_min();
  return un;
}

}  // namespace tlrt::parity::attention
