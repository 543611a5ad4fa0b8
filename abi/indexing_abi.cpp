// Placeholder exports of the indexing family: each panics "not supported yet" until the family
// lands.
#include "abi/boundary.h"

using namespace tlrt::abi;

extern "C" {

lean_obj_res torchlean_cuda_buffer_gather_rows(b_lean_obj_arg mat, uint32_t rows, uint32_t cols,
                                               b_lean_obj_arg indices, uint32_t k) {
  (void)mat;
  (void)rows;
  (void)cols;
  (void)indices;
  (void)k;
  return pure_call([&]() -> lean_obj_res { not_supported_yet("gather_rows", "gather_rows"); });
}

lean_obj_res torchlean_cuda_buffer_scatter_add_rows(b_lean_obj_arg mat, b_lean_obj_arg values,
                                                    uint32_t rows, uint32_t cols,
                                                    b_lean_obj_arg indices, uint32_t k) {
  (void)mat;
  (void)values;
  (void)rows;
  (void)cols;
  (void)indices;
  (void)k;
  return pure_call(
      [&]() -> lean_obj_res { not_supported_yet("scatter_add_rows", "scatter_add_rows"); });
}

lean_obj_res torchlean_cuda_buffer_scatter_add(b_lean_obj_arg x, b_lean_obj_arg values, uint32_t n,
                                               b_lean_obj_arg indices, uint32_t k) {
  (void)x;
  (void)values;
  (void)n;
  (void)indices;
  (void)k;
  return pure_call([&]() -> lean_obj_res { not_supported_yet("scatter_add", "scatter_add"); });
}

lean_obj_res torchlean_cuda_buffer_gather_at(b_lean_obj_arg table, uint32_t size,
                                             b_lean_obj_arg positions, uint32_t count) {
  (void)table;
  (void)size;
  (void)positions;
  (void)count;
  return pure_call([&]() -> lean_obj_res { not_supported_yet("gather_at", "gather_at"); });
}

lean_obj_res torchlean_cuda_buffer_scatter_add_at(uint32_t size, b_lean_obj_arg positions,
                                                  b_lean_obj_arg values, uint32_t count) {
  (void)size;
  (void)positions;
  (void)values;
  (void)count;
  return pure_call(
      [&]() -> lean_obj_res { not_supported_yet("scatter_add_at", "scatter_add_at"); });
}

}  // extern "C"
