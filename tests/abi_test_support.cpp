#include "abi_test_support.h"

#include <cstdlib>
#include <cstring>

namespace abi_test {

Obj float_array(const std::vector<double>& values) {
  lean_object* a = lean_mk_empty_float_array(lean_box(values.size()));
  lean_sarray_set_size(a, values.size());
  if (!values.empty()) {
    std::memcpy(lean_float_array_cptr(a), values.data(), values.size() * sizeof(double));
  }
  return Obj(a);
}

Obj byte_array(const std::vector<uint8_t>& bytes) {
  lean_object* a = lean_alloc_sarray(1, bytes.size(), bytes.size());
  if (!bytes.empty()) std::memcpy(lean_sarray_cptr(a), bytes.data(), bytes.size());
  return Obj(a);
}

Obj array_of(const std::vector<const Obj*>& items) {
  lean_object* a = lean_alloc_array(items.size(), items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    lean_inc(items[i]->get());
    lean_array_set_core(a, i, items[i]->get());
  }
  return Obj(a);
}

std::vector<double> doubles_of(lean_object* a) {
  const double* p = lean_float_array_cptr(a);
  return std::vector<double>(p, p + lean_sarray_size(a));
}

std::vector<uint8_t> bytes_of(lean_object* a) {
  const uint8_t* p = lean_sarray_cptr(a);
  return std::vector<uint8_t>(p, p + lean_sarray_size(a));
}

Io take_io(lean_object* result) {
  Io io;
  if (lean_io_result_is_ok(result)) {
    io.ok = true;
    io.value = Obj(lean_io_result_take_value(result));
    return io;
  }
  lean_object* err = lean_io_result_get_error(result);
  if (lean_is_scalar(err)) {
    io.error_tag = static_cast<unsigned>(lean_unbox(err));
  } else {
    io.error_tag = lean_ptr_tag(err);
    lean_object* details = nullptr;
    if (io.error_tag == kOtherError) {
      details = lean_ctor_get(err, 0);
      io.os_code = lean_ctor_get_uint32(err, sizeof(void*) * 1);
    } else if (io.error_tag == kResourceExhausted) {
      details = lean_ctor_get(err, 1);
      io.os_code = lean_ctor_get_uint32(err, sizeof(void*) * 2);
    } else if (io.error_tag == kUserError) {
      details = lean_ctor_get(err, 0);
    }
    if (details != nullptr) io.message = lean_string_cstr(details);
  }
  lean_dec(result);
  return io;
}

std::vector<double> values_of(lean_object* buffer) {
  Obj a(torchlean_cuda_buffer_to_float_array(buffer));
  return doubles_of(a.get());
}

lean_object* released_buffer(uint32_t n, uint8_t dtype) {
  lean_object* b = torchlean_cuda_buffer_zeros(n, dtype);
  torchlean_cuda_buffer_release(b);
  return b;
}

Counters Counters::read() {
  return Counters{
      torchlean_cuda_allocator_live_bytes(0),  torchlean_cuda_allocator_peak_bytes(0),
      torchlean_cuda_allocator_alloc_count(0), torchlean_cuda_allocator_free_count(0),
      torchlean_cuda_wrapper_live_count(0),    torchlean_cuda_wrapper_peak_count(0),
      torchlean_cuda_wrapper_alloc_count(0),   torchlean_cuda_wrapper_finalize_count(0)};
}

bool cuda_requested() {
  const char* v = std::getenv("TLRT_DEVICE");
  return v != nullptr && std::strcmp(v, "cuda") == 0;
}

bool backend_available() {
  return torchlean_cuda_runtime_status(0) == 1;
}

void BackendSuite::SetUp() {
  if (cuda_requested() && !backend_available()) {
    GTEST_SKIP() << "no CUDA device visible: the cuda backend pass of this suite cannot run here";
  }
  before_ = Counters::read();
}

void BackendSuite::TearDown() {
  if (!IsSkipped()) {
    EXPECT_EQ(Counters::read().wrapper_live, before_.wrapper_live) << "a test leaked a buffer";
  }
}

uint32_t f32_bits(double widened) {
  const float f = static_cast<float>(widened);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

uint64_t f64_bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return u;
}

lean_object* nat_list(const std::vector<uint64_t>& entries) {
  lean_object* a = lean_alloc_array(entries.size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) lean_array_set_core(a, i, lean_box(entries[i]));
  return a;
}

double memory_fraction() {
  Io io = take_io(torchlean_libtorch_get_memory_fraction(0));
  EXPECT_TRUE(io.ok);
  return io.ok ? lean_unbox_float(io.value.get()) : -1;
}

uint64_t reserved_plus(uint64_t headroom) {
  EXPECT_TRUE(take_io(torchlean_libtorch_synchronize(0)).ok);
  EXPECT_TRUE(take_io(torchlean_libtorch_empty_cache(0)).ok);
  return torchlean_libtorch_reserved_bytes(0) + headroom;
}

bool set_memory_cap(uint64_t bytes) {
  const uint64_t total = torchlean_cuda_allocator_device_total_bytes(0);
  return take_io(torchlean_libtorch_set_memory_fraction(static_cast<double>(bytes) / total)).ok;
}

void buffers_of(lean_object* result, std::vector<lean_object*>& out) {
  if (result == nullptr || lean_is_scalar(result)) return;
  if (lean_is_ctor(result)) {
    for (unsigned i = 0; i < lean_ctor_num_objs(result); ++i) {
      buffers_of(lean_ctor_get(result, i), out);
    }
    return;
  }
  out.push_back(result);
}

}  // namespace abi_test
