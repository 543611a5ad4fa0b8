// ATen side of tlrt-bench: the registry of ATen compositions (aten_registry.h; each
// bench/<family>_aten.cpp registers, for its tlrt ops, the ATen call or composition TorchLean's
// LibTorch backend makes) and their timing in the bench's process. Device times run on
// the harness stream (made ATen's current stream) inside Harness::device_median_us, so both sides
// see the same L2 flush and the same event timing. ATen gets its own allocations (copies of the
// tlrt inputs), through its caching allocator as TorchLean's backend would. Every call runs under
// c10::InferenceMode, ATen's cheapest dispatch path: host times here are ATen's floor, not the
// cost of autograd-tracked tensors.
#include "aten_bench.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>
#include <torch/version.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "aten_registry.h"
#include "bench_harness.h"

#ifndef TLRT_TORCH_DIR_STR
#define TLRT_TORCH_DIR_STR "?"
#endif

namespace bench::aten {
namespace {

struct Registered {
  AtenOp op;
  std::string composition;  // op.composition, or "none (why)" for an op without equivalent
};

// Function-local statics, so that registrations from any translation unit's static initialisers
// find them constructed.
std::vector<Registered>& registry() {
  static std::vector<Registered> ops;
  return ops;
}
std::string& duplicates() {
  static std::string names;
  return names;
}

const Registered* find_registered(const char* name) {
  for (const Registered& r : registry()) {
    if (std::strcmp(r.op.name, name) == 0) return &r;
  }
  return nullptr;
}

// A composition ATen can run; nullptr for an op absent or registered without equivalent.
const AtenOp* find(const char* name) {
  const Registered* r = find_registered(name);
  return r && r->op.run ? &r->op : nullptr;
}

c10::DeviceIndex current_device() {
  int device = 0;
  cudaGetDevice(&device);
  return static_cast<c10::DeviceIndex>(device);
}

at::TensorOptions options_for(int dtype, c10::DeviceIndex device) {
  return at::TensorOptions()
      .dtype(dtype == 0 ? at::kFloat : at::kDouble)
      .device(at::Device(at::kCUDA, device));
}

bool check_cuda(cudaError_t st, const char* what) {
  if (st == cudaSuccess) return true;
  std::fprintf(stderr, "tlrt-bench: ATen side: %s: %s\n", what, cudaGetErrorString(st));
  return false;
}

}  // namespace

AtenOpRegistration::AtenOpRegistration(std::initializer_list<AtenOp> ops) {
  for (const AtenOp& op : ops) {
    if (find_registered(op.name)) {
      duplicates() += (duplicates().empty() ? "" : ", ") + std::string(op.name);
      continue;
    }
    registry().push_back(
        {op, op.run ? std::string(op.composition) : "none (" + std::string(op.composition) + ")"});
  }
}

bool is_registered(const char* op) {
  return find_registered(op) != nullptr;
}

const char* duplicate_registrations() {
  return duplicates().c_str();
}

bool available() {
  static const bool ok = [] {
    try {
      if (!at::hasCUDA() || c10::cuda::device_count() == 0) return false;
      // Elementwise kernels never use TF32; turned off so that no later ATen row can either.
      at::globalContext().setAllowTF32CuBLAS(false);
      at::globalContext().setAllowTF32CuDNN(false);
      return true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tlrt-bench: ATen: %s\n", e.what());
      return false;
    }
  }();
  return ok;
}

const char* description() {
  static const std::string text =
      available() ? std::string("ATen ") + TORCH_VERSION + " from " + TLRT_TORCH_DIR_STR +
                        " (InferenceMode, TF32 off, own allocations, timed on the bench stream)"
                  : std::string("ATen: LibTorch ") + TORCH_VERSION + " linked from " +
                        TLRT_TORCH_DIR_STR + " but it sees no CUDA device";
  return text.c_str();
}

const char* composition(const char* op) {
  const Registered* r = find_registered(op);
  return r ? r->composition.c_str() : nullptr;
}

double median_us(Harness& h, const char* op, int dtype, const void* const* inputs, int n_inputs,
                 const double* scalars, uint64_t n, int repeats) {
  const AtenOp* o = find(op);
  if (o == nullptr || o->inputs != n_inputs || !available()) return -1;
  try {
    c10::InferenceMode inference;
    const c10::DeviceIndex device = current_device();
    c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromExternal(h.stream(), device));
    const at::TensorOptions options = options_for(dtype, device);
    const size_t bytes = n * (dtype == 0 ? sizeof(float) : sizeof(double));
    Tensors x;
    for (int k = 0; k < n_inputs; ++k) {
      x.push_back(at::empty({static_cast<int64_t>(n)}, options));
      if (!check_cuda(cudaMemcpyAsync(x.back().data_ptr(), inputs[k], bytes,
                                      cudaMemcpyDeviceToDevice, h.stream()),
                      "input copy")) {
        return -1;
      }
    }
    if (o->needs_step) x.push_back(at::full({}, 10.0, options.dtype(at::kFloat)));
    return h.device_median_us([&](CUstream_st*) { o->run(x, scalars); }, repeats);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlrt-bench: ATen %s: %s\n", op, e.what());
    return -1;
  }
}

double host_us(const char* op, int dtype, const double* scalars, uint64_t n, bool sync, int calls) {
  const AtenOp* o = find(op);
  if (o == nullptr || !available()) return -1;
  try {
    c10::InferenceMode inference;
    const c10::DeviceIndex device = current_device();
    c10::cuda::CUDAGuard device_guard(device);
    const at::TensorOptions options = options_for(dtype, device);
    Tensors x;
    for (int k = 0; k < o->inputs; ++k) x.push_back(at::rand({static_cast<int64_t>(n)}, options));
    if (o->needs_step) x.push_back(at::full({}, 10.0, options.dtype(at::kFloat)));
    const auto settle = [] { c10::cuda::device_synchronize(); };
    if (sync) {
      return Harness::host_per_call_us(
          [&] {
            o->run(x, scalars);
            c10::cuda::device_synchronize();
          },
          calls, 7, settle);
    }
    return Harness::host_per_call_us([&] { o->run(x, scalars); }, calls, 7, settle);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tlrt-bench: ATen %s: %s\n", op, e.what());
    return -1;
  }
}

void release_cache() {
  if (!available()) return;
  c10::cuda::device_synchronize();
  c10::cuda::CUDACachingAllocator::emptyCache();
}

}  // namespace bench::aten
