// tlrt-bench [--out DIR] [--only GROUP] [--sweep]: runs the benchmark groups on CUDA device 0,
// prints the table and writes DIR/bench.md and DIR/bench.json. --sweep adds the elementwise size
// sweep (2^10..2^28).
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "bench_harness.h"
#include "runtime/context.h"
#include "runtime/cuda_device.h"

namespace bench {
void allocator_benchmarks(Harness& h);
void random_benchmarks(Harness& h);
void transfer_benchmarks(Harness& h);
void abi_overhead_benchmarks(Harness& h);
void launch_floor_benchmarks(Harness& h);
void reduce_benchmarks(Harness& h);
void elementwise_benchmarks(Harness& h, bool sweep);
}  // namespace bench

int main(int argc, char** argv) {
  std::string out = ".", only;
  bool sweep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc)
      out = argv[++i];
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (a == "--sweep")
      sweep = true;
    else {
      std::fprintf(stderr,
                   "usage: tlrt-bench [--out DIR] [--sweep] "
                   "[--only allocator|random|transfer|abi|reduce|elementwise]\n");
      return 2;
    }
  }
  if (tlrt::cuda_device_count() == 0) {
    std::fprintf(stderr, "tlrt-bench: no CUDA device visible; nothing to measure\n");
    return 1;
  }
  try {
    tlrt::ensure_initialized();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlrt-bench: %s\n", e.what());
    return 1;
  }
  const tlrt::DeviceProperties props = tlrt::device_properties(0);
  std::printf("tlrt-bench on %s (%s)\n", props.name.c_str(), tlrt::version_string().c_str());
  bench::Harness h(tlrt::cuda::stream(0));
  h.measure_copy_gbps(size_t{1} << 30);
  if (only.empty() || only == "allocator") bench::allocator_benchmarks(h);
  if (only.empty() || only == "random") bench::random_benchmarks(h);
  if (only.empty() || only == "transfer") bench::transfer_benchmarks(h);
  if (only.empty() || only == "abi") bench::abi_overhead_benchmarks(h);
  if (only.empty() || only == "reduce") bench::reduce_benchmarks(h);
  if (only.empty() || only == "abi" || only == "elementwise") bench::launch_floor_benchmarks(h);
  if (only.empty() || only == "elementwise") bench::elementwise_benchmarks(h, sweep);
  h.print();
  h.write(out, props.name);
  return 0;
}
