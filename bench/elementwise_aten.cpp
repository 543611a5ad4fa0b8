// ATen side of the elementwise rows of tlrt-bench: for each op of ops/elementwise_ops.def, the
// ATen call or composition TorchLean's LibTorch backend makes for it, registered under the op's
// name (aten_bench.cpp times them), plus PyTorch's fused Adam for scale next to adam_step. An op
// added to the list needs its entry here, or a no_aten_equivalent entry saying why there is none:
// with LibTorch linked, tlrt-bench refuses to start while one is missing.
#include <ATen/ATen.h>

#include <optional>

#include "aten_registry.h"

namespace bench::aten {
namespace {

at::Scalar sc(double v) {
  return at::Scalar(v);
}
const at::Scalar kZero(0.0);

// The optimizer as TorchLean composed it, stage for stage (SPEC-ops 6.3), in place on fresh
// temporaries where a stage updates its own result: 11 kernels.
Tensors adam_composed(X x, S s) {
  const at::Tensor &p = x[0], &g = x[1], &m = x[2], &v = x[3];
  at::Tensor m2 = at::mul(m, sc(s[0]));
  m2.add_(g, sc(s[1]));
  at::Tensor v2 = at::mul(v, sc(s[2]));
  v2.addcmul_(g, g, sc(s[3]));
  at::Tensor den = at::mul(v2, sc(s[5]));
  den.sqrt_();
  den.add_(sc(s[6]));
  at::Tensor u = at::mul(m2, sc(s[4]));
  u.div_(den);
  at::Tensor p2 = at::add(p, p, sc(s[7]));
  p2.add_(u, sc(s[8]));
  return {p2, m2, v2};
}

// PyTorch's own fused Adam (what torch.optim.Adam(fused=True) calls), in place on p, m, v: the
// best ATen offers for the same bytes, for reference next to the composition.
Tensors adam_fused(X x, S s) {
  at::_fused_adam_({x[0]}, {x[1]}, {x[2]}, {x[3]}, {}, {x[4]}, /*lr=*/-s[8], /*beta1=*/s[0],
                   /*beta2=*/s[2], /*weight_decay=*/0.0, /*eps=*/s[6], /*amsgrad=*/false,
                   /*maximize=*/false);
  return {};
}

Tensors max_bwd(X x, S) {
  const at::Tensor a_wins = at::gt(x[0], x[1]), b_wins = at::gt(x[1], x[0]);
  const at::Tensor half = at::mul(x[2], sc(0.5));
  return {at::where(a_wins, x[2], at::where(b_wins, kZero, half)),
          at::where(b_wins, x[2], at::where(a_wins, kZero, half))};
}

Tensors min_bwd(X x, S) {
  const at::Tensor a_wins = at::lt(x[0], x[1]), b_wins = at::lt(x[1], x[0]);
  const at::Tensor half = at::mul(x[2], sc(0.5));
  return {at::where(a_wins, x[2], at::where(b_wins, kZero, half)),
          at::where(b_wins, x[2], at::where(a_wins, kZero, half))};
}

// sqrt: clamp_min then sqrt (two passes) rather than where(x > 0, sqrt(x), 0) (three): the
// cheaper composition with the same value except the sign of -0 and NaN handling, which do not
// change the time.
const AtenOpRegistration kElementwiseOps({
    {"abs", 1, false, "abs(x)", [](X x, S) -> Tensors { return {at::abs(x[0])}; }},
    {"floor", 1, false, "floor(x)", [](X x, S) -> Tensors { return {at::floor(x[0])}; }},
    {"neg", 1, false, "neg(x)", [](X x, S) -> Tensors { return {at::neg(x[0])}; }},
    {"sqrt", 1, false, "sqrt(clamp_min(x, 0))",
     [](X x, S) -> Tensors { return {at::sqrt(at::clamp_min(x[0], kZero))}; }},
    {"exp", 1, false, "exp(x)", [](X x, S) -> Tensors { return {at::exp(x[0])}; }},
    {"sin", 1, false, "sin(x)", [](X x, S) -> Tensors { return {at::sin(x[0])}; }},
    {"cos", 1, false, "cos(x)", [](X x, S) -> Tensors { return {at::cos(x[0])}; }},
    {"log", 1, false, "log(x)", [](X x, S) -> Tensors { return {at::log(x[0])}; }},
    {"inv", 1, false, "reciprocal(x)", [](X x, S) -> Tensors { return {at::reciprocal(x[0])}; }},
    {"relu", 1, false, "relu(x)", [](X x, S) -> Tensors { return {at::relu(x[0])}; }},
    {"sigmoid", 1, false, "sigmoid(x)", [](X x, S) -> Tensors { return {at::sigmoid(x[0])}; }},
    {"tanh", 1, false, "tanh(x)", [](X x, S) -> Tensors { return {at::tanh(x[0])}; }},
    {"gelu", 1, false, "gelu(x, approximate=tanh)",
     [](X x, S) -> Tensors { return {at::gelu(x[0], "tanh")}; }},
    {"max", 2, false, "fmax(a, b)", [](X x, S) -> Tensors { return {at::fmax(x[0], x[1])}; }},
    {"min", 2, false, "fmin(a, b)", [](X x, S) -> Tensors { return {at::fmin(x[0], x[1])}; }},
    {"div", 2, false, "div(a, b)", [](X x, S) -> Tensors { return {at::div(x[0], x[1])}; }},
    {"add", 2, false, "add(a, b)", [](X x, S) -> Tensors { return {at::add(x[0], x[1])}; }},
    {"sub", 2, false, "sub(a, b)", [](X x, S) -> Tensors { return {at::sub(x[0], x[1])}; }},
    {"mul", 2, false, "mul(a, b)", [](X x, S) -> Tensors { return {at::mul(x[0], x[1])}; }},
    {"mask", 2, false, "where(ne(allowed, 0), values, 0)",
     [](X x, S) -> Tensors { return {at::where(at::ne(x[1], kZero), x[0], kZero)}; }},
    {"scale", 1, false, "mul(x, c)", [](X x, S s) -> Tensors { return {at::mul(x[0], sc(s[0]))}; }},
    {"axpy", 2, false, "add(a, b, alpha=c)",
     [](X x, S s) -> Tensors { return {at::add(x[0], x[1], sc(s[0]))}; }},
    {"scaled_prod_exp", 2, false, "exp(mul(mul(full_like(x, c), x), y))",
     [](X x, S s) -> Tensors {
       return {at::exp(at::mul(at::mul(at::full_like(x[0], sc(s[0])), x[0]), x[1]))};
     }},
    {"clamp", 1, false, "clamp(x, lo, hi)",
     [](X x, S s) -> Tensors {
       return {at::clamp(x[0], std::optional<at::Scalar>(sc(s[0])),
                         std::optional<at::Scalar>(sc(s[1])))};
     }},
    {"relu_bwd", 2, false, "threshold_backward(g, x, 0)",
     [](X x, S) -> Tensors { return {at::threshold_backward(x[1], x[0], kZero)}; }},
    {"gelu_bwd", 2, false, "gelu_backward(g, x, approximate=tanh)",
     [](X x, S) -> Tensors { return {at::gelu_backward(x[1], x[0], "tanh")}; }},
    {"abs_bwd", 2, false, "mul(sign(x), g)",
     [](X x, S) -> Tensors { return {at::mul(at::sign(x[0]), x[1])}; }},
    {"sqrt_bwd", 2, false, "where(gt(x, 0), mul(g, reciprocal(mul(sqrt(x), 2))), 0)",
     [](X x, S) -> Tensors {
       const at::Tensor f = at::reciprocal(at::mul(at::sqrt(x[0]), sc(2.0)));
       return {at::where(at::gt(x[0], kZero), at::mul(x[1], f), kZero)};
     }},
    {"clamp_bwd", 2, false, "where(logical_and(gt(x, lo), lt(x, hi)), g, 0)",
     [](X x, S s) -> Tensors {
       const at::Tensor inside = at::logical_and(at::gt(x[0], sc(s[0])), at::lt(x[0], sc(s[1])));
       return {at::where(inside, x[1], kZero)};
     }},
    {"max_bwd", 3, false,
     "gt(a, b), gt(b, a), mul(g, 0.5), four where (da = where(a>b, g, where(b>a, 0, g/2)))",
     max_bwd},
    {"min_bwd", 3, false,
     "lt(a, b), lt(b, a), mul(g, 0.5), four where (da = where(a<b, g, where(b<a, 0, g/2)))",
     min_bwd},
    {"copy_and_release", 1, false, "mul(x, 1)",
     [](X x, S) -> Tensors { return {at::mul(x[0], sc(1.0))}; }},
    {"adam_step", 4, false,
     "11 kernels: mul, add_(alpha), mul, addcmul_, mul, sqrt_, add_, mul, div_, add(alpha), "
     "add_(alpha)",
     adam_composed},
    {"adam_step_fused", 4, true, "_fused_adam_ (PyTorch's fused optimizer, in place)", adam_fused},
});

}  // namespace
}  // namespace bench::aten
