// Encoded buffers through their CUDA launchers at 2^28 payload bytes: concat1d of two encoded
// buffers of 2-byte words (2 x 64 Mi words), slice1d of 3-byte words (a window of 2^28 / 3 words
// starting at an odd word, so the source is off every alignment), and copy of 16-byte words (the
// device-to-device copy the runtime queues for copy and duplicate). All are byte copies, so bytes
// read + written per call is the bandwidth figure and % of copy compares them with the
// device-to-device copy measured at the start of the run. The ATen column is TorchLean's
// composition on byte tensors (bench/encoded_aten.cpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/encoded/encoded.h"
#include "kernels/random/random.h"

namespace bench {
namespace {

constexpr const char* kAtenConcat = "concat1d_encoded";
constexpr const char* kAtenSlice = "slice1d_encoded";
constexpr const char* kAtenCopy = "copy_encoded";

constexpr uint64_t kPayload = uint64_t{1} << 28;  // bytes written per call
constexpr uint64_t kSource = uint64_t{1} << 29;   // bytes of the buffer the inputs are cut from

std::string mib(uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

void add_concat_row(Harness& h, const unsigned char* source, unsigned char* out) {
  const uint64_t width = 2;
  const uint64_t part = kPayload / 2;  // bytes of each operand
  const unsigned char* a = source;
  const unsigned char* b = source + part;
  Row r;
  r.group = "encoded";
  r.name = "concat1d encoded, width 2, " + mib(part) + " + " + mib(part);
  r.median_us = h.device_median_us(
      [&](CUstream_st* s) { tlrt::kernels::encoded_concat_cuda(a, part, b, part, out, s); });
  r.bytes = 2.0 * static_cast<double>(kPayload);
  r.size = kPayload / width;
  r.note = "bytes read + written; two device-to-device copies";
  const void* inputs[2] = {a, b};
  r.aten_us = std::max(0.0, aten::median_us(h, kAtenConcat, 0, inputs, 2, nullptr, part / 4, 20));
  h.add(r);
}

void add_slice_row(Harness& h, const unsigned char* source, unsigned char* out) {
  const uint64_t width = 3;
  const uint64_t n = (kSource / 4) / width * 4;  // words of the source, a multiple of 4
  const uint64_t start = 1;                      // 3 bytes in: off every alignment
  const uint64_t len = kPayload / width;
  Row r;
  r.group = "encoded";
  r.name = "slice1d encoded, width 3, " + std::to_string(len) + " words at word 1";
  r.median_us = h.device_median_us([&](CUstream_st* s) {
    tlrt::kernels::encoded_slice_cuda(source, start * width, len * width, out, s);
  });
  r.bytes = 2.0 * static_cast<double>(len * width);
  r.size = len;
  r.note = "bytes read + written; source 3 bytes off 16-byte alignment";
  // The ABI's host scalars n, start, len, then the word width.
  const double scalars[4] = {static_cast<double>(n), static_cast<double>(start),
                             static_cast<double>(len), static_cast<double>(width)};
  const void* inputs[1] = {source};
  r.aten_us =
      std::max(0.0, aten::median_us(h, kAtenSlice, 0, inputs, 1, scalars, n * width / 4, 20));
  h.add(r);
}

void add_copy_row(Harness& h, const unsigned char* source, unsigned char* out) {
  const uint64_t width = 16;
  Row r;
  r.group = "encoded";
  r.name = "copy encoded, width 16, " + mib(kPayload);
  // copy and duplicate queue one device-to-device copy of the payload: the slice launcher at
  // offset 0 is that copy.
  r.median_us = h.device_median_us(
      [&](CUstream_st* s) { tlrt::kernels::encoded_slice_cuda(source, 0, kPayload, out, s); });
  r.bytes = 2.0 * static_cast<double>(kPayload);
  r.size = kPayload / width;
  r.note = "bytes read + written";
  const void* inputs[1] = {source};
  r.aten_us = std::max(0.0, aten::median_us(h, kAtenCopy, 0, inputs, 1, nullptr, kPayload / 4, 20));
  h.add(r);
}

void encoded_benchmarks(Harness& h, const BenchOptions&) {
  void* source = nullptr;
  void* out = nullptr;
  if (cudaMalloc(&source, kSource) != cudaSuccess || cudaMalloc(&out, kPayload) != cudaSuccess) {
    std::fprintf(stderr, "tlrt-bench: cudaMalloc failed\n");
    cudaFree(source);
    return;
  }
  // Random words (uniform float32 bit patterns stand for encoded bytes), filled on the legacy
  // stream and waited for, so no timed sample overlaps the fill.
  tlrt::kernels::rand_uniform_cuda(static_cast<float*>(source), kSource / 4, 0x5EED, nullptr);
  cudaDeviceSynchronize();
  const auto* x = static_cast<const unsigned char*>(source);
  auto* y = static_cast<unsigned char*>(out);
  add_concat_row(h, x, y);
  add_slice_row(h, x, y);
  add_copy_row(h, x, y);
  cudaDeviceSynchronize();
  cudaFree(out);
  cudaFree(source);
}

// Rank 82: after the shape group, whose copies these are.
const GroupRegistration kEncodedGroup(
    {"encoded",
     "encoded buffers: concat1d, slice1d and copy at 256 MiB of words of 2, 3 and 16 bytes, bytes "
     "read + written, next to TorchLean's ATen compositions on byte tensors",
     82, encoded_benchmarks, "", []() -> std::vector<std::string> {
       return {kAtenConcat, kAtenSlice, kAtenCopy};
     }});

}  // namespace
}  // namespace bench
