// Reference backend of generated-kernel runs: the generated source runs on the host, compiled
// once by the system C++ compiler into a shared object and loaded with dlopen.
//
// The translation unit handed to the compiler is
//   1. a prelude that maps what the generator emits (SPEC-runtime 10.7) to host C++:
//      __global__ / __device__ / __host__ / __forceinline__ vanish, blockIdx / threadIdx are
//      thread-local, blockDim is (256, 1, 1), the _rn intrinsics are the plain IEEE operators
//      (each one rounding: the compile uses -ffp-contract=off and no fast math, so no product is
//      fused into a sum), the bit reinterpretations are memcpy, and atomicCAS is the compiler's
//      atomic compare-and-swap;
//   2. the generated source, verbatim (`#include "torchlean_binary.cuh"` finds the embedded header,
//      written beside it);
//   3. a wrapper `tlrt_host_run(in, sizes, out, err, count, first_block, last_block)` that calls
//      torchlean_kernel with the N typed arguments for every index of the given blocks.
// Objects live in a private directory made with mkdtemp; each file is unlinked once the object is
// loaded and the directory is removed at exit.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include "common/error.h"
#include "kernels/binary/binary_header.h"
#include "kernels/nvrtc/nvrtc.h"

namespace tlrt::kernels {

KernelEvents& kernel_events() {
  static KernelEvents events;
  return events;
}

namespace {

using HostRun = void (*)(const void* const*, const unsigned long long*, void*, unsigned long long*,
                         unsigned long long, unsigned long long, unsigned long long);

constexpr const char* kPrelude = R"PRELUDE(// tlrt host prelude for generated kernels
#include <cstdint>
#include <cstring>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
struct tlrt_dim3 { unsigned int x, y, z; };
static thread_local tlrt_dim3 blockIdx = {0u, 0u, 0u};
static thread_local tlrt_dim3 threadIdx = {0u, 0u, 0u};
static const tlrt_dim3 blockDim = {256u, 1u, 1u};
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline float __uint_as_float(unsigned int u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline unsigned int __float_as_uint(float f) { unsigned int u; std::memcpy(&u, &f, 4); return u; }
static inline double __longlong_as_double(long long u) { double d; std::memcpy(&d, &u, 8); return d; }
static inline long long __double_as_longlong(double d) { long long u; std::memcpy(&u, &d, 8); return u; }
static inline unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare,
                                           unsigned long long value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
)PRELUDE";

// The wrapper after the generated source, for n inputs of type `s`.
std::string wrapper(const char* s, size_t n, KernelScalar kind, uint64_t width) {
  std::ostringstream w;
  w << "\n#line 1 \"tlrt_host_wrapper\"\n";
  if (kind == KernelScalar::configured) {
    w << "static_assert(sizeof(scalar) == " << width
      << "ULL, \"tlrt: the configured word type's size differs from the width\");\n";
  }
  w << "extern \"C\" void tlrt_host_run(const void* const* in, const unsigned long long* sizes, "
       "void* out, unsigned long long* err, unsigned long long count, "
       "unsigned long long first_block, unsigned long long last_block) {\n"
       "  (void)in; (void)sizes;\n"
       "  for (unsigned long long b = first_block; b < last_block; ++b) {\n"
       "    blockIdx.x = static_cast<unsigned int>(b);\n"
       "    for (unsigned int t = 0; t < 256u; ++t) {\n"
       "      threadIdx.x = t;\n"
       "      torchlean_kernel(";
  for (size_t k = 0; k < n; ++k) {
    w << "static_cast<const " << s << "*>(in[" << k << "]), sizes[" << k << "], ";
  }
  w << "static_cast<" << s << "*>(out), err, count);\n    }\n  }\n}\n";
  return w.str();
}

bool executable(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string find_on_path(const char* name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::string dirs(path);
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

// The private directory: made on first use, removed (with the header file) at exit.
class WorkDir {
 public:
  const std::string& path(const char* op) {
    if (!path_.empty()) return path_;
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tlrt-kernels-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      fail(ErrorKind::unavailable, op,
           "kernel: cannot create a private directory for host kernels (" + pattern + ")");
    }
    path_ = pattern;
    const std::string_view text = torchlean_binary_header();
    std::ofstream header(path_ + "/torchlean_binary.cuh", std::ios::binary);
    header.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!header) fail(ErrorKind::unavailable, op, "kernel: cannot write torchlean_binary.cuh");
    return path_;
  }
  ~WorkDir() {
    if (path_.empty()) return;
    std::remove((path_ + "/torchlean_binary.cuh").c_str());
    rmdir(path_.c_str());
  }

 private:
  std::string path_;
};

std::mutex g_dir_mutex;
WorkDir g_dir;
uint64_t g_serial = 0;

}  // namespace

struct HostKernel {
  void* handle = nullptr;
  HostRun run = nullptr;
  ~HostKernel() {
    if (handle != nullptr) {
      dlclose(handle);
      kernel_events().host_unloads.fetch_add(1, std::memory_order_relaxed);
    }
  }
};

std::string host_compiler() {
  const char* chosen = std::getenv("TLRT_HOST_CXX");
  if (chosen != nullptr && *chosen != '\0') return chosen;
  for (const char* name : {"c++", "g++"}) {
    std::string found = find_on_path(name);
    if (!found.empty()) return found;
  }
  return "";
}

std::shared_ptr<HostKernel> host_kernel_compile(std::string_view source, KernelScalar kind,
                                                uint64_t width, size_t inputs, const char* op) {
  const std::string cxx = host_compiler();
  if (cxx.empty()) {
    fail(ErrorKind::unavailable, op,
         "kernel: no host C++ compiler for the reference backend (set TLRT_HOST_CXX or put c++ "
         "on PATH)");
  }
  std::string base;
  {
    std::lock_guard<std::mutex> lock(g_dir_mutex);
    base = g_dir.path(op) + "/k" + std::to_string(++g_serial);
  }
  const std::string cpp = base + ".cpp";
  const std::string so = base + ".so";
  {
    const char* s = kind == KernelScalar::f32   ? "float"
                    : kind == KernelScalar::f64 ? "double"
                                                : "scalar";
    std::ofstream file(cpp, std::ios::binary);
    file << kPrelude << "#line 1 \"torchlean_kernel.cu\"\n";
    file.write(source.data(), static_cast<std::streamsize>(source.size()));
    file << wrapper(s, inputs, kind, width);
    if (!file) {
      std::remove(cpp.c_str());
      fail(ErrorKind::unavailable, op, "kernel: cannot write the host kernel source " + cpp);
    }
  }
  const std::string command = cxx +
                              " -std=c++17 -O2 -fPIC -shared -ffp-contract=off -fno-fast-math "
                              "-o '" +
                              so + "' '" + cpp + "' 2>&1";
  std::string log;
  int status = -1;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char chunk[4096];
    size_t got = 0;
    while ((got = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) log.append(chunk, got);
    status = pclose(pipe);
  }
  std::remove(cpp.c_str());
  kernel_events().host_compiles.fetch_add(1, std::memory_order_relaxed);
  if (status != 0) {
    std::remove(so.c_str());
    fail(ErrorKind::library, op,
         "kernel host compilation failed (" + cxx + ", status " + std::to_string(status) + ")\n" +
             log);
  }
  auto kernel = std::make_shared<HostKernel>();
  kernel->handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::remove(so.c_str());
  if (kernel->handle == nullptr) {
    const char* why = dlerror();
    fail(ErrorKind::library, op,
         std::string("kernel: cannot load the host kernel: ") + (why ? why : "unknown error"));
  }
  kernel->run = reinterpret_cast<HostRun>(dlsym(kernel->handle, "tlrt_host_run"));
  if (kernel->run == nullptr) fail(ErrorKind::library, op, "kernel: host kernel lacks its entry");
  return kernel;
}

void host_kernel_run(const HostKernel& kernel, const KernelArg* inputs, size_t n_inputs, void* out,
                     uint64_t* error, uint64_t count, uint64_t first_block, uint64_t last_block) {
  const void* pointers[64];
  unsigned long long sizes[64];
  std::unique_ptr<const void*[]> many_pointers;
  std::unique_ptr<unsigned long long[]> many_sizes;
  const void** p = pointers;
  unsigned long long* s = sizes;
  if (n_inputs > 64) {
    many_pointers.reset(new const void*[n_inputs]);
    many_sizes.reset(new unsigned long long[n_inputs]);
    p = many_pointers.get();
    s = many_sizes.get();
  }
  for (size_t k = 0; k < n_inputs; ++k) {
    p[k] = inputs[k].data;
    s[k] = inputs[k].size;
  }
  kernel.run(p, s, out, reinterpret_cast<unsigned long long*>(error), count, first_block,
             last_block);
}

}  // namespace tlrt::kernels
