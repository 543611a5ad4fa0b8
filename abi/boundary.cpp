#include "abi/boundary.h"

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/counters.h"

namespace tlrt::abi {
namespace {

void finalize_buffer(void* data) {
  torchlean_cuda_buffer_drop_unboxed(static_cast<torchlean_cuda_buffer*>(data));
  wrapper_counter().remove(1);
}

// Applies Lean's visitor to the retained format object (the only Lean object a record holds).
void visit_buffer(void* data, b_lean_obj_arg visitor) {
  auto* rec = static_cast<torchlean_cuda_buffer*>(data);
  if (rec->format == nullptr) return;
  lean_inc(visitor);
  lean_inc(rec->format);
  lean_dec(lean_apply_1(visitor, rec->format));
}

}  // namespace

lean_external_class* buffer_class() {
  static lean_external_class* cls = lean_register_external_class(finalize_buffer, visit_buffer);
  return cls;
}

torchlean_cuda_buffer* make_record(std::unique_ptr<Buffer> buffer, lean_object* format,
                                   uint64_t width) {
  Buffer& payload = *buffer;
  auto* rec = new torchlean_cuda_buffer{std::move(buffer), format, width};
  payload.publish();  // after the record exists: a failed record counts nothing
  return rec;
}

lean_obj_res box(std::unique_ptr<Buffer> buffer) {
  return torchlean_cuda_buffer_box(make_record(std::move(buffer), nullptr, 1));
}

lean_obj_res wrap_encoded(std::unique_ptr<Buffer> buffer, b_lean_obj_arg format) {
  if (!buffer->encoded()) {
    fail(ErrorKind::invalid_argument, "wrap_encoded",
         std::string("a ") + dtype_name(buffer->dtype()) + " buffer cannot carry a format");
  }
  const uint64_t width = buffer->width();
  torchlean_cuda_buffer* rec = make_record(std::move(buffer), format, width);
  lean_inc(format);
  return torchlean_cuda_buffer_box(rec);
}

torchlean_cuda_buffer* encoded_record(b_lean_obj_arg object, const char* op, const char* what) {
  torchlean_cuda_buffer* rec = record_of(object, op);
  if (rec->format == nullptr || !rec->buffer->encoded()) {
    fail(ErrorKind::invalid_argument, op,
         std::string(what) + " (a " + dtype_name(rec->buffer->dtype()) + " buffer)");
  }
  return rec;
}

lean_obj_res pair_of(lean_obj_arg first, lean_obj_arg second) {
  lean_object* pair = lean_alloc_ctor(0, 2, 0);
  lean_ctor_set(pair, 0, first);
  lean_ctor_set(pair, 1, second);
  return pair;
}

lean_obj_res box_tuple(std::vector<std::unique_ptr<Buffer>> parts) {
  lean_object* tail = box(std::move(parts.back()));
  for (size_t k = parts.size() - 1; k-- > 0;) tail = pair_of(box(std::move(parts[k])), tail);
  return tail;
}

torchlean_cuda_buffer* record_of(b_lean_obj_arg object, const char* op) {
  if (lean_is_scalar(object) || !lean_is_external(object)) {
    panic(std::string("tlrt: ") + op + ": argument is not a buffer object");
  }
  if (lean_get_external_class(object) != buffer_class()) {
    fail(ErrorKind::invalid_argument, op,
         "external object is not a tensor buffer (another external class)");
  }
  auto* rec = static_cast<torchlean_cuda_buffer*>(lean_get_external_data(object));
  note_elements(rec->buffer->size());
  return rec;
}

Buffer& buffer_object(b_lean_obj_arg object, const char* op) {
  return *record_of(object, op)->buffer;
}

Buffer& live_buffer(b_lean_obj_arg object, const char* op) {
  torchlean_cuda_buffer* rec = record_of(object, op);
  if (rec->format != nullptr) {
    fail(ErrorKind::invalid_argument, op,
         "expected a real (float32/float64) buffer, got an encoded buffer");
  }
  require_live(*rec->buffer, op);
  return *rec->buffer;
}

std::vector<uint64_t> nat_array(b_lean_obj_arg array, const char* op, const char* what) {
  if (lean_is_scalar(array) || !lean_is_array(array)) {
    fail(ErrorKind::invalid_argument, op, std::string("expected Array Nat ") + what);
  }
  const size_t count = lean_array_size(array);
  std::vector<uint64_t> values(count);
  for (size_t i = 0; i < count; ++i) {
    b_lean_obj_arg entry = lean_array_get_core(array, i);
    const bool small = lean_is_scalar(entry) && lean_unbox(entry) <= UINT32_MAX;
    if (!small) {
      fail(ErrorKind::invalid_argument, op,
           std::string(what) + "[" + std::to_string(i) + "] exceeds UInt32 (" +
               (lean_is_scalar(entry) ? std::to_string(lean_unbox(entry)) : "a bignum") + ")");
    }
    values[i] = lean_unbox(entry);
  }
  return values;
}

BroadcastGeometry broadcast_arguments(b_lean_obj_arg in_dims, b_lean_obj_arg out_dims,
                                      b_lean_obj_arg axis_map, const char* op) {
  Dims ins = nat_array(in_dims, op, "inDims");
  shape_size(ins, "inDims", op);
  Dims outs = nat_array(out_dims, op, "outDims");
  shape_size(outs, "outDims", op);
  const std::vector<uint64_t> map = nat_array(axis_map, op, "axisMap");
  return broadcast_geometry(std::move(ins), std::move(outs), map, op);
}

void panic(const std::string& message) {
  lean_internal_panic(message.c_str());
}

lean_obj_res io_error(ErrorKind kind, const std::string& message) {
  lean_object* text = lean_mk_string(message.c_str());
  lean_object* err = kind == ErrorKind::out_of_memory ? lean_mk_io_error_resource_exhausted(0, text)
                                                      : lean_mk_io_error_other_error(0, text);
  return lean_io_result_mk_error(err);
}

}  // namespace tlrt::abi

using tlrt::abi::buffer_class;

extern "C" {

// Borrowed argument; returns the record without touching reference counts.
torchlean_cuda_buffer* torchlean_cuda_buffer_unbox(b_lean_obj_arg object) {
  return tlrt::abi::unguarded_call([&] { return tlrt::abi::record_of(object, "unbox"); });
}

// Takes ownership of `buffer`; returns a new owned Lean object.
lean_obj_res torchlean_cuda_buffer_box(torchlean_cuda_buffer* buffer) {
  lean_object* obj = lean_alloc_external(buffer_class(), buffer);
  tlrt::wrapper_counter().add(1);
  return obj;
}

// An unwrapped, uninitialised float32 record of n elements on the selected device.
torchlean_cuda_buffer* torchlean_cuda_buffer_alloc(size_t n) {
  return tlrt::abi::pure_call([&] {
    if (n > static_cast<size_t>(INT64_MAX)) {
      tlrt::fail(tlrt::ErrorKind::invalid_argument, "alloc", "n exceeds INT64_MAX");
    }
    auto b = tlrt::Buffer::allocate(tlrt::default_backend(), tlrt::Dtype::f32, n, "alloc");
    return tlrt::abi::make_record(std::move(b), nullptr, 1);
  });
}

// Destroys a record that was never wrapped (also the finaliser's body). Null is a no-op.
void torchlean_cuda_buffer_drop_unboxed(torchlean_cuda_buffer* buffer) {
  if (buffer == nullptr) return;
  lean_object* format = buffer->format;
  delete buffer;  // retires the payload (payload counters) unless already released
  if (format != nullptr) lean_dec(format);
}

}  // extern "C"
