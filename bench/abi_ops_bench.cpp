// Host time of one small call through the ABI for the shape, axis-reduction, matrix-product and
// gather/scatter symbols, each against the floor of a call through the ABI (rand_uniform of 1024
// elements: one kernel, its buffer created and finalised), timed in batches that alternate with
// the row's own so that a drift of the machine's speed falls on both. An op that queues one
// kernel costs the floor plus its own validation and allocation; ops that queue several kernels
// (a sort and a fold) or move a host index array through pinned staging pay for each of those,
// which the rows' notes say. Inputs are built once; each timed call is the symbol plus the
// finaliser of its result. A third row per op gives its device time alone (calls queued behind a
// blocker), which is what a synchronize after the call adds to the floor's.
#include <lean/lean.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench_group.h"
#include "bench_harness.h"
#include "runtime/matmul_dispatch.h"
#include "tlrt/torchlean_abi.h"

namespace bench {
namespace {

constexpr int kCalls = 1000;
constexpr int kBatches = 9;

// An owned Lean `Array Nat` of scalar-boxed values.
lean_object* nat_array(const std::vector<uint32_t>& values) {
  lean_object* a = lean_alloc_array(values.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) lean_array_set_core(a, i, lean_box(values[i]));
  return a;
}

lean_object* uniform(uint32_t n, uint64_t key) {
  return torchlean_cuda_buffer_rand_uniform(n, key, 0);
}

struct SmallCall {
  std::string name;
  std::string note;
  std::function<lean_object*()> call;
  bool comparison = false;  // another path of a row above, shown beside it, not judged
};

void synchronize_abi() {
  lean_dec(torchlean_libtorch_synchronize(0));
}

// `call`, followed by a synchronize when `sync` (the returned function refers to `call`).
std::function<void()> then_sync(const std::function<void()>& call, bool sync) {
  return [&call, sync] {
    call();
    if (sync) synchronize_abi();
  };
}

double per_call_us(const std::function<void()>& call, bool sync) {
  return Harness::host_per_call_us(then_sync(call, sync), kCalls, kBatches, synchronize_abi);
}

// A row's calls against the floor's, in alternating batches (Harness::paired_per_call_us).
Harness::Paired paired_us(const std::function<void()>& call, const std::function<void()>& floor,
                          bool sync) {
  return Harness::paired_per_call_us(then_sync(call, sync), then_sync(floor, sync), kCalls,
                                     kBatches, synchronize_abi);
}

// Device time per call, without the host: kQueued calls queued behind a blocker (kBlockers
// rand_normal calls of 2^26 float32, about 0.3 ms of device time each) run back to back on the
// device; the wall time of blocker, calls and synchronize less that of blocker and synchronize
// alone, over the calls. A round counts only when the host queued its calls before the blocker
// ended (`host_bound` reports a round that did not). Median of kBatches rounds, the blocker alone
// and with the calls timed in alternating order.
constexpr int kQueued = 100;
constexpr int kBlockers = 8;

double device_per_call_us(const std::function<void()>& call, bool& host_bound) {
  using Clock = std::chrono::steady_clock;
  const auto blocker = [] {
    for (int i = 0; i < kBlockers; ++i) {
      lean_dec(torchlean_cuda_buffer_rand_normal(1u << 26, 0.0, 1.0, 17, 0));
    }
  };
  // Returns {wall time to the end of the synchronize, host time to the end of the queueing}.
  const auto round_us = [&](int calls) {
    synchronize_abi();
    const Clock::time_point t0 = Clock::now();
    blocker();
    for (int i = 0; i < calls; ++i) call();
    const Clock::time_point queued = Clock::now();
    synchronize_abi();
    const Clock::time_point t1 = Clock::now();
    return std::pair<double, double>{
        std::chrono::duration<double, std::micro>(t1 - t0).count(),
        std::chrono::duration<double, std::micro>(queued - t0).count()};
  };
  round_us(kQueued);  // warm: the blocker's buffers come from the caching allocator afterwards
  std::vector<double> per_call;
  host_bound = false;
  for (int r = 0; r < kBatches; ++r) {
    std::pair<double, double> alone, with;
    if (r % 2 == 0) {
      alone = round_us(0);
      with = round_us(kQueued);
    } else {
      with = round_us(kQueued);
      alone = round_us(0);
    }
    if (with.second >= alone.first) host_bound = true;
    per_call.push_back((with.first - alone.first) / kQueued);
  }
  return Harness::median(per_call);
}

void abi_ops_benchmarks(Harness& h, const BenchOptions&) {
  // Operands (float32): 32 x 32 matrices, 32-vectors, 8 indices.
  lean_object* m = uniform(32 * 32, 1);
  lean_object* m2 = uniform(32 * 32, 2);
  lean_object* v = uniform(32, 3);
  lean_object* v8 = uniform(8, 4);
  lean_object* rows8 = uniform(8 * 32, 5);
  lean_object* a16 = uniform(16 * 16, 6);
  lean_object* b16 = uniform(16 * 16, 7);
  lean_object* dims = nat_array({32, 32});
  lean_object* in_vec = nat_array({32});
  lean_object* map = nat_array({0, 1});
  lean_object* idx = nat_array({3, 1, 4, 1, 5, 9, 2, 6});

  const std::vector<SmallCall> calls = {
      {"bmm_with_transpose 1x16x16x16", "tlrt's small-product kernel (one launch)",
       [&] { return torchlean_cuda_buffer_bmm_with_transpose(a16, b16, 1, 16, 16, 16, 0, 1); }},
      {"bmm_with_transpose 1x16x16x16 [cuBLAS]",
       "TLRT_BMM_SMALL=0: one cuBLAS GEMM; for comparison, not part of the goal",
       [&] {
         const bool before = tlrt::bmm_small_kernel_on();
         tlrt::set_bmm_small_kernel(false);
         lean_object* r = torchlean_cuda_buffer_bmm_with_transpose(a16, b16, 1, 16, 16, 16, 0, 1);
         tlrt::set_bmm_small_kernel(before);
         return r;
       },
       true},
      {"reduce_sum_by_row 32x32", "",
       [&] { return torchlean_cuda_buffer_reduce_sum_by_row(m, 32, 32); }},
      {"reduce_max_by_row 32x32", "",
       [&] { return torchlean_cuda_buffer_reduce_max_by_row(m, 32, 32); }},
      {"reduce_max_by_column 32x32", "",
       [&] { return torchlean_cuda_buffer_reduce_max_by_column(m, 32, 32); }},
      {"reduce_sum_axis [32,32] axis 0", "dims decoded from Array Nat",
       [&] { return torchlean_cuda_buffer_reduce_sum_axis(m, dims, 0); }},
      {"reduce_from_broadcast [32,32] -> [32]", "three Array Nat decoded",
       [&] { return torchlean_cuda_buffer_reduce_from_broadcast(m, in_vec, dims, map); }},
      {"broadcast_vec_to_cols 32x32", "",
       [&] { return torchlean_cuda_buffer_broadcast_vec_to_cols(v, 32, 32); }},
      {"broadcast_to [32] -> [32,32]", "three Array Nat decoded",
       [&] { return torchlean_cuda_buffer_broadcast_to(v, in_vec, dims, map); }},
      {"swap_adjacent_at_depth [32,32] depth 0", "",
       [&] { return torchlean_cuda_buffer_swap_adjacent_at_depth(m, dims, 0); }},
      {"concat1d 1024 + 1024", "",
       [&] { return torchlean_cuda_buffer_concat1d(m, m2, 1024, 1024); }},
      {"slice1d 512 of 1024", "", [&] { return torchlean_cuda_buffer_slice1d(m, 1024, 256, 512); }},
      {"gather_rows 8 of 32x32", "8 host indices as kernel parameters",
       [&] { return torchlean_cuda_buffer_gather_rows(m, 32, 32, idx, 8); }},
      {"scatter_add_rows 8 into 32x32",
       "8 host indices as kernel parameters; one kernel, a thread per base element",
       [&] { return torchlean_cuda_buffer_scatter_add_rows(m, rows8, 32, 32, idx, 8); }},
      {"scatter_add 8 into 32",
       "8 host indices as kernel parameters; one kernel, a thread per base element",
       [&] { return torchlean_cuda_buffer_scatter_add(v, v8, 32, idx, 8); }},
      {"gather_at 8 of 32", "", [&] { return torchlean_cuda_buffer_gather_at(v, 32, v8, 8); }},
      {"scatter_add_at 8 into 32", "positions on the device; one kernel, a thread per table entry",
       [&] { return torchlean_cuda_buffer_scatter_add_at(32, v8, v8, 8); }},
  };

  // The floor of this group: the cheapest call that queues one kernel and frees its result. Its
  // rows here are a separate measurement; each op row is timed against the floor in alternating
  // batches, and its excess is the median of the paired differences.
  const auto floor_call = [] { lean_dec(uniform(1024, 9)); };
  const double floor_async = per_call_us(floor_call, false);
  const double floor_sync = per_call_us(floor_call, true);
  Row floor_row;
  floor_row.group = "abi-ops";
  floor_row.name = "floor: rand_uniform 1024 through the ABI, async";
  floor_row.median_us = floor_async;
  floor_row.note = "one kernel, buffer created and finalised";
  h.add(floor_row);
  floor_row.name = "floor: rand_uniform 1024 through the ABI + synchronize";
  floor_row.median_us = floor_sync;
  h.add(floor_row);

  bool floor_host_bound = false;
  const double floor_device = device_per_call_us(floor_call, floor_host_bound);
  floor_row.name = "floor: rand_uniform 1024 through the ABI, device time";
  floor_row.median_us = floor_device;
  floor_row.note = "one kernel; calls queued behind a blocker, run back to back";
  if (floor_host_bound) floor_row.note += "; host-bound round (not a device figure)";
  h.add(floor_row);

  double worst_excess = 0;
  std::string worst_name;
  for (const SmallCall& c : calls) {
    for (bool sync : {false, true}) {
      Row r;
      r.group = "abi-ops";
      r.name = c.name + (sync ? " + synchronize" : ", async");
      const Harness::Paired p = paired_us([&] { lean_dec(c.call()); }, floor_call, sync);
      r.median_us = p.call_us;
      const double excess = p.excess_us;
      char text[96];
      std::snprintf(text, sizeof text, "%+.2f us vs floor (paired batches; floor %.2f us)", excess,
                    p.floor_us);
      r.note = std::string(text) + (c.note.empty() ? "" : "; " + c.note);
      if (!c.comparison && excess > worst_excess) {
        worst_excess = excess;
        worst_name = r.name;
      }
      h.add(r);
    }
    Row d;
    d.group = "abi-ops";
    d.name = c.name + ", device time";
    bool host_bound = false;
    d.median_us = device_per_call_us([&] { lean_dec(c.call()); }, host_bound);
    char text[96];
    std::snprintf(text, sizeof text, "%+.2f us vs floor's %.2f us (queued behind a blocker)",
                  d.median_us - floor_device, floor_device);
    d.note = text;
    if (host_bound) d.note += "; host-bound round (not a device figure)";
    h.add(d);
  }

  Goal g;
  g.name = "host time per small call via ABI (shape, axis reductions, bmm, gather/scatter)";
  g.target =
      "<= floor + 0.5 us (floor: one-kernel ABI call, timed in batches alternating with each "
      "row's)";
  char text[160];
  std::snprintf(text, sizeof text, "worst %s: %+.2f us over the floor (%.2f / %.2f us)",
                worst_name.c_str(), worst_excess, floor_async, floor_sync);
  g.measured = text;
  g.met = worst_excess <= 0.5;
  h.add_goal(g);

  for (lean_object* o : {m, m2, v, v8, rows8, a16, b16, dims, in_vec, map, idx}) lean_dec(o);
}

// Rank 80: after the families' device groups; the launch floor runs with it.
const GroupRegistration kAbiOpsGroup({"abi-ops",
                                      "host time per small call through the ABI for the shape, "
                                      "axis-reduction, matmul and gather/scatter symbols",
                                      80, abi_ops_benchmarks, "launch"});

}  // namespace
}  // namespace bench
