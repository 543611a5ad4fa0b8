// A minimal NVTX tool for nvtx_test: loaded by NVTX3 through NVTX_INJECTION64_PATH, it fills the
// CORE2 (domain) callbacks it needs and appends one line per event to the file named by
// TLRT_NVTX_RECORD: "domain NAME", "push DOMAIN NAME PAYLOAD" and "pop DOMAIN". Registered strings
// and domains are handed out as copies of their text, so a handle is its own name.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

std::mutex record_mutex;

void record(const char* format, const char* a, const char* b, unsigned long long payload) {
  const char* path = std::getenv("TLRT_NVTX_RECORD");
  if (path == nullptr) return;
  std::lock_guard<std::mutex> lock(record_mutex);
  FILE* file = std::fopen(path, "a");
  if (file == nullptr) return;
  std::fprintf(file, format, a, b, payload);
  std::fclose(file);
}

const char* text_of(const void* handle) {
  return handle == nullptr ? "(null)" : static_cast<const char*>(handle);
}

nvtxDomainHandle_t domain_create(const char* name) {
  record("domain %s%s\n", name, "", 0);
  return reinterpret_cast<nvtxDomainHandle_t>(strdup(name));
}

nvtxStringHandle_t register_string(nvtxDomainHandle_t, const char* text) {
  return reinterpret_cast<nvtxStringHandle_t>(strdup(text));
}

int range_push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  const char* name = "(unnamed)";
  if (attributes->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
    name = text_of(attributes->message.registered);
  } else if (attributes->messageType == NVTX_MESSAGE_TYPE_ASCII) {
    name = attributes->message.ascii;
  }
  unsigned long long payload = ~0ull;  // marks a missing or differently typed payload
  if (attributes->payloadType == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64) {
    payload = attributes->payload.ullValue;
  }
  record("push %s %s %llu\n", text_of(domain), name, payload);
  return 0;
}

int range_pop(nvtxDomainHandle_t domain) {
  record("pop %s%s\n", text_of(domain), "", 0);
  return 0;
}

template <class Fn>
void install(NvtxFunctionTable table, unsigned int size, unsigned int id, Fn fn) {
  if (id <= size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || table == nullptr) {
    return 0;
  }
  install(table, size, NVTX_CBID_CORE2_DomainCreateA, &domain_create);
  install(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_string);
  install(table, size, NVTX_CBID_CORE2_DomainRangePushEx, &range_push);
  install(table, size, NVTX_CBID_CORE2_DomainRangePop, &range_pop);
  return 1;
}
