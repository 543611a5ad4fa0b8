// Operation metadata generated from elementwise_ops.def: the functors' arities (checked against
// each signature at compile time) and the parity bounds.
#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/elementwise_ref.h"

namespace tlrt::kernels {
namespace {

constexpr int signature_inputs(ElementwiseSignature s) {
  switch (s) {
    case ElementwiseSignature::unary:
    case ElementwiseSignature::unary_s1:
    case ElementwiseSignature::unary_s2:
    case ElementwiseSignature::copy_release:
      return 1;
    case ElementwiseSignature::binary:
    case ElementwiseSignature::binary_s1:
    case ElementwiseSignature::binary_s2:
      return 2;
    case ElementwiseSignature::ternary_pair:
      return 3;
    case ElementwiseSignature::adam:
      return 4;
  }
  return -1;
}

constexpr int signature_outputs(ElementwiseSignature s) {
  return s == ElementwiseSignature::ternary_pair ? 2 : s == ElementwiseSignature::adam ? 3 : 1;
}

constexpr int signature_scalars(ElementwiseSignature s) {
  switch (s) {
    case ElementwiseSignature::unary_s1:
    case ElementwiseSignature::binary_s1:
      return 1;
    case ElementwiseSignature::unary_s2:
    case ElementwiseSignature::binary_s2:
      return 2;
    case ElementwiseSignature::adam:
      return 9;
    default:
      return 0;
  }
}

#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64)                          \
  static_assert(                                                                              \
      ref_ops::Functor::kInputs == signature_inputs(ElementwiseSignature::signature) &&       \
          ref_ops::Functor::kOutputs == signature_outputs(ElementwiseSignature::signature) && \
          ref_ops::Functor::kScalars == signature_scalars(ElementwiseSignature::signature),   \
      #Functor " does not match the " #signature " signature");
#include "ops/elementwise_ops.def"
#undef TLRT_ELEMENTWISE

constexpr ElementwiseInfo kInfo[] = {
#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64) \
  {#name,                                                            \
   ElementwiseSignature::signature,                                  \
   signature_inputs(ElementwiseSignature::signature),                \
   signature_outputs(ElementwiseSignature::signature),               \
   signature_scalars(ElementwiseSignature::signature),               \
   ulp_f32,                                                          \
   ulp_f64},
#include "ops/elementwise_ops.def"
#undef TLRT_ELEMENTWISE
};

constexpr ElementwiseOp kOps[] = {
#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64) ElementwiseOp::name,
#include "ops/elementwise_ops.def"
#undef TLRT_ELEMENTWISE
};

}  // namespace

const ElementwiseInfo& elementwise_info(ElementwiseOp op) {
  return kInfo[static_cast<int>(op)];
}

const ElementwiseOp* elementwise_ops(int* count) {
  *count = static_cast<int>(sizeof(kOps) / sizeof(kOps[0]));
  return kOps;
}

}  // namespace tlrt::kernels
