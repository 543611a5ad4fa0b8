#include "runtime/elementwise_dispatch.h"

#include "common/error.h"
#include "runtime/dispatch.h"

namespace tlrt {

std::vector<std::unique_ptr<Buffer>> run_elementwise(ElementwiseOp op, const Buffer* const* inputs,
                                                     const double* scalars) {
  const kernels::ElementwiseInfo& info = kernels::elementwise_info(op);
  const char* name = info.name;
  const Buffer& first = *inputs[0];
  for (int k = 0; k < info.inputs; ++k)
    require_compatible(name, {&first, inputs[k]}, SameSize::yes);
  const uint64_t n = first.size();
  std::vector<std::unique_ptr<Buffer>> outputs;
  outputs.reserve(info.outputs);
  for (int k = 0; k < info.outputs; ++k) {
    outputs.push_back(Buffer::allocate(first.backend(), first.dtype(), n, name));
  }
  if (n == 0) return outputs;
  auto pointers = [&](auto as, auto run) {
    using T = typename decltype(as)::type;
    const T* in[kernels::kMaxElementwiseInputs] = {};
    T* out[kernels::kMaxElementwiseOutputs] = {};
    T s[kernels::kMaxElementwiseScalars] = {};
    for (int k = 0; k < info.inputs; ++k) in[k] = inputs[k]->as<T>();
    for (int k = 0; k < info.outputs; ++k) out[k] = outputs[k]->as<T>();
    // Host scalars are rounded once to the dtype (SPEC-ops 2.5), each independently.
    for (int k = 0; k < info.scalars; ++k) s[k] = static_cast<T>(scalars[k]);
    run(in, out, s);
  };
  on_backend(
      first.backend(), first.dtype(), name,
      [&](auto as) {
        pointers(as,
                 [&](auto in, auto out, auto s) { kernels::elementwise_ref(op, in, out, s, n); });
      },
      [&](auto as, CUstream_st* stream) {
        pointers(as, [&](auto in, auto out, auto s) {
          kernels::elementwise_cuda(op, in, out, s, n, stream);
        });
      });
  return outputs;
}

}  // namespace tlrt
