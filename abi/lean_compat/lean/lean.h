/*
 * Lean 4 object model for code built without a Lean toolchain.
 *
 * Target: the `lean/lean.h` of Lean v4.29.0 in an official (mimalloc) configuration on a 64-bit
 * little-endian GCC/Clang platform. Layouts, names, tag numbers and ownership rules follow
 * shared/abi/LEAN-OBJECTS.md. Only the subset that tlrt and its tests need is provided, but each
 * function provided keeps the inline/out-of-line split of the real header: an inline function here
 * calls exactly the runtime symbols its real counterpart calls, so a library compiled against
 * either header has the same undefined symbols. Every out-of-line function declared here is
 * defined by tests/lean_double; nothing is declared that the double does not define.
 *
 * This is the v4.26-v4.29 generation (TLRT_LEAN_HEADER=compat). Lean's 2026 header changed what the
 * inline code calls (sticky reference counts, checked sizes, out-of-line small objects); that
 * generation is abi/lean_compat/next/lean/lean.h (TLRT_LEAN_HEADER=next, docs/LEAN.md).
 *
 * Works as C11 and as C++17 (in C++ everything has C linkage and atomics are std::atomic).
 */
#ifndef TLRT_LEAN_COMPAT_LEAN_H_
#define TLRT_LEAN_COMPAT_LEAN_H_

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Official toolchains are built with mimalloc, and their lean.h pulls in its header. */
#include "mimalloc.h"

#ifdef __cplusplus
#include <atomic>
#define LEAN_COMPAT_ATOMIC(t) std::atomic<t>
#define LEAN_COMPAT_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
extern "C" {
#else
#define LEAN_COMPAT_ATOMIC(t) _Atomic(t)
#define LEAN_COMPAT_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define LEAN_CLOSURE_MAX_ARGS 16
#define LEAN_OBJECT_SIZE_DELTA 8
#define LEAN_MAX_SMALL_OBJECT_SIZE 4096

#define LEAN_NORETURN __attribute__((noreturn))
#define LEAN_UNLIKELY(x) (__builtin_expect((x), 0))
#define LEAN_LIKELY(x) (__builtin_expect((x), 1))
#ifdef NDEBUG
#define LEAN_ALWAYS_INLINE __attribute__((always_inline))
#else
#define LEAN_ALWAYS_INLINE
#endif

/*
 * Like the real header, supply `assert` only when nobody has: in a debug translation unit that
 * did not include <assert.h> first, the checks below then call the runtime's lean_notify_assert,
 * which is the one debug-only undefined symbol a real-header build also has.
 */
#ifndef assert
#ifdef NDEBUG
#define assert(expr) ((void)0)
#else
void lean_notify_assert(const char* file_name, int line, const char* condition);
#define assert(expr) \
  ((void)(LEAN_LIKELY(!!(expr)) ? 0 : (lean_notify_assert(__FILE__, __LINE__, #expr), 0)))
#endif
#endif

/* Default visibility only while building Lean's own shared library, never for extensions. */
#ifdef LEAN_EXPORTING
#define LEAN_EXPORT __attribute__((visibility("default")))
#else
#define LEAN_EXPORT
#endif

/* ---- tags (m_tag) --------------------------------------------------------------------------- */

#define LeanMaxCtorTag 243
#define LeanPromise 244
#define LeanClosure 245
#define LeanArray 246
#define LeanStructArray 247
#define LeanScalarArray 248
#define LeanString 249
#define LeanMPZ 250
#define LeanThunk 251
#define LeanTask 252
#define LeanRef 253
#define LeanExternal 254
#define LeanReserved 255

#define LEAN_MAX_CTOR_FIELDS 256
#define LEAN_MAX_CTOR_SCALARS_SIZE 1024
#define LEAN_MAX_SMALL_NAT (SIZE_MAX >> 1)

LEAN_COMPAT_STATIC_ASSERT(sizeof(size_t) == sizeof(void*), "Lean requires size_t == pointer size");

static inline bool lean_is_big_object_tag(uint8_t tag) {
  return tag == LeanArray || tag == LeanStructArray || tag == LeanScalarArray || tag == LeanString;
}

/* ---- object layouts -------------------------------------------------------------------------- */

/*
 * m_rc > 0: single-threaded count; < 0: multi-threaded count (negated, atomic); 0: persistent.
 * The three bit-fields share the second 32-bit word from its least significant bit, so on
 * little-endian m_cs_sz is bytes 4-5, m_other byte 6 and m_tag byte 7.
 */
typedef struct {
  int m_rc;
  unsigned m_cs_sz : 16;
  unsigned m_other : 8;
  unsigned m_tag : 8;
} lean_object;

/* Names that document the ownership convention of a parameter or result. */
typedef lean_object* lean_obj_arg;   /* owned: the callee consumes one reference */
typedef lean_object* b_lean_obj_arg; /* borrowed: the callee must not release it */
typedef lean_object* u_lean_obj_arg; /* owned and exclusive (m_rc == 1) */
typedef lean_object* lean_obj_res;   /* owned result */
typedef lean_object* b_lean_obj_res; /* result borrowed from its container */

typedef struct {
  lean_object m_header;
  lean_object* m_objs[];
} lean_ctor_object;

typedef struct {
  lean_object m_header;
  size_t m_size;
  size_t m_capacity;
  lean_object* m_data[];
} lean_array_object;

/* m_header.m_other holds the element size in bytes; m_size and m_capacity count elements. */
typedef struct {
  lean_object m_header;
  size_t m_size;
  size_t m_capacity;
  uint8_t m_data[];
} lean_sarray_object;

typedef struct {
  lean_object m_header;
  size_t m_size; /* UTF-8 bytes including the terminating NUL */
  size_t m_capacity;
  size_t m_length; /* code points */
  char m_data[];
} lean_string_object;

typedef struct {
  lean_object m_header;
  void* m_fun;
  uint16_t m_arity;
  uint16_t m_num_fixed;
  lean_object* m_objs[];
} lean_closure_object;

typedef struct {
  lean_object m_header;
  lean_object* m_value;
} lean_ref_object;

typedef struct {
  lean_object m_header;
  LEAN_COMPAT_ATOMIC(lean_object*) m_value;
  LEAN_COMPAT_ATOMIC(lean_object*) m_closure;
} lean_thunk_object;

/* Scheduler state owned by the task manager; opaque outside Lean's runtime. */
typedef struct lean_task_imp lean_task_imp;

typedef struct lean_task {
  lean_object m_header;
  LEAN_COMPAT_ATOMIC(lean_object*) m_value;
  lean_task_imp* m_imp;
} lean_task_object;

typedef struct lean_promise {
  lean_object m_header;
  lean_task_object* m_result;
} lean_promise_object;

typedef void (*lean_external_finalize_proc)(void*);
typedef void (*lean_external_foreach_proc)(void*, b_lean_obj_arg);

typedef struct {
  lean_external_finalize_proc m_finalize;
  lean_external_foreach_proc m_foreach;
} lean_external_class;

typedef struct {
  lean_object m_header;
  lean_external_class* m_class;
  void* m_data;
} lean_external_object;

/* The layouts are the ABI shared with Lean-compiled code; refuse to build where they differ. */
LEAN_COMPAT_STATIC_ASSERT(sizeof(lean_object) == 8, "lean_object must be 8 bytes");
LEAN_COMPAT_STATIC_ASSERT(offsetof(lean_array_object, m_data) == 24, "array payload at 24");
LEAN_COMPAT_STATIC_ASSERT(offsetof(lean_sarray_object, m_data) == 24, "sarray payload at 24");
LEAN_COMPAT_STATIC_ASSERT(offsetof(lean_string_object, m_data) == 32, "string payload at 32");
LEAN_COMPAT_STATIC_ASSERT(offsetof(lean_closure_object, m_objs) == 24, "closure args at 24");
LEAN_COMPAT_STATIC_ASSERT(sizeof(lean_external_object) == 24, "external object is 24 bytes");

/* ---- runtime entry points (out of line) ------------------------------------------------------ */

LEAN_EXPORT lean_external_class* lean_register_external_class(lean_external_finalize_proc finalize,
                                                              lean_external_foreach_proc foreach);

LEAN_EXPORT LEAN_NORETURN void lean_internal_panic(char const* msg);
LEAN_EXPORT LEAN_NORETURN void lean_internal_panic_out_of_memory(void);
LEAN_EXPORT LEAN_NORETURN void lean_internal_panic_unreachable(void);
LEAN_EXPORT LEAN_NORETURN void lean_internal_panic_rc_overflow(void);

LEAN_EXPORT void lean_inc_heartbeat(void);

/* Variable-size objects (arrays, scalar arrays, strings). Panics when out of memory. */
LEAN_EXPORT lean_object* lean_alloc_object(size_t sz);
/* Frees the memory of `o` without releasing anything it points to. */
LEAN_EXPORT void lean_free_object(lean_object* o);

LEAN_EXPORT void lean_inc_ref_cold(lean_object* o);
LEAN_EXPORT void lean_inc_ref_n_cold(lean_object* o, unsigned n);
LEAN_EXPORT void lean_dec_ref_cold(lean_object* o);

/* Make everything reachable from `o` multi-threaded (negative m_rc) or persistent (m_rc 0). */
LEAN_EXPORT void lean_mark_mt(lean_object* o);
LEAN_EXPORT void lean_mark_persistent(lean_object* o);

/* ---- scalars --------------------------------------------------------------------------------- */

static inline LEAN_ALWAYS_INLINE bool lean_is_scalar(lean_object* o) {
  return ((size_t)(o)&1) == 1;
}
static inline lean_object* lean_box(size_t n) {
  return (lean_object*)(((size_t)(n) << 1) | 1);
}
static inline size_t lean_unbox(lean_object* o) {
  return (size_t)(o) >> 1;
}

static inline size_t lean_align(size_t v, size_t a) {
  return (v / a) * a + a * (v % a != 0);
}

/* ---- allocation ------------------------------------------------------------------------------ */

/* Small fixed-size objects: rounded to 8 bytes, size remembered in m_cs_sz (mimalloc build). */
static inline lean_object* lean_alloc_small_object(unsigned sz) {
  lean_inc_heartbeat();
  sz = (unsigned)lean_align(sz, LEAN_OBJECT_SIZE_DELTA);
  void* mem = mi_malloc_small(sz);
  if (mem == NULL) lean_internal_panic_out_of_memory();
  lean_object* o = (lean_object*)mem;
  o->m_cs_sz = sz & 0xffffu;
  return o;
}

/* Zeroing the padding word keeps byte-wise comparison and hashing of constructors deterministic. */
static inline lean_object* lean_alloc_ctor_memory(unsigned sz) {
  unsigned sz1 = (unsigned)lean_align(sz, LEAN_OBJECT_SIZE_DELTA);
  lean_object* r = lean_alloc_small_object(sz);
  if (sz1 > sz) {
    size_t* end = (size_t*)(((char*)r) + sz1);
    end[-1] = 0;
  }
  return r;
}

static inline unsigned lean_small_object_size(lean_object* o) {
  return o->m_cs_sz;
}

/* ---- header ---------------------------------------------------------------------------------- */

static inline uint8_t lean_ptr_tag(lean_object* o) {
  return (uint8_t)o->m_tag;
}
static inline unsigned lean_ptr_other(lean_object* o) {
  return o->m_other;
}

static inline bool lean_is_mt(lean_object* o) {
  return o->m_rc < 0;
}
static inline bool lean_is_st(lean_object* o) {
  return o->m_rc > 0;
}
static inline bool lean_is_persistent(lean_object* o) {
  return o->m_rc == 0;
}
static inline bool lean_has_rc(lean_object* o) {
  return o->m_rc != 0;
}

static inline LEAN_COMPAT_ATOMIC(int) * lean_get_rc_mt_addr(lean_object* o) {
  return (LEAN_COMPAT_ATOMIC(int)*)(&(o->m_rc));
}

/* m_tag and m_other only: with mimalloc the allocator has already written m_cs_sz. */
static inline void lean_set_st_header(lean_object* o, unsigned tag, unsigned other) {
  o->m_rc = 1;
  o->m_tag = tag & 0xffu;
  o->m_other = other & 0xffu;
}

/* For objects outside the heap (static data): persistent, with their size in m_cs_sz. */
static inline void lean_set_non_heap_header(lean_object* o, size_t sz, unsigned tag,
                                            unsigned other) {
  assert(sz > 0);
  assert(sz < (1ull << 16));
  assert(sz == 1 || !lean_is_big_object_tag((uint8_t)tag));
  o->m_rc = 0;
  o->m_tag = tag & 0xffu;
  o->m_other = other & 0xffu;
  o->m_cs_sz = sz & 0xffffu;
}

static inline void lean_set_non_heap_header_for_big(lean_object* o, unsigned tag, unsigned other) {
  lean_set_non_heap_header(o, 1, tag, other);
}

/* ---- reference counting ---------------------------------------------------------------------- */

static inline void lean_inc_ref(lean_object* o) {
  if (LEAN_LIKELY(lean_is_st(o))) {
    o->m_rc++;
  } else if (o->m_rc != 0) {
    lean_inc_ref_cold(o);
  }
}

static inline void lean_inc_ref_n(lean_object* o, size_t n) {
  if (LEAN_LIKELY(lean_is_st(o))) {
    o->m_rc += (int)n;
  } else if (o->m_rc != 0) {
    lean_inc_ref_n_cold(o, (unsigned)n);
  }
}

static inline LEAN_ALWAYS_INLINE void lean_dec_ref(lean_object* o) {
  if (LEAN_LIKELY(o->m_rc > 1)) {
    o->m_rc--;
  } else if (o->m_rc != 0) {
    lean_dec_ref_cold(o);
  }
}

static inline LEAN_ALWAYS_INLINE void lean_inc(lean_object* o) {
  if (!lean_is_scalar(o)) lean_inc_ref(o);
}
static inline void lean_inc_n(lean_object* o, size_t n) {
  if (!lean_is_scalar(o)) lean_inc_ref_n(o, n);
}
static inline LEAN_ALWAYS_INLINE void lean_dec(lean_object* o) {
  if (!lean_is_scalar(o)) lean_dec_ref(o);
}

/* ---- kinds ----------------------------------------------------------------------------------- */

static inline bool lean_is_ctor(lean_object* o) {
  return lean_ptr_tag(o) <= LeanMaxCtorTag;
}
static inline bool lean_is_closure(lean_object* o) {
  return lean_ptr_tag(o) == LeanClosure;
}
static inline bool lean_is_array(lean_object* o) {
  return lean_ptr_tag(o) == LeanArray;
}
static inline bool lean_is_sarray(lean_object* o) {
  return lean_ptr_tag(o) == LeanScalarArray;
}
static inline bool lean_is_string(lean_object* o) {
  return lean_ptr_tag(o) == LeanString;
}
static inline bool lean_is_mpz(lean_object* o) {
  return lean_ptr_tag(o) == LeanMPZ;
}
static inline bool lean_is_thunk(lean_object* o) {
  return lean_ptr_tag(o) == LeanThunk;
}
static inline bool lean_is_task(lean_object* o) {
  return lean_ptr_tag(o) == LeanTask;
}
static inline bool lean_is_promise(lean_object* o) {
  return lean_ptr_tag(o) == LeanPromise;
}
static inline bool lean_is_external(lean_object* o) {
  return lean_ptr_tag(o) == LeanExternal;
}
static inline bool lean_is_ref(lean_object* o) {
  return lean_ptr_tag(o) == LeanRef;
}

/* Dispatch value of an inductive: field-less constructors are boxed constructor indices. */
static inline unsigned lean_obj_tag(lean_object* o) {
  if (lean_is_scalar(o)) return (unsigned)lean_unbox(o);
  return lean_ptr_tag(o);
}

static inline lean_ctor_object* lean_to_ctor(lean_object* o) {
  assert(lean_is_ctor(o));
  return (lean_ctor_object*)(o);
}
static inline lean_closure_object* lean_to_closure(lean_object* o) {
  assert(lean_is_closure(o));
  return (lean_closure_object*)(o);
}
static inline lean_array_object* lean_to_array(lean_object* o) {
  assert(lean_is_array(o));
  return (lean_array_object*)(o);
}
static inline lean_sarray_object* lean_to_sarray(lean_object* o) {
  assert(lean_is_sarray(o));
  return (lean_sarray_object*)(o);
}
static inline lean_string_object* lean_to_string(lean_object* o) {
  assert(lean_is_string(o));
  return (lean_string_object*)(o);
}
static inline lean_thunk_object* lean_to_thunk(lean_object* o) {
  assert(lean_is_thunk(o));
  return (lean_thunk_object*)(o);
}
static inline lean_task_object* lean_to_task(lean_object* o) {
  assert(lean_is_task(o));
  return (lean_task_object*)(o);
}
static inline lean_promise_object* lean_to_promise(lean_object* o) {
  assert(lean_is_promise(o));
  return (lean_promise_object*)(o);
}
static inline lean_ref_object* lean_to_ref(lean_object* o) {
  assert(lean_is_ref(o));
  return (lean_ref_object*)(o);
}
static inline lean_external_object* lean_to_external(lean_object* o) {
  assert(lean_is_external(o));
  return (lean_external_object*)(o);
}

/* Only an exclusive object may be updated in place; MT and persistent objects never are. */
static inline bool lean_is_exclusive(lean_object* o) {
  if (LEAN_LIKELY(lean_is_st(o))) return o->m_rc == 1;
  return false;
}
static inline uint8_t lean_is_exclusive_obj(lean_object* o) {
  return lean_is_exclusive(o);
}
static inline bool lean_is_shared(lean_object* o) {
  if (LEAN_LIKELY(lean_is_st(o))) return o->m_rc > 1;
  return false;
}

/* ---- constructors ---------------------------------------------------------------------------- */

static inline unsigned lean_ctor_num_objs(lean_object* o) {
  assert(lean_is_ctor(o));
  return lean_ptr_other(o);
}

static inline lean_object** lean_ctor_obj_cptr(lean_object* o) {
  assert(lean_is_ctor(o));
  return lean_to_ctor(o)->m_objs;
}

static inline uint8_t* lean_ctor_scalar_cptr(lean_object* o) {
  assert(lean_is_ctor(o));
  return (uint8_t*)(lean_ctor_obj_cptr(o) + lean_ctor_num_objs(o));
}

/* Pointer fields are left uninitialized: set every one before the object is released. */
static inline lean_object* lean_alloc_ctor(unsigned tag, unsigned num_objs, unsigned scalar_sz) {
  assert(tag <= LeanMaxCtorTag && num_objs < LEAN_MAX_CTOR_FIELDS &&
         scalar_sz < LEAN_MAX_CTOR_SCALARS_SIZE);
  lean_object* o = lean_alloc_ctor_memory(
      (unsigned)(sizeof(lean_ctor_object) + sizeof(void*) * num_objs + scalar_sz));
  lean_set_st_header(o, tag, num_objs);
  return o;
}

static inline b_lean_obj_res lean_ctor_get(b_lean_obj_arg o, unsigned i) {
  assert(i < lean_ctor_num_objs(o));
  return lean_ctor_obj_cptr(o)[i];
}

/* Takes over the caller's reference to `v`; the previous value is not released. */
static inline void lean_ctor_set(b_lean_obj_arg o, unsigned i, lean_obj_arg v) {
  assert(i < lean_ctor_num_objs(o));
  lean_ctor_obj_cptr(o)[i] = v;
}

static inline void lean_ctor_set_tag(b_lean_obj_arg o, uint8_t new_tag) {
  assert(new_tag <= LeanMaxCtorTag);
  o->m_tag = new_tag;
}

static inline void lean_ctor_release(b_lean_obj_arg o, unsigned i) {
  assert(i < lean_ctor_num_objs(o));
  lean_object** objs = lean_ctor_obj_cptr(o);
  lean_dec(objs[i]);
  objs[i] = lean_box(0);
}

/* usize slots are addressed by word index (>= number of pointer fields). */
static inline size_t lean_ctor_get_usize(b_lean_obj_arg o, unsigned i) {
  assert(i >= lean_ctor_num_objs(o));
  return *((size_t*)(lean_ctor_obj_cptr(o) + i));
}

static inline void lean_ctor_set_usize(b_lean_obj_arg o, unsigned i, size_t v) {
  assert(i >= lean_ctor_num_objs(o));
  *((size_t*)(lean_ctor_obj_cptr(o) + i)) = v;
}

/* Other scalars are addressed by byte offset from field 0 (>= 8 * number of pointer fields). */
static inline uint8_t lean_ctor_get_uint8(b_lean_obj_arg o, unsigned offset) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  return *((uint8_t*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset));
}

static inline uint16_t lean_ctor_get_uint16(b_lean_obj_arg o, unsigned offset) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  return *((uint16_t*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset));
}

static inline uint32_t lean_ctor_get_uint32(b_lean_obj_arg o, unsigned offset) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  return *((uint32_t*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset));
}

static inline uint64_t lean_ctor_get_uint64(b_lean_obj_arg o, unsigned offset) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  return *((uint64_t*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset));
}

static inline double lean_ctor_get_float(b_lean_obj_arg o, unsigned offset) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  return *((double*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset));
}

static inline float lean_ctor_get_float32(b_lean_obj_arg o, unsigned offset) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  return *((float*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset));
}

static inline void lean_ctor_set_uint8(b_lean_obj_arg o, unsigned offset, uint8_t v) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  *((uint8_t*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset)) = v;
}

static inline void lean_ctor_set_uint16(b_lean_obj_arg o, unsigned offset, uint16_t v) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  *((uint16_t*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset)) = v;
}

static inline void lean_ctor_set_uint32(b_lean_obj_arg o, unsigned offset, uint32_t v) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  *((uint32_t*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset)) = v;
}

static inline void lean_ctor_set_uint64(b_lean_obj_arg o, unsigned offset, uint64_t v) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  *((uint64_t*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset)) = v;
}

static inline void lean_ctor_set_float(b_lean_obj_arg o, unsigned offset, double v) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  *((double*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset)) = v;
}

static inline void lean_ctor_set_float32(b_lean_obj_arg o, unsigned offset, float v) {
  assert(offset >= lean_ctor_num_objs(o) * sizeof(void*));
  *((float*)((uint8_t*)(lean_ctor_obj_cptr(o)) + offset)) = v;
}

/* ---- closures -------------------------------------------------------------------------------- */

static inline void* lean_closure_fun(lean_object* o) {
  return lean_to_closure(o)->m_fun;
}
static inline unsigned lean_closure_arity(lean_object* o) {
  return lean_to_closure(o)->m_arity;
}
static inline unsigned lean_closure_num_fixed(lean_object* o) {
  return lean_to_closure(o)->m_num_fixed;
}
static inline lean_object** lean_closure_arg_cptr(lean_object* o) {
  return lean_to_closure(o)->m_objs;
}

/* `fun` takes `arity` boxed arguments (one `lean_object**` when arity > 16); fixed args unset. */
static inline lean_obj_res lean_alloc_closure(void* fun, unsigned arity, unsigned num_fixed) {
  assert(arity > 0);
  assert(num_fixed < arity);
  lean_closure_object* o = (lean_closure_object*)lean_alloc_small_object(
      (unsigned)(sizeof(lean_closure_object) + sizeof(void*) * num_fixed));
  lean_set_st_header((lean_object*)o, LeanClosure, 0);
  o->m_fun = fun;
  o->m_arity = (uint16_t)arity;
  o->m_num_fixed = (uint16_t)num_fixed;
  return (lean_object*)o;
}

static inline b_lean_obj_res lean_closure_get(b_lean_obj_arg o, unsigned i) {
  assert(i < lean_closure_num_fixed(o));
  return lean_to_closure(o)->m_objs[i];
}

static inline void lean_closure_set(u_lean_obj_arg o, unsigned i, lean_obj_arg a) {
  assert(i < lean_closure_num_fixed(o));
  lean_to_closure(o)->m_objs[i] = a;
}

/* Application consumes the closure and every argument. */
LEAN_EXPORT lean_object* lean_apply_1(lean_object* f, lean_object* a1);
LEAN_EXPORT lean_object* lean_apply_2(lean_object* f, lean_object* a1, lean_object* a2);
LEAN_EXPORT lean_object* lean_apply_3(lean_object* f, lean_object* a1, lean_object* a2,
                                      lean_object* a3);
LEAN_EXPORT lean_object* lean_apply_4(lean_object* f, lean_object* a1, lean_object* a2,
                                      lean_object* a3, lean_object* a4);
LEAN_EXPORT lean_object* lean_apply_n(lean_object* f, unsigned n, lean_object** args);

/* ---- arrays of objects ----------------------------------------------------------------------- */

/* Slots are left uninitialized: fill the first `size` before the array is released. */
static inline lean_obj_res lean_alloc_array(size_t size, size_t capacity) {
  lean_array_object* o =
      (lean_array_object*)lean_alloc_object(sizeof(lean_array_object) + sizeof(void*) * capacity);
  lean_set_st_header((lean_object*)o, LeanArray, 0);
  o->m_size = size;
  o->m_capacity = capacity;
  return (lean_object*)o;
}

static inline size_t lean_array_size(b_lean_obj_arg o) {
  return lean_to_array(o)->m_size;
}
static inline size_t lean_array_capacity(b_lean_obj_arg o) {
  return lean_to_array(o)->m_capacity;
}
static inline size_t lean_array_byte_size(lean_object* o) {
  return sizeof(lean_array_object) + sizeof(void*) * lean_array_capacity(o);
}
static inline size_t lean_array_data_byte_size(lean_object* o) {
  return sizeof(lean_array_object) + sizeof(void*) * lean_array_size(o);
}
static inline lean_object** lean_array_cptr(lean_object* o) {
  return lean_to_array(o)->m_data;
}

static inline void lean_array_set_size(u_lean_obj_arg o, size_t sz) {
  assert(lean_is_array(o));
  assert(lean_is_exclusive(o));
  assert(sz <= lean_array_capacity(o));
  lean_to_array(o)->m_size = sz;
}

/* Borrowed element: no reference count change. */
static inline b_lean_obj_res lean_array_get_core(b_lean_obj_arg o, size_t i) {
  assert(i < lean_array_size(o));
  return lean_to_array(o)->m_data[i];
}

static inline void lean_array_set_core(u_lean_obj_arg o, size_t i, lean_obj_arg v) {
  assert(!lean_has_rc(o) || lean_is_exclusive(o));
  assert(i < lean_array_size(o));
  lean_to_array(o)->m_data[i] = v;
}

static inline lean_obj_res lean_array_sz(lean_obj_arg a) {
  lean_object* r = lean_box(lean_array_size(a));
  lean_dec(a);
  return r;
}

static inline lean_obj_res lean_array_get_size(b_lean_obj_arg a) {
  return lean_box(lean_array_size(a));
}

static inline lean_obj_res lean_mk_empty_array(void) {
  return lean_alloc_array(0, 0);
}

/* A non-scalar capacity is a Nat too large to allocate. */
static inline lean_obj_res lean_mk_empty_array_with_capacity(b_lean_obj_arg capacity) {
  if (!lean_is_scalar(capacity)) lean_internal_panic_out_of_memory();
  return lean_alloc_array(0, lean_unbox(capacity));
}

/* Owned element: the caller must release the result. */
static inline lean_obj_res lean_array_uget(b_lean_obj_arg a, size_t i) {
  lean_object* r = lean_array_get_core(a, i);
  lean_inc(r);
  return r;
}

static inline lean_obj_res lean_array_fget(b_lean_obj_arg a, b_lean_obj_arg i) {
  return lean_array_uget(a, lean_unbox(i));
}

/* ---- scalar arrays (ByteArray, FloatArray) --------------------------------------------------- */

/* Payload left uninitialized. */
static inline lean_obj_res lean_alloc_sarray(unsigned elem_size, size_t size, size_t capacity) {
  lean_sarray_object* o =
      (lean_sarray_object*)lean_alloc_object(sizeof(lean_sarray_object) + elem_size * capacity);
  lean_set_st_header((lean_object*)o, LeanScalarArray, elem_size);
  o->m_size = size;
  o->m_capacity = capacity;
  return (lean_object*)o;
}

static inline unsigned lean_sarray_elem_size(lean_object* o) {
  assert(lean_is_sarray(o));
  return lean_ptr_other(o);
}
static inline size_t lean_sarray_capacity(lean_object* o) {
  return lean_to_sarray(o)->m_capacity;
}
static inline size_t lean_sarray_byte_size(lean_object* o) {
  return sizeof(lean_sarray_object) + lean_sarray_elem_size(o) * lean_sarray_capacity(o);
}
static inline size_t lean_sarray_size(b_lean_obj_arg o) {
  return lean_to_sarray(o)->m_size;
}
static inline size_t lean_sarray_data_byte_size(lean_object* o) {
  return sizeof(lean_sarray_object) + lean_sarray_elem_size(o) * lean_sarray_size(o);
}
static inline void lean_sarray_set_size(u_lean_obj_arg o, size_t sz) {
  assert(lean_is_exclusive(o));
  assert(sz <= lean_sarray_capacity(o));
  lean_to_sarray(o)->m_size = sz;
}
static inline uint8_t* lean_sarray_cptr(lean_object* o) {
  return lean_to_sarray(o)->m_data;
}

static inline lean_obj_res lean_mk_empty_byte_array(b_lean_obj_arg capacity) {
  if (!lean_is_scalar(capacity)) lean_internal_panic_out_of_memory();
  return lean_alloc_sarray(1, 0, lean_unbox(capacity));
}

static inline lean_obj_res lean_byte_array_size(b_lean_obj_arg a) {
  return lean_box(lean_sarray_size(a));
}
static inline uint8_t lean_byte_array_uget(b_lean_obj_arg a, size_t i) {
  assert(i < lean_sarray_size(a));
  return lean_sarray_cptr(a)[i];
}
/* Out-of-range reads yield the default value instead of failing. */
static inline uint8_t lean_byte_array_get(b_lean_obj_arg a, b_lean_obj_arg i) {
  if (!lean_is_scalar(i)) return 0;
  size_t idx = lean_unbox(i);
  return idx < lean_sarray_size(a) ? lean_byte_array_uget(a, idx) : 0;
}
static inline uint8_t lean_byte_array_fget(b_lean_obj_arg a, b_lean_obj_arg i) {
  return lean_byte_array_uget(a, lean_unbox(i));
}

static inline lean_obj_res lean_mk_empty_float_array(b_lean_obj_arg capacity) {
  if (!lean_is_scalar(capacity)) lean_internal_panic_out_of_memory();
  return lean_alloc_sarray(sizeof(double), 0, lean_unbox(capacity));
}

static inline lean_obj_res lean_float_array_size(b_lean_obj_arg a) {
  return lean_box(lean_sarray_size(a));
}
static inline double* lean_float_array_cptr(b_lean_obj_arg a) {
  return (double*)(lean_sarray_cptr(a));
}
static inline double lean_float_array_uget(b_lean_obj_arg a, size_t i) {
  return lean_float_array_cptr(a)[i];
}
static inline double lean_float_array_fget(b_lean_obj_arg a, b_lean_obj_arg i) {
  return lean_float_array_uget(a, lean_unbox(i));
}
static inline double lean_float_array_get(b_lean_obj_arg a, b_lean_obj_arg i) {
  if (!lean_is_scalar(i)) return 0.0;
  size_t idx = lean_unbox(i);
  return idx < lean_sarray_size(a) ? lean_float_array_uget(a, idx) : 0.0;
}

/* ---- strings --------------------------------------------------------------------------------- */

static inline lean_obj_res lean_alloc_string(size_t size, size_t capacity, size_t len) {
  lean_string_object* o =
      (lean_string_object*)lean_alloc_object(sizeof(lean_string_object) + capacity);
  lean_set_st_header((lean_object*)o, LeanString, 0);
  o->m_size = size;
  o->m_capacity = capacity;
  o->m_length = len;
  return (lean_object*)o;
}

/* Code points in a NUL-terminated / length-delimited UTF-8 byte sequence. */
LEAN_EXPORT size_t lean_utf8_strlen(char const* str);
LEAN_EXPORT size_t lean_utf8_n_strlen(char const* str, size_t n);

/* The checked constructors replace ill-formed UTF-8 with U+FFFD; the unchecked ones trust it. */
LEAN_EXPORT lean_obj_res lean_mk_string_unchecked(char const* s, size_t sz, size_t len);
LEAN_EXPORT lean_obj_res lean_mk_string_from_bytes(char const* s, size_t sz);
LEAN_EXPORT lean_obj_res lean_mk_string_from_bytes_unchecked(char const* s, size_t sz);
LEAN_EXPORT lean_obj_res lean_mk_ascii_string_unchecked(char const* s);
LEAN_EXPORT lean_obj_res lean_mk_string(char const* s);

static inline size_t lean_string_capacity(lean_object* o) {
  return lean_to_string(o)->m_capacity;
}
static inline size_t lean_string_byte_size(lean_object* o) {
  return sizeof(lean_string_object) + lean_string_capacity(o);
}
/* Valid only while a reference to `o` is held; the string may contain NUL bytes. */
static inline char const* lean_string_cstr(b_lean_obj_arg o) {
  assert(lean_is_string(o));
  return lean_to_string(o)->m_data;
}
static inline size_t lean_string_size(b_lean_obj_arg o) {
  return lean_to_string(o)->m_size;
}
static inline size_t lean_string_len(b_lean_obj_arg o) {
  return lean_to_string(o)->m_length;
}
static inline size_t lean_string_data_byte_size(lean_object* o) {
  return sizeof(lean_string_object) + lean_string_size(o);
}
static inline lean_obj_res lean_string_length(b_lean_obj_arg s) {
  return lean_box(lean_string_len(s));
}
static inline lean_obj_res lean_string_utf8_byte_size(b_lean_obj_arg s) {
  return lean_box(lean_string_size(s) - 1);
}

/* ---- boxing of fixed-width scalars ----------------------------------------------------------- */

/* The 32-bit branch is a plain `if` so that unoptimized builds reference the same symbols. */
static inline lean_obj_res lean_box_uint32(uint32_t v) {
  if (sizeof(void*) == 4) {
    lean_object* r = lean_alloc_ctor(0, 0, sizeof(uint32_t));
    lean_ctor_set_uint32(r, 0, v);
    return r;
  }
  return lean_box(v);
}

static inline uint32_t lean_unbox_uint32(b_lean_obj_arg o) {
  if (sizeof(void*) == 4) return lean_ctor_get_uint32(o, 0);
  return (uint32_t)lean_unbox(o);
}

static inline lean_obj_res lean_box_uint64(uint64_t v) {
  lean_object* r = lean_alloc_ctor(0, 0, sizeof(uint64_t));
  lean_ctor_set_uint64(r, 0, v);
  return r;
}

static inline uint64_t lean_unbox_uint64(b_lean_obj_arg o) {
  return lean_ctor_get_uint64(o, 0);
}

static inline lean_obj_res lean_box_usize(size_t v) {
  lean_object* r = lean_alloc_ctor(0, 0, sizeof(size_t));
  lean_ctor_set_usize(r, 0, v);
  return r;
}

static inline size_t lean_unbox_usize(b_lean_obj_arg o) {
  return lean_ctor_get_usize(o, 0);
}

static inline lean_obj_res lean_box_float(double v) {
  lean_object* r = lean_alloc_ctor(0, 0, sizeof(double));
  lean_ctor_set_float(r, 0, v);
  return r;
}

static inline double lean_unbox_float(b_lean_obj_arg o) {
  return lean_ctor_get_float(o, 0);
}

static inline lean_obj_res lean_box_float32(float v) {
  lean_object* r = lean_alloc_ctor(0, 0, sizeof(float));
  lean_ctor_set_float32(r, 0, v);
  return r;
}

static inline float lean_unbox_float32(b_lean_obj_arg o) {
  return lean_ctor_get_float32(o, 0);
}

/* ---- external objects ------------------------------------------------------------------------ */

static inline lean_obj_res lean_alloc_external(lean_external_class* cls, void* data) {
  lean_external_object* o =
      (lean_external_object*)lean_alloc_small_object(sizeof(lean_external_object));
  lean_set_st_header((lean_object*)o, LeanExternal, 0);
  o->m_class = cls;
  o->m_data = data;
  return (lean_object*)o;
}

static inline lean_external_class* lean_get_external_class(b_lean_obj_arg o) {
  return lean_to_external(o)->m_class;
}

static inline void* lean_get_external_data(b_lean_obj_arg o) {
  return lean_to_external(o)->m_data;
}

/* A shared object keeps its data: the new data goes into a fresh object of the same class. */
static inline lean_obj_res lean_set_external_data(lean_obj_arg o, void* data) {
  if (lean_is_exclusive(o)) {
    lean_to_external(o)->m_data = data;
    return o;
  }
  lean_object* o_new = lean_alloc_external(lean_get_external_class(o), data);
  lean_dec_ref(o);
  return o_new;
}

/* ---- IO results (EST.Out: one field since Lean v4.26) ---------------------------------------- */

static inline lean_obj_res lean_io_mk_world(void) {
  return lean_box(0);
}

static inline bool lean_io_result_is_ok(b_lean_obj_arg r) {
  return lean_ptr_tag(r) == 0;
}
static inline bool lean_io_result_is_error(b_lean_obj_arg r) {
  return lean_ptr_tag(r) == 1;
}

static inline b_lean_obj_res lean_io_result_get_value(b_lean_obj_arg r) {
  assert(lean_io_result_is_ok(r));
  return lean_ctor_get(r, 0);
}

static inline b_lean_obj_res lean_io_result_get_error(b_lean_obj_arg r) {
  assert(lean_io_result_is_error(r));
  return lean_ctor_get(r, 0);
}

static inline lean_obj_res lean_io_result_take_value(lean_obj_arg r) {
  assert(lean_io_result_is_ok(r));
  lean_object* v = lean_ctor_get(r, 0);
  lean_inc(v);
  lean_dec(r);
  return v;
}

/* The value is boxed: EST.Out is polymorphic in it. */
static inline lean_obj_res lean_io_result_mk_ok(lean_obj_arg a) {
  lean_object* r = lean_alloc_ctor(0, 1, 0);
  lean_ctor_set(r, 0, a);
  return r;
}

static inline lean_obj_res lean_io_result_mk_error(lean_obj_arg e) {
  lean_object* r = lean_alloc_ctor(1, 1, 0);
  lean_ctor_set(r, 0, e);
  return r;
}

/* Prints "uncaught exception: <IO.Error.toString>" to stderr. */
LEAN_EXPORT void lean_io_result_show_error(b_lean_obj_arg r);

/*
 * IO.Error constructors (exported from Lean's Init library). All consume their object
 * arguments. `_file` variants store `some filename`; the others store `none` where the
 * constructor has an optional file name.
 */
LEAN_EXPORT lean_obj_res lean_mk_io_user_error(lean_obj_arg str);
LEAN_EXPORT lean_obj_res lean_mk_io_error_eof(lean_obj_arg unit);
LEAN_EXPORT lean_obj_res lean_mk_io_error_already_exists(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_already_exists_file(lean_obj_arg fname, uint32_t code,
                                                              lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_other_error(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_resource_busy(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_resource_vanished(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_unsupported_operation(uint32_t code,
                                                                lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_hardware_fault(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_unsatisfied_constraints(uint32_t code,
                                                                  lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_illegal_operation(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_protocol_error(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_time_expired(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_interrupted(lean_obj_arg fname, uint32_t code,
                                                      lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_no_file_or_directory(lean_obj_arg fname, uint32_t code,
                                                               lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_invalid_argument(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_invalid_argument_file(lean_obj_arg fname, uint32_t code,
                                                                lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_permission_denied(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_permission_denied_file(lean_obj_arg fname, uint32_t code,
                                                                 lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_resource_exhausted(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_resource_exhausted_file(lean_obj_arg fname, uint32_t code,
                                                                  lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_inappropriate_type(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_inappropriate_type_file(lean_obj_arg fname, uint32_t code,
                                                                  lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_no_such_thing(uint32_t code, lean_obj_arg details);
LEAN_EXPORT lean_obj_res lean_mk_io_error_no_such_thing_file(lean_obj_arg fname, uint32_t code,
                                                             lean_obj_arg details);

#ifdef __cplusplus
}
#endif

#endif /* TLRT_LEAN_COMPAT_LEAN_H_ */
