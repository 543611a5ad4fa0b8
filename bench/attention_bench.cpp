// The legacy attention pair (torchlean_libtorch_attention_fwd / _bwd) through the ABI, float32,
// scale 1/sqrt(d): forward and backward at (batch, n, d) = (32, 1024, 64) and (8, 4096, 64)
// without a mask, and (32, 1024, 64) with a dense random 0/1 mask (Bernoulli, about 10% of the
// entries blocked). Each row sits next to TorchLean's ATen composition for the symbol
// (bench/attention_aten.cpp).
//
// A row's median is the device time of the same work through this process's runtime dispatch
// (tlrt::attention_fwd / _bwd on the harness stream, Harness::device_median_us, L2 flushed before
// each sample), as in the other groups. The ABI figure goes in the note: libtlrt.so queues its work
// on its own runtime's stream, not on the harness stream (which belongs to this process's runtime
// copy), so the harness's events cannot bracket it alone: each sample waits for the flush, makes
// the ABI call, drops the result and synchronizes libtlrt.so's stream
// (torchlean_libtorch_synchronize) before the stop event is recorded. A sample therefore also holds
// the host's share of the call before its first kernel and one synchronize's wake-up, which the
// ATen column (queued on the harness stream behind the flush) does not.
//
// The backward rows time only the backward: the forward output, which carries the context, is
// made once outside the timed region (the ATen side keeps its forward's saved tensors likewise).
// Notes give TFLOP/s (forward 4 batch n^2 d flops, backward 8 batch n^2 d); bytes = Q, K, V (and
// the mask) read and out written for the forward, dOut read and dQ, dK, dV written for the
// backward. The three sides (ABI, runtime dispatch, ATen) see the same values: element i of every
// operand comes from (key, i) alone.
#include <cuda_runtime.h>
#include <lean/lean.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/random/random.h"
#include "runtime/attention_dispatch.h"
#include "runtime/buffer.h"
#include "tlrt/torchlean_abi.h"

namespace bench {
namespace {

constexpr const char* kAtenForward = "attention_fwd";
constexpr const char* kAtenBackward = "attention_bwd";

struct Case {
  uint32_t batch, n, d;
  bool mask;
};

constexpr Case kCases[] = {{32, 1024, 64, false}, {8, 4096, 64, false}, {32, 1024, 64, true}};
// The largest operand of any case: the 32 x 1024 x 1024 mask. Every ATen input is a prefix of a
// block of this size (aten::median_us copies the same count from each input).
constexpr uint64_t kMaxElements = uint64_t{32} * 1024 * 1024;
// Mask entries are 1 (allowed) with this probability, 0 (blocked) otherwise.
constexpr double kAllowed = 0.9;
constexpr uint64_t kKeyQ = 0xA771, kKeyK = 0xA772, kKeyV = 0xA773, kKeyMask = 0xA774,
                   kKeyGrad = 0xA775;

// The same values on this process's runtime, for the ATen inputs and the dispatch rows.
struct Sources {
  float* q = nullptr;
  float* k = nullptr;
  float* v = nullptr;
  float* mask = nullptr;
  float* grad = nullptr;
};

std::string tflops_text(double flops, double us) {
  if (us <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", flops / (us * 1e-6) / 1e12);
  return text;
}

std::string us_text(double us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", us);
  return text;
}

// The value of an owned `Except String α` result, owned; nullptr for Except.error, whose message
// goes to `error`.
lean_object* take_except(lean_object* result, std::string& error) {
  lean_object* field = lean_ctor_get(result, 0);
  if (lean_obj_tag(result) == 1) {
    lean_inc(field);
    lean_dec(result);
    return field;
  }
  error = lean_string_cstr(field);
  lean_dec(result);
  return nullptr;
}

void synchronize_abi() {
  lean_dec(torchlean_libtorch_synchronize(0));
}

// One ABI call per sample, bracketed as the file head says.
double abi_device_us(Harness& h, const std::function<void()>& call) {
  return h.device_median_us([&](CUstream_st* s) {
    cudaStreamSynchronize(s);
    call();
    synchronize_abi();
  });
}

std::unique_ptr<tlrt::Buffer> copy_of(Harness& h, const float* source, uint64_t n) {
  std::unique_ptr<tlrt::Buffer> b =
      tlrt::Buffer::allocate(tlrt::Backend::cuda, tlrt::Dtype::f32, n, "bench");
  cudaMemcpyAsync(b->data(), source, n * sizeof(float), cudaMemcpyDeviceToDevice, h.stream());
  return b;
}

// Device times of the pair through this process's runtime dispatch on the harness stream: {fwd,
// bwd}; negative (with the reason in `error`) when a call fails.
std::pair<double, double> dispatch_us(Harness& h, const Case& c, const Sources& src, double scale,
                                      std::string& error) {
  try {
    const uint64_t elements = uint64_t{c.batch} * c.n * c.d;
    const std::unique_ptr<tlrt::Buffer> q = copy_of(h, src.q, elements);
    const std::unique_ptr<tlrt::Buffer> k = copy_of(h, src.k, elements);
    const std::unique_ptr<tlrt::Buffer> v = copy_of(h, src.v, elements);
    const std::unique_ptr<tlrt::Buffer> grad = copy_of(h, src.grad, elements);
    const std::unique_ptr<tlrt::Buffer> mask =
        c.mask ? copy_of(h, src.mask, uint64_t{c.batch} * c.n * c.n) : nullptr;
    cudaStreamSynchronize(h.stream());
    const auto forward = [&] {
      return tlrt::attention_fwd(*q, *k, *v, mask.get(), c.mask ? 1 : 0, c.batch, c.n, c.d, scale,
                                 "bench");
    };
    const double fwd_us = h.device_median_us([&](CUstream_st*) { forward(); });
    const std::unique_ptr<tlrt::Buffer> out = forward();
    const double bwd_us =
        h.device_median_us([&](CUstream_st*) { tlrt::attention_bwd(*out, *grad, "bench"); });
    cudaStreamSynchronize(h.stream());
    return {fwd_us, bwd_us};
  } catch (const std::exception& e) {
    cudaStreamSynchronize(h.stream());
    error = e.what();
    return {-1, -1};
  }
}

std::string abi_text(double us, double flops) {
  return "; through the ABI with a synchronize " + us_text(us) + " us (TFLOP/s " +
         tflops_text(flops, us) + ")";
}

void add_case(Harness& h, const Case& c, const Sources& src) {
  const uint64_t elements = uint64_t{c.batch} * c.n * c.d;
  const uint64_t scores = uint64_t{c.batch} * c.n * c.n;
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
  const std::string shape = " float32, batch " + std::to_string(c.batch) + ", n " +
                            std::to_string(c.n) + ", d " + std::to_string(c.d) +
                            (c.mask ? ", mask (10% blocked)" : "");
  const double fwd_flops = 4.0 * c.batch * c.n * static_cast<double>(c.n) * c.d;
  const double bwd_flops = 2 * fwd_flops;

  // ABI operands: Lean buffer objects on libtlrt.so's runtime. Without a mask the mask argument is
  // Q, which the symbol does not read.
  lean_object* q = torchlean_cuda_buffer_rand_uniform(static_cast<uint32_t>(elements), kKeyQ, 0);
  lean_object* k = torchlean_cuda_buffer_rand_uniform(static_cast<uint32_t>(elements), kKeyK, 0);
  lean_object* v = torchlean_cuda_buffer_rand_uniform(static_cast<uint32_t>(elements), kKeyV, 0);
  lean_object* grad =
      torchlean_cuda_buffer_rand_uniform(static_cast<uint32_t>(elements), kKeyGrad, 0);
  lean_object* mask = c.mask ? torchlean_cuda_buffer_bernoulli_mask(static_cast<uint32_t>(scores),
                                                                    kAllowed, kKeyMask, 0)
                             : nullptr;
  lean_object* mask_arg = mask != nullptr ? mask : q;
  const auto forward = [&] {
    return torchlean_libtorch_attention_fwd(q, k, v, mask_arg, c.mask ? 1 : 0, c.batch, c.n, c.d,
                                            scale);
  };
  const auto release = [&] {
    synchronize_abi();
    for (lean_object* o : {q, k, v, grad, mask}) {
      if (o != nullptr) lean_dec(o);
    }
  };

  Row f;
  f.group = "attention";
  f.name = std::string(kAtenForward) + shape;
  f.size = elements;
  f.bytes = static_cast<double>(4 * elements + (c.mask ? scores : 0)) * sizeof(float);
  Row b;
  b.group = "attention";
  b.name = std::string(kAtenBackward) + shape;
  b.size = elements;
  b.bytes = static_cast<double>(4 * elements) * sizeof(float);

  // The forward output carrying the context, made once for the backward rows (and checking that
  // the symbol succeeds before it is timed).
  std::string error;
  lean_object* out = take_except(forward(), error);
  if (out == nullptr) {
    f.note = "ABI error: " + error;
    b.note = f.note;
    h.add(f);
    h.add(b);
    release();
    return;
  }
  lean_object* grads = take_except(torchlean_libtorch_attention_bwd(out, grad), error);
  if (grads != nullptr) lean_dec(grads);
  synchronize_abi();

  f.median_us = abi_device_us(h, [&] { lean_dec(forward()); });
  if (grads != nullptr) {
    b.median_us = abi_device_us(h, [&] { lean_dec(torchlean_libtorch_attention_bwd(out, grad)); });
  }
  lean_dec(out);
  release();

  std::string dispatch_error;
  std::pair<double, double> dispatch = dispatch_us(h, c, src, scale, dispatch_error);
  if (dispatch.first < 0 || dispatch.second < 0) {
    f.note = b.note = "runtime dispatch failed: " + dispatch_error;
    h.add(f);
    h.add(b);
    return;
  }

  // ATen: the forward's host scalars in the ABI's order (hasMask, batch, n, d, scale), then a tag
  // unique to this case (the backward composition keeps its forward per tag).
  static double next_tag = 0;
  const double scalars[6] = {c.mask ? 1.0 : 0.0,
                             static_cast<double>(c.batch),
                             static_cast<double>(c.n),
                             static_cast<double>(c.d),
                             scale,
                             next_tag++};
  const uint64_t aten_n = c.mask ? std::max(elements, scores) : elements;
  const void* fwd_inputs[4] = {src.q, src.k, src.v, src.mask};
  const void* bwd_inputs[5] = {src.q, src.k, src.v, src.mask, src.grad};
  f.aten_us =
      std::max(0.0, aten::median_us(h, kAtenForward, 0, fwd_inputs, 4, scalars, aten_n, 10));
  b.aten_us =
      std::max(0.0, aten::median_us(h, kAtenBackward, 0, bwd_inputs, 5, scalars, aten_n, 10));

  // The row's median is the device time of the runtime dispatch on the harness stream, as in the
  // other groups; the ABI figure (an upper bound: host share and a synchronize) goes in the note.
  const double abi_fwd = f.median_us, abi_bwd = b.median_us;
  f.median_us = dispatch.first;
  b.median_us = dispatch.second;
  f.note = "TFLOP/s " + tflops_text(fwd_flops, f.median_us) + " (ATen " +
           tflops_text(fwd_flops, f.aten_us) + ")" + abi_text(abi_fwd, fwd_flops) + "; Q, K, V" +
           (c.mask ? ", mask" : "") + " read, out written";
  if (grads == nullptr) {
    b.note = "ABI error: " + error;
  } else {
    b.note = "TFLOP/s " + tflops_text(bwd_flops, b.median_us) + " (ATen " +
             tflops_text(bwd_flops, b.aten_us) + ")" + abi_text(abi_bwd, bwd_flops) +
             "; backward only (forward made once); dOut read, dQ, dK, dV written";
  }
  h.add(f);
  h.add(b);
}

void attention_benchmarks(Harness& h, const BenchOptions&) {
  h.set_aten(aten::description());
  Sources src;
  const bool ok = cudaMalloc(&src.q, kMaxElements * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&src.k, kMaxElements * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&src.v, kMaxElements * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&src.mask, kMaxElements * sizeof(float)) == cudaSuccess &&
                  cudaMalloc(&src.grad, kMaxElements * sizeof(float)) == cudaSuccess;
  if (ok) {
    // Filled on the legacy stream and waited for; the keys are the ABI buffers' keys, so each
    // block's prefix holds the values of the matching ABI operand.
    tlrt::kernels::rand_uniform_cuda(src.q, kMaxElements, kKeyQ, nullptr);
    tlrt::kernels::rand_uniform_cuda(src.k, kMaxElements, kKeyK, nullptr);
    tlrt::kernels::rand_uniform_cuda(src.v, kMaxElements, kKeyV, nullptr);
    tlrt::kernels::bernoulli_mask_cuda(src.mask, kMaxElements, static_cast<float>(kAllowed),
                                       kKeyMask, nullptr);
    tlrt::kernels::rand_uniform_cuda(src.grad, kMaxElements, kKeyGrad, nullptr);
    cudaDeviceSynchronize();
    for (const Case& c : kCases) add_case(h, c, src);
    cudaDeviceSynchronize();
  } else {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed (attention)\n");
  }
  for (float* p : {src.q, src.k, src.v, src.mask, src.grad}) cudaFree(p);
  aten::release_cache();
}

// Rank 97: after the softmax, matmul and layer-norm groups, whose kernels the pair composes.
const GroupRegistration kAttentionGroup(
    {"attention",
     "attention_fwd and attention_bwd (the legacy pair) through the ABI at batch 32 x n 1024 x d "
     "64 and 8 x 4096 x 64, and 32 x 1024 x 64 with a 10%-blocked mask, float32, TFLOP/s, next "
     "to TorchLean's ATen SDPA pair",
     97, attention_benchmarks, "", []() -> std::vector<std::string> {
       return {kAtenForward, kAtenBackward};
     }});

}  // namespace
}  // namespace bench
