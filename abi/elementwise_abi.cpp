// The elementwise family's exports, generated from ops/elementwise_ops.def: one
// symbol per row, its C signature given by the row's signature class (SPEC-ops section 6,
// symbols-ops.tsv). Every buffer argument is borrowed; every result is a fresh owned buffer (a
// pair for the max/min VJPs, (p', (m', v')) for adam_step). All are pure: any failure panics.
#include <initializer_list>

#include "abi/boundary.h"
#include "runtime/elementwise_dispatch.h"

using tlrt::Buffer;
using tlrt::ElementwiseOp;
using namespace tlrt::abi;

namespace {

std::vector<std::unique_ptr<Buffer>> run(ElementwiseOp op,
                                         std::initializer_list<b_lean_obj_arg> objects,
                                         std::initializer_list<double> scalars) {
  const char* name = tlrt::elementwise_info(op).name;
  const Buffer* inputs[tlrt::kMaxElementwiseInputs] = {};
  int k = 0;
  for (b_lean_obj_arg o : objects) inputs[k++] = &live_buffer(o, name);
  return tlrt::run_elementwise(op, inputs, scalars.begin());
}

lean_obj_res call(ElementwiseOp op, std::initializer_list<b_lean_obj_arg> objects,
                  std::initializer_list<double> scalars) {
  return pure_call([&] { return box_tuple(run(op, objects, scalars)); },
                   tlrt::elementwise_info(op).name);
}

// The result is built (and counted) before the source is released.
lean_obj_res call_then_release(ElementwiseOp op, b_lean_obj_arg x) {
  return pure_call(
      [&] {
        lean_obj_res result = box_tuple(run(op, {x}, {}));
        live_buffer(x, tlrt::elementwise_info(op).name).release();
        return result;
      },
      tlrt::elementwise_info(op).name);
}

}  // namespace

#define TLRT_SIGNATURE_unary(name)                              \
  lean_obj_res torchlean_cuda_buffer_##name(b_lean_obj_arg x) { \
    return call(ElementwiseOp::name, {x}, {});                  \
  }
#define TLRT_SIGNATURE_binary(name)                                               \
  lean_obj_res torchlean_cuda_buffer_##name(b_lean_obj_arg a, b_lean_obj_arg b) { \
    return call(ElementwiseOp::name, {a, b}, {});                                 \
  }
#define TLRT_SIGNATURE_unary_s1(name)                                     \
  lean_obj_res torchlean_cuda_buffer_##name(b_lean_obj_arg x, double c) { \
    return call(ElementwiseOp::name, {x}, {c});                           \
  }
#define TLRT_SIGNATURE_binary_s1(name)                                                      \
  lean_obj_res torchlean_cuda_buffer_##name(b_lean_obj_arg a, b_lean_obj_arg b, double c) { \
    return call(ElementwiseOp::name, {a, b}, {c});                                          \
  }
#define TLRT_SIGNATURE_unary_s2(name)                                                 \
  lean_obj_res torchlean_cuda_buffer_##name(b_lean_obj_arg x, double lo, double hi) { \
    return call(ElementwiseOp::name, {x}, {lo, hi});                                  \
  }
#define TLRT_SIGNATURE_binary_s2(name)                                                     \
  lean_obj_res torchlean_cuda_buffer_##name(b_lean_obj_arg x, b_lean_obj_arg g, double lo, \
                                            double hi) {                                   \
    return call(ElementwiseOp::name, {x, g}, {lo, hi});                                    \
  }
#define TLRT_SIGNATURE_ternary_pair(name)                                       \
  lean_obj_res torchlean_cuda_buffer_##name(b_lean_obj_arg a, b_lean_obj_arg b, \
                                            b_lean_obj_arg g) {                 \
    return call(ElementwiseOp::name, {a, b, g}, {});                            \
  }
#define TLRT_SIGNATURE_adam(name)                                                                 \
  lean_obj_res torchlean_cuda_buffer_##name(b_lean_obj_arg p, b_lean_obj_arg g, b_lean_obj_arg m, \
                                            b_lean_obj_arg v, double b1, double omb1, double b2,  \
                                            double omb2, double c1, double c2, double eps,        \
                                            double decay, double update_scale) {                  \
    return call(ElementwiseOp::name, {p, g, m, v},                                                \
                {b1, omb1, b2, omb2, c1, c2, eps, decay, update_scale});                          \
  }
#define TLRT_SIGNATURE_copy_release(name)                       \
  lean_obj_res torchlean_cuda_buffer_##name(b_lean_obj_arg x) { \
    return call_then_release(ElementwiseOp::name, x);           \
  }

extern "C" {
#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64) \
  TLRT_SIGNATURE_##signature(name)
#include "ops/elementwise_ops.def"
#undef TLRT_ELEMENTWISE
}  // extern "C"
