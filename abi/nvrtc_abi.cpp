// NVRTC kernel runs (SPEC-runtime 10): kernel_run_buffer (live float32 buffers), kernel_run_bytes
// (host words, formats 0 / 1 / 2) and the legacy kernel_run_host (FloatArray words, formats 0 / 1).
// All borrow their arguments and return fresh results; every failure of those three is an IO error
// and exposes no output. The runtime half is runtime/kernel_run.h. On the reference backend the
// source runs on the host through the system C++ compiler; where none is found the three fail as
// TorchLean's build without CUDA does (IO.Error.userError with a rebuild hint). kernel_run_encoded
// (encoded buffers in and out) is pure: its failures panic.
#include <cstring>
#include <new>
#include <string_view>
#include <vector>

#include "abi/boundary.h"
#include "runtime/kernel_run.h"

using namespace tlrt;
using namespace tlrt::abi;

namespace {

constexpr const char* kNoHostCompiler =
    "tlrt: kernel runs on the reference backend need a host C++ compiler (TLRT_HOST_CXX, or c++ "
    "or g++ on PATH); rebuild with CUDA or install one to run generated kernels";

// The IO error of TorchLean's build without a kernel backend, or null when kernels can run.
lean_obj_res missing_backend() {
  if (kernel_runs_available()) return nullptr;
  return lean_io_result_mk_error(lean_mk_io_user_error(lean_mk_string(kNoHostCompiler)));
}

// Runs a host allocation of `bytes` bytes; std::bad_alloc becomes out_of_memory naming op.
template <class F>
auto host_allocation(const char* op, size_t bytes, F&& allocate) -> decltype(allocate()) {
  try {
    return allocate();
  } catch (const std::bad_alloc&) {
    fail(ErrorKind::out_of_memory, op,
         "kernel: cannot allocate " + std::to_string(bytes) + " bytes of host output");
  }
}

// The text up to its first NUL (SPEC-runtime 1: strings are read as NUL-terminated text, and
// TorchLean compiles lean_string_cstr), so both backends compile, cache and size-check the same
// text.
std::string_view source_text(b_lean_obj_arg source) {
  return std::string_view(lean_string_cstr(source));
}

// Host words of Array ByteArray / Array FloatArray: their addresses and byte lengths.
void host_arrays(b_lean_obj_arg arrays, uint64_t element_bytes, std::vector<const uint8_t*>& data,
                 std::vector<uint64_t>& bytes) {
  const size_t n = lean_array_size(arrays);
  data.resize(n);
  bytes.resize(n);
  for (size_t k = 0; k < n; ++k) {
    b_lean_obj_arg a = lean_array_get_core(arrays, k);
    data[k] = lean_sarray_cptr(a);
    bytes[k] = static_cast<uint64_t>(lean_sarray_size(a)) * element_bytes;
  }
}

}  // namespace

extern "C" {

// Borrows source and objects (Array Buffer of live float32 buffers); returns an owned IO result
// holding a fresh float32 buffer of count elements.
lean_obj_res torchlean_kernel_run_buffer(b_lean_obj_arg source, b_lean_obj_arg objects,
                                         uint64_t count) {
  if (lean_obj_res unavailable = missing_backend()) return unavailable;
  return io_call([&]() -> lean_obj_res {
    const char* op = "kernel_run_buffer";
    std::vector<const Buffer*> inputs(lean_array_size(objects));
    for (size_t k = 0; k < inputs.size(); ++k) {
      torchlean_cuda_buffer* rec = record_of(lean_array_get_core(objects, k), op);
      if (rec->format != nullptr) {
        fail(ErrorKind::invalid_argument, op,
             "kernel: input " + std::to_string(k) +
                 " is an encoded buffer; expected a real float32 buffer");
      }
      require_live(*rec->buffer, op);
      inputs[k] = rec->buffer.get();
    }
    return box(kernel_run_buffers(source_text(source), inputs, count, op));
  });
}

// Borrows source and arrays (Array ByteArray); returns an owned IO result holding a fresh
// ByteArray of count * width bytes.
lean_obj_res torchlean_kernel_run_bytes(b_lean_obj_arg source, uint32_t format, uint64_t width,
                                        b_lean_obj_arg arrays, uint64_t count) {
  if (lean_obj_res unavailable = missing_backend()) return unavailable;
  return io_call([&]() -> lean_obj_res {
    const char* op = "kernel_run_bytes";
    std::vector<const uint8_t*> data;
    std::vector<uint64_t> bytes;
    host_arrays(arrays, 1, data, bytes);
    const KernelScalar kind = check_bytes_layout(format, width, bytes, count, op);
    check_kernel_source(source_text(source), op);
    const size_t out_bytes = static_cast<size_t>(count * width);
    lean_object* out = nullptr;
    try {
      kernel_run_host_words(
          source_text(source), kind, width, data, bytes, count,
          [&]() -> uint8_t* {
            out = host_allocation(op, out_bytes,
                                  [&] { return lean_alloc_sarray(1, out_bytes, out_bytes); });
            return lean_sarray_cptr(out);
          },
          op);
    } catch (...) {
      if (out != nullptr) lean_dec(out);
      throw;
    }
    return out;
  });
}

// Borrows source, objects (Array Buffer of live encoded buffers of width-byte words) and format;
// returns a fresh encoded buffer of count words that retains format. Pure: every failure panics.
lean_obj_res torchlean_kernel_run_encoded(b_lean_obj_arg source, b_lean_obj_arg objects,
                                          b_lean_obj_arg format, uint64_t width, uint64_t count) {
  return pure_call([&]() -> lean_obj_res {
    const char* op = "kernel_run_encoded";
    if (!kernel_runs_available()) {
      fail(ErrorKind::unavailable, op,
           "kernel runs on the reference backend need a host C++ compiler (TLRT_HOST_CXX, or c++ "
           "or g++ on PATH)");
    }
    std::vector<const Buffer*> inputs(lean_array_size(objects));
    for (size_t k = 0; k < inputs.size(); ++k) {
      inputs[k] = record_of(lean_array_get_core(objects, k), op)->buffer.get();
    }
    return wrap_encoded(kernel_run_encoded_buffers(source_text(source), inputs, width, count, op),
                        format);
  });
}

// Legacy (an intermediate Lean revision): borrows source and inputs (Array FloatArray); format 0
// rounds the inputs to float32 and widens the output back, format 1 passes binary64 words through;
// returns an owned IO result holding a fresh FloatArray of count values.
lean_obj_res torchlean_kernel_run_host(b_lean_obj_arg source, uint32_t format,
                                       b_lean_obj_arg inputs, uint64_t count) {
  if (lean_obj_res unavailable = missing_backend()) return unavailable;
  return io_call([&]() -> lean_obj_res {
    const char* op = "kernel_run_host";
    if (format > 1) {
      fail(ErrorKind::invalid_argument, op,
           "kernel: invalid encoded scalar layout (format " + std::to_string(format) +
               "; kernel_run_host takes 0 = float32 or 1 = float64)");
    }
    const uint64_t width = format == 0 ? 4 : 8;
    std::vector<const uint8_t*> data;
    std::vector<uint64_t> bytes;
    host_arrays(inputs, 8, data, bytes);
    std::vector<std::vector<float>> narrowed;
    if (format == 0) {
      narrowed.resize(data.size());
      for (size_t k = 0; k < data.size(); ++k) {
        const size_t n = bytes[k] / 8;
        narrowed[k].resize(n);
        const double* src = reinterpret_cast<const double*>(data[k]);
        for (size_t i = 0; i < n; ++i) narrowed[k][i] = static_cast<float>(src[i]);
        data[k] = reinterpret_cast<const uint8_t*>(narrowed[k].data());
        bytes[k] = n * 4;
      }
    }
    const KernelScalar kind = check_bytes_layout(format, width, bytes, count, op);
    check_kernel_source(source_text(source), op);
    std::vector<uint8_t> words;
    kernel_run_host_words(
        source_text(source), kind, width, data, bytes, count,
        [&]() -> uint8_t* {
          host_allocation(op, static_cast<size_t>(count * width), [&] {
            words.resize(static_cast<size_t>(count * width));
            return nullptr;
          });
          return words.data();
        },
        op);
    lean_object* out = lean_mk_empty_float_array(lean_box(count));
    lean_sarray_set_size(out, count);
    double* values = lean_float_array_cptr(out);
    for (uint64_t i = 0; i < count; ++i) {
      if (format == 0) {
        float f;
        std::memcpy(&f, words.data() + 4 * i, 4);
        values[i] = static_cast<double>(f);
      } else {
        std::memcpy(values + i, words.data() + 8 * i, 8);
      }
    }
    return out;
  });
}

}  // extern "C"
