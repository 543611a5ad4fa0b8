// Kernels of the bench itself: the L2 flush that precedes every timed sample, and the empty
// kernel whose host launch cost (alone and followed by a stream synchronisation) is the floor
// under any per-op host time through the ABI: the "launch" group, which runs with the groups that
// time calls through the ABI (abi, elementwise).
#include <cuda_runtime.h>

#include "bench_group.h"
#include "bench_harness.h"

namespace bench {
namespace {

__global__ void empty_kernel() {}

// Reads every 16-byte word of the buffer, so the L2 ends up holding clean lines of the flush
// buffer only: no input of the next sample stays cached, and no dirty line is left to be written
// back while the sample runs (a memset flush leaves ~60 MB of them on an H200).
__global__ void read_flush_kernel(const uint4* buffer, size_t words, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(buffer + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;  // keeps the loads; practically never stores
}

// 64 dependent additions per trip (the loop's own instructions stay off the chain's latency).
__global__ void add_chain_kernel(float* out, uint32_t chains, uint32_t adds, float step) {
  const uint32_t chain = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = static_cast<float>(chain) * 1e-3f;
  for (uint32_t i = 0; i < adds; i += 64) {
#pragma unroll
    for (int k = 0; k < 64; ++k) acc = __fadd_rn(acc, step);
  }
  if (chain < chains) out[chain] = acc;
}

// Each thread moves one 16-byte word of x to the same place in a and in b (b gets 2x), with the
// streaming cache hints the layer norm forward uses.
__global__ void read_one_write_two_kernel(const float4* x, float4* a, float4* b, size_t words) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= words) return;
  float4 v = __ldcs(x + i);
  __stcs(a + i, v);
  v.x *= 2.0f;
  v.y *= 2.0f;
  v.z *= 2.0f;
  v.w *= 2.0f;
  __stcs(b + i, v);
}

}  // namespace

void add_chain_bound(float* out, uint32_t chains, uint32_t adds, CUstream_st* stream) {
  add_chain_kernel<<<(chains + 7) / 8, 8, 0, stream>>>(out, chains, adds, 1e-7f);
}

void read_one_write_two(const float* x, float* a, float* b, size_t n, CUstream_st* stream) {
  const size_t words = n / 4;
  read_one_write_two_kernel<<<static_cast<unsigned>((words + 255) / 256), 256, 0, stream>>>(
      reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(a),
      reinterpret_cast<float4*>(b), words);
}

namespace {

void launch_floor_benchmarks(Harness& h, const BenchOptions&) {
  cudaStream_t s = h.stream();
  constexpr int kCalls = 2000;
  Row r;
  r.group = "abi";
  r.name = "empty kernel launch (floor), async";
  r.median_us = Harness::host_per_call_us([&] { empty_kernel<<<1, 1, 0, s>>>(); }, kCalls, 15,
                                          [&] { cudaStreamSynchronize(s); });
  r.note = "host us per launch on the runtime's stream";
  h.add(r);
  r.name = "empty kernel launch (floor) + synchronize";
  r.median_us = Harness::host_per_call_us(
      [&] {
        empty_kernel<<<1, 1, 0, s>>>();
        cudaStreamSynchronize(s);
      },
      kCalls, 15, [&] { cudaStreamSynchronize(s); });
  h.add(r);
}

// Rank 60: after reduce, right before elementwise, whose host rows it is the floor of.
const GroupRegistration kLaunchGroup({"launch",
                                      "host time of an empty kernel launch, alone and with a "
                                      "synchronize: the floor under host times through the ABI",
                                      60, launch_floor_benchmarks});

}  // namespace

void l2_flush(const void* buffer, size_t bytes, unsigned* sink, CUstream_st* stream) {
  read_flush_kernel<<<264, 512, 0, stream>>>(static_cast<const uint4*>(buffer), bytes / 16, sink);
}

}  // namespace bench
