// ATen side of the attention rows of tlrt-bench: what TorchLean's LibTorch adapter for the legacy
// pair runs (csrc/libtorch/attention.cpp of lean-dojo/TorchLean), registered under the ops' names
// (aten_bench.cpp times them). Every input arrives as one flat tensor of the row's largest operand
// count (Q, K, V, mask; the backward adds dOut), narrowed here to the exact operands; the host
// scalars are the forward's, in the ABI's order (hasMask, batch, n, d, scale), then a tag unique to
// the row.
//   * attention_fwd: Q, K, V reshaped to (batch, 1, n, d); with a mask, mask.reshape(batch, 1, n,
//   n)
//     .to(bool); at::_fused_sdp_choice(Q, K, V, mask, 0, false, scale) picks the provider, moved to
//     the math pair when the provider has no pair here, when a mask meets the flash or cuDNN pair,
//     for flash with 192 < d <= 224 and for cuDNN under deterministic algorithms; with a mask,
//     blocked = !mask, blockedRows = blocked.all(-1, keepdim), bias = zeros.masked_fill(blocked,
//     -inf) then 0 on blocked rows, Q's blocked rows zeroed; the provider's forward
//     (_scaled_dot_product_efficient_attention with the bias and its log-sum-exp, its bias padded
//     to a multiple of 8 columns when needed; _scaled_dot_product_flash_attention on heads padded
//     to a multiple of 8; _scaled_dot_product_cudnn_attention; _scaled_dot_product_attention_math
//     with the bias); the output sliced to d, blocked rows zeroed, reshape(-1).contiguous() as the
//     adapter boxes it. For float32 on the H200, _fused_sdp_choice picks the efficient pair.
//   * attention_bwd: the forward above, made once per row (its inputs copied to exact size) and
//     kept, outside the timed calls; dOut reshaped, its blocked rows zeroed; the provider's
//     backward (_scaled_dot_product_efficient_attention_backward with grad_input_mask {Q, K, V},
//     the flash or cuDNN *_backward, or for math: matmul(dOut, V^T), _softmax_backward_data, the
//     split scale sqrt|scale| on both sides of dQ and dK, matmul(P^T, dOut)); dQ's blocked rows
//     zeroed; each gradient sliced to d and made contiguous.
// The adapter's eligibility check for requests with ATen's math pair disabled (the can_use_*
// predicates of sdp_utils.h) is not reproduced: tlrt-bench never disables the math pair, and with
// it enabled the adapter returns before evaluating them. A provider whose operator headers this
// LibTorch lacks falls back to the math pair, as in the adapter.
#include <ATen/ATen.h>
#include <ATen/SDPBackend.h>
#include <ATen/ops/_fused_sdp_choice.h>
#include <ATen/ops/_scaled_dot_product_attention_math.h>
#include <ATen/ops/_softmax_backward_data.h>

#if __has_include(<ATen/ops/_scaled_dot_product_flash_attention.h>) && \
    __has_include(<ATen/ops/_scaled_dot_product_flash_attention_backward.h>)
#include <ATen/ops/_scaled_dot_product_flash_attention.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_backward.h>
#define TLRT_ATEN_FLASH_PAIR 1
#endif

#if __has_include(<ATen/ops/_scaled_dot_product_efficient_attention.h>) && \
    __has_include(<ATen/ops/_scaled_dot_product_efficient_attention_backward.h>)
#include <ATen/ops/_scaled_dot_product_efficient_attention.h>
#include <ATen/ops/_scaled_dot_product_efficient_attention_backward.h>
#define TLRT_ATEN_EFFICIENT_PAIR 1
#endif

#if __has_include(<ATen/ops/_scaled_dot_product_cudnn_attention.h>) && \
    __has_include(<ATen/ops/_scaled_dot_product_cudnn_attention_backward.h>)
#include <ATen/ops/_scaled_dot_product_cudnn_attention.h>
#include <ATen/ops/_scaled_dot_product_cudnn_attention_backward.h>
#define TLRT_ATEN_CUDNN_PAIR 1
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "aten_registry.h"

namespace bench::aten {
namespace {

using Gradients = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

// The forward's host scalars in the ABI's order.
struct Request {
  bool has_mask;
  int64_t batch, n, d;
  double scale;
};

Request request_of(S s) {
  return {s[0] != 0, static_cast<int64_t>(s[1]), static_cast<int64_t>(s[2]),
          static_cast<int64_t>(s[3]), s[4]};
}

// What the adapter saves on its output for the backward.
struct Context {
  at::SDPBackend backend = at::SDPBackend::math;
  at::Tensor query, key, value, output, bias, blocked_rows, logsumexp, cum_seq_q, cum_seq_k,
      rng_state, rng_offset, probabilities;
  int64_t max_q = 0;
  int64_t max_k = 0;
  int64_t head_dim = 0;
  double scale = 1.0;
};

std::optional<at::Tensor> optional_bias(const Context& c) {
  if (c.bias.defined()) return c.bias;
  return std::nullopt;
}

void use_math(Context& c) {
  TORCH_CHECK(at::globalContext().userEnabledMathSDP(),
              "attention: the request needs the math SDPA pair, but ATen's math backend is "
              "disabled");
  c.backend = at::SDPBackend::math;
}

bool has_pair(at::SDPBackend backend) {
  switch (backend) {
    case at::SDPBackend::math:
      return true;
#ifdef TLRT_ATEN_FLASH_PAIR
    case at::SDPBackend::flash_attention:
      return true;
#endif
#ifdef TLRT_ATEN_EFFICIENT_PAIR
    case at::SDPBackend::efficient_attention:
      return true;
#endif
#ifdef TLRT_ATEN_CUDNN_PAIR
    case at::SDPBackend::cudnn_attention:
      return true;
#endif
    default:
      return false;
  }
}

#ifdef TLRT_ATEN_FLASH_PAIR
// The head dimension padded with zeros to a multiple of 8 (the flash pair's requirement).
at::Tensor pad_head(const at::Tensor& t) {
  const int64_t padding = (8 - t.size(-1) % 8) % 8;
  return padding == 0 ? t : at::constant_pad_nd(t, {int64_t{0}, padding}, 0.0);
}
#endif

#if defined(TLRT_ATEN_FLASH_PAIR) || defined(TLRT_ATEN_CUDNN_PAIR)
// The flash and cuDNN forwards return the same eight values: output, logsumexp, the cumulative
// sequence lengths and maxima of Q and K, and the random state (unused without dropout).
template <class Result>
void keep_sequence_pair(Context& c, const Result& r) {
  c.output = std::get<0>(r);
  c.logsumexp = std::get<1>(r);
  c.cum_seq_q = std::get<2>(r);
  c.cum_seq_k = std::get<3>(r);
  c.max_q = std::get<4>(r).expect_int();
  c.max_k = std::get<5>(r).expect_int();
  c.rng_state = std::get<6>(r);
  c.rng_offset = std::get<7>(r);
}
#endif

void run_forward(Context& c) {
  switch (c.backend) {
#ifdef TLRT_ATEN_FLASH_PAIR
    case at::SDPBackend::flash_attention: {
      c.query = pad_head(c.query);
      c.key = pad_head(c.key);
      c.value = pad_head(c.value);
      keep_sequence_pair(c, at::_scaled_dot_product_flash_attention(c.query, c.key, c.value, 0.0,
                                                                    false, false, c.scale));
      return;
    }
#endif
#ifdef TLRT_ATEN_EFFICIENT_PAIR
    case at::SDPBackend::efficient_attention: {
      // The efficient pair needs bias rows aligned to 8 elements, in its backward too.
      if (c.bias.defined()) {
        const int64_t width = c.bias.size(-1);
        const int64_t padding = (8 - width % 8) % 8;
        if (padding != 0) {
          c.bias = at::constant_pad_nd(c.bias, {int64_t{0}, padding}, 0.0).slice(-1, 0, width);
        }
      }
      auto r = at::_scaled_dot_product_efficient_attention(
          c.query, c.key, c.value, optional_bias(c), true, 0.0, false, c.scale);
      c.output = std::get<0>(r);
      c.logsumexp = std::get<1>(r);
      c.rng_state = std::get<2>(r);
      c.rng_offset = std::get<3>(r);
      return;
    }
#endif
#ifdef TLRT_ATEN_CUDNN_PAIR
    case at::SDPBackend::cudnn_attention: {
      keep_sequence_pair(
          c, at::_scaled_dot_product_cudnn_attention(c.query, c.key, c.value, optional_bias(c),
                                                     true, 0.0, false, false, c.scale));
      return;
    }
#endif
    case at::SDPBackend::math: {
      auto r = at::_scaled_dot_product_attention_math(c.query, c.key, c.value, optional_bias(c),
                                                      0.0, false, std::nullopt, c.scale, false);
      c.output = std::get<0>(r);
      c.probabilities = std::get<1>(r);
      return;
    }
    default:
      TORCH_CHECK(false, "attention: unsupported SDPA provider");
  }
}

// The adapter's forward on exact-size flat operands (mask undefined without one): fills `c` and
// returns the output as the adapter boxes it.
at::Tensor forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                   const at::Tensor& mask, const Request& r, Context& c) {
  const std::vector<int64_t> shape{r.batch, 1, r.n, r.d};
  c.query = q.reshape(shape);
  c.key = k.reshape(shape);
  c.value = v.reshape(shape);
  c.head_dim = r.d;
  c.scale = r.scale;
  auto& settings = at::globalContext();
  const bool deterministic = settings.deterministicAlgorithms();
  TORCH_CHECK(!deterministic || !settings.deterministicAlgorithmsWarnOnly(),
              "attention: deterministic reductions require strict ATen determinism");
  std::optional<at::Tensor> allowed;
  if (r.has_mask) allowed = mask.reshape({r.batch, 1, r.n, r.n}).to(at::kBool);
  c.backend = static_cast<at::SDPBackend>(
      at::_fused_sdp_choice(c.query, c.key, c.value, allowed, 0.0, false, r.scale, false));
  if (!has_pair(c.backend)) use_math(c);
  // An explicit hard mask runs on the math or efficient pair, with an exact -inf bias.
  if (allowed.has_value() && (c.backend == at::SDPBackend::cudnn_attention ||
                              c.backend == at::SDPBackend::flash_attention)) {
    use_math(c);
  }
  if (c.backend == at::SDPBackend::flash_attention && r.d > 192 && r.d <= 224) use_math(c);
  if (c.backend == at::SDPBackend::cudnn_attention && deterministic) use_math(c);
  if (allowed.has_value()) {
    const at::Tensor blocked = allowed->logical_not();
    c.blocked_rows = blocked.all(-1, true);
    c.bias = at::zeros(allowed->sizes(), c.query.options())
                 .masked_fill(blocked, -std::numeric_limits<double>::infinity());
    // Fully blocked rows get a finite softmax; their output and cotangent are zeroed.
    c.bias.masked_fill_(c.blocked_rows, 0.0);
    c.query = c.query.masked_fill(c.blocked_rows, 0.0);
  }
  run_forward(c);
  at::Tensor result = c.output.slice(-1, 0, c.head_dim);
  if (c.blocked_rows.defined()) result = result.masked_fill(c.blocked_rows, 0.0);
  return result.reshape({-1}).contiguous();
}

Gradients run_backward(const Context& c, const at::Tensor& grad) {
  switch (c.backend) {
#ifdef TLRT_ATEN_FLASH_PAIR
    case at::SDPBackend::flash_attention:
      return at::_scaled_dot_product_flash_attention_backward(
          pad_head(grad), c.query, c.key, c.value, c.output, c.logsumexp, c.cum_seq_q, c.cum_seq_k,
          c.max_q, c.max_k, 0.0, false, c.rng_state, c.rng_offset, c.scale);
#endif
#ifdef TLRT_ATEN_EFFICIENT_PAIR
    case at::SDPBackend::efficient_attention: {
      auto r = at::_scaled_dot_product_efficient_attention_backward(
          grad, c.query, c.key, c.value, c.bias, c.output, c.logsumexp, c.rng_state, c.rng_offset,
          0.0, std::array<bool, 4>{true, true, true, false}, false, c.scale);
      return Gradients(std::get<0>(r), std::get<1>(r), std::get<2>(r));
    }
#endif
#ifdef TLRT_ATEN_CUDNN_PAIR
    case at::SDPBackend::cudnn_attention:
      return at::_scaled_dot_product_cudnn_attention_backward(
          grad, c.query, c.key, c.value, c.output, c.logsumexp, c.rng_state, c.rng_offset, c.bias,
          c.cum_seq_q, c.cum_seq_k, c.max_q, c.max_k, 0.0, false, c.scale);
#endif
    case at::SDPBackend::math: {
      // From the saved probabilities: no second Q K^T or softmax.
      const at::Tensor& p = c.probabilities;
      const at::Tensor dp = at::matmul(grad, c.value.transpose(-2, -1));
      const at::Tensor ds = at::_softmax_backward_data(dp, p, -1, p.scalar_type());
      // The scale split between both operands, as ATen's math pair applies it.
      const double magnitude = std::sqrt(std::abs(c.scale));
      const double query_scale = c.scale < 0.0 ? -magnitude : magnitude;
      at::Tensor dq = at::matmul(ds, c.key * magnitude) * query_scale;
      at::Tensor dk = at::matmul(ds.transpose(-2, -1), c.query * query_scale) * magnitude;
      at::Tensor dv = at::matmul(p.transpose(-2, -1), grad);
      return Gradients(dq, dk, dv);
    }
    default:
      TORCH_CHECK(false, "attention: unsupported SDPA provider");
      return Gradients();
  }
}

Tensors attention_forward(X x, S s) {
  const Request r = request_of(s);
  const int64_t elements = r.batch * r.n * r.d;
  const at::Tensor mask = r.has_mask ? x[3].narrow(0, 0, r.batch * r.n * r.n) : at::Tensor();
  Context c;
  return {forward(x[0].narrow(0, 0, elements), x[1].narrow(0, 0, elements),
                  x[2].narrow(0, 0, elements), mask, r, c)};
}

// The backward's forward, kept across the timed calls of one row (identified by its scalars,
// which end in the row's tag). Allocated once and never destroyed, so that no tensor is freed
// during static destruction.
struct Saved {
  bool valid = false;
  std::array<double, 6> scalars{};
  Context context;
};

Saved& saved() {
  static Saved* const s = new Saved();
  return *s;
}

Tensors attention_backward(X x, S s) {
  const Request r = request_of(s);
  const int64_t elements = r.batch * r.n * r.d;
  Saved& cache = saved();
  if (!cache.valid || !std::equal(cache.scalars.begin(), cache.scalars.end(), s)) {
    cache.valid = false;
    cache.context = Context();
    // Exact-size copies, as the adapter's buffers are, so that the kept context holds no more.
    const at::Tensor mask =
        r.has_mask ? x[3].narrow(0, 0, r.batch * r.n * r.n).clone() : at::Tensor();
    forward(x[0].narrow(0, 0, elements).clone(), x[1].narrow(0, 0, elements).clone(),
            x[2].narrow(0, 0, elements).clone(), mask, r, cache.context);
    std::copy(s, s + cache.scalars.size(), cache.scalars.begin());
    cache.valid = true;
  }
  const Context& c = cache.context;
  at::Tensor grad = x[4].narrow(0, 0, elements).reshape({r.batch, 1, r.n, r.d});
  if (c.blocked_rows.defined()) grad = grad.masked_fill(c.blocked_rows, 0.0);
  Gradients g = run_backward(c, grad);
  at::Tensor dq = std::get<0>(g);
  if (c.blocked_rows.defined()) dq = dq.masked_fill(c.blocked_rows, 0.0);
  return {dq.slice(-1, 0, c.head_dim).reshape({-1}).contiguous(),
          std::get<1>(g).slice(-1, 0, c.head_dim).reshape({-1}).contiguous(),
          std::get<2>(g).slice(-1, 0, c.head_dim).reshape({-1}).contiguous()};
}

const AtenOpRegistration kAttentionOps({
    {"attention_fwd", 4, false,
     "reshape(batch, 1, n, d); mask.to(bool), logical_not, all(-1), zeros.masked_fill(-inf), "
     "masked_fill_(0), Q.masked_fill(0); _fused_sdp_choice; _scaled_dot_product_efficient_"
     "attention (or the flash / cuDNN / math pair); slice, masked_fill(0), contiguous",
     attention_forward},
    {"attention_bwd", 5, false,
     "forward kept per row (untimed); dOut.masked_fill(0); _scaled_dot_product_efficient_"
     "attention_backward (or the flash / cuDNN pair, or math: matmul, _softmax_backward_data, "
     "split scale); dQ.masked_fill(0); slice, contiguous",
     attention_backward},
});

}  // namespace
}  // namespace bench::aten
