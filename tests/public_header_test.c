/* The public header compiled as C with nothing but itself: every elementwise export of the op list
 * must be declared there (an undeclared name is a compile error). */
#include <tlrt/torchlean_abi.h>

typedef void (*tlrt_any_function)(void);

#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64) \
  (tlrt_any_function) & torchlean_cuda_buffer_##name,
static const tlrt_any_function elementwise_exports[] = {
#include "ops/elementwise_ops.def"
};
#undef TLRT_ELEMENTWISE

size_t tlrt_header_elementwise_count(void) {
  return sizeof(elementwise_exports) / sizeof(elementwise_exports[0]);
}

tlrt_any_function tlrt_header_elementwise_export(size_t k) {
  return elementwise_exports[k];
}
