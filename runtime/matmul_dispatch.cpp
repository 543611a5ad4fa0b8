#include "runtime/matmul_dispatch.h"

#include <unistd.h>

#include <string>

#include "kernels/matmul/matmul.h"
#include "runtime/context.h"
#include "runtime/dispatch.h"
#include "runtime/env_switch.h"
#include "runtime/settings.h"
#include "runtime/shape_geometry.h"
#include "runtime/transfer.h"

#if TLRT_HAVE_CUDA
#include "runtime/cuda_libraries.h"
#endif

namespace tlrt {
namespace {

// The device's cuBLAS handle in the math mode the settings allow, held while `queue` runs.
template <class Queue>
void with_cublas(bool tf32, Queue&& queue) {
#if TLRT_HAVE_CUDA
  cuda::CublasMathScope scope(selected_device(), tf32);
  queue(scope.handle());
#else
  (void)tf32;
  (void)queue;
#endif
}

// The small-product kernel (TLRT_BMM_SMALL, on by default).
EnvSwitch g_small_wanted("TLRT_BMM_SMALL", true);

// The host's physical memory in bytes (0 when unknown).
uint64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

}  // namespace

void set_bmm_small_kernel(bool enabled) {
  g_small_wanted.set(enabled);
}

bool bmm_small_kernel_on() {
  return g_small_wanted.on();
}

void require_transpose_flags(uint32_t transpose_a, uint32_t transpose_b, const char* op) {
  if (transpose_a <= 1 && transpose_b <= 1) return;
  fail(ErrorKind::invalid_argument, op,
       "transpose flag must be zero or one (transposeA = " + std::to_string(transpose_a) +
           ", transposeB = " + std::to_string(transpose_b) + ")");
}

std::unique_ptr<Buffer> bmm(const Buffer& a, const Buffer& b, uint64_t batch, uint64_t m,
                            uint64_t n, uint64_t p, bool transpose_a, bool transpose_b,
                            const char* op) {
  require_native(a, op);
  require_native(b, op);
  require_shape(a, "A", transpose_a ? Dims{batch, n, m} : Dims{batch, m, n},
                transpose_a ? "[batch, n, m]" : "[batch, m, n]", op);
  require_shape(b, "B", transpose_b ? Dims{batch, p, n} : Dims{batch, n, p},
                transpose_b ? "[batch, p, n]" : "[batch, n, p]", op);
  const uint64_t outputs = shape_size(Dims{batch, m, p}, "[batch, m, p]", op);
  require_compatible(op, {&a, &b}, SameSize::no);
  std::unique_ptr<Buffer> out = Buffer::allocate(a.backend(), a.dtype(), outputs, op);
  if (outputs == 0) return out;
  const kernels::MatmulShape shape{batch, m, n, p, transpose_a, transpose_b};
  queue_product(a.backend(), a.dtype(), a.data(), b.data(), out->data(), shape, op);
  return out;
}

void queue_product(Backend backend, Dtype dtype, const void* a, const void* b, void* c,
                   const kernels::MatmulShape& shape, const char* op) {
  on_backend(
      backend, dtype, op,
      [&](auto as) {
        using T = typename decltype(as)::type;
        kernels::bmm_ref(static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c),
                         shape);
      },
      [&](auto as, CUstream_st* s) {
        using T = typename decltype(as)::type;
        const auto* x = static_cast<const T*>(a);
        const auto* y = static_cast<const T*>(b);
        auto* z = static_cast<T*>(c);
#if TLRT_HAVE_CUDA
        if (kernels::bmm_small_fits(shape) && g_small_wanted.on()) {
          kernels::bmm_small_cuda(x, y, z, shape, s, op);
          return;
        }
#endif
        // TF32 concerns float32 only; float64 products always run in the strict mode.
        const bool tf32 = sizeof(T) == 4 && setting_enabled(Setting::matmul_tf32);
        with_cublas(
            tf32, [&](cublasContext* handle) { kernels::bmm_cuda(x, y, z, shape, handle, s, op); });
      });
}

uint64_t dgemm_output_size(uint64_t a_size, uint64_t b_size, uint64_t m, uint64_t n, uint64_t p,
                           const char* op) {
  auto product = [&](uint64_t x, uint64_t y, const char* what, const char* names) {
    if (x != 0 && y > UINT64_MAX / x) {
      fail(ErrorKind::invalid_argument, op,
           std::string(what) + " size overflow (" + names + " = " + std::to_string(x) + " * " +
               std::to_string(y) + ")");
    }
    return x * y;
  };
  const uint64_t a_want = product(m, n, "A", "m * n");
  const uint64_t b_want = product(n, p, "B", "n * p");
  const uint64_t c_size = product(m, p, "output", "m * p");
  if (a_size != a_want) {
    fail(ErrorKind::invalid_argument, op,
         "A size mismatch (size(A) = " + std::to_string(a_size) +
             " but m * n = " + std::to_string(a_want) + " for m = " + std::to_string(m) +
             ", n = " + std::to_string(n) + ")");
  }
  if (b_size != b_want) {
    fail(ErrorKind::invalid_argument, op,
         "B size mismatch (size(B) = " + std::to_string(b_size) +
             " but n * p = " + std::to_string(b_want) + " for n = " + std::to_string(n) +
             ", p = " + std::to_string(p) + ")");
  }
  if (c_size > (UINT64_MAX - 64) / sizeof(double)) {
    fail(ErrorKind::invalid_argument, op,
         "output byte size overflow (m * p = " + std::to_string(c_size) + " binary64 values)");
  }
  const uint64_t memory = host_memory_bytes();
  if (memory != 0 && c_size * sizeof(double) > memory) {
    fail(ErrorKind::out_of_memory, op,
         "output of " + std::to_string(c_size * sizeof(double)) +
             " bytes exceeds the host's memory (" + std::to_string(memory) + " bytes)");
  }
  return c_size;
}

void dgemm(Backend backend, const double* a, const double* b, double* c, uint64_t m, uint64_t n,
           uint64_t p, const char* op) {
  const uint64_t outputs = m * p;
  if (outputs == 0) return;
  if (n == 0) {
    std::memset(c, 0, outputs * sizeof(double));
    return;
  }
  const kernels::MatmulShape shape{1, m, n, p, false, false};
  if (backend == Backend::reference) {
    kernels::bmm_ref(a, b, c, shape);
    return;
  }
  // Operands up through pinned staging, the product on the device, the result down into c.
  std::unique_ptr<Buffer> da = upload_f64(backend, Dtype::f64, a, m * n, op);
  std::unique_ptr<Buffer> db = upload_f64(backend, Dtype::f64, b, n * p, op);
  std::unique_ptr<Buffer> dc = Buffer::allocate(backend, Dtype::f64, outputs, op);
  on_backend(
      backend, Dtype::f64, op, [&](auto) {},
      [&](auto, CUstream_st* s) {
        with_cublas(false, [&](cublasContext* handle) {
          kernels::bmm_cuda(da->as<double>(), db->as<double>(), dc->as<double>(), shape, handle, s,
                            op);
        });
      });
  download_f64(*dc, c, op);
}

}  // namespace tlrt
