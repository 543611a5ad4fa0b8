// Placeholder exports of the reduce_axis family: each panics "not supported yet" until the family
// lands.
#include "abi/boundary.h"

using namespace tlrt::abi;

extern "C" {

lean_obj_res torchlean_cuda_buffer_reduce_sum_by_row(b_lean_obj_arg x, uint32_t rows,
                                                     uint32_t cols) {
  (void)x;
  (void)rows;
  (void)cols;
  return pure_call(
      [&]() -> lean_obj_res { not_supported_yet("reduce_sum_by_row", "reduce_sum_by_row"); });
}

lean_obj_res torchlean_cuda_buffer_reduce_max_by_row(b_lean_obj_arg x, uint32_t rows,
                                                     uint32_t cols) {
  (void)x;
  (void)rows;
  (void)cols;
  return pure_call(
      [&]() -> lean_obj_res { not_supported_yet("reduce_max_by_row", "reduce_max_by_row"); });
}

lean_obj_res torchlean_cuda_buffer_reduce_max_by_column(b_lean_obj_arg x, uint32_t rows,
                                                        uint32_t cols) {
  (void)x;
  (void)rows;
  (void)cols;
  return pure_call(
      [&]() -> lean_obj_res { not_supported_yet("reduce_max_by_column", "reduce_max_by_column"); });
}

lean_obj_res torchlean_cuda_buffer_reduce_sum_axis(b_lean_obj_arg x, b_lean_obj_arg dims,
                                                   uint32_t axis) {
  (void)x;
  (void)dims;
  (void)axis;
  return pure_call(
      [&]() -> lean_obj_res { not_supported_yet("reduce_sum_axis", "reduce_sum_axis"); });
}

lean_obj_res torchlean_cuda_buffer_reduce_from_broadcast(b_lean_obj_arg dOut, b_lean_obj_arg inDims,
                                                         b_lean_obj_arg outDims,
                                                         b_lean_obj_arg axisMap) {
  (void)dOut;
  (void)inDims;
  (void)outDims;
  (void)axisMap;
  return pure_call([&]() -> lean_obj_res {
    not_supported_yet("reduce_from_broadcast", "reduce_from_broadcast");
  });
}

}  // extern "C"
