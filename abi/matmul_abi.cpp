// Placeholder exports of the matmul family: each panics "not supported yet" until the family lands.
#include "abi/boundary.h"

using namespace tlrt::abi;

extern "C" {

lean_obj_res torchlean_cuda_buffer_bmm_with_transpose(b_lean_obj_arg A, b_lean_obj_arg B,
                                                      uint32_t batch, uint32_t m, uint32_t n,
                                                      uint32_t p, uint32_t transposeA,
                                                      uint32_t transposeB) {
  (void)A;
  (void)B;
  (void)batch;
  (void)m;
  (void)n;
  (void)p;
  (void)transposeA;
  (void)transposeB;
  return pure_call(
      [&]() -> lean_obj_res { not_supported_yet("bmm_with_transpose", "bmm_with_transpose"); });
}

lean_obj_res torchlean_dgemm_cuda(b_lean_obj_arg A, b_lean_obj_arg B, uint32_t m, uint32_t n,
                                  uint32_t p) {
  (void)A;
  (void)B;
  (void)m;
  (void)n;
  (void)p;
  return pure_call([&]() -> lean_obj_res { not_supported_yet("dgemm_cuda", "dgemm_cuda"); });
}

}  // extern "C"
