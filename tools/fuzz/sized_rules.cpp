// The fuzzer's rules for the sized ops (SPEC-ops sections 7-14 and 16) and the legacy attention
// pair: success exactly where every size argument agrees with its buffer, failure where the spec
// names the rejection (tools/fuzz/call_rules.cpp holds the rules every call obeys and the others).
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tools/fuzz/rule_detail.h"

namespace tlrt_fuzz::rule_detail {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The legacy attention pair (symbols-ops.tsv, legacy rows; runtime/attention_dispatch.h), with
// `Except String` results: the forward succeeds exactly when hasMask is 0 or 1, the scale finite
// and within the float32 range, Q, K, V (and the mask, read only with hasMask = 1) of one dtype
// and of batch * n * d (batch * n * n) scalars, and an attention provider is enabled for the dtype.
// The backward needs the context of a forward's output, which the pool's buffers only have when
// they came from one: either, unless a rule every call obeys already fails it.
void judge_attention(const CallPlan& plan, const RuleContext& c, Verdict& v, Judgement& j) {
  auto arg = [&](const char* param) -> const PlannedArg* {
    const int k = param_named(plan, param);
    return k >= 0 ? &plan.args[static_cast<size_t>(k)] : nullptr;
  };
  auto live = [&](const char* param) -> const PoolBuffer* {
    const PlannedArg* a = arg(param);
    return a && a->kind == ArgKind::live_buffer ? &c.pool[a->pool_index] : nullptr;
  };
  if (std::strcmp(plan.symbol->spec->symbol, "torchlean_libtorch_attention_bwd") == 0) {
    const PoolBuffer* out = live("out");
    const PoolBuffer* dout = live("dOut");
    if (out != nullptr && dout != nullptr && out->dtype != dout->dtype) {
      return v.failure("operand dtypes differ");
    }
    return v.either("success needs the context of a forward's output");
  }
  const uint64_t has_mask = arg("hasMask")->value.u32;
  const double scale = arg("scale")->value.f64;
  if (has_mask > 1) return v.failure("hasMask is neither 0 nor 1");
  if (!std::isfinite(scale) || std::fabs(scale) > std::numeric_limits<float>::max()) {
    return v.failure("scale not finite or outside the float32 range");
  }
  const uint64_t batch = arg("batch")->value.u32, n = arg("n")->value.u32, d = arg("d")->value.u32;
  // The runtime's limit on batch * n * d, and on batch * n * n wherever it forms that product
  // (with a mask or a nonempty output): int64, and bytes at 8 a scalar.
  const uint64_t elements = saturating_mul(batch, saturating_mul(n, d));
  const uint64_t scores = saturating_mul(batch, saturating_mul(n, n));
  const uint64_t limit = UINT64_MAX / 8;
  if (elements > limit || ((has_mask == 1 || elements != 0) && scores > limit)) {
    return v.failure("shape overflow");
  }
  std::vector<const PoolBuffer*> operands{live("Q"), live("K"), live("V")};
  if (has_mask == 1) operands.push_back(live("mask"));
  for (size_t k = 0; k < operands.size(); ++k) {
    if (operands[k] == nullptr) return v.either("an operand of unknown state");
    if (operands[k]->size != (k == 3 ? scores : elements)) {
      return v.failure("operand sizes disagree with batch, n, d");
    }
    if (operands[k]->dtype != operands[0]->dtype) return v.failure("operand dtypes differ");
  }
  const uint8_t dt = operands[0]->dtype;
  if (elements != 0 && c.abi.setting(6) == 0 && !(dt == 0 && c.abi.setting(5) == 1)) {
    return v.failure("no attention provider enabled for the dtype");
  }
  // The output, the context (q, k, v, probabilities) and the scores' workspace.
  const uint64_t width = dtype_width(dt);
  v.success_within(saturating_mul(saturating_mul(elements, 4) + saturating_mul(scores, 2), width),
                   c);
  j.check_result_shape = true;
  j.expected_result_size = elements;
  j.expected_result_dtype = dt;
}

// A sized op's call as its rules read it: the op (the symbol without its prefix), the arguments
// by parameter name, the one dtype of its buffer operands, and the verdict the rules set.
struct SizedCall {
  const CallPlan& plan;
  const RuleContext& c;
  Verdict& v;
  Judgement& judgement;
  std::string op;
  uint8_t dt = 0;

  const PlannedArg* arg(const char* param) const {
    const int k = param_named(plan, param);
    return k >= 0 ? &plan.args[static_cast<size_t>(k)] : nullptr;
  }
  uint64_t u32(const char* param) const {
    const PlannedArg* a = arg(param);
    return a ? a->value.u32 : 0;
  }
  const PoolBuffer* buffer(const char* param) const {
    const PlannedArg* a = arg(param);
    return a && a->kind == ArgKind::live_buffer ? &c.pool[a->pool_index] : nullptr;
  }
  bool array_ok(const char* param) const {
    const PlannedArg* a = arg(param);
    return a && a->kind == ArgKind::nat_array && !a->bad_element;
  }
  bool size_is(const char* param, uint64_t want) const {
    const PoolBuffer* b = buffer(param);
    return b != nullptr && b->size == want;
  }
  // A success whose result is one buffer of `size` scalars of `dtype` (with up to
  // `scratch_factor` times its bytes in new payloads), checked against the returned one.
  void result(uint64_t size, uint8_t dtype, uint64_t scratch_factor) const {
    v.success_within(saturating_mul(size * dtype_width(dtype), scratch_factor), c);
    judgement.check_result_shape = true;
    judgement.expected_result_size = size;
    judgement.expected_result_dtype = dtype;
  }

  // The rules of each family, for the ops kSizedRules routes to it.
  void reductions_and_shapes() const;
  void products_and_indexing() const;
  void softmax_and_normalization() const;
  void scans() const;
  void fft() const;
  void pools() const;
  void convolutions() const;
};

// Axis reductions, broadcasting and the shape ops (SPEC-ops 8).
void SizedCall::reductions_and_shapes() const {
  if (op == "reduce_sum_by_row" || op == "reduce_max_by_row" || op == "reduce_max_by_column") {
    if (!size_is("x", u32("rows") * u32("cols"))) return v.failure("size(x) != rows * cols");
    return result(op == "reduce_max_by_column" ? u32("cols") : u32("rows"), dt, 1);
  }
  if (op == "broadcast_vec_to_cols") {
    if (!size_is("v", u32("rows"))) return v.failure("size(v) != rows");
    return result(u32("rows") * u32("cols"), dt, 1);
  }
  if (op == "concat1d") {
    if (!size_is("a", u32("n")) || !size_is("b", u32("m"))) return v.failure("sizes != n, m");
    return result(u32("n") + u32("m"), dt, 1);
  }
  if (op == "slice1d") {
    const uint64_t n = u32("n"), start = u32("start"), len = u32("len");
    if (!size_is("x", n)) return v.failure("size(x) != n");
    if (start > n || len > n - start) return v.failure("slice out of bounds");
    return result(len, dt, 1);
  }
  if (op == "swap_adjacent_at_depth" || op == "reduce_sum_axis") {
    const PlannedArg* dims = arg("dims");
    if (!array_ok("dims")) return v.failure("dims is not a well-formed Array Nat");
    if (dims->product > static_cast<uint64_t>(INT64_MAX)) return v.failure("shape size overflow");
    if (!size_is("x", dims->product)) return v.failure("size(x) != prod(dims)");
    if (op == "swap_adjacent_at_depth") {
      if (u32("depth") + 1 >= dims->length) return v.failure("invalid depth");
      return result(dims->product, dt, 1);
    }
    if (dims->length == 0) return result(1, dt, 1);
    const uint64_t axis = u32("axis");
    if (axis >= dims->length) return v.failure("invalid axis");
    // dims without the axis; with dims[axis] = 0 the other extents may still multiply past
    // what memory holds (zeros of that size).
    uint64_t kept = 1;
    for (size_t d = 0; d < dims->values.size(); ++d) {
      if (d != axis) kept = saturating_mul(kept, dims->values[d]);
    }
    return result(kept, dt, 1);
  }
  // ---- broadcast_to / reduce_from_broadcast (SPEC-ops 8): the axis map's rules, then the
  // operand size (prod(inDims) for broadcast_to, prod(outDims) for the reduction).
  if (op == "broadcast_to" || op == "reduce_from_broadcast") {
    for (const char* a : {"inDims", "outDims", "axisMap"}) {
      if (!array_ok(a)) return v.failure("a shape array is not a well-formed Array Nat");
    }
    const std::vector<uint64_t>& in = arg("inDims")->values;
    const std::vector<uint64_t>& out = arg("outDims")->values;
    const std::vector<uint64_t>& map = arg("axisMap")->values;
    if (map.size() != out.size()) return v.failure("axis map rank mismatch");
    std::vector<int> seen(in.size(), 0);
    for (size_t j = 0; j < map.size(); ++j) {
      if (map[j] == 0) continue;
      if (map[j] > in.size()) return v.failure("broadcast axis out of range");
      const size_t a = map[j] - 1;
      if (seen[a]++ != 0) return v.failure("repeated broadcast input axis");
      if (in[a] != 1 && in[a] != out[j]) return v.failure("incompatible broadcast dimension");
    }
    for (int count : seen) {
      if (count == 0) return v.failure("broadcast omits an input axis");
    }
    const uint64_t limit = static_cast<uint64_t>(INT64_MAX);
    if (arg("inDims")->product > limit || arg("outDims")->product > limit) {
      return v.failure("shape size overflow");
    }
    const bool forward = op == "broadcast_to";
    if (!size_is(forward ? "x" : "dOut", arg(forward ? "inDims" : "outDims")->product)) {
      return v.failure("buffer size does not match shape");
    }
    return result(arg(forward ? "outDims" : "inDims")->product, dt, forward ? 1 : 2);
  }
  v.either("no rule of its own");
}

// Matrix products (SPEC-ops 10) and gathers and scatters (SPEC-ops 11, 16).
void SizedCall::products_and_indexing() const {
  if (op == "bmm_with_transpose") {
    const uint64_t batch = u32("batch"), m = u32("m"), n = u32("n"), p = u32("p");
    if (u32("transposeA") > 1 || u32("transposeB") > 1) return v.failure("transpose flag > 1");
    if (!size_is("A", saturating_mul(batch, m * n)) ||
        !size_is("B", saturating_mul(batch, n * p))) {
      return v.failure("operand sizes disagree with batch, m, n, p");
    }
    return result(saturating_mul(batch, m * p), dt, 1);
  }
  if (op == "gather_at" || op == "scatter_add_at") {
    const uint64_t size = u32("size"), count = u32("count");
    if (size == 0) return v.failure("an empty table");
    if (op == "gather_at") {
      if (!size_is("table", size) || !size_is("positions", count)) {
        return v.failure("sizes disagree with size, count");
      }
      return result(count, dt, 1);
    }
    if (!size_is("positions", count) || !size_is("values", count)) {
      return v.failure("sizes disagree with count");
    }
    return result(size, dt, 4);
  }
  if (op == "gather_rows" || op == "scatter_add_rows" || op == "scatter_add") {
    const bool rows_op = op != "scatter_add";
    const uint64_t rows = rows_op ? u32("rows") : u32("n");
    const uint64_t cols = rows_op ? u32("cols") : 1;
    const uint64_t k = u32("k");
    if (!size_is(rows_op ? "mat" : "x", rows * cols)) return v.failure("base size disagrees");
    if (op != "gather_rows" && !size_is("values", k * cols)) {
      return v.failure("size(values) != k * cols");
    }
    const PlannedArg* indices = arg("indices");
    if (!array_ok("indices")) return v.failure("indices is not a well-formed Array Nat");
    if (indices->length != k) return v.failure("indices.size != k");
    return result(op == "gather_rows" ? k * cols : rows * cols, dt, 4);
  }
  if (op == "dgemm_cuda") {
    const uint64_t m = u32("m"), n = u32("n"), p = u32("p");
    const PlannedArg* a = arg("A");
    const PlannedArg* b = arg("B");
    if (a == nullptr || b == nullptr || a->kind != ArgKind::float_array ||
        b->kind != ArgKind::float_array) {
      return v.either("an operand is not a FloatArray");
    }
    if (a->length != m * n || b->length != n * p) return v.failure("A or B size mismatch");
    if (saturating_mul(m * p, 8) > c.pool_budget_bytes) return v.either("a large host result");
    return v.success();
  }
  v.either("no rule of its own");
}

// Softmax (SPEC-ops 7) and layer normalization (SPEC-ops 9).
void SizedCall::softmax_and_normalization() const {
  // ---- softmax (SPEC-ops 7): the masked rows need both sizes to be rows * cols; softmax_io
  // checks the dims, the axis, the product (zero dims give 0) and the size, in that order.
  if (op == "hard_masked_softmax_by_row") {
    const uint64_t n = u32("rows") * u32("cols");
    if (!size_is("scores", n) || !size_is("mask", n)) {
      return v.failure("size(scores) or size(mask) != rows * cols");
    }
    return result(n, dt, 1);
  }
  if (op == "softmax_io") {
    if (!array_ok("dims")) return v.failure("dims is not a well-formed Array Nat");
    const PlannedArg* dims = arg("dims");
    if (u32("axis") >= dims->length) return v.failure("axis out of range");
    if (dims->product > static_cast<uint64_t>(INT64_MAX)) {
      return v.failure("dimension product overflow");
    }
    if (!size_is("input", dims->product)) return v.failure("size(input) != prod(dims)");
    return result(dims->product, dt, 1);
  }
  // ---- layer normalization (SPEC-ops 9) -------------------------------------------------------
  // Triples of unequal sizes ((rows*cols, rows*cols, rows) forward, (rows*cols, cols, cols)
  // backward): check_result_shape, which holds every result to one size, stays off.
  if (op == "layer_norm_fwd" || op == "layer_norm_bwd") {
    const uint64_t rows = u32("rows"), cols = u32("cols");
    if (rows == 0 || cols == 0) return v.failure("dimensions must be positive");
    const bool fwd = op == "layer_norm_fwd";
    const bool sizes_ok =
        fwd ? size_is("x", rows * cols) && size_is("gamma", cols) && size_is("beta", cols)
            : size_is("dout", rows * cols) && size_is("normalized", rows * cols) &&
                  size_is("invStd", rows) && size_is("gamma", cols);
    if (!sizes_ok) return v.failure("sizes disagree with rows, cols");
    const uint64_t elements = fwd ? 2 * rows * cols + rows : rows * cols + 2 * cols;
    // Factor 2: the backward's column partials on the CUDA backend.
    return v.success_within(saturating_mul(elements * dtype_width(dt), 2), c);
  }
  v.either("no rule of its own");
}

// Diagonal selective scans (SPEC-ops 13).
void SizedCall::scans() const {
  if (starts_with(op, "selective_scan_diag_")) {
    const bool variable = starts_with(op, "selective_scan_diag_var_");
    const bool backward = op.size() >= 4 && op.compare(op.size() - 4, 4, "_bwd") == 0;
    const uint64_t steps = u32("seqLen"), state = u32("state");
    const uint64_t total = steps * state;  // both below 2^32: no overflow
    const uint64_t coefficient = variable ? total : state;
    if (!size_is("A", coefficient) || !size_is("B", coefficient)) {
      return v.failure("size(A) or size(B) disagrees with the shape");
    }
    if (!size_is("X", total)) return v.failure("size(X) != seqLen * state");
    if (!size_is("h0", state)) return v.failure("size(h0) != state");
    if (!backward) return result(total, dt, 2);
    if (!size_is("out", total) || !size_is("dY", total)) {
      return v.failure("size(out) or size(dY) != seqLen * state");
    }
    // (dA, (dB, (dX, dH0))): the result check takes single buffers, so only the verdict.
    return v.success_within(saturating_mul((2 * coefficient + total + state) * dtype_width(dt), 2),
                            c);
  }
  v.either("no rule of its own");
}

// Real FFTs (SPEC-ops 12) and the legacy spectral convolution (SPEC-ops 16).
void SizedCall::fft() const {
  if (op == "rfft1d_packed" || op == "irfft1d_packed" || op == "irfft1d_packed_unnormalized") {
    const uint64_t batch = u32("batch"), n = u32("n");
    if (n == 0) return v.failure("length must be positive");
    const uint64_t packed = saturating_mul(batch, saturating_mul(n / 2 + 1, 2));
    if (op == "rfft1d_packed") {
      if (!size_is("x", batch * n)) return v.failure("size(x) != batch * n");
      return result(packed, dt, 2);
    }
    if (!size_is("spec", packed)) return v.failure("size(spec) != batch * (n/2 + 1) * 2");
    return result(batch * n, dt, 3);
  }
  if (op == "spectral_conv1d_rfft_fwd" || op == "spectral_conv1d_rfft_bwd") {
    const uint64_t grid = u32("grid"), width = u32("width"), modes = u32("modes");
    if (grid == 0 || width == 0) return v.failure("grid and width must be positive");
    if (modes > grid / 2 + 1) return v.failure("modes exceeds rfft frequency count");
    const uint64_t weights = saturating_mul(modes, saturating_mul(width, width));
    if (!size_is("x", grid * width) || !size_is("wRe", weights) || !size_is("wIm", weights)) {
      return v.failure("operand sizes disagree with grid, width, modes");
    }
    if (op == "spectral_conv1d_rfft_fwd") return result(grid * width, dt, 4);
    if (!size_is("dY", grid * width)) return v.failure("size(dY) != grid * width");
    // A triple of two sizes: check_result_shape compares every buffer with one size, so it stays
    // off and only the success is judged.
    return v.success_within(
        saturating_mul(saturating_mul(grid * width, 2) + 2 * weights, 4 * dtype_width(dt)), c);
  }
  v.either("no rule of its own");
}

// Max, average and smooth max pooling (SPEC-ops 14.1, 14.3-14.5).
void SizedCall::pools() const {
  if (op == "maxpool_fwd" || op == "maxpool_bwd" || op == "avgpool_fwd" || op == "avgpool_bwd" ||
      op == "smooth_maxpool_fwd" || op == "smooth_maxpool_bwd") {
    const bool backward = op.compare(op.size() - 4, 4, "_bwd") == 0;
    const char* names[4] = {"inSpatial", "kernel", "stride", "padding"};
    std::vector<uint64_t> geo[4];
    for (int a = 0; a < 4; ++a) {
      const PlannedArg* p = arg(names[a]);
      if (p == nullptr || p->kind != ArgKind::nat_array) {
        return v.failure("a geometry argument is not an Array Nat");
      }
    }
    for (int a = 0; a < 4; ++a) {
      const PlannedArg* p = arg(names[a]);
      if (p->bad_element) return v.failure("a geometry entry exceeds UInt32");
      geo[a] = p->values;
    }
    const size_t rank = geo[0].size();
    if (rank < 1 || rank > 3) return v.failure("spatial rank must be one, two, or three");
    for (int a = 1; a < 4; ++a) {
      if (geo[a].size() != rank) return v.failure("array rank mismatch");
    }
    std::vector<uint64_t> out(rank);
    for (size_t d = 0; d < rank; ++d) {
      const uint64_t in = geo[0][d], k = geo[1][d], s = geo[2][d], p = geo[3][d];
      if (k == 0 || s == 0) return v.failure("kernel or stride 0");
      out[d] = (in == 0 || p > k / 2 || in + 2 * p < k) ? 0 : (in + 2 * p - k) / s + 1;
    }
    auto volume = [](const std::vector<uint64_t>& dims, bool* overflow) {
      uint64_t product = 1;
      for (uint64_t e : dims) {
        if (e == 0) return uint64_t{0};
      }
      for (uint64_t e : dims) {
        if (product > UINT64_MAX / e) *overflow = true;
        product = saturating_mul(product, e);
      }
      return product;
    };
    bool overflow = false;
    const uint64_t iv = volume(geo[0], &overflow);
    volume(geo[1], &overflow);
    const uint64_t ov = volume(out, &overflow);
    if (overflow) return v.failure("dimension product overflow");
    const uint64_t channels = u32("channels");
    const uint64_t limit = static_cast<uint64_t>(INT64_MAX);
    if (channels != 0 && (iv > limit / channels || ov > limit / channels)) {
      return v.failure("shape size overflow");
    }
    const uint64_t in_count = channels * iv, out_count = channels * ov;
    if (backward && !size_is("gradOutput", out_count))
      return v.failure("size(gradOutput) != C x prod(out)");
    if (op != "avgpool_bwd" && !size_is("input", in_count)) {
      return v.failure("size(input) != C x prod(inSpatial)");
    }
    if (starts_with(op, "smooth_") && (backward || out_count != 0)) {
      const PlannedArg* beta = arg("beta");
      const double b = beta == nullptr ? 1.0
                       : dt == 0       ? static_cast<double>(static_cast<float>(beta->value.f64))
                                       : beta->value.f64;
      if (!std::isfinite(b) || b == 0.0) return v.failure("beta must be finite and nonzero");
    }
    // The smooth backward's workspace holds two values per output.
    return result(backward ? in_count : out_count, dt, backward ? 3 : 1);
  }
  v.either("no rule of its own");
}

// Convolutions (SPEC-ops 14.1, 14.2, 14.6).
void SizedCall::convolutions() const {
  // From the arrays' entries: kernel and stride (and conv_io's dilation) positive, every output
  // extent within UInt32, the buffers of the stated volumes. The backward results are triples of
  // unequal sizes: check_result_shape stays off.
  if (op == "cuda_conv_fwd" || op == "cuda_conv_bwd" || op == "cuda_convtranspose_fwd" ||
      op == "cuda_convtranspose_bwd") {
    for (const char* a : {"inSpatial", "kernelSpatial", "stride", "padding"}) {
      if (!array_ok(a)) return v.failure("a geometry array is not a well-formed Array Nat");
    }
    const std::vector<uint64_t>& in = arg("inSpatial")->values;
    const std::vector<uint64_t>& kernel = arg("kernelSpatial")->values;
    const std::vector<uint64_t>& stride = arg("stride")->values;
    const std::vector<uint64_t>& padding = arg("padding")->values;
    const size_t rank = in.size();
    if (rank < 1 || rank > 3) return v.failure("spatial rank must be one, two, or three");
    if (kernel.size() != rank || stride.size() != rank || padding.size() != rank) {
      return v.failure("array rank mismatch");
    }
    const bool transposed = op.find("convtranspose") != std::string::npos;
    std::vector<uint64_t> out(rank);
    for (size_t d = 0; d < rank; ++d) {
      const uint64_t k = kernel[d], st = stride[d], p = padding[d];
      if (k == 0 || st == 0) return v.failure("kernel or stride 0");
      if (transposed) {
        // (in - 1) * s + k < 2^64 for entries below 2^32.
        const uint64_t full = in[d] == 0 ? 0 : (in[d] - 1) * st + k;
        out[d] = full >= 2 * p ? full - 2 * p : 0;
      } else {
        out[d] = in[d] + 2 * p < k ? 0 : (in[d] + 2 * p - k) / st + 1;
      }
      if (out[d] > UINT32_MAX) return v.failure("an output extent exceeds UInt32");
    }
    auto volume = [](uint64_t channels, const std::vector<uint64_t>& dims) {
      uint64_t product = channels;
      for (uint64_t e : dims) product = saturating_mul(product, e);
      for (uint64_t e : dims) {
        if (e == 0) return uint64_t{0};
      }
      return channels == 0 ? 0 : product;
    };
    const uint64_t in_c = u32("inC"), out_c = u32("outC");
    const uint64_t input = volume(in_c, in), weights = volume(saturating_mul(in_c, out_c), kernel);
    const uint64_t output = volume(out_c, out);
    if (!size_is("input", input) || !size_is("kernel", weights)) {
      return v.failure("input or kernel size disagrees with the geometry");
    }
    if (ends_with(op, "_fwd")) {
      if (!size_is("bias", out_c)) return v.failure("size(bias) != outC");
      return result(output, dt, 4);
    }
    if (!size_is("gradOutput", output)) return v.failure("size(gradOutput) != outC x prod(out)");
    return v.success_within(saturating_mul(input + weights + out_c, 4 * dtype_width(dt)), c);
  }
  if (op == "conv_io") {
    for (const char* a :
         {"inputDims", "kernelDims", "stride", "paddingBefore", "paddingAfter", "dilation"}) {
      if (!array_ok(a)) return v.failure("a geometry array is not a well-formed Array Nat");
    }
    const std::vector<uint64_t>& dims = arg("inputDims")->values;
    const std::vector<uint64_t>& kernel_dims = arg("kernelDims")->values;
    const std::vector<uint64_t>& stride = arg("stride")->values;
    const std::vector<uint64_t>& before = arg("paddingBefore")->values;
    const std::vector<uint64_t>& after = arg("paddingAfter")->values;
    const std::vector<uint64_t>& dilation = arg("dilation")->values;
    const size_t rank = stride.size();
    if (rank < 1 || rank > 3) return v.failure("spatial rank must be one, two, or three");
    if (dims.size() < rank + 1 || kernel_dims.size() != rank + 2 || before.size() != rank ||
        after.size() != rank || dilation.size() != rank) {
      return v.failure("rank mismatch");
    }
    const uint64_t groups = u32("groups");
    const size_t channel_axis = dims.size() - rank - 1;
    const uint64_t in_c = dims[channel_axis], out_c = kernel_dims[0];
    if (groups == 0 || in_c == 0 || out_c == 0 || in_c % groups != 0 || out_c % groups != 0 ||
        kernel_dims[1] != in_c) {
      return v.failure("invalid channel groups");
    }
    const uint64_t limit = static_cast<uint64_t>(INT64_MAX);
    uint64_t batch = 1;
    for (size_t a = 0; a < channel_axis; ++a) batch = saturating_mul(batch, dims[a]);
    for (size_t a = 0; a < channel_axis; ++a) {
      if (dims[a] == 0) batch = 0;
    }
    if (batch > limit) return v.failure("dimension product overflow");
    if (batch > UINT32_MAX) return v.failure("batch exceeds UInt32");
    uint64_t output = saturating_mul(batch, out_c);
    for (size_t a = 0; a < rank; ++a) {
      const uint64_t k = kernel_dims[a + 2];
      if (k == 0 || stride[a] == 0 || dilation[a] == 0) {
        return v.failure("kernel, stride and dilation must be positive");
      }
      const uint64_t effective = (k - 1) * dilation[a] + 1;
      const uint64_t padded = dims[channel_axis + 1 + a] + before[a] + after[a];
      const uint64_t extent = padded < effective ? 0 : (padded - effective) / stride[a] + 1;
      if (extent > UINT32_MAX) return v.failure("an output extent exceeds UInt32");
      output = extent == 0 ? 0 : saturating_mul(output, extent);
    }
    if (output > UINT32_MAX) return v.failure("output exceeds UInt32");
    for (const char* a : {"inputDims", "kernelDims"}) {
      if (arg(a)->product > limit) return v.failure("dimension product overflow");
    }
    if (!size_is("input", arg("inputDims")->product) ||
        !size_is("kernel", arg("kernelDims")->product) || !size_is("bias", out_c)) {
      return v.failure("buffer sizes disagree with inputDims, kernelDims, Cout");
    }
    return result(output, dt, 4);
  }
  v.either("no rule of its own");
}

// The family rules of each sized op (the selective scans by their prefix, in judge_sized_op).
using SizedRules = void (SizedCall::*)() const;
const std::pair<const char*, SizedRules> kSizedRules[] = {
    {"reduce_sum_by_row", &SizedCall::reductions_and_shapes},
    {"reduce_max_by_row", &SizedCall::reductions_and_shapes},
    {"reduce_max_by_column", &SizedCall::reductions_and_shapes},
    {"broadcast_vec_to_cols", &SizedCall::reductions_and_shapes},
    {"concat1d", &SizedCall::reductions_and_shapes},
    {"slice1d", &SizedCall::reductions_and_shapes},
    {"swap_adjacent_at_depth", &SizedCall::reductions_and_shapes},
    {"reduce_sum_axis", &SizedCall::reductions_and_shapes},
    {"broadcast_to", &SizedCall::reductions_and_shapes},
    {"reduce_from_broadcast", &SizedCall::reductions_and_shapes},
    {"bmm_with_transpose", &SizedCall::products_and_indexing},
    {"gather_at", &SizedCall::products_and_indexing},
    {"scatter_add_at", &SizedCall::products_and_indexing},
    {"gather_rows", &SizedCall::products_and_indexing},
    {"scatter_add_rows", &SizedCall::products_and_indexing},
    {"scatter_add", &SizedCall::products_and_indexing},
    {"dgemm_cuda", &SizedCall::products_and_indexing},
    {"hard_masked_softmax_by_row", &SizedCall::softmax_and_normalization},
    {"softmax_io", &SizedCall::softmax_and_normalization},
    {"layer_norm_fwd", &SizedCall::softmax_and_normalization},
    {"layer_norm_bwd", &SizedCall::softmax_and_normalization},
    {"rfft1d_packed", &SizedCall::fft},
    {"irfft1d_packed", &SizedCall::fft},
    {"irfft1d_packed_unnormalized", &SizedCall::fft},
    {"spectral_conv1d_rfft_fwd", &SizedCall::fft},
    {"spectral_conv1d_rfft_bwd", &SizedCall::fft},
    {"maxpool_fwd", &SizedCall::pools},
    {"maxpool_bwd", &SizedCall::pools},
    {"avgpool_fwd", &SizedCall::pools},
    {"avgpool_bwd", &SizedCall::pools},
    {"smooth_maxpool_fwd", &SizedCall::pools},
    {"smooth_maxpool_bwd", &SizedCall::pools},
    {"cuda_conv_fwd", &SizedCall::convolutions},
    {"cuda_conv_bwd", &SizedCall::convolutions},
    {"cuda_convtranspose_fwd", &SizedCall::convolutions},
    {"cuda_convtranspose_bwd", &SizedCall::convolutions},
    {"conv_io", &SizedCall::convolutions},
};

}  // namespace

// The ops whose valid calls are fixed by their size arguments (SPEC-ops 7-14, 16): success
// exactly when every size argument agrees with its buffer and every host array is well formed,
// with a result of the size the spec states (the axis maps of broadcast_to and
// reduce_from_broadcast and the convolutions' geometry are judged from their entries).
void judge_sized_op(const CallPlan& plan, const RuleContext& c, Verdict& v, Judgement& j) {
  if (starts_with(plan.symbol->spec->symbol, "torchlean_libtorch_attention_")) {
    return judge_attention(plan, c, v, j);
  }
  const std::string name = plan.symbol->spec->symbol;
  SizedCall s{plan, c, v, j,
              starts_with(name, "torchlean_cuda_buffer_")
                  ? name.substr(std::strlen("torchlean_cuda_buffer_"))
                  : name.substr(std::strlen("torchlean_"))};
  // Every buffer operand of the op, for the one-dtype rule.
  std::vector<const PoolBuffer*> operands;
  for (size_t k = 0; k < plan.args.size(); ++k) {
    if (plan.args[k].kind == ArgKind::live_buffer)
      operands.push_back(&c.pool[plan.args[k].pool_index]);
  }
  for (const PoolBuffer* b : operands) {
    if (b->dtype != operands[0]->dtype) return v.failure("operand dtypes differ");
  }
  s.dt = operands.empty() ? 0 : operands[0]->dtype;
  if (starts_with(s.op, "selective_scan_diag_")) return s.scans();
  for (const auto& [op, rules] : kSizedRules) {
    if (s.op == op) return (s.*rules)();
  }
  v.either("no rule of its own");
}

}  // namespace tlrt_fuzz::rule_detail
