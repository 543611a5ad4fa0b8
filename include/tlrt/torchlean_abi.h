/* tlrt: the C symbols TorchLean's Lean code binds with @[extern] (SPEC-runtime.md, SPEC-ops.md).
 *
 * Ownership: every lean_object* parameter is borrowed (b_lean_obj_arg, Lean `@&`); every returned
 * object is owned by the caller. IO symbols return an IO result object (one field, Lean >= 4.26,
 * no world argument); pure symbols report failures through lean_internal_panic. The four
 * torchlean_cuda_buffer_{unbox,box,alloc,drop_unboxed} helpers are for sibling native code.
 */
#ifndef TLRT_TORCHLEAN_ABI_H
#define TLRT_TORCHLEAN_ABI_H

#include <lean/lean.h>
#include <stddef.h>
#include <stdint.h>

#define TLRT_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* The native record behind a Lean buffer object. Its layout is private to the library. */
typedef struct torchlean_cuda_buffer torchlean_cuda_buffer;

/* ---- buffer-core */
TLRT_EXPORT torchlean_cuda_buffer* torchlean_cuda_buffer_unbox(b_lean_obj_arg object);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_box(torchlean_cuda_buffer* buffer);
TLRT_EXPORT torchlean_cuda_buffer* torchlean_cuda_buffer_alloc(size_t n);
TLRT_EXPORT void torchlean_cuda_buffer_drop_unboxed(torchlean_cuda_buffer* buffer);

/* ---- buffer-lifetime */
TLRT_EXPORT uint32_t torchlean_cuda_buffer_release(b_lean_obj_arg object);
TLRT_EXPORT uint32_t torchlean_cuda_buffer_release_with_token(b_lean_obj_arg object,
                                                              uint32_t token);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_release_then(b_lean_obj_arg scratch,
                                                            b_lean_obj_arg keep);

/* ---- buffer-query */
TLRT_EXPORT uint32_t torchlean_cuda_buffer_size(b_lean_obj_arg object);
TLRT_EXPORT uint32_t torchlean_cuda_buffer_size_with_token(b_lean_obj_arg object, uint32_t token);
TLRT_EXPORT uint8_t torchlean_cuda_buffer_dtype(b_lean_obj_arg object);

/* ---- encoded */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_format(b_lean_obj_arg object);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_of_encoded_io(b_lean_obj_arg bytes,
                                                             b_lean_obj_arg format, uint64_t width);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_to_encoded_io(b_lean_obj_arg object);

/* ---- error */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_fail(b_lean_obj_arg message);

/* ---- buffer-copy */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_zeros_like(b_lean_obj_arg reference, uint32_t count);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_copy(b_lean_obj_arg reference);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_duplicate(b_lean_obj_arg reference);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_copy_and_release(b_lean_obj_arg BObj);

/* ---- constructor */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_zeros(uint32_t n, uint8_t dtype);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_zeros_io(uint32_t n, uint8_t dtype);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_full(uint32_t n, double v, uint8_t dtype);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_full_io(uint32_t n, double v, uint8_t dtype);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_rand_uniform(uint32_t n, uint64_t key,
                                                            uint8_t dtype);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_rand_uniform_io(uint32_t n, uint64_t key,
                                                               uint8_t dtype);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_rand_normal(uint32_t n, double mean,
                                                           double deviation, uint64_t key,
                                                           uint8_t dtype);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_bernoulli_mask(uint32_t n, double p, uint64_t key,
                                                              uint8_t dtype);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_bernoulli_mask_io(uint32_t n, double p, uint64_t key,
                                                                 uint8_t dtype);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_of_float_array(b_lean_obj_arg object, uint8_t dtype);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_of_float_array_io(b_lean_obj_arg object,
                                                                 uint8_t dtype);

/* ---- transfer */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_to_float_array(b_lean_obj_arg object);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_to_float_array_io(b_lean_obj_arg object);

/* ---- checkpoint */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_to_bytes_io(b_lean_obj_arg object, uint8_t dtype);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_of_bytes_io(b_lean_obj_arg object, uint8_t dtype,
                                                           uint8_t source);

/* ---- nvrtc-kernel */
TLRT_EXPORT lean_obj_res torchlean_kernel_run_buffer(b_lean_obj_arg source, b_lean_obj_arg objects,
                                                     uint64_t count);
TLRT_EXPORT lean_obj_res torchlean_kernel_run_bytes(b_lean_obj_arg source, uint32_t format,
                                                    uint64_t width, b_lean_obj_arg arrays,
                                                    uint64_t count);
TLRT_EXPORT lean_obj_res torchlean_kernel_run_encoded(b_lean_obj_arg source, b_lean_obj_arg objects,
                                                      b_lean_obj_arg format, uint64_t width,
                                                      uint64_t count);

/* ---- runtime */
TLRT_EXPORT uint32_t torchlean_cuda_runtime_status(uint32_t token);
TLRT_EXPORT lean_obj_res torchlean_libtorch_version(uint32_t token);
TLRT_EXPORT uint32_t torchlean_runtime_collect_allocator(uint32_t token);

/* ---- controls */
TLRT_EXPORT uint32_t torchlean_libtorch_device_count(uint32_t token);
TLRT_EXPORT uint32_t torchlean_libtorch_get_device(uint32_t token);
TLRT_EXPORT lean_obj_res torchlean_libtorch_set_device(uint32_t index);
TLRT_EXPORT lean_obj_res torchlean_libtorch_get_setting(uint32_t setting);
TLRT_EXPORT lean_obj_res torchlean_libtorch_set_setting(uint32_t setting, uint32_t enabled);
TLRT_EXPORT lean_obj_res torchlean_libtorch_get_memory_fraction(uint32_t token);
TLRT_EXPORT lean_obj_res torchlean_libtorch_set_memory_fraction(double fraction);
TLRT_EXPORT lean_obj_res torchlean_libtorch_synchronize(uint32_t token);
TLRT_EXPORT lean_obj_res torchlean_libtorch_empty_cache(uint32_t token);

/* ---- counters */
TLRT_EXPORT uint64_t torchlean_cuda_allocator_live_bytes(uint32_t token);
TLRT_EXPORT uint64_t torchlean_cuda_allocator_peak_bytes(uint32_t token);
TLRT_EXPORT uint64_t torchlean_cuda_allocator_alloc_count(uint32_t token);
TLRT_EXPORT uint64_t torchlean_cuda_allocator_free_count(uint32_t token);
TLRT_EXPORT uint64_t torchlean_cuda_wrapper_live_count(uint32_t token);
TLRT_EXPORT uint64_t torchlean_cuda_wrapper_peak_count(uint32_t token);
TLRT_EXPORT uint64_t torchlean_cuda_wrapper_alloc_count(uint32_t token);
TLRT_EXPORT uint64_t torchlean_cuda_wrapper_finalize_count(uint32_t token);
TLRT_EXPORT uint64_t torchlean_cuda_allocator_device_free_bytes(uint32_t token);
TLRT_EXPORT uint64_t torchlean_cuda_allocator_device_total_bytes(uint32_t token);

/* ---- allocator-stats */
TLRT_EXPORT uint64_t torchlean_libtorch_allocated_bytes(uint32_t token);
TLRT_EXPORT uint64_t torchlean_libtorch_reserved_bytes(uint32_t token);
TLRT_EXPORT uint64_t torchlean_libtorch_peak_allocated_bytes(uint32_t token);
TLRT_EXPORT uint64_t torchlean_libtorch_peak_reserved_bytes(uint32_t token);

/* ---- legacy */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_to_float32_bytes_io(b_lean_obj_arg object);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_of_float32_bytes_io(b_lean_obj_arg object);
TLRT_EXPORT lean_obj_res torchlean_float_array_to_float32_bytes(b_lean_obj_arg object);
TLRT_EXPORT lean_obj_res torchlean_float32_bytes_to_float_array(b_lean_obj_arg object);
TLRT_EXPORT lean_obj_res torchlean_kernel_run_host(b_lean_obj_arg source, uint32_t format,
                                                   b_lean_obj_arg inputs, uint64_t count);

/* ---- variant */
TLRT_EXPORT uint32_t torchlean_libtorch_device_kind(uint32_t token);
TLRT_EXPORT lean_obj_res torchlean_libtorch_device_name(uint32_t index);
TLRT_EXPORT lean_obj_res torchlean_libtorch_device_capability(uint32_t index);
TLRT_EXPORT lean_obj_res torchlean_libtorch_device_sm_count(uint32_t index);
TLRT_EXPORT lean_obj_res torchlean_libtorch_device_clock_khz(uint32_t index);
TLRT_EXPORT lean_obj_res torchlean_libtorch_device_mem_clock_khz(uint32_t index);
TLRT_EXPORT lean_obj_res torchlean_libtorch_device_mem_bus_width(uint32_t index);
TLRT_EXPORT lean_obj_res torchlean_libtorch_device_total_bytes(uint32_t index);
TLRT_EXPORT lean_obj_res torchlean_libtorch_driver_version(uint32_t token);
TLRT_EXPORT lean_obj_res torchlean_libtorch_runtime_version(uint32_t token);
/* ---- numerical operations: the elementwise family (SPEC-ops section 6) */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_abs(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_floor(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_neg(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_sqrt(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_exp(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_sin(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_cos(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_log(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_inv(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_relu(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_sigmoid(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_tanh(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_gelu(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_max(b_lean_obj_arg a, b_lean_obj_arg b);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_min(b_lean_obj_arg a, b_lean_obj_arg b);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_div(b_lean_obj_arg a, b_lean_obj_arg b);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_add(b_lean_obj_arg a, b_lean_obj_arg b);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_sub(b_lean_obj_arg a, b_lean_obj_arg b);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_mul(b_lean_obj_arg a, b_lean_obj_arg b);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_mask(b_lean_obj_arg a, b_lean_obj_arg b);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_scale(b_lean_obj_arg x, double c);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_axpy(b_lean_obj_arg a, b_lean_obj_arg b, double c);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_scaled_prod_exp(b_lean_obj_arg a, b_lean_obj_arg b,
                                                               double c);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_clamp(b_lean_obj_arg x, double lo, double hi);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_relu_bwd(b_lean_obj_arg a, b_lean_obj_arg b);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_gelu_bwd(b_lean_obj_arg a, b_lean_obj_arg b);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_abs_bwd(b_lean_obj_arg a, b_lean_obj_arg b);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_sqrt_bwd(b_lean_obj_arg a, b_lean_obj_arg b);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_clamp_bwd(b_lean_obj_arg x, b_lean_obj_arg g,
                                                         double lo, double hi);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_max_bwd(b_lean_obj_arg a, b_lean_obj_arg b,
                                                       b_lean_obj_arg g);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_min_bwd(b_lean_obj_arg a, b_lean_obj_arg b,
                                                       b_lean_obj_arg g);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_copy_and_release(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_adam_step(
    b_lean_obj_arg p, b_lean_obj_arg g, b_lean_obj_arg m, b_lean_obj_arg v, double b1, double omb1,
    double b2, double omb2, double c1, double c2, double eps, double decay, double update_scale);

/* ---- numerical operations: whole-buffer reductions */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_reduce_sum(b_lean_obj_arg x);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_reduce_mean(b_lean_obj_arg x);

/* ---- numerical operations: shape ops (SPEC-ops 8) */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_concat1d(b_lean_obj_arg a, b_lean_obj_arg b,
                                                        uint32_t n, uint32_t m);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_slice1d(b_lean_obj_arg x, uint32_t n, uint32_t start,
                                                       uint32_t len);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_broadcast_vec_to_cols(b_lean_obj_arg v,
                                                                     uint32_t rows, uint32_t cols);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_broadcast_to(b_lean_obj_arg x, b_lean_obj_arg inDims,
                                                            b_lean_obj_arg outDims,
                                                            b_lean_obj_arg axisMap);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_swap_adjacent_at_depth(b_lean_obj_arg x,
                                                                      b_lean_obj_arg dims,
                                                                      uint32_t depth);

/* ---- numerical operations: matrix products (SPEC-ops 10) */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_bmm_with_transpose(b_lean_obj_arg A,
                                                                  b_lean_obj_arg B, uint32_t batch,
                                                                  uint32_t m, uint32_t n,
                                                                  uint32_t p, uint32_t transposeA,
                                                                  uint32_t transposeB);
TLRT_EXPORT lean_obj_res torchlean_dgemm_cuda(b_lean_obj_arg A, b_lean_obj_arg B, uint32_t m,
                                              uint32_t n, uint32_t p);

/* ---- numerical operations: axis reductions (SPEC-ops 8) */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_reduce_sum_by_row(b_lean_obj_arg x, uint32_t rows,
                                                                 uint32_t cols);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_reduce_max_by_row(b_lean_obj_arg x, uint32_t rows,
                                                                 uint32_t cols);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_reduce_max_by_column(b_lean_obj_arg x, uint32_t rows,
                                                                    uint32_t cols);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_reduce_sum_axis(b_lean_obj_arg x,
                                                               b_lean_obj_arg dims, uint32_t axis);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_reduce_from_broadcast(b_lean_obj_arg dOut,
                                                                     b_lean_obj_arg inDims,
                                                                     b_lean_obj_arg outDims,
                                                                     b_lean_obj_arg axisMap);

/* ---- numerical operations: gather and scatter (SPEC-ops 11) */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_gather_rows(b_lean_obj_arg mat, uint32_t rows,
                                                           uint32_t cols, b_lean_obj_arg indices,
                                                           uint32_t k);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_scatter_add_rows(b_lean_obj_arg mat,
                                                                b_lean_obj_arg values,
                                                                uint32_t rows, uint32_t cols,
                                                                b_lean_obj_arg indices, uint32_t k);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_scatter_add(b_lean_obj_arg x, b_lean_obj_arg values,
                                                           uint32_t n, b_lean_obj_arg indices,
                                                           uint32_t k);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_gather_at(b_lean_obj_arg table, uint32_t size,
                                                         b_lean_obj_arg positions, uint32_t count);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_scatter_add_at(uint32_t size,
                                                              b_lean_obj_arg positions,
                                                              b_lean_obj_arg values,
                                                              uint32_t count);

/* ---- numerical operations: softmax (SPEC-ops 7) */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_hard_masked_softmax_by_row(b_lean_obj_arg scores,
                                                                          b_lean_obj_arg mask,
                                                                          uint32_t rows,
                                                                          uint32_t cols);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_softmax_io(b_lean_obj_arg input, b_lean_obj_arg dims,
                                                          uint32_t axis);
/* ---- numerical operations: layer normalization (SPEC-ops 9) */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_layer_norm_fwd(b_lean_obj_arg x,
                                                              b_lean_obj_arg gamma,
                                                              b_lean_obj_arg beta, uint32_t rows,
                                                              uint32_t cols, double invCols,
                                                              double epsilon);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_layer_norm_bwd(
    b_lean_obj_arg dout, b_lean_obj_arg normalized, b_lean_obj_arg invStd, b_lean_obj_arg gamma,
    uint32_t rows, uint32_t cols, double colsScale, double invCols);
/* ---- numerical operations: diagonal selective scans (SPEC-ops 13) */
TLRT_EXPORT lean_obj_res
torchlean_cuda_buffer_selective_scan_diag_fwd(b_lean_obj_arg A, b_lean_obj_arg B, b_lean_obj_arg X,
                                              b_lean_obj_arg h0, uint32_t seqLen, uint32_t state);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_selective_scan_diag_bwd(
    b_lean_obj_arg A, b_lean_obj_arg B, b_lean_obj_arg X, b_lean_obj_arg h0, b_lean_obj_arg out,
    b_lean_obj_arg dY, uint32_t seqLen, uint32_t state);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_selective_scan_diag_var_fwd(
    b_lean_obj_arg A, b_lean_obj_arg B, b_lean_obj_arg X, b_lean_obj_arg h0, uint32_t seqLen,
    uint32_t state);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_selective_scan_diag_var_bwd(
    b_lean_obj_arg A, b_lean_obj_arg B, b_lean_obj_arg X, b_lean_obj_arg h0, b_lean_obj_arg out,
    b_lean_obj_arg dY, uint32_t seqLen, uint32_t state);
/* ---- numerical operations: real FFT and the legacy spectral convolution (SPEC-ops 12, 16) */
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_rfft1d_packed(b_lean_obj_arg x, uint32_t batch,
                                                             uint32_t n);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_irfft1d_packed(b_lean_obj_arg spec, uint32_t batch,
                                                              uint32_t n);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_irfft1d_packed_unnormalized(b_lean_obj_arg spec,
                                                                           uint32_t batch,
                                                                           uint32_t n);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_spectral_conv1d_rfft_fwd(
    b_lean_obj_arg x, b_lean_obj_arg wRe, b_lean_obj_arg wIm, uint32_t grid, uint32_t width,
    uint32_t modes);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_spectral_conv1d_rfft_bwd(
    b_lean_obj_arg x, b_lean_obj_arg wRe, b_lean_obj_arg wIm, b_lean_obj_arg dY, uint32_t grid,
    uint32_t width, uint32_t modes);
/* ---- legacy attention with a saved context (symbols-ops.tsv, legacy rows; Except results) */
TLRT_EXPORT lean_obj_res torchlean_libtorch_attention_fwd(b_lean_obj_arg Q, b_lean_obj_arg K,
                                                          b_lean_obj_arg V, b_lean_obj_arg mask,
                                                          uint32_t hasMask, uint32_t batch,
                                                          uint32_t n, uint32_t d, double scale);
TLRT_EXPORT lean_obj_res torchlean_libtorch_attention_bwd(b_lean_obj_arg out, b_lean_obj_arg dOut);
/* ---- conv: convolution (SPEC-ops 14.1, 14.2, 14.6) */
TLRT_EXPORT lean_obj_res torchlean_cuda_conv_fwd(b_lean_obj_arg input, b_lean_obj_arg kernel,
                                                 b_lean_obj_arg bias, b_lean_obj_arg inSpatial,
                                                 b_lean_obj_arg kernelSpatial,
                                                 b_lean_obj_arg stride, b_lean_obj_arg padding,
                                                 uint32_t inC, uint32_t outC);
TLRT_EXPORT lean_obj_res torchlean_cuda_conv_bwd(b_lean_obj_arg input, b_lean_obj_arg kernel,
                                                 b_lean_obj_arg gradOutput,
                                                 b_lean_obj_arg inSpatial,
                                                 b_lean_obj_arg kernelSpatial,
                                                 b_lean_obj_arg stride, b_lean_obj_arg padding,
                                                 uint32_t inC, uint32_t outC);
TLRT_EXPORT lean_obj_res torchlean_cuda_convtranspose_fwd(
    b_lean_obj_arg input, b_lean_obj_arg kernel, b_lean_obj_arg bias, b_lean_obj_arg inSpatial,
    b_lean_obj_arg kernelSpatial, b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t inC,
    uint32_t outC);
TLRT_EXPORT lean_obj_res torchlean_cuda_convtranspose_bwd(
    b_lean_obj_arg input, b_lean_obj_arg kernel, b_lean_obj_arg gradOutput,
    b_lean_obj_arg inSpatial, b_lean_obj_arg kernelSpatial, b_lean_obj_arg stride,
    b_lean_obj_arg padding, uint32_t inC, uint32_t outC);
TLRT_EXPORT lean_obj_res torchlean_cuda_buffer_conv_io(
    b_lean_obj_arg input, b_lean_obj_arg kernel, b_lean_obj_arg bias, b_lean_obj_arg inputDims,
    b_lean_obj_arg kernelDims, b_lean_obj_arg stride, b_lean_obj_arg paddingBefore,
    b_lean_obj_arg paddingAfter, b_lean_obj_arg dilation, uint32_t groups);

/* ---- pool: max, average and smooth max pooling (SPEC-ops 14.1, 14.3-14.5) */
TLRT_EXPORT lean_obj_res torchlean_cuda_maxpool_fwd(b_lean_obj_arg input, b_lean_obj_arg inSpatial,
                                                    b_lean_obj_arg kernel, b_lean_obj_arg stride,
                                                    b_lean_obj_arg padding, uint32_t channels);
TLRT_EXPORT lean_obj_res torchlean_cuda_maxpool_bwd(b_lean_obj_arg input, b_lean_obj_arg gradOutput,
                                                    b_lean_obj_arg inSpatial, b_lean_obj_arg kernel,
                                                    b_lean_obj_arg stride, b_lean_obj_arg padding,
                                                    uint32_t channels);
TLRT_EXPORT lean_obj_res torchlean_cuda_avgpool_fwd(b_lean_obj_arg input, b_lean_obj_arg inSpatial,
                                                    b_lean_obj_arg kernel, b_lean_obj_arg stride,
                                                    b_lean_obj_arg padding, uint32_t channels);
TLRT_EXPORT lean_obj_res torchlean_cuda_avgpool_bwd(b_lean_obj_arg gradOutput,
                                                    b_lean_obj_arg inSpatial, b_lean_obj_arg kernel,
                                                    b_lean_obj_arg stride, b_lean_obj_arg padding,
                                                    uint32_t channels);
TLRT_EXPORT lean_obj_res torchlean_cuda_smooth_maxpool_fwd(
    b_lean_obj_arg input, double beta, b_lean_obj_arg inSpatial, b_lean_obj_arg kernel,
    b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t channels);
TLRT_EXPORT lean_obj_res torchlean_cuda_smooth_maxpool_bwd(
    b_lean_obj_arg input, b_lean_obj_arg gradOutput, double beta, b_lean_obj_arg inSpatial,
    b_lean_obj_arg kernel, b_lean_obj_arg stride, b_lean_obj_arg padding, uint32_t channels);

#ifdef __cplusplus
}
#endif

#endif /* TLRT_TORCHLEAN_ABI_H */
