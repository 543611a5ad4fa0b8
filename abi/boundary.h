// The Lean edge of tlrt: the external buffer class, boxing and unboxing, and the two failure
// conventions of SPEC-runtime section 3. Pure symbols run their body through `pure_call`
// (a tlrt::Error or any other exception becomes lean_internal_panic); IO symbols through `io_call`
// (out-of-memory becomes IO.Error.resourceExhausted, everything else IO.Error.otherError). Both
// run the one-time initialisation and make the selected device current for the call. No exception
// ever leaves these helpers.
//
// Each helper also opens the op's NVTX range (abi/nvtx_range.h), off unless TLRT_NVTX=1. Its `op`
// defaults to the calling function's name, which for an export is the symbol itself
// ("torchlean_cuda_buffer_add" names the range "add"); a shared helper that serves several exports
// passes the op's name instead.
#pragma once

#include <lean/lean.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "abi/nvtx_range.h"
#include "common/error.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "runtime/shape_geometry.h"
#include "tlrt/torchlean_abi.h"

struct torchlean_cuda_buffer {
  std::unique_ptr<tlrt::Buffer> buffer;  // never null; released buffers keep their record
  lean_object* format = nullptr;         // encoded buffers: the retained FloatFormat
  uint64_t width = 1;                    // bytes per encoded word; 1 for native buffers
};

namespace tlrt::abi {

lean_external_class* buffer_class();

// A new unwrapped record owning `buffer`, whose payload is published (counted) once the record
// exists. format: the Lean format object of an encoded buffer (not retained here), else null.
torchlean_cuda_buffer* make_record(std::unique_ptr<Buffer> buffer, lean_object* format,
                                   uint64_t width);
// Wraps a runtime buffer in a new Lean object (payload and wrapper counters move).
lean_obj_res box(std::unique_ptr<Buffer> buffer);
// Wraps an encoded runtime buffer (Dtype::encoded; anything else throws invalid_argument) in a new
// Lean object whose record retains the borrowed `format` once (lean_inc) and the buffer's word
// width. The finaliser or drop_unboxed drops that reference exactly once; release never does.
lean_obj_res wrap_encoded(std::unique_ptr<Buffer> buffer, b_lean_obj_arg format);
// The record of a Lean buffer object that must be an encoded buffer: a native one throws
// invalid_argument naming `op` with "<what> (a float32 buffer)"; a released one is returned as is.
torchlean_cuda_buffer* encoded_record(b_lean_obj_arg object, const char* op, const char* what);
// Lean's product `(first, second)`: constructor 0 with two object fields; takes both references.
lean_obj_res pair_of(lean_obj_arg first, lean_obj_arg second);
// Several results as Lean's right-nested product (a, (b, (c, ...))) of new buffer objects.
lean_obj_res box_tuple(std::vector<std::unique_ptr<Buffer>> parts);
template <class... Rest>
lean_obj_res box_tuple(std::unique_ptr<Buffer> first, std::unique_ptr<Buffer> second,
                       Rest... rest) {
  std::vector<std::unique_ptr<Buffer>> parts;
  parts.reserve(2 + sizeof...(Rest));
  parts.push_back(std::move(first));
  parts.push_back(std::move(second));
  (parts.push_back(std::move(rest)), ...);
  return box_tuple(std::move(parts));
}
// The record of a Lean buffer object. A non-external object panics; an external object of
// another class throws invalid_argument naming `op`.
torchlean_cuda_buffer* record_of(b_lean_obj_arg object, const char* op);
// The live native buffer of a Lean buffer object; throws released_buffer / invalid_argument.
Buffer& live_buffer(b_lean_obj_arg object, const char* op);
// The buffer of a Lean buffer object (record_of's checks only), for runtime functions that check
// each operand live and real themselves, in the contract's order among their other checks.
Buffer& buffer_object(b_lean_obj_arg object, const char* op);

// Decodes a borrowed Lean `Array Nat` (dims, axis maps, small index lists) whose entries are
// scalar-boxed naturals <= 2^32-1 (SPEC-ops 1). Throws invalid_argument naming op:
// "expected Array Nat <what>" for a non-array, "<what>[i] exceeds UInt32 (<value>)" for an entry
// above 2^32-1 or a bignum ("a bignum"). Reads no reference counts.
std::vector<uint64_t> nat_array(b_lean_obj_arg array, const char* op, const char* what);

// The geometry of broadcast_to and of its adjoint reduce_from_broadcast (SPEC-ops 8: "same
// validation"), checked in TorchLean's order before any buffer is looked at: inDims decoded and
// its product, outDims decoded and its product, axisMap decoded, then the map's rules
// (runtime/shape_geometry.h).
BroadcastGeometry broadcast_arguments(b_lean_obj_arg in_dims, b_lean_obj_arg out_dims,
                                      b_lean_obj_arg axis_map, const char* op);

[[noreturn]] void panic(const std::string& message);

// Throws not_supported naming op: "<what> are not supported yet by tlrt".
[[noreturn]] inline void not_supported_yet(const char* op, const char* what) {
  fail(ErrorKind::not_supported, op, std::string(what) + " are not supported yet by tlrt");
}
lean_obj_res io_error(ErrorKind kind, const std::string& message);

// Prelude of every guarded call: initialisation and the selected device made current.
class GuardedScope {
 public:
  GuardedScope() { ensure_initialized(); }

 private:
  SelectedDeviceScope device_;
};

// The body of every guarded call: the op's NVTX range, initialisation and the selected device
// around `body`; a failure becomes on_error(kind, message), whose value is returned: a tlrt::Error
// with its kind and text, host exhaustion as out_of_memory "tlrt: host out of memory", anything
// else as device "tlrt: <what>" or "tlrt: unknown failure".
template <class F, class OnError>
auto guarded_call(F&& body, OnError&& on_error, const char* op) -> decltype(body()) {
  try {
    OpRange range(op);
    GuardedScope scope;
    return body();
  } catch (const Error& e) {
    return on_error(e.kind(), e.what());
  } catch (const std::bad_alloc&) {
    return on_error(ErrorKind::out_of_memory, "tlrt: host out of memory");
  } catch (const std::exception& e) {
    return on_error(ErrorKind::device, std::string("tlrt: ") + e.what());
  } catch (...) {
    return on_error(ErrorKind::device, "tlrt: unknown failure");
  }
}

template <class F>
auto pure_call(F&& body, const char* op = __builtin_FUNCTION()) -> decltype(body()) {
  return guarded_call(
      body, [](ErrorKind, const std::string& message) -> decltype(body()) { panic(message); }, op);
}

// `body` returns the owned success value (a buffer object, lean_box(0), a boxed scalar, ...).
template <class F>
lean_obj_res io_call(F&& body, const char* op = __builtin_FUNCTION()) {
  return guarded_call(
      [&] { return lean_io_result_mk_ok(body()); },
      [](ErrorKind kind, const std::string& message) { return io_error(kind, message); }, op);
}

// Lean's `Except String α`: error is constructor 0, ok constructor 1, one object field each.
inline lean_obj_res except_ok(lean_obj_arg value) {
  lean_object* result = lean_alloc_ctor(1, 1, 0);
  lean_ctor_set(result, 0, value);
  return result;
}
inline lean_obj_res except_error(const std::string& message) {
  lean_object* result = lean_alloc_ctor(0, 1, 0);
  lean_ctor_set(result, 0, lean_mk_string(message.c_str()));
  return result;
}

// Pure symbols with an `Except String α` result (the legacy attention pair): `body` returns the
// owned success value, returned as `Except.ok`; every failure (out of memory and a failed
// initialisation included) becomes `Except.error` with the message. A non-external object where a
// buffer is expected still panics (record_of).
template <class F>
lean_obj_res except_call(F&& body, const char* op = __builtin_FUNCTION()) {
  return guarded_call([&] { return except_ok(body()); },
                      [](ErrorKind, const std::string& message) { return except_error(message); },
                      op);
}

// Unguarded symbols: no initialisation, no device switch; failures still panic with a message.
template <class F>
auto unguarded_call(F&& body, const char* op = __builtin_FUNCTION()) -> decltype(body()) {
  try {
    OpRange range(op);
    return body();
  } catch (const std::exception& e) {
    panic(e.what());
  } catch (...) {
    panic("tlrt: unknown failure");
  }
}

}  // namespace tlrt::abi
