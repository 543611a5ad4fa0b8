/*
 * Test-only hooks of the Lean runtime double (lean_runtime_double.cpp). Production code never
 * includes this header: it exists so tests can observe object lifetimes and build or inspect
 * Lean values without a Lean toolchain.
 */
#ifndef TLRT_TESTS_LEAN_DOUBLE_H_
#define TLRT_TESTS_LEAN_DOUBLE_H_

#include <lean/lean.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TLRT_LEAN_DOUBLE_API __attribute__((visibility("default")))

/*
 * The lean.h generation a translation unit is compiled against, told from the header itself
 * (docs/LEAN.md): only the sticky-count generation (Lean's 2026 header, modelled by
 * abi/lean_compat/next) defines LEAN_RC_STICKY. The double provides that generation's out-of-line
 * functions and semantics, and tests of behaviour that differs between generations are
 * conditional on it.
 */
#define TLRT_LEAN_GENERATION_COMPAT 1 /* Lean v4.26-v4.29 (abi/lean_compat/lean/lean.h) */
#define TLRT_LEAN_GENERATION_NEXT 2   /* sticky counts, checked sizes (abi/lean_compat/next) */
#ifdef LEAN_RC_STICKY
#define TLRT_LEAN_GENERATION TLRT_LEAN_GENERATION_NEXT
#else
#define TLRT_LEAN_GENERATION TLRT_LEAN_GENERATION_COMPAT
#endif

/* TLRT_LEAN_GENERATION as the double itself was compiled: a test built against another header
 * generation than its double is a build error that this makes visible. */
TLRT_LEAN_DOUBLE_API int tlrt_lean_double_generation(void);

/*
 * Heap blocks obtained through the double (every allocation entry point of the header generation)
 * and not yet freed.
 * Compare against a baseline taken before the code under test; persistent objects stay counted.
 */
TLRT_LEAN_DOUBLE_API int64_t tlrt_lean_double_live_objects(void);

/* Owned FloatArray / ByteArray holding a copy of `n` elements (`data` may be NULL when n == 0). */
TLRT_LEAN_DOUBLE_API lean_obj_res tlrt_lean_double_mk_float_array(const double* data, size_t n);
TLRT_LEAN_DOUBLE_API lean_obj_res tlrt_lean_double_mk_byte_array(const uint8_t* data, size_t n);

/* Owned Array whose elements are `elems[0..n)`; consumes one reference to each element. */
TLRT_LEAN_DOUBLE_API lean_obj_res tlrt_lean_double_mk_array(lean_object* const* elems, size_t n);

/* IO.Error constructor indices (declaration order in Init/System/IOError.lean). */
enum {
  TLRT_IO_ERROR_ALREADY_EXISTS = 0,
  TLRT_IO_ERROR_OTHER_ERROR = 1,
  TLRT_IO_ERROR_RESOURCE_BUSY = 2,
  TLRT_IO_ERROR_RESOURCE_VANISHED = 3,
  TLRT_IO_ERROR_UNSUPPORTED_OPERATION = 4,
  TLRT_IO_ERROR_HARDWARE_FAULT = 5,
  TLRT_IO_ERROR_UNSATISFIED_CONSTRAINTS = 6,
  TLRT_IO_ERROR_ILLEGAL_OPERATION = 7,
  TLRT_IO_ERROR_PROTOCOL_ERROR = 8,
  TLRT_IO_ERROR_TIME_EXPIRED = 9,
  TLRT_IO_ERROR_INTERRUPTED = 10,
  TLRT_IO_ERROR_NO_FILE_OR_DIRECTORY = 11,
  TLRT_IO_ERROR_INVALID_ARGUMENT = 12,
  TLRT_IO_ERROR_PERMISSION_DENIED = 13,
  TLRT_IO_ERROR_RESOURCE_EXHAUSTED = 14,
  TLRT_IO_ERROR_INAPPROPRIATE_TYPE = 15,
  TLRT_IO_ERROR_NO_SUCH_THING = 16,
  TLRT_IO_ERROR_UNEXPECTED_EOF = 17,
  TLRT_IO_ERROR_USER_ERROR = 18
};

/*
 * Decoded IO.Error. Pointers borrow from the error object. `details` is the message for
 * userError and NULL for unexpectedEof; `filename` is NULL when the constructor has none or it
 * is `none`; `os_code` is 0 for constructors without one.
 */
typedef struct {
  unsigned tag;
  uint32_t os_code;
  const char* filename;
  const char* details;
} tlrt_lean_double_io_error_view;

/*
 * Decodes the error of an IO result (borrowed). Returns false, leaving `out` untouched, when
 * the result is `ok`. Panics if the error object does not have an IO.Error layout.
 */
TLRT_LEAN_DOUBLE_API bool tlrt_lean_double_io_error_of(b_lean_obj_arg io_result,
                                                       tlrt_lean_double_io_error_view* out);

/* IO.Error.toString of a (borrowed) IO.Error, as an owned String. */
TLRT_LEAN_DOUBLE_API lean_obj_res tlrt_lean_double_io_error_to_string(b_lean_obj_arg io_error);

#ifdef __cplusplus
}
#endif

#endif /* TLRT_TESTS_LEAN_DOUBLE_H_ */
