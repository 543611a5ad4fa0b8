#include "runtime/elementwise_dispatch.h"

#include <string>

#include "runtime/context.h"
#include "runtime/error.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_device.h"
#endif

namespace tlrt {
namespace {

using kernels::ElementwiseInfo;
using kernels::ElementwiseOp;

template <class T>
void run_typed(ElementwiseOp op, const ElementwiseInfo& info, Backend backend,
               const Buffer* const* inputs, const double* scalars,
               std::vector<std::unique_ptr<Buffer>>& outputs, uint64_t n) {
  const T* in[kernels::kMaxElementwiseInputs] = {};
  T* out[kernels::kMaxElementwiseOutputs] = {};
  T s[kernels::kMaxElementwiseScalars] = {};
  for (int k = 0; k < info.inputs; ++k) in[k] = inputs[k]->as<T>();
  for (int k = 0; k < info.outputs; ++k) out[k] = outputs[k]->as<T>();
  // Host scalars are rounded once to the dtype (SPEC-ops 2.5), each independently.
  for (int k = 0; k < info.scalars; ++k) s[k] = static_cast<T>(scalars[k]);
  if (backend == Backend::reference) {
    kernels::elementwise_ref<T>(op, in, out, s, n);
    return;
  }
#if TLRT_HAVE_CUDA
  kernels::elementwise_cuda<T>(op, in, out, s, n, cuda::stream(selected_device()));
#else
  fail(ErrorKind::unavailable, info.name, "this build of tlrt has no CUDA backend");
#endif
}

}  // namespace

std::vector<std::unique_ptr<Buffer>> run_elementwise(ElementwiseOp op, const Buffer* const* inputs,
                                                     const double* scalars) {
  const ElementwiseInfo& info = kernels::elementwise_info(op);
  const char* name = info.name;
  const Buffer& first = *inputs[0];
  for (int k = 0; k < info.inputs; ++k) {
    const Buffer& b = *inputs[k];
    require_live(b, name);
    if (b.dtype() == Dtype::encoded) {
      fail(ErrorKind::invalid_argument, name, "expected a real (float32/float64) buffer");
    }
    if (b.size() != first.size()) {
      fail(ErrorKind::invalid_argument, name,
           "buffer sizes differ (" + std::to_string(first.size()) + " vs " +
               std::to_string(b.size()) + ")");
    }
    if (b.dtype() != first.dtype()) {
      fail(ErrorKind::invalid_argument, name,
           std::string("dtypes differ (") + dtype_name(first.dtype()) + " vs " +
               dtype_name(b.dtype()) + ")");
    }
    if (b.backend() != first.backend()) {
      fail(ErrorKind::invalid_argument, name,
           std::string("buffers live on different backends (") + backend_name(first.backend()) +
               " vs " + backend_name(b.backend()) + ")");
    }
  }
  const uint64_t n = first.size();
  std::vector<std::unique_ptr<Buffer>> outputs;
  outputs.reserve(info.outputs);
  for (int k = 0; k < info.outputs; ++k) {
    outputs.push_back(Buffer::allocate(first.backend(), first.dtype(), n, name));
  }
  if (n == 0) return outputs;
  if (first.dtype() == Dtype::f32) {
    run_typed<float>(op, info, first.backend(), inputs, scalars, outputs, n);
  } else {
    run_typed<double>(op, info, first.backend(), inputs, scalars, outputs, n);
  }
  return outputs;
}

}  // namespace tlrt
