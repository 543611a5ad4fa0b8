// ATen side of the matmul rows of tlrt-bench, as TorchLean's LibTorch backend computes them.
// bmm_with_transpose (host scalars: the ABI's batch, m, n, p, transposeA, transposeB): the stored
// operands viewed as (batch, n, m) / (batch, p, n) and transposed per batch where the flag is set,
// then at::bmm. dgemm (host scalars m, n, p): host binary64 operands wrapped by from_blob (pageable
// memory) and copied to the device, at::matmul, the result copied back to the host and memcpy'd
// into the FloatArray's storage; the host operands and the FloatArray storage are made once per
// size, outside the timed calls.
#include <ATen/ATen.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "aten_registry.h"

namespace bench::aten {
namespace {

int64_t extent(S s, int k) {
  return static_cast<int64_t>(s[k]);
}

at::Tensor stored_operand(const at::Tensor& flat, int64_t batch, int64_t rows, int64_t cols,
                          bool transpose) {
  return transpose ? flat.view({batch, cols, rows}).transpose(1, 2)
                   : flat.view({batch, rows, cols});
}

Tensors dgemm_path(X x, S s) {
  const int64_t m = extent(s, 0), n = extent(s, 1), p = extent(s, 2);
  // Host operands standing for the Lean FloatArrays, made once per size.
  static at::Tensor host_a, host_b;
  static std::vector<double> float_array;
  if (!host_a.defined() || host_a.numel() != m * n) {
    host_a = x[0].to(at::kCPU).contiguous();
    host_b = x[1].to(at::kCPU).contiguous();
    float_array.assign(static_cast<size_t>(m * p), 0.0);
  }
  const auto cpu = at::TensorOptions().dtype(at::kDouble).device(at::kCPU);
  const auto gpu = cpu.device(x[0].device());
  const at::Tensor a = at::from_blob(host_a.data_ptr<double>(), {m, n}, cpu).to(gpu);
  const at::Tensor b = at::from_blob(host_b.data_ptr<double>(), {n, p}, cpu).to(gpu);
  const at::Tensor result = at::matmul(a, b).to(at::kCPU).contiguous();
  std::memcpy(float_array.data(), result.const_data_ptr<double>(),
              static_cast<size_t>(m * p) * sizeof(double));
  return {result};
}

const AtenOpRegistration kMatmulOps({
    {"bmm_with_transpose", 2, false, "bmm(A' , B') on transposed views",
     [](X x, S s) -> Tensors {
       const int64_t batch = extent(s, 0), m = extent(s, 1), n = extent(s, 2), p = extent(s, 3);
       const at::Tensor a = stored_operand(x[0], batch, m, n, s[4] != 0);
       const at::Tensor b = stored_operand(x[1], batch, n, p, s[5] != 0);
       return {at::bmm(a, b)};
     }},
    {"dgemm", 2, false, "from_blob(host).to(gpu), matmul, .to(cpu), memcpy", dgemm_path},
});

}  // namespace
}  // namespace bench::aten
