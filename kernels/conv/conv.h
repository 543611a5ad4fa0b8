// Convolution (SPEC-ops 14.2, 14.6): one geometry for every conv symbol, and three passes on it.
//
// A ConvShape describes y (batch, cout, out...) = conv(x (batch, cin, in...), W) with
//   y[n,o,q] = sum_{c in group(o)} sum_kappa W[o, col(c), kappa] * x[n, c, q*s + kappa*dil - pre]
// (positions outside [0, in) read zero). W is stored (cout, kernel_cols, k...): kernel_cols = cin
// for conv_io's dense kernel (col(c) = c, only the group-diagonal blocks are read) and
// cin / groups for the packed layout cuDNN uses (col(c) = c - g * cin/groups). Spatial axes are
// always three: a rank-r geometry puts its axes last and fills the leading ones with extent 1,
// kernel 1, stride 1, padding 0, dilation 1, which leaves the row-major flattening unchanged.
//
// The passes, in the terms of that geometry:
//   fprop: y = conv(x, W) (+ bias[o] when a bias is given)
//   dgrad: dx[n,c,i] = (bias[c] when given +) sum over (o, kappa, q) with q*s + kappa*dil - pre = i
//   of W[o,col(c),kappa]
//          * dy[n,o,q] (the adjoint of fprop in x)
//   wgrad: dW[o,c',kappa] = sum_n sum_q dy[n,o,q] * x[n, c, q*s + kappa*dil - pre] (packed layout)
// conv_fwd is fprop, conv_bwd is (wgrad, bias grad, dgrad); convtranspose_fwd is dgrad of the conv
// with input and output swapped (its kernel (Cin, Cout, k...) is that conv's kernel), and
// convtranspose_bwd is (wgrad with x = dY and dy = x, bias grad, fprop of dY).
//
// Launchers get validated extents; every product of extents fits 64 bits.
#pragma once

#include <cstddef>
#include <cstdint>

struct CUstream_st;
struct cudnnContext;

namespace tlrt::kernels {

constexpr int kConvAxes = 3;

struct ConvShape {
  uint32_t rank = 1;  // spatial rank of the symbol (1..3); the axes below are always three
  uint64_t batch = 1, cin = 0, cout = 0, groups = 1;
  uint64_t kernel_cols = 0;  // cin (dense) or cin / groups (packed)
  uint64_t in[kConvAxes] = {1, 1, 1};
  uint64_t k[kConvAxes] = {1, 1, 1};
  uint64_t out[kConvAxes] = {1, 1, 1};
  uint64_t stride[kConvAxes] = {1, 1, 1};
  uint64_t pre[kConvAxes] = {0, 0, 0};   // zero padding before each axis
  uint64_t post[kConvAxes] = {0, 0, 0};  // zero padding after (only shapes the output extent)
  uint64_t dil[kConvAxes] = {1, 1, 1};

  uint64_t in_volume() const { return in[0] * in[1] * in[2]; }
  uint64_t k_volume() const { return k[0] * k[1] * k[2]; }
  uint64_t out_volume() const { return out[0] * out[1] * out[2]; }
  uint64_t cin_group() const { return cin / groups; }
  uint64_t cout_group() const { return cout / groups; }
  bool dense_kernel() const { return kernel_cols != cin_group(); }
};

// ---- reference backend (kernels/conv/conv_ref.cpp): direct loops, every sum accumulated in long
// double and rounded once to T at the end (the bias, when given, is the first term).
template <class T>
void conv_fprop_ref(const ConvShape& s, const T* x, const T* w, const T* bias, T* y);
template <class T>
void conv_dgrad_ref(const ConvShape& s, const T* dy, const T* w, const T* bias, T* dx);
// dw in the packed layout (cout, cin/groups, k...); s.kernel_cols must be cin / groups.
template <class T>
void conv_wgrad_ref(const ConvShape& s, const T* x, const T* dy, T* dw);
// db[o] = sum_n sum_q dy[n, o, q] for dy (batch, channels, volume).
template <class T>
void conv_bias_grad_ref(const T* dy, uint64_t batch, uint64_t channels, uint64_t volume, T* db);
// y[n, o, q] = bias[o] for y (batch, channels, volume): byte copies.
template <class T>
void conv_bias_fill_ref(const T* bias, uint64_t batch, uint64_t channels, uint64_t volume, T* y);

// ---- own CUDA kernels (kernels/conv/conv.cu): gather form, one thread per result element, a
// fixed summation order (bit-reproducible), accumulation in double for both dtypes. Used where
// cuDNN has no engine for a geometry (float64 on most engines), when the runtime's cuDNN setting
// is off, and for the bias.
template <class T>
void conv_fprop_direct_cuda(const ConvShape& s, const T* x, const T* w, const T* bias, T* y,
                            CUstream_st* stream);
template <class T>
void conv_dgrad_direct_cuda(const ConvShape& s, const T* dy, const T* w, const T* bias, T* dx,
                            CUstream_st* stream);
template <class T>
void conv_wgrad_direct_cuda(const ConvShape& s, const T* x, const T* dy, T* dw,
                            CUstream_st* stream);
// One block per channel: each thread folds a strided slice of the channel in order (double), then
// a fixed tree; bit-reproducible.
template <class T>
void conv_bias_grad_cuda(const T* dy, uint64_t batch, uint64_t channels, uint64_t volume, T* db,
                         CUstream_st* stream);
template <class T>
void conv_bias_fill_cuda(const T* bias, uint64_t batch, uint64_t channels, uint64_t volume, T* y,
                         CUstream_st* stream);
// y[n, o, q] = fl(y[n, o, q] + bias[o]) in place.
template <class T>
void conv_bias_add_cuda(const T* bias, uint64_t batch, uint64_t channels, uint64_t volume, T* y,
                        CUstream_st* stream);
// packed (cout, cin/groups, kvol) <- the group-diagonal blocks of dense (cout, cin, kvol).
template <class T>
void conv_pack_groups_cuda(const T* dense, uint64_t cout, uint64_t cin, uint64_t groups,
                           uint64_t kvol, T* packed, CUstream_st* stream);

// The input zero-padded explicitly: xp (batch, cin, in + pre + post ...) from x; the fprop of s
// equals the fprop of padded_shape(s) on xp. Used only when cuDNN has no engine for unequal pre
// and post padding.
ConvShape conv_padded_shape(const ConvShape& s);
template <class T>
void conv_pad_input_cuda(const ConvShape& s, const T* x, T* xp, CUstream_st* stream);

// ---- cuDNN through cudnn-frontend (kernels/conv/conv_cuda.cpp), builds with the frontend only.
enum class ConvPass : uint8_t { fprop = 0, dgrad = 1, wgrad = 2 };

// What selects engines besides the geometry.
struct ConvPlanPolicy {
  bool f64 = false;
  bool deterministic = false;  // only engines without the NONDETERMINISTIC note
  bool tf32 = false;           // float32: TENSOR_CORE / DOWN_CONVERT_INPUTS engines allowed
};

struct ConvCudnnGraph;  // the built cudnn-frontend graph (kernels/conv/conv_cuda.cpp)

// An execution plan of one pass on one packed-kernel geometry. graph == nullptr records that
// cuDNN offered no engine within the policy for it (the direct kernels run instead), so that a
// geometry is searched once.
struct ConvCudnnPlan {
  ConvCudnnGraph* graph = nullptr;
  uint64_t workspace_bytes = 0;
};

// True when this build has cudnn-frontend (otherwise the plans are always empty).
bool conv_cudnn_available();
// Builds the plan (heuristics mode A, then the fallback list) for the packed geometry s
// (s.kernel_cols == cin / groups). Returns an empty plan when no engine within the policy builds
// (any failure of the frontend while building counts as that; TLRT_CONV_DEBUG=1 prints it).
ConvCudnnPlan conv_cudnn_plan_create(const ConvShape& s, ConvPass pass, ConvPlanPolicy policy,
                                     cudnnContext* handle, const char* op);
void conv_cudnn_plan_destroy(ConvCudnnPlan& plan);
// Queues the pass on the handle's stream. fprop: a = x, b = w, out = y; dgrad: a = dy, b = w,
// out = dx; wgrad: a = x, b = dy, out = dw. workspace holds plan.workspace_bytes.
void conv_cudnn_execute(const ConvCudnnPlan& plan, cudnnContext* handle, const void* a,
                        const void* b, void* out, void* workspace, const char* op);

}  // namespace tlrt::kernels
