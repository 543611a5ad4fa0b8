// The load callback of the inverse real FFT as LTO-IR, for cuFFT's JIT-linked callbacks
// (cufftXtSetJITCallback): the callback reads the borrowed packed spectrum through the plan's
// caller info, zeroes the endpoint imaginary parts and applies fl(1/n), so C2R needs no copy of the
// spectrum. The source is compiled once per process and dtype with NVRTC, which is loaded with
// dlopen so that libtlrt does not depend on it; where NVRTC or its LTO output is missing the
// result says why and the family keeps its copy pass.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <mutex>
#include <string>
#include <vector>

#include "kernels/fft/fft.h"

namespace tlrt::kernels {
namespace {

// The caller info layout is FftLoadInfo (kernels/fft/fft.h); keep the two in step.
const char* kCallbackSource = R"(
struct TlrtFftLoadInfo {
  const void* src;
  unsigned long long bins;
  unsigned long long nyquist;
  double scale;
  unsigned int scaled;
  unsigned int pad;
};

extern "C" __device__ float2 tlrt_irfft_load_f32(void* data_in, unsigned long long offset,
                                                 void* caller_info, void* shared) {
  const TlrtFftLoadInfo* info = static_cast<const TlrtFftLoadInfo*>(caller_info);
  float2 v = static_cast<const float2*>(info->src)[offset];
  const unsigned long long k = offset % info->bins;
  if (k == 0 || k == info->nyquist) v.y = 0.0f;
  if (info->scaled) {
    const float s = static_cast<float>(info->scale);
    v.x = __fmul_rn(v.x, s);
    v.y = __fmul_rn(v.y, s);
  }
  return v;
}

extern "C" __device__ double2 tlrt_irfft_load_f64(void* data_in, unsigned long long offset,
                                                  void* caller_info, void* shared) {
  const TlrtFftLoadInfo* info = static_cast<const TlrtFftLoadInfo*>(caller_info);
  double2 v = static_cast<const double2*>(info->src)[offset];
  const unsigned long long k = offset % info->bins;
  if (k == 0 || k == info->nyquist) v.y = 0.0;
  if (info->scaled) {
    v.x = __dmul_rn(v.x, info->scale);
    v.y = __dmul_rn(v.y, info->scale);
  }
  return v;
}
)";

struct Nvrtc {
  using Create = nvrtcResult (*)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                 const char* const*);
  using Compile = nvrtcResult (*)(nvrtcProgram, int, const char* const*);
  using Size = nvrtcResult (*)(nvrtcProgram, size_t*);
  using Get = nvrtcResult (*)(nvrtcProgram, char*);
  using Destroy = nvrtcResult (*)(nvrtcProgram*);
  Create create = nullptr;
  Compile compile = nullptr;
  Size lto_size = nullptr;
  Get lto = nullptr;
  Size log_size = nullptr;
  Get log = nullptr;
  Destroy destroy = nullptr;
};

// NVRTC's entry points, or the reason they are missing.
bool load_nvrtc(Nvrtc& f, std::string& why) {
  void* lib = nullptr;
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
  }
  if (lib == nullptr) {
    why = "NVRTC (libnvrtc.so) could not be loaded";
    return false;
  }
  f.create = reinterpret_cast<Nvrtc::Create>(dlsym(lib, "nvrtcCreateProgram"));
  f.compile = reinterpret_cast<Nvrtc::Compile>(dlsym(lib, "nvrtcCompileProgram"));
  f.lto_size = reinterpret_cast<Nvrtc::Size>(dlsym(lib, "nvrtcGetLTOIRSize"));
  f.lto = reinterpret_cast<Nvrtc::Get>(dlsym(lib, "nvrtcGetLTOIR"));
  f.log_size = reinterpret_cast<Nvrtc::Size>(dlsym(lib, "nvrtcGetProgramLogSize"));
  f.log = reinterpret_cast<Nvrtc::Get>(dlsym(lib, "nvrtcGetProgramLog"));
  f.destroy = reinterpret_cast<Nvrtc::Destroy>(dlsym(lib, "nvrtcDestroyProgram"));
  if (!f.create || !f.compile || !f.lto_size || !f.lto || !f.log_size || !f.log || !f.destroy) {
    why = "NVRTC lacks the LTO-IR entry points";
    return false;
  }
  return true;  // the library stays loaded for the process
}

struct Compiled {
  bool done = false;
  std::vector<char> ltoir;
  std::string why;
};

}  // namespace

FftLoadCallback irfft_load_callback(bool f64) {
  static std::mutex mutex;
  static Compiled compiled;  // one LTO-IR holds both callbacks, for the first device asked
  std::lock_guard<std::mutex> lock(mutex);
  if (!compiled.done) {
    compiled.done = true;
    Nvrtc f;
    int device = 0, cc_major = 0, cc_minor = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, device) !=
            cudaSuccess) {
      compiled.why = "the device's compute capability could not be read";
    } else if (load_nvrtc(f, compiled.why)) {
      nvrtcProgram program = nullptr;
      if (f.create(&program, kCallbackSource, "tlrt_fft_callback.cu", 0, nullptr, nullptr) !=
          NVRTC_SUCCESS) {
        compiled.why = "nvrtcCreateProgram failed";
      } else {
        const std::string arch =
            "--gpu-architecture=compute_" + std::to_string(cc_major) + std::to_string(cc_minor);
        const char* options[] = {arch.c_str(),      "-dlto",       "--std=c++17",
                                 "--fmad=false",    "--ftz=false", "--prec-div=true",
                                 "--prec-sqrt=true"};
        if (f.compile(program, 7, options) != NVRTC_SUCCESS) {
          size_t n = 0;
          f.log_size(program, &n);
          std::string log(n, '\0');
          if (n != 0) f.log(program, log.data());
          compiled.why = "NVRTC could not compile the load callback: " + log;
        } else {
          size_t n = 0;
          if (f.lto_size(program, &n) != NVRTC_SUCCESS || n == 0) {
            compiled.why = "NVRTC produced no LTO-IR";
          } else {
            compiled.ltoir.resize(n);
            if (f.lto(program, compiled.ltoir.data()) != NVRTC_SUCCESS) {
              compiled.ltoir.clear();
              compiled.why = "nvrtcGetLTOIR failed";
            }
          }
        }
        f.destroy(&program);
      }
    }
  }
  FftLoadCallback cb;
  if (compiled.ltoir.empty()) {
    cb.why = compiled.why.c_str();
    return cb;
  }
  cb.ltoir = compiled.ltoir.data();
  cb.size = compiled.ltoir.size();
  cb.symbol = f64 ? "tlrt_irfft_load_f64" : "tlrt_irfft_load_f32";
  return cb;
}

}  // namespace tlrt::kernels
