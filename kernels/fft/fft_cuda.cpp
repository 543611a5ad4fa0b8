// cuFFT calls of the FFT family (kernels/fft/fft.h): plan creation with the caller's work area
// (automatic allocation off, so cuFFT never allocates device memory after planning) and the
// execution of a cached plan on the runtime's stream. Plans are cached and destroyed by the
// runtime (runtime/fft_dispatch.cpp); this file only makes, runs and destroys them.
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>

#include <string>

#include "common/error.h"
#include "kernels/fft/fft.h"

namespace tlrt::kernels {
namespace {

const char* cufft_result_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS:
      return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE:
      return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    case CUFFT_INVALID_DEVICE:
      return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE:
      return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED:
      return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED:
      return "CUFFT_NOT_SUPPORTED";
    default:
      return "unknown cufftResult";
  }
}

void check_cufft(cufftResult r, const char* op, const char* what) {
  if (r == CUFFT_SUCCESS) return;
  fail(r == CUFFT_ALLOC_FAILED ? ErrorKind::out_of_memory : ErrorKind::device, op,
       std::string(what) + " failed: " + cufft_result_name(r) + " (" +
           std::to_string(static_cast<int>(r)) + ")");
}

}  // namespace

FftPlan fft_plan_create(const FftPlanShape& shape, const char* op,
                        const FftLoadCallback* callback) {
  cufftHandle handle = 0;
  check_cufft(cufftCreate(&handle), op, "cufftCreate");
  void* info = nullptr;
  try {
    check_cufft(cufftSetAutoAllocation(handle, 0), op, "cufftSetAutoAllocation");
    if (shape.load_callback) {
      if (callback == nullptr || callback->ltoir == nullptr) {
        fail(ErrorKind::not_supported, op, "no load callback for the inverse FFT");
      }
      const cudaError_t st = cudaMalloc(&info, sizeof(FftLoadInfo));
      if (st != cudaSuccess) {
        info = nullptr;
        fail(ErrorKind::out_of_memory, op,
             std::string("cudaMalloc of the callback info failed: ") + cudaGetErrorString(st));
      }
      check_cufft(cufftXtSetJITCallback(
                      handle, callback->symbol, callback->ltoir, callback->size,
                      shape.f64 ? CUFFT_CB_LD_COMPLEX_DOUBLE : CUFFT_CB_LD_COMPLEX, &info),
                  op, "cufftXtSetJITCallback");
    }
    const bool r2c = shape.direction == FftDirection::r2c;
    long long n = static_cast<long long>(shape.n);
    long long real_embed = n;
    long long complex_embed = static_cast<long long>(fft_bins(shape.n));
    const long long rstride = static_cast<long long>(shape.rstride);
    const long long rdist = static_cast<long long>(shape.rdist);
    const long long cstride = static_cast<long long>(shape.cstride);
    const long long cdist = static_cast<long long>(shape.cdist);
    const cufftType type =
        shape.f64 ? (r2c ? CUFFT_D2Z : CUFFT_Z2D) : (r2c ? CUFFT_R2C : CUFFT_C2R);
    size_t work = 0;
    check_cufft(
        cufftMakePlanMany64(handle, 1, &n, r2c ? &real_embed : &complex_embed,
                            r2c ? rstride : cstride, r2c ? rdist : cdist,
                            r2c ? &complex_embed : &real_embed, r2c ? cstride : rstride,
                            r2c ? cdist : rdist, type, static_cast<long long>(shape.batch), &work),
        op, "cufftMakePlanMany64");
    return FftPlan{static_cast<int>(handle), work, info};
  } catch (...) {
    cufftDestroy(handle);
    if (info != nullptr) cudaFree(info);
    throw;
  }
}

void fft_plan_destroy(FftPlan& plan) {
  cufftDestroy(static_cast<cufftHandle>(plan.handle));
  if (plan.callback_info != nullptr) cudaFree(plan.callback_info);
  plan.handle = 0;
  plan.callback_info = nullptr;
}

void fft_bind_cuda(const FftPlan& plan, void* work, CUstream_st* stream, const char* op) {
  const cufftHandle h = static_cast<cufftHandle>(plan.handle);
  check_cufft(cufftSetStream(h, stream), op, "cufftSetStream");
  check_cufft(cufftSetWorkArea(h, work), op, "cufftSetWorkArea");
}

template <class T>
void fft_run_cuda(const FftPlan& plan, FftDirection direction, T* real, T* complex,
                  const char* op) {
  const cufftHandle h = static_cast<cufftHandle>(plan.handle);
  if constexpr (sizeof(T) == 4) {
    if (direction == FftDirection::r2c) {
      check_cufft(cufftExecR2C(h, real, reinterpret_cast<cufftComplex*>(complex)), op,
                  "cufftExecR2C");
    } else {
      check_cufft(cufftExecC2R(h, reinterpret_cast<cufftComplex*>(complex), real), op,
                  "cufftExecC2R");
    }
  } else {
    if (direction == FftDirection::r2c) {
      check_cufft(cufftExecD2Z(h, real, reinterpret_cast<cufftDoubleComplex*>(complex)), op,
                  "cufftExecD2Z");
    } else {
      check_cufft(cufftExecZ2D(h, reinterpret_cast<cufftDoubleComplex*>(complex), real), op,
                  "cufftExecZ2D");
    }
  }
}

template <class T>
void fft_exec_cuda(const FftPlan& plan, FftDirection direction, T* real, T* complex, void* work,
                   CUstream_st* stream, const char* op) {
  fft_bind_cuda(plan, work, stream, op);
  fft_run_cuda(plan, direction, real, complex, op);
}

template void fft_run_cuda<float>(const FftPlan&, FftDirection, float*, float*, const char*);
template void fft_run_cuda<double>(const FftPlan&, FftDirection, double*, double*, const char*);
template void fft_exec_cuda<float>(const FftPlan&, FftDirection, float*, float*, void*,
                                   CUstream_st*, const char*);
template void fft_exec_cuda<double>(const FftPlan&, FftDirection, double*, double*, void*,
                                    CUstream_st*, const char*);

}  // namespace tlrt::kernels
