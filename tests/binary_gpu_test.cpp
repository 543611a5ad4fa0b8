// torchlean_binary.cuh through NVRTC: the library's embedded header text, registered in memory as
// "torchlean_binary.cuh", compiled with exactly the options of SPEC-runtime 10.4. Every format
// compiles for compute_80 and compute_90 with and without TORCHLEAN_BINARY_SOFTWARE (no device
// needed, only libnvrtc; compute_80 only for binary16 and bfloat16, whose hardware paths differ
// there); on a device, a kernel computes + - * /, negation and the comparisons for the same pairs
// as the host test (binary_test.cpp, same seeds) and must give the host header's bits, hardware
// paths on and off. The host header is itself checked against MPFR. TLRT_BINARY_PAIRS sets the pair
// count of the random formats.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "binary_oracle.h"
#include "kernels/binary/binary_header.h"
#include "kernels/binary/torchlean_binary.cuh"

namespace {

using tlrt::binary_oracle::Format;
using tlrt::binary_oracle::Word;
using tlrt::binary_oracle::WordSource;

// ---- NVRTC and the driver's module calls, through dlopen (no link dependency) ------------------

using nvrtcProgram = struct _nvrtcProgram*;
struct Nvrtc {
  int (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                const char* const*) = nullptr;
  int (*compile)(nvrtcProgram, int, const char* const*) = nullptr;
  int (*ptx_size)(nvrtcProgram, size_t*) = nullptr;
  int (*ptx)(nvrtcProgram, char*) = nullptr;
  int (*log_size)(nvrtcProgram, size_t*) = nullptr;
  int (*log)(nvrtcProgram, char*) = nullptr;
  int (*destroy)(nvrtcProgram*) = nullptr;
  const char* (*error_string)(int) = nullptr;
  bool ok = false;
};

const Nvrtc& nvrtc() {
  static const Nvrtc f = [] {
    Nvrtc r;
    void* lib = nullptr;
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (lib == nullptr) return r;
    r.create = reinterpret_cast<decltype(r.create)>(dlsym(lib, "nvrtcCreateProgram"));
    r.compile = reinterpret_cast<decltype(r.compile)>(dlsym(lib, "nvrtcCompileProgram"));
    r.ptx_size = reinterpret_cast<decltype(r.ptx_size)>(dlsym(lib, "nvrtcGetPTXSize"));
    r.ptx = reinterpret_cast<decltype(r.ptx)>(dlsym(lib, "nvrtcGetPTX"));
    r.log_size = reinterpret_cast<decltype(r.log_size)>(dlsym(lib, "nvrtcGetProgramLogSize"));
    r.log = reinterpret_cast<decltype(r.log)>(dlsym(lib, "nvrtcGetProgramLog"));
    r.destroy = reinterpret_cast<decltype(r.destroy)>(dlsym(lib, "nvrtcDestroyProgram"));
    r.error_string = reinterpret_cast<decltype(r.error_string)>(dlsym(lib, "nvrtcGetErrorString"));
    r.ok = r.create && r.compile && r.ptx_size && r.ptx && r.log_size && r.log && r.destroy &&
           r.error_string;
    return r;
  }();
  return f;
}

using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
struct Driver {
  int (*load)(CUmodule*, const void*) = nullptr;
  int (*function)(CUfunction*, CUmodule, const char*) = nullptr;
  int (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                cudaStream_t, void**, void**) = nullptr;
  int (*unload)(CUmodule) = nullptr;
  bool ok = false;
};

const Driver& driver() {
  static const Driver f = [] {
    Driver r;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return r;
    r.load = reinterpret_cast<decltype(r.load)>(dlsym(lib, "cuModuleLoadData"));
    r.function = reinterpret_cast<decltype(r.function)>(dlsym(lib, "cuModuleGetFunction"));
    r.launch = reinterpret_cast<decltype(r.launch)>(dlsym(lib, "cuLaunchKernel"));
    r.unload = reinterpret_cast<decltype(r.unload)>(dlsym(lib, "cuModuleUnload"));
    r.ok = r.load && r.function && r.launch && r.unload;
    return r;
  }();
  return f;
}

bool have_device() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// Runs job(0), ..., job(count - 1) on up to hardware_concurrency() threads (at least one), handing
// out the indices from the last to the first.
template <class Job>
void parallel_jobs(std::size_t count, const Job& job) {
  const std::size_t threads =
      std::min<std::size_t>(count, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<long long> next{static_cast<long long>(count) - 1};
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (long long i; (i = next.fetch_sub(1)) >= 0;) job(static_cast<std::size_t>(i));
    });
  for (std::thread& thread : pool) thread.join();
}

// ---- the checking kernel
// -------------------------------------------------------------------------

std::string kernel_source(const std::string& scalar, bool software) {
  std::string s;
  if (software) s += "#define TORCHLEAN_BINARY_SOFTWARE\n";
  s += "#include \"torchlean_binary.cuh\"\n";
  s += "using scalar = " + scalar + ";\n";
  s += R"(extern "C" __global__ void binary_check(const scalar* a, const scalar* b, scalar* out,
                                         unsigned char* cmp, unsigned long long n) {
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const scalar x = a[i], y = b[i];
  out[5ULL * i] = x + y;
  out[5ULL * i + 1ULL] = x - y;
  out[5ULL * i + 2ULL] = x * y;
  out[5ULL * i + 3ULL] = x / y;
  out[5ULL * i + 4ULL] = -x;
  cmp[i] = (unsigned char)((x == y ? 1 : 0) | (x < y ? 2 : 0) | (x <= y ? 4 : 0));
}
)";
  return s;
}

// PTX of the source for compute_<arch>, or an empty string with the status and log in `why`.
std::string compile(const std::string& source, int arch, std::string& why) {
  const Nvrtc& f = nvrtc();
  const std::string header(tlrt::kernels::torchlean_binary_header());
  const char* headers[] = {header.c_str()};
  const char* names[] = {"torchlean_binary.cuh"};
  nvrtcProgram program = nullptr;
  int rc = f.create(&program, source.c_str(), "torchlean_kernel.cu", 1, headers, names);
  if (rc != 0) {
    why = f.error_string(rc);
    return {};
  }
  const std::string gpu = "--gpu-architecture=compute_" + std::to_string(arch);
  const char* options[] = {gpu.c_str(),   "--std=c++17",     "--fmad=false",
                           "--ftz=false", "--prec-div=true", "--prec-sqrt=true"};
  rc = f.compile(program, 6, options);
  size_t log_size = 0;
  f.log_size(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) f.log(program, log.data());
  std::string ptx;
  if (rc != 0) {
    why = std::string(f.error_string(rc)) + "\n" + log;
  } else {
    size_t size = 0;
    f.ptx_size(program, &size);
    ptx.assign(size, '\0');
    f.ptx(program, ptx.data());
    // A clean compile leaves no warnings in the log either.
    if (log.find("warning") != std::string::npos) why = log;
  }
  f.destroy(&program);
  return ptx;
}

std::string hex_word(const unsigned char* p, int n) {
  std::ostringstream s;
  s << "0x" << std::hex;
  for (int i = n - 1; i >= 0 && i >= n - 32; --i)
    s << static_cast<int>(p[i] >> 4) << static_cast<int>(p[i] & 15);
  return s.str();
}

// The device's compute capability as major * 10 + minor.
int compute_capability(int device) {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  return major * 10 + minor;
}

// The checking kernel of one variant, compiled by NVRTC and loaded into the device's primary
// context (the driver translates the PTX there). Status codes only, no assertions, so that it can
// run on any thread; the driver's translation of the widest formats takes the most time.
struct Kernel {
  std::string ptx, why;
  cudaError_t context = cudaErrorUnknown;
  int load = -1, lookup = -1;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
};

Kernel load_kernel(const std::string& scalar, bool software, int device, int arch) {
  Kernel k;
  k.ptx = compile(kernel_source(scalar, software), arch, k.why);
  if (k.ptx.empty()) return k;
  k.context = cudaSetDevice(device);
  if (k.context == cudaSuccess) k.context = cudaFree(nullptr);  // the primary context
  if (k.context != cudaSuccess) return k;
  k.load = driver().load(&k.module, k.ptx.data());
  if (k.load == 0) k.lookup = driver().function(&k.function, k.module, "binary_check");
  return k;
}

// The device's bits for n pairs against the host header's, one variant (hardware or software).
template <class T>
void run_on_device(const std::string& scalar, const std::vector<Word>& a,
                   const std::vector<Word>& b, bool software, const Kernel& kernel) {
  constexpr int W = sizeof(T);
  const std::size_t n = a.size();
  ASSERT_FALSE(kernel.ptx.empty()) << kernel.why;
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // the primary context
  ASSERT_EQ(kernel.context, cudaSuccess) << "the primary context on the loading thread";
  ASSERT_EQ(kernel.load, 0) << "cuModuleLoadData";
  ASSERT_EQ(kernel.lookup, 0) << "cuModuleGetFunction";
  CUmodule module = kernel.module;
  CUfunction function = kernel.function;

  std::vector<unsigned char> ha(n * W), hb(n * W), hout(5 * n * W), hcmp(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::memcpy(&ha[i * W], a[i].data(), W);
    std::memcpy(&hb[i * W], b[i].data(), W);
  }
  unsigned char *da = nullptr, *db = nullptr, *dout = nullptr, *dcmp = nullptr;
  ASSERT_EQ(cudaMalloc(&da, ha.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&db, hb.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dout, hout.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dcmp, hcmp.size()), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(da, ha.data(), ha.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(db, hb.data(), hb.size(), cudaMemcpyHostToDevice), cudaSuccess);
  unsigned long long count = n;
  void* args[] = {&da, &db, &dout, &dcmp, &count};
  const unsigned grid = static_cast<unsigned>((n + 255) / 256);
  EXPECT_EQ(driver().launch(function, grid, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), 0);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(hout.data(), dout, hout.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(hcmp.data(), dcmp, hcmp.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dout);
  cudaFree(dcmp);
  driver().unload(module);

  static const char* const kOps[] = {"+", "-", "*", "/", "neg"};
  std::size_t failed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    T x, y;
    std::memcpy(x.b, &ha[i * W], W);
    std::memcpy(y.b, &hb[i * W], W);
    const T host[5] = {x + y, x - y, x * y, x / y, -x};
    for (int k = 0; k < 5; ++k) {
      const unsigned char* dev = &hout[(5 * i + k) * W];
      if (std::memcmp(dev, host[k].b, W) != 0 && ++failed <= 12)
        ADD_FAILURE() << scalar << (software ? " (software)" : " (hardware)") << ": "
                      << hex_word(x.b, W) << " " << kOps[k] << " " << hex_word(y.b, W)
                      << ": device " << hex_word(dev, W) << ", host " << hex_word(host[k].b, W);
    }
    const unsigned char want =
        static_cast<unsigned char>((x == y ? 1 : 0) | (x < y ? 2 : 0) | (x <= y ? 4 : 0));
    if (hcmp[i] != want && ++failed <= 12)
      ADD_FAILURE() << scalar << ": comparisons of " << hex_word(x.b, W) << " and "
                    << hex_word(y.b, W);
  }
  EXPECT_EQ(failed, 0u) << scalar << (software ? " (software)" : " (hardware)") << ", " << n
                        << " pairs";
}

template <int E, int F, long long Bias, int Enc>
std::string scalar_name() {
  return "TLBinary<" + std::to_string(E) + ", " + std::to_string(F) + ", " + std::to_string(Bias) +
         "LL, " + std::to_string(Enc) + ">";
}

template <int E, int F, long long Bias, int Enc>
void random_on_device(std::uint64_t fallback) {
  if (!have_device() || !driver().ok) GTEST_SKIP() << "no CUDA device";
  if (!nvrtc().ok) GTEST_SKIP() << "NVRTC (libnvrtc.so) could not be loaded";
  const Format format{E, F, Bias, Enc};
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  const int arch = compute_capability(device);
  const std::string scalar = scalar_name<E, F, Bias, Enc>();
  // Both variants compile and load concurrently, while the pairs are drawn.
  std::future<Kernel> kernels[2];
  for (bool software : {false, true})
    kernels[software] = std::async(std::launch::async, load_kernel, scalar, software, device, arch);
  const std::uint64_t pairs = tlrt::binary_oracle::pair_count(fallback);
  WordSource source(format, 0x5eed0000ULL + E * 131ULL + F * 7ULL + Enc);  // binary_test's seeds
  std::vector<Word> a, b;
  a.reserve(pairs);
  b.reserve(pairs);
  for (std::uint64_t i = 0; i < pairs; ++i) {
    a.push_back(source.next());
    b.push_back(source.next_related(a.back()));
  }
  for (bool software : {false, true})
    run_on_device<TLBinary<E, F, Bias, Enc>>(scalar, a, b, software, kernels[software].get());
}

template <int Enc, int E = 4, int F = 3, long long Bias = 7>
void exhaustive_on_device() {
  static_assert(1 + E + F == 8);
  if (!have_device() || !driver().ok) GTEST_SKIP() << "no CUDA device";
  if (!nvrtc().ok) GTEST_SKIP() << "NVRTC (libnvrtc.so) could not be loaded";
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  const int arch = compute_capability(device);
  const std::string scalar = scalar_name<E, F, Bias, Enc>();
  std::vector<Word> a, b;
  for (int i = 0; i < 256; ++i)
    for (int j = 0; j < 256; ++j) {
      a.push_back(Word{static_cast<std::uint8_t>(i)});
      b.push_back(Word{static_cast<std::uint8_t>(j)});
    }
  run_on_device<TLBinary<E, F, Bias, Enc>>(scalar, a, b, false,
                                           load_kernel(scalar, false, device, arch));
}

// ---- compile everywhere (NVRTC only) ------------------------------------------------------------

TEST(BinaryNvrtc, EveryFormatCompilesCleanly) {
  if (!nvrtc().ok) GTEST_SKIP() << "NVRTC (libnvrtc.so) could not be loaded";
  const std::vector<std::string> scalars = {scalar_name<4, 3, 7, 0>(),
                                            scalar_name<4, 3, 7, 1>(),
                                            scalar_name<4, 3, 7, 2>(),
                                            scalar_name<4, 3, 7, 3>(),
                                            scalar_name<5, 10, 15, 0>(),
                                            scalar_name<8, 7, 127, 0>(),
                                            scalar_name<8, 23, 127, 0>(),
                                            scalar_name<11, 52, 1023, 0>(),
                                            scalar_name<5, 10, 13, 0>(),
                                            scalar_name<8, 23, 127, 1>(),
                                            scalar_name<11, 60, 1023, 0>(),
                                            scalar_name<15, 112, 16383, 0>(),
                                            scalar_name<30, 1000, (1LL << 29) - 1, 0>()};
  const std::string half = scalar_name<5, 10, 15, 0>(), bfloat = scalar_name<8, 7, 127, 0>();
  struct Compile {
    std::string scalar;
    int arch;
    bool software;
    std::string ptx, why;
  };
  std::vector<Compile> compiles;
  for (const std::string& scalar : scalars)
    for (int arch : {80, 90})
      for (bool software : {false, true}) {
        // compute_80 differs only in the 16-bit hardware paths.
        if (arch == 80 && scalar != half && scalar != bfloat) continue;
        compiles.push_back({scalar, arch, software, {}, {}});
      }
  // The programs compile concurrently, the widest formats (last in the list) first; the checks
  // follow in list order.
  parallel_jobs(compiles.size(), [&](std::size_t i) {
    Compile& c = compiles[i];
    c.ptx = compile(kernel_source(c.scalar, c.software), c.arch, c.why);
  });
  for (const Compile& c : compiles) {
    const std::string& scalar = c.scalar;
    const std::string& ptx = c.ptx;
    const int arch = c.arch;
    const bool software = c.software;
    EXPECT_FALSE(ptx.empty()) << scalar << " compute_" << arch << ": " << c.why;
    EXPECT_TRUE(c.why.empty()) << scalar << " compute_" << arch << ": " << c.why;
    // The hardware paths appear exactly where 10.8 puts them.
    if (!software && scalar == scalar_name<8, 7, 127, 0>()) {
      EXPECT_NE(ptx.find(arch >= 90 ? "add.rn.bf16" : "fma.rn.bf16"), std::string::npos);
    }
    if (!software && scalar == scalar_name<5, 10, 15, 0>()) {
      EXPECT_NE(ptx.find("add.rn.f16"), std::string::npos);
    }
    if (software) {
      EXPECT_EQ(ptx.find(".f16"), std::string::npos) << scalar;
    }
    // Formats with F <= 10 and a moderate exponent range compute through binary32, in device
    // code only and not in software mode.
    if (scalar == scalar_name<5, 10, 13, 0>() || scalar == scalar_name<4, 3, 7, 1>()) {
      for (const char* op : {"add.rn.f32", "mul.rn.f32", "div.rn.f32"}) {
        if (software) {
          EXPECT_EQ(ptx.find(op), std::string::npos) << scalar << " " << op;
        } else {
          EXPECT_NE(ptx.find(op), std::string::npos) << scalar << " " << op;
        }
      }
    }
  }
}

// ---- on the device
// -------------------------------------------------------------------------------

TEST(BinaryDevice, Exhaustive8BitEncoding0) {
  exhaustive_on_device<0>();
}
TEST(BinaryDevice, Exhaustive8BitEncoding1) {
  exhaustive_on_device<1>();
}
TEST(BinaryDevice, Exhaustive8BitEncoding2) {
  exhaustive_on_device<2>();
}
TEST(BinaryDevice, Exhaustive8BitEncoding3) {
  exhaustive_on_device<3>();
}
// The binary32-assisted path (F <= 10) against the host's integer path: other biases at the
// edges of its condition, the other encodings, a format where only sums take it.
TEST(BinaryDevice, Exhaustive8BitF32Edges) {
  exhaustive_on_device<0, 4, 3, 61>();
  exhaustive_on_device<2, 4, 3, -48>();
  exhaustive_on_device<3, 6, 1, 31>();
  exhaustive_on_device<1, 1, 6, 0>();
}
TEST(BinaryDevice, Binary16OtherEncodings) {
  random_on_device<5, 10, 15, 1>(1 << 18);
  random_on_device<5, 10, 15, 2>(1 << 18);
  random_on_device<5, 10, 15, 3>(1 << 18);
}
TEST(BinaryDevice, F32PathEdges) {
  random_on_device<5, 10, 54, 0>(1 << 18);
  random_on_device<5, 10, -32, 1>(1 << 18);
  random_on_device<6, 9, 0, 0>(1 << 18);
  random_on_device<6, 9, 55, 2>(1 << 18);
  random_on_device<7, 8, 63, 0>(1 << 18);  // sums only
}
TEST(BinaryDevice, Binary16) {
  random_on_device<5, 10, 15, 0>(1 << 20);
}
TEST(BinaryDevice, Bfloat16) {
  random_on_device<8, 7, 127, 0>(1 << 20);
}
TEST(BinaryDevice, Binary32) {
  random_on_device<8, 23, 127, 0>(1 << 20);
}
TEST(BinaryDevice, Binary64) {
  random_on_device<11, 52, 1023, 0>(1 << 18);
}
TEST(BinaryDevice, E5F10Bias13) {
  random_on_device<5, 10, 13, 0>(1 << 18);
}
TEST(BinaryDevice, E8F23Encoding1) {
  random_on_device<8, 23, 127, 1>(1 << 18);
}
TEST(BinaryDevice, E11F60) {
  random_on_device<11, 60, 1023, 0>(1 << 16);
}
TEST(BinaryDevice, E15F112) {
  random_on_device<15, 112, 16383, 0>(1 << 16);
}
TEST(BinaryDevice, E30F1000) {
  random_on_device<30, 1000, (1LL << 29) - 1, 0>(1 << 12);
}

}  // namespace
