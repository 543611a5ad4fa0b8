// The host cost of launching an empty kernel on the runtime's stream, alone and followed by a
// stream synchronisation: the floor under any per-op host time through the ABI.
#include <cuda_runtime.h>

#include "bench_harness.h"

namespace bench {
namespace {

__global__ void empty_kernel() {}

}  // namespace

void launch_floor_benchmarks(Harness& h) {
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

}  // namespace bench
