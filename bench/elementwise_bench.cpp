// Elementwise benchmarks, for every op of ops/elementwise_ops.def: device time of
// the CUDA launcher at 2^26 elements (float32 and float64) as GB/s and % of the copy measured in
// this run, a size sweep 2^10..2^28 for a few ops, and host time per call through the Lean ABI
// on 1024-element buffers; each next to the same work through ATen when LibTorch is linked.
// Finishes with the GPU.md goals, evaluated on this run's numbers.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <lean/lean.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "aten_bench.h"
#include "bench_group.h"
#include "bench_harness.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/random/random.h"
#include "tlrt/torchlean_abi.h"

namespace bench {
namespace {

using tlrt::kernels::ElementwiseInfo;
using tlrt::kernels::ElementwiseOp;
using tlrt::kernels::ElementwiseSignature;
using tlrt::kernels::kMaxElementwiseInputs;
using tlrt::kernels::kMaxElementwiseOutputs;
using tlrt::kernels::kMaxElementwiseScalars;

constexpr uint64_t kMainSize = uint64_t{1} << 26;
constexpr int kSweepMinLog2 = 10;
constexpr int kSweepMaxLog2 = 28;
// Ops of the sweep: one plain binary, one transcendental, the staged GELU, a scalar op and the
// widest op (7 streams). Names absent from the op list are skipped.
constexpr const char* kSweepOps[] = {"add", "exp", "gelu", "axpy", "adam_step"};
constexpr int kRepeats = 20;
constexpr uint32_t kHostSize = 1024;
constexpr int kHostCalls = 1000;
constexpr int kHostBatches = 15;
// GPU.md anchor for the ATen composition of scaled_prod_exp at 2^26 float32, used when ATen is
// not in the process.
constexpr double kAtenScaledProdExpAnchorUs = 458.0;
// Every row is compared with the ATen composition registered under its op's name
// (bench/elementwise_aten.cpp); the optimizer rows also with PyTorch's fused Adam, under this name.
constexpr const char* kAtenFusedAdam = "adam_step_fused";

const char* dtype_name(int dtype) {
  return dtype == 0 ? "float32" : "float64";
}

std::vector<ElementwiseOp> all_ops() {
  int count = 0;
  const ElementwiseOp* ops = tlrt::kernels::elementwise_ops(&count);
  return std::vector<ElementwiseOp>(ops, ops + count);
}

// Host scalars a model would pass: moderate coefficients, a clamp window inside the inputs'
// range, Adam's defaults at step 10 with AdamW decay, so that no op runs a degenerate path.
std::vector<double> scalars_for(const ElementwiseInfo& info) {
  switch (info.signature) {
    case ElementwiseSignature::unary_s1:
      return {1.5};
    case ElementwiseSignature::binary_s1:
      return {0.75};
    case ElementwiseSignature::unary_s2:
    case ElementwiseSignature::binary_s2:
      return {-0.5, 0.5};
    case ElementwiseSignature::adam: {
      const double b1 = 0.9, b2 = 0.999, lr = 1e-3, wd = 1e-2, t = 10;
      const double c1 = 1 / (1 - std::pow(b1, t)), c2 = 1 / (1 - std::pow(b2, t));
      return {b1, 1 - b1, b2, 1 - b2, c1, c2, 1e-8, -lr * wd, -lr};
    }
    default:
      return {};
  }
}

// Inputs that a square root or logarithm reads (and Adam's second moment) are drawn positive;
// the rest standard normal, so that selections and signs go both ways.
bool positive_input(const std::string& op, int k) {
  return op == "sqrt" || op == "log" || (op == "sqrt_bwd" && k == 0) ||
         (op == "adam_step" && k == 3);
}

bool binary_family(const ElementwiseInfo& info) {
  const std::string name = info.name;
  return info.signature == ElementwiseSignature::binary &&
         name.compare(name.size() > 4 ? name.size() - 4 : 0, 4, "_bwd") != 0;
}

// Device buffers for every operand slot of the widest op, allocated once per phase: cudaMalloc
// stays off the timed path.
class DevicePool {
 public:
  explicit DevicePool(size_t bytes) {
    for (void*& p : slots_) {
      if (cudaMalloc(&p, bytes) != cudaSuccess) {
        p = nullptr;
        ok_ = false;
      }
    }
    cudaGetLastError();  // an out-of-memory result must not reach a later launch check
  }
  ~DevicePool() {
    for (void* p : slots_) cudaFree(p);
  }
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;
  bool ok() const { return ok_; }
  void* input(int k) const { return slots_[k]; }
  void* output(int k) const { return slots_[kMaxElementwiseInputs + k]; }

 private:
  std::array<void*, kMaxElementwiseInputs + kMaxElementwiseOutputs> slots_{};
  bool ok_ = true;
};

struct Timing {
  double tlrt_us = 0;
  double aten_us = 0;  // 0: not measured
  std::string error;   // a launcher that threw: the row says why instead of ending the bench
};

template <class T>
Timing time_op(Harness& h, ElementwiseOp op, const DevicePool& pool, uint64_t n, int dtype,
               int repeats) {
  const ElementwiseInfo& info = tlrt::kernels::elementwise_info(op);
  const std::vector<double> scalars = scalars_for(info);
  T rounded[kMaxElementwiseScalars] = {};
  for (size_t k = 0; k < scalars.size(); ++k) rounded[k] = static_cast<T>(scalars[k]);
  const T* in[kMaxElementwiseInputs] = {};
  const void* raw_in[kMaxElementwiseInputs] = {};
  T* out[kMaxElementwiseOutputs] = {};
  for (int k = 0; k < info.inputs; ++k) {
    T* p = static_cast<T*>(pool.input(k));
    const uint64_t key = 0x5eed0000u + static_cast<uint64_t>(k);
    if (positive_input(info.name, k)) {
      tlrt::kernels::rand_uniform_cuda(p, n, key, h.stream());
    } else {
      tlrt::kernels::rand_normal_cuda(p, n, T(0), T(1), key, h.stream());
    }
    in[k] = p;
    raw_in[k] = p;
  }
  for (int k = 0; k < info.outputs; ++k) out[k] = static_cast<T*>(pool.output(k));
  Timing t;
  try {
    t.tlrt_us = h.device_median_us(
        [&](CUstream_st* s) { tlrt::kernels::elementwise_cuda<T>(op, in, out, rounded, n, s); },
        repeats);
  } catch (const std::exception& e) {
    t.error = e.what();
    return t;
  }
  const double aten =
      aten::median_us(h, info.name, dtype, raw_in, info.inputs, scalars.data(), n, repeats);
  if (aten > 0) t.aten_us = aten;
  return t;
}

double one_pass_bytes(const ElementwiseInfo& info, uint64_t n, int dtype) {
  return static_cast<double>(info.inputs + info.outputs) * static_cast<double>(n) *
         (dtype == 0 ? 4.0 : 8.0);
}

// Results kept for the goals.
struct DeviceResult {
  const ElementwiseInfo* info;
  int dtype;
  double pct_of_copy;
  double tlrt_us;
  double aten_us;
  double aten_pct_of_copy;
};
struct HostResult {
  const char* op;
  double async_us;
  double sync_us;
};

void device_rows(Harness& h, std::vector<DeviceResult>& results) {
  DevicePool pool(kMainSize * sizeof(double));
  if (!pool.ok()) {
    std::fprintf(stderr, "tlrt-bench: elementwise: cannot allocate the 2^26 operands\n");
    return;
  }
  for (int dtype : {0, 1}) {
    for (ElementwiseOp op : all_ops()) {
      const ElementwiseInfo& info = tlrt::kernels::elementwise_info(op);
      const Timing t = dtype == 0 ? time_op<float>(h, op, pool, kMainSize, dtype, kRepeats)
                                  : time_op<double>(h, op, pool, kMainSize, dtype, kRepeats);
      Row r;
      r.group = "elementwise";
      r.name = std::string(info.name) + " " + dtype_name(dtype);
      r.size = kMainSize;
      r.median_us = t.tlrt_us;
      r.bytes = one_pass_bytes(info, kMainSize, dtype);
      r.aten_us = t.aten_us;
      const char* how = aten::composition(info.name);
      r.note = how ? std::string("ATen: ") + how : "";
      if (!t.error.empty()) {
        r.note = "failed: " + t.error;
        h.add(r);
        continue;
      }
      h.add(r);
      const double aten_pct =
          t.aten_us > 0 ? 100.0 * r.bytes / (t.aten_us * 1e-6) / 1e9 / h.copy_gbps() : 0;
      results.push_back({&info, dtype, 100.0 * r.bytes / (t.tlrt_us * 1e-6) / 1e9 / h.copy_gbps(),
                         t.tlrt_us, t.aten_us, aten_pct});
      if (info.signature == ElementwiseSignature::adam && aten::available()) {
        // The same bytes through PyTorch's fused optimizer, for scale next to the composition.
        const std::vector<double> s = scalars_for(info);
        const void* raw_in[kMaxElementwiseInputs] = {pool.input(0), pool.input(1), pool.input(2),
                                                     pool.input(3)};
        const double fused = aten::median_us(h, kAtenFusedAdam, dtype, raw_in, info.inputs,
                                             s.data(), kMainSize, kRepeats);
        if (fused > 0) {
          Row f = r;
          f.name = std::string(info.name) + " " + dtype_name(dtype) + " vs fused";
          f.aten_us = fused;
          f.note = std::string("ATen: ") + aten::composition(kAtenFusedAdam);
          h.add(f);
        }
      }
    }
    aten::release_cache();
  }
}

void sweep_rows(Harness& h) {
  const uint64_t max_n = uint64_t{1} << kSweepMaxLog2;
  DevicePool pool(max_n * sizeof(float));
  if (!pool.ok()) {
    std::fprintf(stderr, "tlrt-bench: elementwise: cannot allocate the sweep operands\n");
    return;
  }
  for (const char* name : kSweepOps) {
    for (ElementwiseOp op : all_ops()) {
      const ElementwiseInfo& info = tlrt::kernels::elementwise_info(op);
      if (std::string(info.name) != name) continue;
      for (int e = kSweepMinLog2; e <= kSweepMaxLog2; ++e) {
        const uint64_t n = uint64_t{1} << e;
        const Timing t = time_op<float>(h, op, pool, n, 0, kRepeats);
        SweepPoint p;
        p.op = info.name;
        p.dtype = dtype_name(0);
        p.size = n;
        p.bytes = one_pass_bytes(info, n, 0);
        p.median_us = t.tlrt_us;
        p.aten_us = t.aten_us;
        if (!t.error.empty()) {
          std::fprintf(stderr, "tlrt-bench: sweep %s 2^%d: %s\n", info.name, e, t.error.c_str());
        }
        h.add_sweep(p);
      }
      aten::release_cache();
    }
  }
}

using Obj = lean_object*;

// One call of torchlean_cuda_buffer_<op> through its C signature (SPEC-ops section 6).
Obj call_abi(void* fn, ElementwiseSignature sig, Obj const* x, const double* s) {
  switch (sig) {
    case ElementwiseSignature::unary:
    case ElementwiseSignature::copy_release:
      return reinterpret_cast<Obj (*)(Obj)>(fn)(x[0]);
    case ElementwiseSignature::binary:
      return reinterpret_cast<Obj (*)(Obj, Obj)>(fn)(x[0], x[1]);
    case ElementwiseSignature::unary_s1:
      return reinterpret_cast<Obj (*)(Obj, double)>(fn)(x[0], s[0]);
    case ElementwiseSignature::binary_s1:
      return reinterpret_cast<Obj (*)(Obj, Obj, double)>(fn)(x[0], x[1], s[0]);
    case ElementwiseSignature::unary_s2:
      return reinterpret_cast<Obj (*)(Obj, double, double)>(fn)(x[0], s[0], s[1]);
    case ElementwiseSignature::binary_s2:
      return reinterpret_cast<Obj (*)(Obj, Obj, double, double)>(fn)(x[0], x[1], s[0], s[1]);
    case ElementwiseSignature::ternary_pair:
      return reinterpret_cast<Obj (*)(Obj, Obj, Obj)>(fn)(x[0], x[1], x[2]);
    case ElementwiseSignature::adam:
      return reinterpret_cast<Obj (*)(Obj, Obj, Obj, Obj, double, double, double, double, double,
                                      double, double, double, double)>(fn)(
          x[0], x[1], x[2], x[3], s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]);
  }
  return nullptr;
}

void synchronize_abi() {
  lean_dec(torchlean_libtorch_synchronize(0));
}

void host_rows(Harness& h, std::vector<HostResult>& results) {
  for (ElementwiseOp op : all_ops()) {
    const ElementwiseInfo& info = tlrt::kernels::elementwise_info(op);
    Row r;
    r.group = "abi";
    r.size = kHostSize;
    const std::string symbol = std::string("torchlean_cuda_buffer_") + info.name;
    // Looked up by name so that the op list alone decides what is timed, and an op the library
    // does not export shows as a row instead of a link failure.
    void* fn = dlsym(RTLD_DEFAULT, symbol.c_str());
    if (fn == nullptr) {
      r.name = std::string(info.name) + " via ABI";
      r.note = symbol + " is not exported by libtlrt.so";
      h.add(r);
      continue;
    }
    const std::vector<double> s = scalars_for(info);
    Obj x[kMaxElementwiseInputs] = {};
    for (int k = 0; k < info.inputs; ++k) {
      x[k] = torchlean_cuda_buffer_rand_uniform(kHostSize, 0x1000u + static_cast<uint64_t>(k), 0);
    }
    const bool releases = info.signature == ElementwiseSignature::copy_release;
    // copy_and_release consumes its source's storage, so every call gets a fresh copy; the
    // copy's own host cost is measured alone and taken off.
    const auto call = [&] {
      if (releases) {
        Obj fresh[kMaxElementwiseInputs] = {torchlean_cuda_buffer_copy(x[0])};
        lean_dec(call_abi(fn, info.signature, fresh, s.data()));
        lean_dec(fresh[0]);
      } else {
        lean_dec(call_abi(fn, info.signature, x, s.data()));
      }
    };
    double source_us = 0;
    if (releases) {
      source_us = Harness::host_per_call_us([&] { lean_dec(torchlean_cuda_buffer_copy(x[0])); },
                                            kHostCalls, kHostBatches, synchronize_abi);
    }
    const double async_us =
        Harness::host_per_call_us(call, kHostCalls, kHostBatches, synchronize_abi) - source_us;
    const double sync_us = Harness::host_per_call_us(
                               [&] {
                                 call();
                                 synchronize_abi();
                               },
                               kHostCalls, kHostBatches, synchronize_abi) -
                           source_us;
    for (int k = 0; k < info.inputs; ++k) lean_dec(x[k]);
    results.push_back({info.name, async_us, sync_us});

    const std::string extra = releases ? "; net of the copy that makes each call's source" : "";
    r.name = std::string(info.name) + " 1024 via ABI, async";
    r.median_us = async_us;
    r.aten_us = std::max(0.0, aten::host_us(info.name, 0, s.data(), kHostSize, false, kHostCalls));
    r.note = "host us per call (goal <= 5.5)" + extra;
    h.add(r);
    r.name = std::string(info.name) + " 1024 via ABI + synchronize";
    r.median_us = sync_us;
    r.aten_us = std::max(0.0, aten::host_us(info.name, 0, s.data(), kHostSize, true, kHostCalls));
    r.note = "host us per call and sync (goal <= 11)" + extra;
    h.add(r);
  }
}

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), format, a, b, c);
  return buf;
}

// Worst (lowest) % of copy over the float32 rows that `select` picks.
template <class Pick>
void copy_share_goal(Harness& h, const std::vector<DeviceResult>& results, const char* name,
                     double target_pct, double aten_anchor_pct, Pick select) {
  const DeviceResult* worst = nullptr;
  const DeviceResult* worst_aten = nullptr;
  int count = 0;
  for (const DeviceResult& r : results) {
    if (r.dtype != 0 || !select(*r.info)) continue;
    ++count;
    if (!worst || r.pct_of_copy < worst->pct_of_copy) worst = &r;
    if (r.aten_us > 0 && (!worst_aten || r.aten_pct_of_copy < worst_aten->aten_pct_of_copy)) {
      worst_aten = &r;
    }
  }
  if (!worst) return;
  Goal g;
  g.name = name;
  g.target = fmt(">= %.0f%% of copy (ATen on H200: %.0f%%)", target_pct, aten_anchor_pct);
  g.measured = "worst of " + std::to_string(count) + ": " + worst->info->name +
               fmt(" %.1f%%", worst->pct_of_copy);
  if (worst_aten) {
    g.measured += std::string("; ATen worst: ") + worst_aten->info->name +
                  fmt(" %.1f%%", worst_aten->aten_pct_of_copy);
  }
  g.met = worst->pct_of_copy >= target_pct;
  h.add_goal(g);
}

void goals(Harness& h, const std::vector<DeviceResult>& device,
           const std::vector<HostResult>& host) {
  copy_share_goal(h, device, "binary ops, float32 2^26", 97, 98,
                  [](const ElementwiseInfo& i) { return binary_family(i); });
  copy_share_goal(
      h, device, "unary ops incl. transcendentals, float32 2^26", 95, 92,
      [](const ElementwiseInfo& i) { return i.signature == ElementwiseSignature::unary; });
  // One pass over memory: with k operand streams, reading or writing any operand a second time
  // moves (k+1)/k of the bytes, so the op cannot exceed k/(k+1) of the copy rate.
  for (const char* name : {"scaled_prod_exp", "axpy", "adam_step"}) {
    for (const DeviceResult& r : device) {
      if (r.dtype != 0 || std::string(r.info->name) != name) continue;
      const int k = r.info->inputs + r.info->outputs;
      const double ceiling = 100.0 * k / (k + 1);
      Goal g;
      g.name = std::string(name) + " in one pass over memory, float32 2^26";
      g.target = fmt("> %.1f%% of copy (any second pass caps it there)", ceiling);
      g.measured = fmt("%.1f%% of copy at one-pass bytes", r.pct_of_copy);
      g.met = r.pct_of_copy > ceiling;
      h.add_goal(g);
    }
  }
  for (const DeviceResult& r : device) {
    if (r.dtype != 0 || std::string(r.info->name) != "scaled_prod_exp") continue;
    Goal g;
    g.name = "scaled_prod_exp vs ATen's composition, float32 2^26";
    g.target = ">= 2.2x faster";
    const double aten_us = r.aten_us > 0 ? r.aten_us : kAtenScaledProdExpAnchorUs;
    const double speedup = aten_us / r.tlrt_us;
    g.measured = fmt("%.1f us vs %.1f us: %.2fx", r.tlrt_us, aten_us, speedup) +
                 (r.aten_us > 0 ? "" : " (ATen not run: GPU.md anchor)");
    g.met = speedup >= 2.2;
    h.add_goal(g);
  }
  if (!host.empty()) {
    for (bool sync : {false, true}) {
      const HostResult* worst = nullptr;
      const HostResult* add = nullptr;
      for (const HostResult& r : host) {
        const double v = sync ? r.sync_us : r.async_us;
        if (!worst || v > (sync ? worst->sync_us : worst->async_us)) worst = &r;
        if (std::string(r.op) == "add") add = &r;
      }
      const double limit = sync ? 11.0 : 5.5;
      const double worst_us = sync ? worst->sync_us : worst->async_us;
      Goal g;
      g.name = sync ? "host time per 1024-element op via ABI + synchronize"
                    : "host time per 1024-element op via ABI, async";
      g.target = sync ? "<= 11 us (launch + sync 9.3; ATen add 14.6)"
                      : "<= 5.5 us (launch 4.4; ATen add 9.2)";
      g.measured = std::string("worst ") + worst->op + fmt(" %.2f us", worst_us);
      if (add) g.measured += fmt("; add %.2f us", sync ? add->sync_us : add->async_us);
      g.met = worst_us <= limit;
      h.add_goal(g);
    }
  }
}

void elementwise_benchmarks(Harness& h, const BenchOptions& options) {
  std::printf("elementwise: %s\n", aten::description());
  std::fflush(stdout);
  h.set_aten(aten::description());
  std::vector<DeviceResult> device;
  std::vector<HostResult> host;
  device_rows(h, device);
  if (options.sweep) sweep_rows(h);
  host_rows(h, host);
  aten::release_cache();
  goals(h, device, host);
}

std::vector<std::string> elementwise_aten_compositions() {
  std::vector<std::string> names;
  bool has_adam = false;
  for (ElementwiseOp op : all_ops()) {
    const ElementwiseInfo& info = tlrt::kernels::elementwise_info(op);
    names.push_back(info.name);
    has_adam = has_adam || info.signature == ElementwiseSignature::adam;
  }
  if (has_adam) names.push_back(kAtenFusedAdam);
  return names;
}

// Rank 70: last, after the launch floor its host rows are read against.
const GroupRegistration kElementwiseGroup({"elementwise",
                                           "every op of ops/elementwise_ops.def at 2^26 (float32, "
                                           "float64), host time via the ABI, goals; --sweep: sizes "
                                           "2^10..2^28",
                                           70, elementwise_benchmarks, "launch",
                                           elementwise_aten_compositions});

}  // namespace
}  // namespace bench
