// NVTX ranges around the ABI's ops; see nvtx_range.h. NVTX3 is header-only: the first NVTX call
// loads the tool named by NVTX_INJECTION64_PATH (Nsight Systems, Nsight Compute, or a test's
// recorder) and every later call is a no-op without one.
#include "abi/nvtx_range.h"

#if TLRT_HAVE_NVTX

#include <nvtx3/nvToolsExt.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace tlrt::abi {
namespace {

bool read_enabled() {
  const char* value = std::getenv("TLRT_NVTX");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

thread_local OpRange* innermost = nullptr;

// The op's name without the export prefix: "torchlean_cuda_buffer_add" -> "add".
const char* short_name(const char* op) {
  static constexpr const char* kPrefixes[] = {"torchlean_cuda_buffer_", "torchlean_cuda_",
                                              "torchlean_"};
  for (const char* prefix : kPrefixes) {
    const size_t n = std::strlen(prefix);
    if (std::strncmp(op, prefix, n) == 0) return op + n;
  }
  return op;
}

struct Registry {
  std::mutex mutex;
  nvtxDomainHandle_t domain = nullptr;
  bool have_domain = false;
  std::unordered_map<const char*, nvtxStringHandle_t> names;  // keyed by the static string
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: ranges may close during exit
  return *r;
}

void push(const char* op, uint64_t elements) {
  Registry& r = registry();
  nvtxDomainHandle_t domain;
  nvtxStringHandle_t name;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.have_domain) {
      r.domain = nvtxDomainCreateA("tlrt");
      r.have_domain = true;
    }
    domain = r.domain;
    auto it = r.names.find(op);
    if (it == r.names.end()) {
      it = r.names.emplace(op, nvtxDomainRegisterStringA(domain, short_name(op))).first;
    }
    name = it->second;
  }
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = name;
  attributes.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  attributes.payload.ullValue = elements;
  nvtxDomainRangePushEx(domain, &attributes);
}

}  // namespace

const bool nvtx_enabled = read_enabled();

void OpRange::open(const char* op) noexcept {
  op_ = op;
  outer_ = innermost;
  innermost = this;
}

void OpRange::close() noexcept {
  try {
    if (!pushed_) push(op_, 0);
    nvtxDomainRangePop(registry().domain);
  } catch (...) {
  }
  innermost = outer_;
}

void note_elements_slow(uint64_t elements) noexcept {
  OpRange* range = innermost;
  if (range == nullptr || range->pushed_) return;
  try {
    push(range->op_, elements);  // throws only before the NVTX push itself
    range->pushed_ = true;
  } catch (...) {
  }
}

}  // namespace tlrt::abi

#endif  // TLRT_HAVE_NVTX
