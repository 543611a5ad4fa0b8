// Convolutions through the runtime's dispatch (cuDNN plans from the per-device cache, workspaces
// and results from the caching allocator, on the runtime's stream), float32, TF32 off:
//   * conv_io N 32, 64 -> 128 channels, 112 x 112, 3 x 3, padding 1, stride 1;
//   * conv_fwd, conv_bwd, convtranspose_fwd, convtranspose_bwd one sample, 64 -> 128 channels,
//     112 x 112, 3 x 3, padding 1 (the transposed rows with Cin 128, Cout 64);
// each beside TorchLean's ATen path for the same symbol (bench/conv_aten.cpp: its reshapes,
// unsqueezes and, for conv_io, the padding copy), and conv_io also beside ATen's bare
// at::convolution with the padding given to cuDNN (TF32 off in both). The note of every tlrt row
// gives TFLOP/s (2 N Cout Cin/G prod(k) prod(out) per pass; the backward counts two passes) and the
// plan creations and driver allocations over the timed calls (after one untimed call): both must
// be 0. bytes = input + kernel read, output written (the backward: input, kernel, dY read, three
// results written).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/random/random.h"
#include "runtime/caching_allocator.h"
#include "runtime/context.h"
#include "runtime/conv_dispatch.h"
#include "runtime/conv_geometry.h"
#include "runtime/plan_cache.h"

namespace bench {
namespace {

constexpr const char* kAtenFwd = "conv_fwd";
constexpr const char* kAtenBwd = "conv_bwd";
constexpr const char* kAtenTFwd = "convtranspose_fwd";
constexpr const char* kAtenTBwd = "convtranspose_bwd";
constexpr const char* kAtenIo = "conv_io";
constexpr const char* kAtenIoCudnn = "conv_io_aten_cudnn";

struct Counts {
  uint64_t creates, driver_allocs;
  static Counts read() {
    return {tlrt::plan_cache_counters().creates,
            tlrt::allocator(tlrt::Backend::cuda).stats().source_allocs};
  }
};

std::unique_ptr<tlrt::Buffer> random_buffer(Harness& h, uint64_t n, uint64_t key) {
  std::unique_ptr<tlrt::Buffer> b =
      tlrt::Buffer::allocate(tlrt::Backend::cuda, tlrt::Dtype::f32, n, "bench");
  if (n != 0) tlrt::kernels::rand_uniform_cuda(b->as<float>(), n, key, h.stream());
  return b;
}

char* tflops_text(char* buf, size_t size, double flops, double us) {
  std::snprintf(buf, size, "%.1f TFLOP/s", us > 0 ? flops / (us * 1e-6) / 1e12 : 0.0);
  return buf;
}

// One row: the tlrt call timed, then ATen's composition `aten_op` on the same data (each input
// given `n` elements).
void add_row(Harness& h, const std::string& name, const std::function<void()>& call, double flops,
             double bytes, uint64_t n, const char* aten_op,
             const std::vector<const tlrt::Buffer*>& inputs, const double* scalars,
             const std::string& extra) {
  call();  // plans created and cached, pool warmed
  cudaStreamSynchronize(h.stream());
  const Counts before = Counts::read();
  const double us = h.device_median_us([&](CUstream_st*) { call(); });
  cudaStreamSynchronize(h.stream());
  const Counts after = Counts::read();
  char buf[64];
  Row r;
  r.group = "conv";
  r.name = name;
  r.median_us = us;
  r.bytes = bytes;
  r.size = n;
  r.note = std::string(tflops_text(buf, sizeof buf, flops, us)) + "; plan creations " +
           std::to_string(after.creates - before.creates) + ", driver allocations " +
           std::to_string(after.driver_allocs - before.driver_allocs) + " over the timed calls" +
           extra;
  std::vector<const void*> pointers;
  for (const tlrt::Buffer* b : inputs) pointers.push_back(b->data());
  r.aten_us = std::max(0.0, aten::median_us(h, aten_op, 0, pointers.data(),
                                            static_cast<int>(pointers.size()), scalars, n, 10));
  if (r.aten_us > 0) {
    r.note += std::string("; ATen ") + tflops_text(buf, sizeof buf, flops, r.aten_us);
  }
  h.add(r);
}

void conv_benchmarks(Harness& h, const BenchOptions&) {
  const uint64_t hw = 112, k = 3, p = 1, s = 1;
  const uint64_t out_hw = (hw + 2 * p - k) / s + 1;
  // conv_io: N 32, 64 -> 128.
  {
    const uint64_t n = 32, cin = 64, cout = 128;
    const uint64_t xs = n * cin * hw * hw, ws = cout * cin * k * k, ys = n * cout * out_hw * out_hw;
    const uint64_t big = std::max(xs, ws);
    auto x = random_buffer(h, big, 1), w = random_buffer(h, big, 2), b = random_buffer(h, big, 3);
    // Each input holds `big` elements (ATen narrows); tlrt sees exact-size views through copies.
    auto xe = tlrt::Buffer::allocate(tlrt::Backend::cuda, tlrt::Dtype::f32, xs, "bench");
    auto we = tlrt::Buffer::allocate(tlrt::Backend::cuda, tlrt::Dtype::f32, ws, "bench");
    auto be = tlrt::Buffer::allocate(tlrt::Backend::cuda, tlrt::Dtype::f32, cout, "bench");
    cudaMemcpyAsync(xe->data(), x->data(), xs * 4, cudaMemcpyDeviceToDevice, h.stream());
    cudaMemcpyAsync(we->data(), w->data(), ws * 4, cudaMemcpyDeviceToDevice, h.stream());
    cudaMemcpyAsync(be->data(), b->data(), cout * 4, cudaMemcpyDeviceToDevice, h.stream());
    cudaStreamSynchronize(h.stream());
    const tlrt::ConvIoGeometry g = tlrt::conv_io_geometry(
        {n, cin, hw, hw}, {cout, cin, k, k}, {s, s}, {p, p}, {p, p}, {1, 1}, 1, "bench");
    const double flops = 2.0 * n * cout * cin * k * k * out_hw * out_hw;
    const double bytes = static_cast<double>(xs + ws + cout + ys) * 4;
    const double scalars[8] = {double(n),  double(cin), double(cout), double(hw),
                               double(hw), double(k),   double(p),    double(s)};
    auto call = [&] { tlrt::conv_io(*xe, *we, *be, g, "bench"); };
    const std::string name = "conv_io float32, N 32, 64 -> 128, 112 x 112, 3 x 3 pad 1";
    add_row(h, name + " vs TorchLean", call, flops, bytes, big, kAtenIo,
            {x.get(), w.get(), b.get()}, scalars, "; TorchLean pads with a copy first");
    add_row(h, name + " vs at::convolution", call, flops, bytes, big, kAtenIoCudnn,
            {x.get(), w.get(), b.get()}, scalars, "; goal >= 0.98x ATen's cuDNN, TF32 off");
  }
  aten::release_cache();
  // The fixed-layout symbols: one sample.
  for (int t = 0; t < 2; ++t) {
    const bool transposed = t == 1;
    const uint64_t cin = transposed ? 128 : 64, cout = transposed ? 64 : 128;
    const tlrt::ConvGeometry g = tlrt::conv_geometry(
        {hw, hw}, {k, k}, {s, s}, {p, p},
        transposed ? tlrt::ConvKind::transposed : tlrt::ConvKind::convolution, "bench");
    const uint64_t xs = cin * hw * hw, ws = cin * cout * k * k, ys = cout * g.out_volume;
    const uint64_t big = std::max({xs, ws, ys});
    auto x = random_buffer(h, big, 4), w = random_buffer(h, big, 5), o = random_buffer(h, big, 6);
    auto xe = tlrt::Buffer::allocate(tlrt::Backend::cuda, tlrt::Dtype::f32, xs, "bench");
    auto we = tlrt::Buffer::allocate(tlrt::Backend::cuda, tlrt::Dtype::f32, ws, "bench");
    auto be = tlrt::Buffer::allocate(tlrt::Backend::cuda, tlrt::Dtype::f32, cout, "bench");
    auto dye = tlrt::Buffer::allocate(tlrt::Backend::cuda, tlrt::Dtype::f32, ys, "bench");
    cudaMemcpyAsync(xe->data(), x->data(), xs * 4, cudaMemcpyDeviceToDevice, h.stream());
    cudaMemcpyAsync(we->data(), w->data(), ws * 4, cudaMemcpyDeviceToDevice, h.stream());
    cudaMemcpyAsync(be->data(), o->data(), cout * 4, cudaMemcpyDeviceToDevice, h.stream());
    cudaMemcpyAsync(dye->data(), o->data(), ys * 4, cudaMemcpyDeviceToDevice, h.stream());
    cudaStreamSynchronize(h.stream());
    // The conv pass runs over the larger spatial side: for the transposed op, its output.
    const double pass =
        2.0 * cin * cout * k * k * (transposed ? double(xs / cin) : double(ys / cout));
    const double scalars[8] = {1,          double(cin), double(cout), double(hw),
                               double(hw), double(k),   double(p),    double(s)};
    const std::string size = std::string(" float32, ") + std::to_string(cin) + " -> " +
                             std::to_string(cout) + ", 112 x 112, 3 x 3 pad 1";
    auto fwd = [&] { tlrt::conv_forward(*xe, *we, *be, g, cin, cout, transposed, "bench"); };
    add_row(h, std::string(transposed ? "convtranspose_fwd" : "conv_fwd") + size, fwd, pass,
            static_cast<double>(xs + ws + cout + ys) * 4, big, transposed ? kAtenTFwd : kAtenFwd,
            {x.get(), w.get(), o.get()}, scalars,
            "; TorchLean's path is ATen's bare convolution on unsqueezed views (no copies)");
    auto bwd = [&] { tlrt::conv_backward(*xe, *we, *dye, g, cin, cout, transposed, "bench"); };
    add_row(h, std::string(transposed ? "convtranspose_bwd" : "conv_bwd") + size, bwd, 2 * pass,
            static_cast<double>(2 * xs + 2 * ws + cout + ys) * 4, big,
            transposed ? kAtenTBwd : kAtenBwd, {x.get(), w.get(), o.get()}, scalars,
            "; wgrad + dgrad + the bias gradient");
  }
  aten::release_cache();
}

// Rank 100: after layer normalization.
const GroupRegistration kConvGroup(
    {"conv",
     "conv_io N 32 64->128 112x112 3x3, conv_fwd/_bwd and convtranspose_fwd/_bwd one sample, "
     "float32, TF32 off, beside TorchLean's ATen path and at::convolution; TFLOP/s, plan creations "
     "and driver allocations counted",
     100, conv_benchmarks, "", []() -> std::vector<std::string> {
       return {kAtenFwd, kAtenBwd, kAtenTFwd, kAtenTBwd, kAtenIo, kAtenIoCudnn};
     }});

}  // namespace
}  // namespace bench
