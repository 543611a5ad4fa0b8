// Construction of Lean values and decoding of IO results (LEAN-OBJECTS.md layouts).
#include "tools/fuzz/lean_values.h"

#include <cstring>

namespace tlrt_fuzz {
namespace {

void no_finalize(void*) {}
void no_children(void*, b_lean_obj_arg) {}

lean_external_class* foreign_class() {
  static lean_external_class* cls = lean_register_external_class(no_finalize, no_children);
  return cls;
}

// The byte a foreign external object points at; never read by a correct library.
char g_foreign_payload = 0;

bool is_string(b_lean_obj_arg o) {
  return !lean_is_scalar(o) && lean_is_string(o);
}

}  // namespace

lean_object* make_float_array(const std::vector<double>& values) {
  lean_object* a = lean_mk_empty_float_array(lean_box(values.size()));
  lean_sarray_set_size(a, values.size());
  if (!values.empty()) {
    std::memcpy(lean_float_array_cptr(a), values.data(), values.size() * sizeof(double));
  }
  return a;
}

lean_object* make_byte_array(const std::vector<uint8_t>& bytes) {
  lean_object* a = lean_alloc_sarray(1, bytes.size(), bytes.size());
  if (!bytes.empty()) std::memcpy(lean_sarray_cptr(a), bytes.data(), bytes.size());
  return a;
}

lean_object* make_string(const std::string& text) {
  return lean_mk_string_from_bytes(text.data(), text.size());
}

lean_object* make_object_array(const std::vector<lean_object*>& elements) {
  lean_object* a = lean_alloc_array(elements.size(), elements.size());
  for (size_t i = 0; i < elements.size(); ++i) lean_array_cptr(a)[i] = elements[i];
  return a;
}

lean_object* make_nat_array(const std::vector<uint64_t>& values) {
  std::vector<lean_object*> boxed;
  boxed.reserve(values.size());
  for (uint64_t v : values) boxed.push_back(lean_box(static_cast<size_t>(v)));
  return make_object_array(boxed);
}

lean_object* make_format_object(uint32_t exponent_bits, uint32_t significand_bits) {
  lean_object* o = lean_alloc_ctor(0, 0, 2 * sizeof(uint32_t));
  lean_ctor_set_uint32(o, 0, exponent_bits);
  lean_ctor_set_uint32(o, sizeof(uint32_t), significand_bits);
  return o;
}

lean_object* make_foreign_external() {
  return lean_alloc_external(foreign_class(), &g_foreign_payload);
}

IoResult decode_io_result(b_lean_obj_arg result) {
  IoResult r;
  if (result == nullptr) {
    r.problem = "null IO result";
    return r;
  }
  if (lean_is_scalar(result) || lean_ptr_tag(result) > 1 || lean_ctor_num_objs(result) != 1) {
    r.problem = "object does not have the layout of an IO result";
    return r;
  }
  r.layout_ok = true;
  if (lean_io_result_is_ok(result)) {
    r.well_formed = true;
    r.ok = true;
    return r;
  }
  lean_object* err = lean_io_result_get_error(result);
  if (lean_is_scalar(err)) {
    r.problem = "IO error is the boxed constructor " + std::to_string(lean_unbox(err)) +
                " (no message), not otherError or resourceExhausted";
    return r;
  }
  r.error_tag = lean_ptr_tag(err);
  lean_object* details = nullptr;
  // otherError (osCode : UInt32) (details : String): one object field, osCode after it.
  // resourceExhausted (filename : Option String) (osCode : UInt32) (details : String).
  if (r.error_tag == kIoErrorOtherError && lean_ctor_num_objs(err) == 1) {
    details = lean_ctor_get(err, 0);
    r.os_code = lean_ctor_get_uint32(err, sizeof(void*));
  } else if (r.error_tag == kIoErrorResourceExhausted && lean_ctor_num_objs(err) == 2) {
    details = lean_ctor_get(err, 1);
    r.os_code = lean_ctor_get_uint32(err, 2 * sizeof(void*));
  } else {
    r.problem = "IO error constructor " + std::to_string(r.error_tag) + " with " +
                std::to_string(lean_ctor_num_objs(err)) +
                " object fields is neither otherError nor resourceExhausted";
    return r;
  }
  if (!is_string(details)) {
    r.problem = "IO error details are not a string";
    return r;
  }
  r.message = lean_string_cstr(details);
  r.well_formed = true;
  return r;
}

}  // namespace tlrt_fuzz
