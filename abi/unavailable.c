/* tlrt_unavailable: TorchLean's no-GPU build semantics (SPEC-runtime section 3, last note).
 * Status 0 (not linked), version "unavailable", counters and statistics 0, get_setting answers 0
 * for ids 0-8, the memory fraction reads 0.0, collect_allocator still collects; every other IO
 * symbol returns IO.Error.userError with a rebuild hint and every pure buffer symbol panics. */
#include <lean/lean.h>
#include <lean/mimalloc.h>

#include "tlrt/torchlean_abi.h"

#define REBUILD_HINT                                                                        \
  "tlrt: this program was linked against libtlrt_unavailable (no native backend); rebuild " \
  "and link libtlrt.so to use TorchLean's native buffers"

static lean_obj_res unavailable_io(void) {
  return lean_io_result_mk_error(lean_mk_io_user_error(lean_mk_string(REBUILD_HINT)));
}

static void unavailable_panic(void) {
  lean_internal_panic(REBUILD_HINT);
}

/* Pure symbols that return an object. */
#define PURE_OBJ(name, params) \
  lean_obj_res name params {   \
    unavailable_panic();       \
    return lean_box(0);        \
  }
/* IO symbols. */
#define IO_OBJ(name, params) \
  lean_obj_res name params { \
    return unavailable_io(); \
  }
/* Statistics and counters read 0. */
#define ZERO_U64(name)            \
  uint64_t name(uint32_t token) { \
    (void)token;                  \
    return 0;                     \
  }

torchlean_cuda_buffer* torchlean_cuda_buffer_unbox(b_lean_obj_arg object) {
  (void)object;
  unavailable_panic();
  return NULL;
}
lean_obj_res torchlean_cuda_buffer_box(torchlean_cuda_buffer* buffer) {
  (void)buffer;
  unavailable_panic();
  return lean_box(0);
}
torchlean_cuda_buffer* torchlean_cuda_buffer_alloc(size_t n) {
  (void)n;
  unavailable_panic();
  return NULL;
}
void torchlean_cuda_buffer_drop_unboxed(torchlean_cuda_buffer* buffer) {
  (void)buffer;
}

uint32_t torchlean_cuda_buffer_release(b_lean_obj_arg object) {
  (void)object;
  unavailable_panic();
  return 0;
}
uint32_t torchlean_cuda_buffer_release_with_token(b_lean_obj_arg object, uint32_t token) {
  (void)object, (void)token;
  unavailable_panic();
  return 0;
}
PURE_OBJ(torchlean_cuda_buffer_release_then, (b_lean_obj_arg scratch, b_lean_obj_arg keep))
uint32_t torchlean_cuda_buffer_size(b_lean_obj_arg object) {
  (void)object;
  unavailable_panic();
  return 0;
}
uint32_t torchlean_cuda_buffer_size_with_token(b_lean_obj_arg object, uint32_t token) {
  (void)object, (void)token;
  unavailable_panic();
  return 0;
}
uint8_t torchlean_cuda_buffer_dtype(b_lean_obj_arg object) {
  (void)object;
  unavailable_panic();
  return 0;
}
PURE_OBJ(torchlean_cuda_buffer_format, (b_lean_obj_arg object))
IO_OBJ(torchlean_cuda_buffer_of_encoded_io,
       (b_lean_obj_arg bytes, b_lean_obj_arg format, uint64_t width))
IO_OBJ(torchlean_cuda_buffer_to_encoded_io, (b_lean_obj_arg object))
lean_obj_res torchlean_cuda_buffer_fail(b_lean_obj_arg message) {
  lean_internal_panic(lean_string_cstr(message));
  return lean_box(0);
}
PURE_OBJ(torchlean_cuda_buffer_zeros_like, (b_lean_obj_arg reference, uint32_t count))
PURE_OBJ(torchlean_cuda_buffer_copy, (b_lean_obj_arg reference))
PURE_OBJ(torchlean_cuda_buffer_duplicate, (b_lean_obj_arg reference))
PURE_OBJ(torchlean_cuda_buffer_copy_and_release, (b_lean_obj_arg object))
PURE_OBJ(torchlean_cuda_buffer_zeros, (uint32_t n, uint8_t dtype))
IO_OBJ(torchlean_cuda_buffer_zeros_io, (uint32_t n, uint8_t dtype))
PURE_OBJ(torchlean_cuda_buffer_full, (uint32_t n, double v, uint8_t dtype))
IO_OBJ(torchlean_cuda_buffer_full_io, (uint32_t n, double v, uint8_t dtype))
PURE_OBJ(torchlean_cuda_buffer_rand_uniform, (uint32_t n, uint64_t key, uint8_t dtype))
IO_OBJ(torchlean_cuda_buffer_rand_uniform_io, (uint32_t n, uint64_t key, uint8_t dtype))
PURE_OBJ(torchlean_cuda_buffer_rand_normal,
         (uint32_t n, double mean, double deviation, uint64_t key, uint8_t dtype))
PURE_OBJ(torchlean_cuda_buffer_bernoulli_mask, (uint32_t n, double p, uint64_t key, uint8_t dtype))
IO_OBJ(torchlean_cuda_buffer_bernoulli_mask_io, (uint32_t n, double p, uint64_t key, uint8_t dtype))
PURE_OBJ(torchlean_cuda_buffer_of_float_array, (b_lean_obj_arg object, uint8_t dtype))
IO_OBJ(torchlean_cuda_buffer_of_float_array_io, (b_lean_obj_arg object, uint8_t dtype))
PURE_OBJ(torchlean_cuda_buffer_to_float_array, (b_lean_obj_arg object))
IO_OBJ(torchlean_cuda_buffer_to_float_array_io, (b_lean_obj_arg object))
IO_OBJ(torchlean_cuda_buffer_to_bytes_io, (b_lean_obj_arg object, uint8_t dtype))
IO_OBJ(torchlean_cuda_buffer_of_bytes_io, (b_lean_obj_arg object, uint8_t dtype, uint8_t source))
IO_OBJ(torchlean_kernel_run_buffer, (b_lean_obj_arg source, b_lean_obj_arg objects, uint64_t count))
IO_OBJ(torchlean_kernel_run_bytes, (b_lean_obj_arg source, uint32_t format, uint64_t width,
                                    b_lean_obj_arg arrays, uint64_t count))
PURE_OBJ(torchlean_kernel_run_encoded, (b_lean_obj_arg source, b_lean_obj_arg objects,
                                        b_lean_obj_arg format, uint64_t width, uint64_t count))

uint32_t torchlean_cuda_runtime_status(uint32_t token) {
  (void)token;
  return 0;
}
lean_obj_res torchlean_libtorch_version(uint32_t token) {
  (void)token;
  return lean_mk_string("unavailable");
}
uint32_t torchlean_runtime_collect_allocator(uint32_t token) {
  (void)token;
  mi_collect(false);
  return 1;
}
uint32_t torchlean_libtorch_device_count(uint32_t token) {
  (void)token;
  return 0;
}
uint32_t torchlean_libtorch_get_device(uint32_t token) {
  (void)token;
  return 0;
}
IO_OBJ(torchlean_libtorch_set_device, (uint32_t index))
lean_obj_res torchlean_libtorch_get_setting(uint32_t setting) {
  if (setting <= 8) return lean_io_result_mk_ok(lean_box_uint32(0));
  return unavailable_io();
}
IO_OBJ(torchlean_libtorch_set_setting, (uint32_t setting, uint32_t enabled))
lean_obj_res torchlean_libtorch_get_memory_fraction(uint32_t token) {
  (void)token;
  return lean_io_result_mk_ok(lean_box_float(0.0));
}
IO_OBJ(torchlean_libtorch_set_memory_fraction, (double fraction))
IO_OBJ(torchlean_libtorch_synchronize, (uint32_t token))
IO_OBJ(torchlean_libtorch_empty_cache, (uint32_t token))

ZERO_U64(torchlean_cuda_allocator_live_bytes)
ZERO_U64(torchlean_cuda_allocator_peak_bytes)
ZERO_U64(torchlean_cuda_allocator_alloc_count)
ZERO_U64(torchlean_cuda_allocator_free_count)
ZERO_U64(torchlean_cuda_wrapper_live_count)
ZERO_U64(torchlean_cuda_wrapper_peak_count)
ZERO_U64(torchlean_cuda_wrapper_alloc_count)
ZERO_U64(torchlean_cuda_wrapper_finalize_count)
ZERO_U64(torchlean_cuda_allocator_device_free_bytes)
ZERO_U64(torchlean_cuda_allocator_device_total_bytes)
ZERO_U64(torchlean_libtorch_allocated_bytes)
ZERO_U64(torchlean_libtorch_reserved_bytes)
ZERO_U64(torchlean_libtorch_peak_allocated_bytes)
ZERO_U64(torchlean_libtorch_peak_reserved_bytes)

IO_OBJ(torchlean_cuda_buffer_to_float32_bytes_io, (b_lean_obj_arg object))
IO_OBJ(torchlean_cuda_buffer_of_float32_bytes_io, (b_lean_obj_arg object))
PURE_OBJ(torchlean_float_array_to_float32_bytes, (b_lean_obj_arg object))
PURE_OBJ(torchlean_float32_bytes_to_float_array, (b_lean_obj_arg object))
IO_OBJ(torchlean_kernel_run_host,
       (b_lean_obj_arg source, uint32_t format, b_lean_obj_arg inputs, uint64_t count))

uint32_t torchlean_libtorch_device_kind(uint32_t token) {
  (void)token;
  return 0;
}
IO_OBJ(torchlean_libtorch_device_name, (uint32_t index))
IO_OBJ(torchlean_libtorch_device_capability, (uint32_t index))
IO_OBJ(torchlean_libtorch_device_sm_count, (uint32_t index))
IO_OBJ(torchlean_libtorch_device_clock_khz, (uint32_t index))
IO_OBJ(torchlean_libtorch_device_mem_clock_khz, (uint32_t index))
IO_OBJ(torchlean_libtorch_device_mem_bus_width, (uint32_t index))
IO_OBJ(torchlean_libtorch_device_total_bytes, (uint32_t index))
IO_OBJ(torchlean_libtorch_driver_version, (uint32_t token))
IO_OBJ(torchlean_libtorch_runtime_version, (uint32_t token))

/* Numerical operations: every one panics. The elementwise family comes from its op list. */
#define UNAVAILABLE_unary(name) PURE_OBJ(torchlean_cuda_buffer_##name, (b_lean_obj_arg x))
#define UNAVAILABLE_binary(name) \
  PURE_OBJ(torchlean_cuda_buffer_##name, (b_lean_obj_arg a, b_lean_obj_arg b))
#define UNAVAILABLE_unary_s1(name) \
  PURE_OBJ(torchlean_cuda_buffer_##name, (b_lean_obj_arg x, double c))
#define UNAVAILABLE_binary_s1(name) \
  PURE_OBJ(torchlean_cuda_buffer_##name, (b_lean_obj_arg a, b_lean_obj_arg b, double c))
#define UNAVAILABLE_unary_s2(name) \
  PURE_OBJ(torchlean_cuda_buffer_##name, (b_lean_obj_arg x, double lo, double hi))
#define UNAVAILABLE_binary_s2(name) \
  PURE_OBJ(torchlean_cuda_buffer_##name, (b_lean_obj_arg x, b_lean_obj_arg g, double lo, double hi))
#define UNAVAILABLE_ternary_pair(name) \
  PURE_OBJ(torchlean_cuda_buffer_##name, (b_lean_obj_arg a, b_lean_obj_arg b, b_lean_obj_arg g))
#define UNAVAILABLE_adam(name)                                                                   \
  PURE_OBJ(torchlean_cuda_buffer_##name,                                                         \
           (b_lean_obj_arg p, b_lean_obj_arg g, b_lean_obj_arg m, b_lean_obj_arg v, double b1,   \
            double omb1, double b2, double omb2, double c1, double c2, double eps, double decay, \
            double update_scale))
/* copy_and_release is defined above with the buffer-copy rows. */
#define UNAVAILABLE_copy_release(name)
#define TLRT_ELEMENTWISE(name, Functor, signature, ulp_f32, ulp_f64) UNAVAILABLE_##signature(name)
#include "../ops/elementwise_ops.def"
#undef TLRT_ELEMENTWISE

PURE_OBJ(torchlean_cuda_buffer_reduce_sum, (b_lean_obj_arg x))
PURE_OBJ(torchlean_cuda_buffer_reduce_mean, (b_lean_obj_arg x))

PURE_OBJ(torchlean_cuda_buffer_concat1d,
         (b_lean_obj_arg a, b_lean_obj_arg b, uint32_t n, uint32_t m))
PURE_OBJ(torchlean_cuda_buffer_slice1d,
         (b_lean_obj_arg x, uint32_t n, uint32_t start, uint32_t len))
PURE_OBJ(torchlean_cuda_buffer_broadcast_vec_to_cols,
         (b_lean_obj_arg v, uint32_t rows, uint32_t cols))
PURE_OBJ(torchlean_cuda_buffer_broadcast_to,
         (b_lean_obj_arg x, b_lean_obj_arg inDims, b_lean_obj_arg outDims, b_lean_obj_arg axisMap))
PURE_OBJ(torchlean_cuda_buffer_swap_adjacent_at_depth,
         (b_lean_obj_arg x, b_lean_obj_arg dims, uint32_t depth))

PURE_OBJ(torchlean_cuda_buffer_bmm_with_transpose,
         (b_lean_obj_arg A, b_lean_obj_arg B, uint32_t batch, uint32_t m, uint32_t n, uint32_t p,
          uint32_t transposeA, uint32_t transposeB))
PURE_OBJ(torchlean_dgemm_cuda,
         (b_lean_obj_arg A, b_lean_obj_arg B, uint32_t m, uint32_t n, uint32_t p))

PURE_OBJ(torchlean_cuda_buffer_reduce_sum_by_row, (b_lean_obj_arg x, uint32_t rows, uint32_t cols))
PURE_OBJ(torchlean_cuda_buffer_reduce_max_by_row, (b_lean_obj_arg x, uint32_t rows, uint32_t cols))
PURE_OBJ(torchlean_cuda_buffer_reduce_max_by_column,
         (b_lean_obj_arg x, uint32_t rows, uint32_t cols))
PURE_OBJ(torchlean_cuda_buffer_reduce_sum_axis,
         (b_lean_obj_arg x, b_lean_obj_arg dims, uint32_t axis))
PURE_OBJ(torchlean_cuda_buffer_reduce_from_broadcast,
         (b_lean_obj_arg dOut, b_lean_obj_arg inDims, b_lean_obj_arg outDims,
          b_lean_obj_arg axisMap))

PURE_OBJ(torchlean_cuda_buffer_gather_rows,
         (b_lean_obj_arg mat, uint32_t rows, uint32_t cols, b_lean_obj_arg indices, uint32_t k))
PURE_OBJ(torchlean_cuda_buffer_scatter_add_rows,
         (b_lean_obj_arg mat, b_lean_obj_arg values, uint32_t rows, uint32_t cols,
          b_lean_obj_arg indices, uint32_t k))
PURE_OBJ(torchlean_cuda_buffer_scatter_add,
         (b_lean_obj_arg x, b_lean_obj_arg values, uint32_t n, b_lean_obj_arg indices, uint32_t k))
PURE_OBJ(torchlean_cuda_buffer_gather_at,
         (b_lean_obj_arg table, uint32_t size, b_lean_obj_arg positions, uint32_t count))
PURE_OBJ(torchlean_cuda_buffer_scatter_add_at,
         (uint32_t size, b_lean_obj_arg positions, b_lean_obj_arg values, uint32_t count))

PURE_OBJ(torchlean_cuda_buffer_hard_masked_softmax_by_row,
         (b_lean_obj_arg scores, b_lean_obj_arg mask, uint32_t rows, uint32_t cols))
IO_OBJ(torchlean_cuda_buffer_softmax_io, (b_lean_obj_arg input, b_lean_obj_arg dims, uint32_t axis))
/* Layer normalization (SPEC-ops 9). */
PURE_OBJ(torchlean_cuda_buffer_layer_norm_fwd,
         (b_lean_obj_arg x, b_lean_obj_arg gamma, b_lean_obj_arg beta, uint32_t rows, uint32_t cols,
          double invCols, double epsilon))
PURE_OBJ(torchlean_cuda_buffer_layer_norm_bwd,
         (b_lean_obj_arg dout, b_lean_obj_arg normalized, b_lean_obj_arg invStd,
          b_lean_obj_arg gamma, uint32_t rows, uint32_t cols, double colsScale, double invCols))
/* ---- diagonal selective scans (SPEC-ops 13) */
PURE_OBJ(torchlean_cuda_buffer_selective_scan_diag_fwd,
         (b_lean_obj_arg A, b_lean_obj_arg B, b_lean_obj_arg X, b_lean_obj_arg h0, uint32_t seqLen,
          uint32_t state))
PURE_OBJ(torchlean_cuda_buffer_selective_scan_diag_bwd,
         (b_lean_obj_arg A, b_lean_obj_arg B, b_lean_obj_arg X, b_lean_obj_arg h0,
          b_lean_obj_arg out, b_lean_obj_arg dY, uint32_t seqLen, uint32_t state))
PURE_OBJ(torchlean_cuda_buffer_selective_scan_diag_var_fwd,
         (b_lean_obj_arg A, b_lean_obj_arg B, b_lean_obj_arg X, b_lean_obj_arg h0, uint32_t seqLen,
          uint32_t state))
PURE_OBJ(torchlean_cuda_buffer_selective_scan_diag_var_bwd,
         (b_lean_obj_arg A, b_lean_obj_arg B, b_lean_obj_arg X, b_lean_obj_arg h0,
          b_lean_obj_arg out, b_lean_obj_arg dY, uint32_t seqLen, uint32_t state))
PURE_OBJ(torchlean_cuda_buffer_rfft1d_packed, (b_lean_obj_arg x, uint32_t batch, uint32_t n))
PURE_OBJ(torchlean_cuda_buffer_irfft1d_packed, (b_lean_obj_arg spec, uint32_t batch, uint32_t n))
PURE_OBJ(torchlean_cuda_buffer_irfft1d_packed_unnormalized,
         (b_lean_obj_arg spec, uint32_t batch, uint32_t n))
PURE_OBJ(torchlean_cuda_buffer_spectral_conv1d_rfft_fwd,
         (b_lean_obj_arg x, b_lean_obj_arg wRe, b_lean_obj_arg wIm, uint32_t grid, uint32_t width,
          uint32_t modes))
PURE_OBJ(torchlean_cuda_buffer_spectral_conv1d_rfft_bwd,
         (b_lean_obj_arg x, b_lean_obj_arg wRe, b_lean_obj_arg wIm, b_lean_obj_arg dY,
          uint32_t grid, uint32_t width, uint32_t modes))
/* ---- legacy attention (symbols-ops.tsv, legacy rows) */
PURE_OBJ(torchlean_libtorch_attention_fwd,
         (b_lean_obj_arg Q, b_lean_obj_arg K, b_lean_obj_arg V, b_lean_obj_arg mask,
          uint32_t hasMask, uint32_t batch, uint32_t n, uint32_t d, double scale))
PURE_OBJ(torchlean_libtorch_attention_bwd, (b_lean_obj_arg out, b_lean_obj_arg dOut))
/* ---- pool (SPEC-ops 14.3-14.5) */
PURE_OBJ(torchlean_cuda_maxpool_fwd,
         (b_lean_obj_arg input, b_lean_obj_arg inSpatial, b_lean_obj_arg kernel,
          b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t channels))
PURE_OBJ(torchlean_cuda_maxpool_bwd,
         (b_lean_obj_arg input, b_lean_obj_arg gradOutput, b_lean_obj_arg inSpatial,
          b_lean_obj_arg kernel, b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t channels))
PURE_OBJ(torchlean_cuda_avgpool_fwd,
         (b_lean_obj_arg input, b_lean_obj_arg inSpatial, b_lean_obj_arg kernel,
          b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t channels))
PURE_OBJ(torchlean_cuda_avgpool_bwd,
         (b_lean_obj_arg gradOutput, b_lean_obj_arg inSpatial, b_lean_obj_arg kernel,
          b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t channels))
PURE_OBJ(torchlean_cuda_smooth_maxpool_fwd,
         (b_lean_obj_arg input, double beta, b_lean_obj_arg inSpatial, b_lean_obj_arg kernel,
          b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t channels))
PURE_OBJ(torchlean_cuda_smooth_maxpool_bwd,
         (b_lean_obj_arg input, b_lean_obj_arg gradOutput, double beta, b_lean_obj_arg inSpatial,
          b_lean_obj_arg kernel, b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t channels))
/* ---- conv */
PURE_OBJ(torchlean_cuda_conv_fwd,
         (b_lean_obj_arg input, b_lean_obj_arg kernel, b_lean_obj_arg bias,
          b_lean_obj_arg inSpatial, b_lean_obj_arg kernelSpatial, b_lean_obj_arg stride,
          b_lean_obj_arg padding, uint32_t inC, uint32_t outC))
PURE_OBJ(torchlean_cuda_conv_bwd,
         (b_lean_obj_arg input, b_lean_obj_arg kernel, b_lean_obj_arg gradOutput,
          b_lean_obj_arg inSpatial, b_lean_obj_arg kernelSpatial, b_lean_obj_arg stride,
          b_lean_obj_arg padding, uint32_t inC, uint32_t outC))
PURE_OBJ(torchlean_cuda_convtranspose_fwd,
         (b_lean_obj_arg input, b_lean_obj_arg kernel, b_lean_obj_arg bias,
          b_lean_obj_arg inSpatial, b_lean_obj_arg kernelSpatial, b_lean_obj_arg stride,
          b_lean_obj_arg padding, uint32_t inC, uint32_t outC))
PURE_OBJ(torchlean_cuda_convtranspose_bwd,
         (b_lean_obj_arg input, b_lean_obj_arg kernel, b_lean_obj_arg gradOutput,
          b_lean_obj_arg inSpatial, b_lean_obj_arg kernelSpatial, b_lean_obj_arg stride,
          b_lean_obj_arg padding, uint32_t inC, uint32_t outC))
IO_OBJ(torchlean_cuda_buffer_conv_io,
       (b_lean_obj_arg input, b_lean_obj_arg kernel, b_lean_obj_arg bias, b_lean_obj_arg inputDims,
        b_lean_obj_arg kernelDims, b_lean_obj_arg stride, b_lean_obj_arg paddingBefore,
        b_lean_obj_arg paddingAfter, b_lean_obj_arg dilation, uint32_t groups))
