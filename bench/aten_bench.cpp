// ATen side of tlrt-bench: for each elementwise op of tlrt, the ATen call or composition that
// TorchLean's LibTorch backend makes for it, timed in the bench's process. Device times run on
// the harness stream (made ATen's current stream) inside Harness::device_median_us, so both sides
// see the same L2 flush and the same event timing. ATen gets its own allocations (copies of the
// tlrt inputs), through its caching allocator as TorchLean's backend would. Every call runs under
// c10::InferenceMode, ATen's cheapest dispatch path: host times here are ATen's floor, not the
// cost of autograd-tracked tensors.
#include "aten_bench.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <torch/version.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "bench_harness.h"

#ifndef TLRT_TORCH_DIR_STR
#define TLRT_TORCH_DIR_STR "?"
#endif

namespace bench::aten {
namespace {

using Tensors = std::vector<at::Tensor>;
using X = const Tensors&;  // the op's inputs in tlrt's order, then `step` where needed
using S = const double*;   // the op's host scalars in tlrt's order

struct AtenOp {
  const char* name;  // the tlrt op
  int inputs;
  bool needs_step;  // a device step counter follows the inputs (the fused optimizer)
  const char* composition;
  Tensors (*run)(X x, S s);
};

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
const AtenOp kOps[] = {
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
    {"reduce_sum", 1, false, "sum(x)", [](X x, S) -> Tensors { return {at::sum(x[0])}; }},
    {"adam_step_fused", 4, true, "_fused_adam_ (PyTorch's fused optimizer, in place)", adam_fused},
};

const AtenOp* find(const char* name) {
  for (const AtenOp& o : kOps) {
    if (std::strcmp(o.name, name) == 0) return &o;
  }
  return nullptr;
}

c10::DeviceIndex current_device() {
  int device = 0;
  cudaGetDevice(&device);
  return static_cast<c10::DeviceIndex>(device);
}

at::TensorOptions options_for(int dtype, c10::DeviceIndex device) {
  return at::TensorOptions()
      .dtype(dtype == 0 ? at::kFloat : at::kDouble)
      .device(at::Device(at::kCUDA, device));
}

bool check_cuda(cudaError_t st, const char* what) {
  if (st == cudaSuccess) return true;
  std::fprintf(stderr, "tlrt-bench: ATen side: %s: %s\n", what, cudaGetErrorString(st));
  return false;
}

}  // namespace

bool available() {
  static const bool ok = [] {
    try {
      if (!at::hasCUDA() || c10::cuda::device_count() == 0) return false;
      // Elementwise kernels never use TF32; turned off so that no later ATen row can either.
      at::globalContext().setAllowTF32CuBLAS(false);
      at::globalContext().setAllowTF32CuDNN(false);
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tlrt-bench: ATen: %s\n", e.what());
      return false;
    }
  }();
  return ok;
}

const char* description() {
  static const std::string text =
      available() ? std::string("ATen ") + TORCH_VERSION + " from " + TLRT_TORCH_DIR_STR +
                        " (InferenceMode, TF32 off, own allocations, timed on the bench stream)"
                  : std::string("ATen: LibTorch ") + TORCH_VERSION + " linked from " +
                        TLRT_TORCH_DIR_STR + " but it sees no CUDA device";
  return text.c_str();
}

const char* composition(const char* op) {
  const AtenOp* o = find(op);
  return o ? o->composition : nullptr;
}

double median_us(Harness& h, const char* op, int dtype, const void* const* inputs, int n_inputs,
                 const double* scalars, uint64_t n, int repeats) {
  const AtenOp* o = find(op);
  if (o == nullptr || o->inputs != n_inputs || !available()) return -1;
  try {
    c10::InferenceMode inference;
    const c10::DeviceIndex device = current_device();
    c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromExternal(h.stream(), device));
    const at::TensorOptions options = options_for(dtype, device);
    const size_t bytes = n * (dtype == 0 ? sizeof(float) : sizeof(double));
    Tensors x;
    for (int k = 0; k < n_inputs; ++k) {
      x.push_back(at::empty({static_cast<int64_t>(n)}, options));
      if (!check_cuda(cudaMemcpyAsync(x.back().data_ptr(), inputs[k], bytes,
                                      cudaMemcpyDeviceToDevice, h.stream()),
                      "input copy")) {
        return -1;
      }
    }
    if (o->needs_step) x.push_back(at::full({}, 10.0, options.dtype(at::kFloat)));
    return h.device_median_us([&](CUstream_st*) { o->run(x, scalars); }, repeats);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlrt-bench: ATen %s: %s\n", op, e.what());
    return -1;
  }
}

double host_us(const char* op, int dtype, const double* scalars, uint64_t n, bool sync, int calls) {
  const AtenOp* o = find(op);
  if (o == nullptr || !available()) return -1;
  try {
    c10::InferenceMode inference;
    const c10::DeviceIndex device = current_device();
    c10::cuda::CUDAGuard device_guard(device);
    const at::TensorOptions options = options_for(dtype, device);
    Tensors x;
    for (int k = 0; k < o->inputs; ++k) x.push_back(at::rand({static_cast<int64_t>(n)}, options));
    if (o->needs_step) x.push_back(at::full({}, 10.0, options.dtype(at::kFloat)));
    const auto settle = [] { c10::cuda::device_synchronize(); };
    if (sync) {
      return Harness::host_per_call_us(
          [&] {
            o->run(x, scalars);
            c10::cuda::device_synchronize();
          },
          calls, 7, settle);
    }
    return Harness::host_per_call_us([&] { o->run(x, scalars); }, calls, 7, settle);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlrt-bench: ATen %s: %s\n", op, e.what());
    return -1;
  }
}

void release_cache() {
  if (!available()) return;
  c10::cuda::device_synchronize();
  c10::cuda::CUDACachingAllocator::emptyCache();
}

}  // namespace bench::aten
