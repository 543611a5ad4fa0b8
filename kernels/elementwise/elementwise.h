// The elementwise family: operation identifiers and metadata generated from elementwise_ops.def,
// and the two launchers (CUDA and reference) that run any operation of the list over flat
// buffers. Element i of every output depends only on element i of every input and on the host
// scalars (already rounded to T by the caller).
#pragma once

#include <cstdint>

struct CUstream_st;

namespace tlrt::kernels {

enum class ElementwiseOp : uint8_t {
#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64) name,
#include "ops/elementwise_ops.def"
#undef TLRT_ELEMENTWISE
};

enum class ElementwiseSignature : uint8_t {
  unary,
  binary,
  unary_s1,
  binary_s1,
  unary_s2,
  binary_s2,
  ternary_pair,
  adam,
  copy_release,
};

struct ElementwiseInfo {
  const char* name;
  ElementwiseSignature signature;
  int inputs;      // buffer operands
  int outputs;     // result buffers
  int scalars;     // host scalars
  double ulp_f32;  // parity bound (0: bit-exact)
  double ulp_f64;
};

constexpr int kMaxElementwiseInputs = 4;
constexpr int kMaxElementwiseOutputs = 3;
constexpr int kMaxElementwiseScalars = 9;

const ElementwiseInfo& elementwise_info(ElementwiseOp op);
// Every operation of the list, in list order.
const ElementwiseOp* elementwise_ops(int* count);

// Runs `op` over n elements. in[k] / out[k] point at n scalars each; scalars holds info.scalars
// values already rounded to T. The CUDA launcher queues one kernel on `stream`; n == 0 launches
// nothing.
template <class T>
void elementwise_cuda(ElementwiseOp op, const T* const* in, T* const* out, const T* scalars,
                      uint64_t n, CUstream_st* stream);
template <class T>
void elementwise_ref(ElementwiseOp op, const T* const* in, T* const* out, const T* scalars,
                     uint64_t n);

// The magnitude at which parity measures the error of element i (a sum's terms can be larger
// than the result, where ULPs of the result overstate a rounding difference). Reference backend
// only; returns |reference result| for most operations.
template <class T>
double elementwise_error_scale(ElementwiseOp op, const T* inputs, const T* scalars, T result);

}  // namespace tlrt::kernels
