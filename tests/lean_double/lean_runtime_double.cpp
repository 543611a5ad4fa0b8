// Test double for the out-of-line half of the Lean runtime: what a Lean toolchain's runtime and
// Init library provide to code compiled against lean/lean.h (allocation, reference counting,
// strings, external classes, closures, IO errors, panics). It follows
// shared/abi/LEAN-OBJECTS.md in names, layouts, tags and ownership, so code linked against it
// behaves as it would inside a Lean process. Memory comes from malloc so that tests can count
// live objects; nothing here is meant for production.
//
// It serves both lean.h generations (TLRT_LEAN_GENERATION in lean_double.h, told from the header
// it is compiled against): the v4.26-v4.29 one calls mi_malloc_small and the cold increment paths;
// the sticky-count one calls lean_alloc_small_object_core, mi_malloc, lean_inc_ref_huge_n and
// lean_internal_panic_overflow, and freezes counts that overflow (never freeing those objects).

#include "lean_double.h"

#include <lean/lean.h>
#include <lean/mimalloc.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

std::atomic<int64_t> g_live_objects{0};

// Lean counts allocations per thread to implement deterministic timeouts; nothing reads it here.
thread_local uint64_t t_heartbeat = 0;

// mimalloc's MI_SMALL_SIZE_MAX on 64-bit targets. Real mi_malloc_small misbehaves above it
// (Lean issue #14148), so the double refuses instead of hiding the defect; the sticky-count
// generation's lean_alloc_small_object_core has the same precondition.
constexpr size_t kMiSmallSizeMax = 1024;

// A count the sticky-count generation has frozen: releases never adjust it nor free the object.
bool is_frozen(const lean_object* o) {
#if TLRT_LEAN_GENERATION == TLRT_LEAN_GENERATION_NEXT
  return o->m_rc <= LEAN_RC_STICKY_DROP;
#else
  (void)o;
  return false;
#endif
}

[[noreturn]] void panic_exit(const char* msg) {
  std::fputs("INTERNAL PANIC: ", stderr);
  std::fputs(msg, stderr);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  if (std::getenv("LEAN_ABORT_ON_PANIC") != nullptr) std::abort();
  std::exit(1);
}

void* counted_malloc(size_t sz) {
  void* p = std::malloc(sz);
  if (p != nullptr) g_live_objects.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void counted_free(void* p) {
  std::free(p);
  g_live_objects.fetch_sub(1, std::memory_order_relaxed);
}

// ---- object death -------------------------------------------------------------------------------

// Drops the reference that a dying object held on `child`; true when it was the last one.
bool drop_last_ref(lean_object* child) {
  if (child == nullptr) lean_internal_panic("lean double: a released object has a null field");
  if (lean_is_scalar(child)) return false;
  if (child->m_rc > 1) {
    child->m_rc--;
    return false;
  }
  if (child->m_rc == 1) return true;
  if (child->m_rc == 0 || is_frozen(child)) return false;
  return lean_get_rc_mt_addr(child)->fetch_add(1, std::memory_order_acq_rel) == -1;
}

void queue_if_dead(lean_object* child, std::vector<lean_object*>& dead) {
  if (drop_last_ref(child)) dead.push_back(child);
}

// Releases everything `o` owns (finalizing external payloads) and queues children that die.
void release_contents(lean_object* o, std::vector<lean_object*>& dead) {
  const uint8_t tag = lean_ptr_tag(o);
  if (tag <= LeanMaxCtorTag) {
    lean_object** fields = lean_ctor_obj_cptr(o);
    for (unsigned i = 0; i < lean_ctor_num_objs(o); ++i) queue_if_dead(fields[i], dead);
    return;
  }
  switch (tag) {
    case LeanClosure: {
      lean_object** args = lean_closure_arg_cptr(o);
      for (unsigned i = 0; i < lean_closure_num_fixed(o); ++i) queue_if_dead(args[i], dead);
      break;
    }
    case LeanArray: {
      lean_object** data = lean_array_cptr(o);
      for (size_t i = 0; i < lean_array_size(o); ++i) queue_if_dead(data[i], dead);
      break;
    }
    case LeanRef: {
      lean_object* v = lean_to_ref(o)->m_value;
      if (v != nullptr) queue_if_dead(v, dead);
      break;
    }
    case LeanThunk: {
      lean_thunk_object* t = lean_to_thunk(o);
      lean_object* v = t->m_value.load(std::memory_order_acquire);
      lean_object* c = t->m_closure.load(std::memory_order_acquire);
      if (v != nullptr) queue_if_dead(v, dead);
      if (c != nullptr) queue_if_dead(c, dead);
      break;
    }
    case LeanExternal: {
      lean_external_object* e = lean_to_external(o);
      if (e->m_class != nullptr && e->m_class->m_finalize != nullptr) {
        e->m_class->m_finalize(e->m_data);
      }
      break;
    }
    case LeanTask:
    case LeanPromise:
      lean_internal_panic("lean double: tasks and promises are not supported");
    default:  // strings, scalar arrays, big numbers: no children
      break;
  }
}

// Iterative so that long lists or deep trees cannot overflow the stack. A finalizer may release
// other objects; that re-enters lean_dec_ref_cold with its own work list.
void delete_object(lean_object* root) {
  std::vector<lean_object*> dead;
  lean_object* o = root;
  for (;;) {
    release_contents(o, dead);
    counted_free(o);
    if (dead.empty()) return;
    o = dead.back();
    dead.pop_back();
  }
}

// ---- sharing marks ----------------------------------------------------------------------------

enum class Mark { kMultiThreaded, kPersistent };

lean_object* visit_mark_mt(lean_object* x) {
  lean_mark_mt(x);
  lean_dec(x);
  return lean_box(0);
}

lean_object* visit_mark_persistent(lean_object* x) {
  lean_mark_persistent(x);
  lean_dec(x);
  return lean_box(0);
}

void queue_child(lean_object* child, std::vector<lean_object*>& todo) {
  if (child != nullptr && !lean_is_scalar(child)) todo.push_back(child);
}

// Only single-threaded objects are visited: MT and persistent ones already have their mark on
// everything they reach.
void mark_reachable(lean_object* root, Mark mark) {
  std::vector<lean_object*> todo;
  queue_child(root, todo);
  while (!todo.empty()) {
    lean_object* o = todo.back();
    todo.pop_back();
    if (!lean_is_st(o)) continue;
    o->m_rc = mark == Mark::kMultiThreaded ? -o->m_rc : 0;
    const uint8_t tag = lean_ptr_tag(o);
    if (tag <= LeanMaxCtorTag) {
      for (unsigned i = 0; i < lean_ctor_num_objs(o); ++i) queue_child(lean_ctor_get(o, i), todo);
      continue;
    }
    switch (tag) {
      case LeanClosure:
        for (unsigned i = 0; i < lean_closure_num_fixed(o); ++i) {
          queue_child(lean_closure_get(o, i), todo);
        }
        break;
      case LeanArray:
        for (size_t i = 0; i < lean_array_size(o); ++i) {
          queue_child(lean_array_get_core(o, i), todo);
        }
        break;
      case LeanRef:
        queue_child(lean_to_ref(o)->m_value, todo);
        break;
      case LeanThunk:
        queue_child(lean_to_thunk(o)->m_value.load(std::memory_order_acquire), todo);
        queue_child(lean_to_thunk(o)->m_closure.load(std::memory_order_acquire), todo);
        break;
      case LeanExternal: {
        // Payload objects are only reachable through the class's foreach callback.
        lean_external_object* e = lean_to_external(o);
        if (e->m_class != nullptr && e->m_class->m_foreach != nullptr) {
          void* visit = mark == Mark::kMultiThreaded
                            ? reinterpret_cast<void*>(&visit_mark_mt)
                            : reinterpret_cast<void*>(&visit_mark_persistent);
          lean_object* visitor = lean_alloc_closure(visit, 1, 0);
          e->m_class->m_foreach(e->m_data, visitor);
          lean_dec(visitor);
        }
        break;
      }
      default:
        break;
    }
  }
}

// ---- closure application ------------------------------------------------------------------------

using Obj = lean_object*;
using Caller = Obj (*)(void*, Obj*);

template <size_t... I>
Obj call_unpacked(void* fn, Obj* args, std::index_sequence<I...>) {
  using Fn = Obj (*)(decltype((void)I, Obj{})...);
  return reinterpret_cast<Fn>(fn)(args[I]...);
}

template <size_t N>
Obj call_with(void* fn, Obj* args) {
  return call_unpacked(fn, args, std::make_index_sequence<N>{});
}

template <size_t... N>
constexpr std::array<Caller, sizeof...(N) + 1> make_callers(std::index_sequence<N...>) {
  return {nullptr, &call_with<N + 1>...};
}

// Entry points taking 1..LEAN_CLOSURE_MAX_ARGS separate boxed arguments, indexed by arity.
constexpr auto kCallers = make_callers(std::make_index_sequence<LEAN_CLOSURE_MAX_ARGS>{});

// Consumes `f` and `args[0..n)`. Under-application builds a new closure; over-application
// applies the result to the remaining arguments.
Obj apply_args(Obj f, unsigned n, Obj* args) {
  if (lean_is_scalar(f) || !lean_is_closure(f)) lean_internal_panic("lean_apply: not a closure");
  const unsigned arity = lean_closure_arity(f);
  const unsigned fixed = lean_closure_num_fixed(f);
  if (fixed + n < arity) {
    Obj r = lean_alloc_closure(lean_closure_fun(f), arity, fixed + n);
    for (unsigned i = 0; i < fixed; ++i) {
      Obj v = lean_closure_get(f, i);
      lean_inc(v);
      lean_closure_set(r, i, v);
    }
    for (unsigned i = 0; i < n; ++i) lean_closure_set(r, fixed + i, args[i]);
    lean_dec(f);
    return r;
  }
  const unsigned taken = arity - fixed;
  std::vector<Obj> all(arity);
  for (unsigned i = 0; i < fixed; ++i) {
    all[i] = lean_closure_get(f, i);
    lean_inc(all[i]);
  }
  for (unsigned i = 0; i < taken; ++i) all[fixed + i] = args[i];
  void* fn = lean_closure_fun(f);
  lean_dec(f);
  Obj r = arity <= LEAN_CLOSURE_MAX_ARGS ? kCallers[arity](fn, all.data())
                                         : reinterpret_cast<Obj (*)(Obj*)>(fn)(all.data());
  if (taken < n) return apply_args(r, n - taken, args + taken);
  return r;
}

// ---- UTF-8
// ------------------------------------------------------------------------------------------

bool is_continuation(unsigned char c) {
  return (c & 0xc0) == 0x80;
}

// Length of the well-formed UTF-8 sequence at s[i] (no overlongs, surrogates or values past
// U+10FFFF), or 0 when ill-formed.
size_t utf8_sequence_length(const unsigned char* s, size_t n, size_t i) {
  const unsigned char c = s[i];
  if (c < 0x80) return 1;
  size_t len;
  uint32_t cp;
  uint32_t min;
  if ((c & 0xe0) == 0xc0) {
    len = 2, cp = c & 0x1fu, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3, cp = c & 0x0fu, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4, cp = c & 0x07u, min = 0x10000;
  } else {
    return 0;
  }
  if (n - i < len) return 0;
  for (size_t k = 1; k < len; ++k) {
    if (!is_continuation(s[i + k])) return 0;
    cp = (cp << 6) | (s[i + k] & 0x3fu);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

// ---- IO errors
// --------------------------------------------------------------------------------------

constexpr unsigned kOsCodeOnlyFirst = TLRT_IO_ERROR_OTHER_ERROR;
constexpr unsigned kOsCodeOnlyLast = TLRT_IO_ERROR_TIME_EXPIRED;

bool has_optional_file(unsigned tag) {
  return tag == TLRT_IO_ERROR_ALREADY_EXISTS ||
         (tag >= TLRT_IO_ERROR_INVALID_ARGUMENT && tag <= TLRT_IO_ERROR_NO_SUCH_THING);
}

bool has_required_file(unsigned tag) {
  return tag == TLRT_IO_ERROR_INTERRUPTED || tag == TLRT_IO_ERROR_NO_FILE_OR_DIRECTORY;
}

// Constructors `(osCode : UInt32) (details : String)`: one pointer field, osCode after it.
lean_obj_res mk_code_details(unsigned tag, uint32_t code, lean_obj_arg details) {
  lean_object* r = lean_alloc_ctor(tag, 1, sizeof(uint32_t));
  lean_ctor_set(r, 0, details);
  lean_ctor_set_uint32(r, sizeof(void*), code);
  return r;
}

// Constructors `(filename) (osCode : UInt32) (details : String)`: two pointer fields, then osCode.
lean_obj_res mk_file_code_details(unsigned tag, lean_obj_arg file, uint32_t code,
                                  lean_obj_arg details) {
  lean_object* r = lean_alloc_ctor(tag, 2, sizeof(uint32_t));
  lean_ctor_set(r, 0, file);
  lean_ctor_set(r, 1, details);
  lean_ctor_set_uint32(r, 2 * sizeof(void*), code);
  return r;
}

lean_obj_res mk_some(lean_obj_arg v) {
  lean_object* r = lean_alloc_ctor(1, 1, 0);
  lean_ctor_set(r, 0, v);
  return r;
}

[[noreturn]] void not_an_io_error() {
  lean_internal_panic("lean double: object does not have the layout of an IO.Error");
}

const char* string_field(b_lean_obj_arg s) {
  if (lean_is_scalar(s) || !lean_is_string(s)) not_an_io_error();
  return lean_string_cstr(s);
}

void decode_io_error(b_lean_obj_arg err, tlrt_lean_double_io_error_view* out) {
  *out = tlrt_lean_double_io_error_view{lean_obj_tag(err), 0, nullptr, nullptr};
  if (lean_is_scalar(err)) {
    if (out->tag != TLRT_IO_ERROR_UNEXPECTED_EOF) not_an_io_error();
    return;
  }
  const unsigned tag = out->tag;
  if (tag == TLRT_IO_ERROR_USER_ERROR) {
    if (lean_ctor_num_objs(err) != 1) not_an_io_error();
    out->details = string_field(lean_ctor_get(err, 0));
  } else if (tag >= kOsCodeOnlyFirst && tag <= kOsCodeOnlyLast) {
    if (lean_ctor_num_objs(err) != 1) not_an_io_error();
    out->details = string_field(lean_ctor_get(err, 0));
    out->os_code = lean_ctor_get_uint32(err, sizeof(void*));
  } else if (has_optional_file(tag) || has_required_file(tag)) {
    if (lean_ctor_num_objs(err) != 2) not_an_io_error();
    lean_object* file = lean_ctor_get(err, 0);
    if (has_required_file(tag)) {
      out->filename = string_field(file);
    } else if (!lean_is_scalar(file)) {  // `some fn`; `none` is lean_box(0)
      if (lean_obj_tag(file) != 1 || lean_ctor_num_objs(file) != 1) not_an_io_error();
      out->filename = string_field(lean_ctor_get(file, 0));
    } else if (lean_unbox(file) != 0) {
      not_an_io_error();
    }
    out->details = string_field(lean_ctor_get(err, 1));
    out->os_code = lean_ctor_get_uint32(err, 2 * sizeof(void*));
  } else {
    not_an_io_error();
  }
}

// Char.toLower only maps ASCII capitals.
std::string lower_first(std::string s) {
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

// IO.Error.otherErrorToString
std::string describe(const std::string& gist, uint32_t code, const char* details) {
  std::string r = lower_first(gist) + " (error code: " + std::to_string(code);
  if (details != nullptr) r += ", " + lower_first(details);
  return r + ")";
}

// IO.Error.fopenErrorToString
std::string describe_file(const std::string& gist, const char* file, uint32_t code,
                          const char* details) {
  return describe(gist, code, details) + "\n  file: " + file;
}

std::string io_error_to_string(b_lean_obj_arg err) {
  tlrt_lean_double_io_error_view v;
  decode_io_error(err, &v);
  // Either form, depending on whether the constructor carries a file name.
  auto with = [&](const std::string& gist, const char* details) {
    return v.filename != nullptr ? describe_file(gist, v.filename, v.os_code, details)
                                 : describe(gist, v.os_code, details);
  };
  switch (v.tag) {
    case TLRT_IO_ERROR_UNEXPECTED_EOF:
      return "end of file";
    case TLRT_IO_ERROR_USER_ERROR:
      return v.details;
    case TLRT_IO_ERROR_ALREADY_EXISTS:
      return with("already exists", v.details);
    case TLRT_IO_ERROR_OTHER_ERROR:
      return with(v.details, nullptr);
    case TLRT_IO_ERROR_RESOURCE_BUSY:
      return with("resource busy", v.details);
    case TLRT_IO_ERROR_RESOURCE_VANISHED:
      return with("resource vanished", v.details);
    case TLRT_IO_ERROR_UNSUPPORTED_OPERATION:
      return with("unsupported operation", v.details);
    case TLRT_IO_ERROR_HARDWARE_FAULT:
      return with("hardware fault", nullptr);
    case TLRT_IO_ERROR_UNSATISFIED_CONSTRAINTS:
      return with("directory not empty", nullptr);
    case TLRT_IO_ERROR_ILLEGAL_OPERATION:
      return with("illegal operation", v.details);
    case TLRT_IO_ERROR_PROTOCOL_ERROR:
      return with("protocol error", v.details);
    case TLRT_IO_ERROR_TIME_EXPIRED:
      return with("time expired", v.details);
    case TLRT_IO_ERROR_INTERRUPTED:
      return with("interrupted system call", v.details);
    case TLRT_IO_ERROR_NO_FILE_OR_DIRECTORY:
      return with("no such file or directory", nullptr);
    case TLRT_IO_ERROR_INVALID_ARGUMENT:
      return with("invalid argument", v.details);
    case TLRT_IO_ERROR_PERMISSION_DENIED:
      return with(v.details, nullptr);
    case TLRT_IO_ERROR_RESOURCE_EXHAUSTED:
      return with("resource exhausted", v.details);
    case TLRT_IO_ERROR_INAPPROPRIATE_TYPE:
      return with("inappropriate type", v.details);
    case TLRT_IO_ERROR_NO_SUCH_THING:
      return with("no such thing", v.details);
    default:
      not_an_io_error();
  }
}

std::mutex g_external_classes_mutex;
// Never destroyed: external objects may be finalized during static destruction.
std::vector<lean_external_class*>* g_external_classes = new std::vector<lean_external_class*>();

}  // namespace

extern "C" {

// ---- allocation
// -------------------------------------------------------------------------------------

void* mi_malloc_small(size_t size) mi_attr_noexcept {
  if (size > kMiSmallSizeMax) {
    lean_internal_panic("lean double: mi_malloc_small called with more than 1024 bytes");
  }
  return counted_malloc(size);
}

#if TLRT_LEAN_GENERATION == TLRT_LEAN_GENERATION_NEXT
void* mi_malloc(size_t size) mi_attr_noexcept {
  return counted_malloc(size);
}

void mi_free(void* p) mi_attr_noexcept {
  if (p != nullptr) counted_free(p);
}

// The header has rounded `sz` already; anything else is a broken precondition, refused as
// mi_malloc_small refuses it.
lean_object* lean_alloc_small_object_core(unsigned sz) {
  if (sz == 0 || sz % LEAN_OBJECT_SIZE_DELTA != 0 || sz > kMiSmallSizeMax) {
    const std::string msg =
        "lean double: lean_alloc_small_object_core called with " + std::to_string(sz) + " bytes";
    lean_internal_panic(msg.c_str());
  }
  lean_inc_heartbeat();
  void* mem = counted_malloc(sz);
  if (mem == nullptr) lean_internal_panic_out_of_memory();
  lean_object* o = static_cast<lean_object*>(mem);
  o->m_cs_sz = sz & 0xffffu;
  return o;
}
#endif

void mi_collect(bool force) mi_attr_noexcept {
  (void)force;
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void lean_inc_heartbeat(void) {
  ++t_heartbeat;
}

// m_cs_sz stays 0: the double never compacts objects and frees through malloc's own bookkeeping.
lean_object* lean_alloc_object(size_t sz) {
  void* mem = counted_malloc(sz);
  if (mem == nullptr) lean_internal_panic_out_of_memory();
  lean_object* o = static_cast<lean_object*>(mem);
  o->m_cs_sz = 0;
  return o;
}

void lean_free_object(lean_object* o) {
  counted_free(o);
}

// ---- reference counting
// ---------------------------------------------------------------------------

#if TLRT_LEAN_GENERATION == TLRT_LEAN_GENERATION_COMPAT

// The multi-threaded half of lean_inc_ref / lean_inc_ref_n (the header does the rest inline).
void lean_inc_ref_cold(lean_object* o) {
  lean_get_rc_mt_addr(o)->fetch_sub(1, std::memory_order_relaxed);
}

void lean_inc_ref_n_cold(lean_object* o, unsigned n) {
  lean_get_rc_mt_addr(o)->fetch_sub(static_cast<int>(n), std::memory_order_relaxed);
}

#else

// Increments above LEAN_RC_INC_MAX. A single-threaded count takes all of `n` or, when that would
// pass INT_MAX, freezes at LEAN_RC_STICKY; a multi-threaded one takes `n` in steps the size of an
// inline increment, each after the same frozen-count test the header makes, so a count that
// freezes part-way stops moving.
void lean_inc_ref_huge_n(lean_object* o, size_t n) {
  if (lean_is_st(o)) {
    const int rc = o->m_rc;
    o->m_rc = n > static_cast<size_t>(INT_MAX - rc) ? LEAN_RC_STICKY : rc + static_cast<int>(n);
    return;
  }
  while (n > 0 && static_cast<unsigned>(lean_get_rc_mt_addr(o)->load(std::memory_order_relaxed)) >
                      static_cast<unsigned>(LEAN_RC_STICKY)) {
    const size_t step = std::min(n, LEAN_RC_INC_MAX);
    lean_get_rc_mt_addr(o)->fetch_sub(static_cast<int>(step), std::memory_order_relaxed);
    n -= step;
  }
}

#endif

void lean_dec_ref_cold(lean_object* o) {
  if (o->m_rc == 0 || is_frozen(o)) return;
  if (o->m_rc == 1 || lean_get_rc_mt_addr(o)->fetch_add(1, std::memory_order_acq_rel) == -1) {
    delete_object(o);
  }
}

void lean_mark_mt(lean_object* o) {
  mark_reachable(o, Mark::kMultiThreaded);
}

void lean_mark_persistent(lean_object* o) {
  mark_reachable(o, Mark::kPersistent);
}

// ---- panics
// -----------------------------------------------------------------------------------------

void lean_internal_panic(char const* msg) {
  panic_exit(msg);
}

void lean_internal_panic_out_of_memory(void) {
  panic_exit("out of memory");
}

void lean_internal_panic_unreachable(void) {
  panic_exit("unreachable code has been reached");
}

void lean_internal_panic_rc_overflow(void) {
  panic_exit("reference counter overflowed");
}

#if TLRT_LEAN_GENERATION == TLRT_LEAN_GENERATION_NEXT
void lean_internal_panic_overflow(void) {
  panic_exit("integer overflow in an object size computation");
}
#endif

// Only reached from lean.h's own assert (debug builds); a broken precondition must stop the test.
void lean_notify_assert(const char* file_name, int line, const char* condition) {
  std::fprintf(stderr, "lean.h assertion violated: %s\n  at %s:%d\n", condition, file_name, line);
  std::fflush(stderr);
  std::abort();
}

// ---- external classes
// -----------------------------------------------------------------------------

lean_external_class* lean_register_external_class(lean_external_finalize_proc finalize,
                                                  lean_external_foreach_proc foreach) {
  std::lock_guard<std::mutex> lock(g_external_classes_mutex);
  auto* cls = new lean_external_class{finalize, foreach};
  g_external_classes->push_back(cls);
  return cls;
}

// ---- closures
// ---------------------------------------------------------------------------------------

lean_object* lean_apply_1(lean_object* f, lean_object* a1) {
  Obj args[] = {a1};
  return apply_args(f, 1, args);
}

lean_object* lean_apply_2(lean_object* f, lean_object* a1, lean_object* a2) {
  Obj args[] = {a1, a2};
  return apply_args(f, 2, args);
}

lean_object* lean_apply_3(lean_object* f, lean_object* a1, lean_object* a2, lean_object* a3) {
  Obj args[] = {a1, a2, a3};
  return apply_args(f, 3, args);
}

lean_object* lean_apply_4(lean_object* f, lean_object* a1, lean_object* a2, lean_object* a3,
                          lean_object* a4) {
  Obj args[] = {a1, a2, a3, a4};
  return apply_args(f, 4, args);
}

lean_object* lean_apply_n(lean_object* f, unsigned n, lean_object** args) {
  return apply_args(f, n, args);
}

// ---- strings
// ----------------------------------------------------------------------------------------

size_t lean_utf8_strlen(char const* str) {
  size_t n = 0;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(str); *p != 0; ++p) {
    if (!is_continuation(*p)) ++n;
  }
  return n;
}

size_t lean_utf8_n_strlen(char const* str, size_t n) {
  size_t len = 0;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(str);
  for (size_t i = 0; i < n; ++i) {
    if (!is_continuation(p[i])) ++len;
  }
  return len;
}

lean_obj_res lean_mk_string_unchecked(char const* s, size_t sz, size_t len) {
  lean_object* r = lean_alloc_string(sz + 1, sz + 1, len);
  char* data = lean_to_string(r)->m_data;
  if (sz != 0) std::memcpy(data, s, sz);
  data[sz] = '\0';
  return r;
}

// Each ill-formed sequence (its first byte plus any continuation bytes after it) becomes one
// U+FFFD, which is how Lean's runtime recovers.
lean_obj_res lean_mk_string_from_bytes(char const* s, size_t sz) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(s);
  std::string out;  // only used once an ill-formed sequence is found
  size_t len = 0;
  size_t copied = 0;  // bytes of s already appended to out
  size_t i = 0;
  bool valid = true;
  while (i < sz) {
    const size_t n = utf8_sequence_length(u, sz, i);
    if (n != 0) {
      i += n;
    } else {
      valid = false;
      out.append(s + copied, i - copied);
      out.append("\xef\xbf\xbd");
      ++i;
      while (i < sz && is_continuation(u[i])) ++i;
      copied = i;
    }
    ++len;
  }
  if (valid) return lean_mk_string_unchecked(s, sz, len);
  out.append(s + copied, sz - copied);
  return lean_mk_string_unchecked(out.data(), out.size(), len);
}

lean_obj_res lean_mk_string_from_bytes_unchecked(char const* s, size_t sz) {
  return lean_mk_string_unchecked(s, sz, lean_utf8_n_strlen(s, sz));
}

lean_obj_res lean_mk_ascii_string_unchecked(char const* s) {
  const size_t sz = std::strlen(s);
  return lean_mk_string_unchecked(s, sz, sz);
}

lean_obj_res lean_mk_string(char const* s) {
  return lean_mk_string_from_bytes(s, std::strlen(s));
}

// ---- IO errors
// --------------------------------------------------------------------------------------

void lean_io_result_show_error(b_lean_obj_arg r) {
  const std::string msg = io_error_to_string(lean_io_result_get_error(r));
  std::fprintf(stderr, "uncaught exception: %s\n", msg.c_str());
  std::fflush(stderr);
}

lean_obj_res lean_mk_io_user_error(lean_obj_arg str) {
  lean_object* r = lean_alloc_ctor(TLRT_IO_ERROR_USER_ERROR, 1, 0);
  lean_ctor_set(r, 0, str);
  return r;
}

lean_obj_res lean_mk_io_error_eof(lean_obj_arg unit) {
  lean_dec(unit);
  return lean_box(TLRT_IO_ERROR_UNEXPECTED_EOF);
}

lean_obj_res lean_mk_io_error_already_exists(uint32_t code, lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_ALREADY_EXISTS, lean_box(0), code, details);
}

lean_obj_res lean_mk_io_error_already_exists_file(lean_obj_arg fname, uint32_t code,
                                                  lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_ALREADY_EXISTS, mk_some(fname), code, details);
}

lean_obj_res lean_mk_io_error_other_error(uint32_t code, lean_obj_arg details) {
  return mk_code_details(TLRT_IO_ERROR_OTHER_ERROR, code, details);
}

lean_obj_res lean_mk_io_error_resource_busy(uint32_t code, lean_obj_arg details) {
  return mk_code_details(TLRT_IO_ERROR_RESOURCE_BUSY, code, details);
}

lean_obj_res lean_mk_io_error_resource_vanished(uint32_t code, lean_obj_arg details) {
  return mk_code_details(TLRT_IO_ERROR_RESOURCE_VANISHED, code, details);
}

lean_obj_res lean_mk_io_error_unsupported_operation(uint32_t code, lean_obj_arg details) {
  return mk_code_details(TLRT_IO_ERROR_UNSUPPORTED_OPERATION, code, details);
}

lean_obj_res lean_mk_io_error_hardware_fault(uint32_t code, lean_obj_arg details) {
  return mk_code_details(TLRT_IO_ERROR_HARDWARE_FAULT, code, details);
}

lean_obj_res lean_mk_io_error_unsatisfied_constraints(uint32_t code, lean_obj_arg details) {
  return mk_code_details(TLRT_IO_ERROR_UNSATISFIED_CONSTRAINTS, code, details);
}

lean_obj_res lean_mk_io_error_illegal_operation(uint32_t code, lean_obj_arg details) {
  return mk_code_details(TLRT_IO_ERROR_ILLEGAL_OPERATION, code, details);
}

lean_obj_res lean_mk_io_error_protocol_error(uint32_t code, lean_obj_arg details) {
  return mk_code_details(TLRT_IO_ERROR_PROTOCOL_ERROR, code, details);
}

lean_obj_res lean_mk_io_error_time_expired(uint32_t code, lean_obj_arg details) {
  return mk_code_details(TLRT_IO_ERROR_TIME_EXPIRED, code, details);
}

lean_obj_res lean_mk_io_error_interrupted(lean_obj_arg fname, uint32_t code, lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_INTERRUPTED, fname, code, details);
}

lean_obj_res lean_mk_io_error_no_file_or_directory(lean_obj_arg fname, uint32_t code,
                                                   lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_NO_FILE_OR_DIRECTORY, fname, code, details);
}

lean_obj_res lean_mk_io_error_invalid_argument(uint32_t code, lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_INVALID_ARGUMENT, lean_box(0), code, details);
}

lean_obj_res lean_mk_io_error_invalid_argument_file(lean_obj_arg fname, uint32_t code,
                                                    lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_INVALID_ARGUMENT, mk_some(fname), code, details);
}

lean_obj_res lean_mk_io_error_permission_denied(uint32_t code, lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_PERMISSION_DENIED, lean_box(0), code, details);
}

lean_obj_res lean_mk_io_error_permission_denied_file(lean_obj_arg fname, uint32_t code,
                                                     lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_PERMISSION_DENIED, mk_some(fname), code, details);
}

lean_obj_res lean_mk_io_error_resource_exhausted(uint32_t code, lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_RESOURCE_EXHAUSTED, lean_box(0), code, details);
}

lean_obj_res lean_mk_io_error_resource_exhausted_file(lean_obj_arg fname, uint32_t code,
                                                      lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_RESOURCE_EXHAUSTED, mk_some(fname), code, details);
}

lean_obj_res lean_mk_io_error_inappropriate_type(uint32_t code, lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_INAPPROPRIATE_TYPE, lean_box(0), code, details);
}

lean_obj_res lean_mk_io_error_inappropriate_type_file(lean_obj_arg fname, uint32_t code,
                                                      lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_INAPPROPRIATE_TYPE, mk_some(fname), code, details);
}

lean_obj_res lean_mk_io_error_no_such_thing(uint32_t code, lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_NO_SUCH_THING, lean_box(0), code, details);
}

lean_obj_res lean_mk_io_error_no_such_thing_file(lean_obj_arg fname, uint32_t code,
                                                 lean_obj_arg details) {
  return mk_file_code_details(TLRT_IO_ERROR_NO_SUCH_THING, mk_some(fname), code, details);
}

// ---- test hooks
// -------------------------------------------------------------------------------------

int tlrt_lean_double_generation(void) {
  return TLRT_LEAN_GENERATION;
}

int64_t tlrt_lean_double_live_objects(void) {
  return g_live_objects.load(std::memory_order_relaxed);
}

lean_obj_res tlrt_lean_double_mk_float_array(const double* data, size_t n) {
  lean_object* a = lean_mk_empty_float_array(lean_box(n));
  lean_sarray_set_size(a, n);
  if (n != 0) std::memcpy(lean_float_array_cptr(a), data, n * sizeof(double));
  return a;
}

lean_obj_res tlrt_lean_double_mk_byte_array(const uint8_t* data, size_t n) {
  lean_object* a = lean_mk_empty_byte_array(lean_box(n));
  lean_sarray_set_size(a, n);
  if (n != 0) std::memcpy(lean_sarray_cptr(a), data, n);
  return a;
}

lean_obj_res tlrt_lean_double_mk_array(lean_object* const* elems, size_t n) {
  lean_object* a = lean_alloc_array(n, n);
  for (size_t i = 0; i < n; ++i) lean_array_cptr(a)[i] = elems[i];
  return a;
}

bool tlrt_lean_double_io_error_of(b_lean_obj_arg io_result, tlrt_lean_double_io_error_view* out) {
  if (lean_is_scalar(io_result) || lean_ptr_tag(io_result) > 1 ||
      lean_ctor_num_objs(io_result) != 1) {
    lean_internal_panic("lean double: object does not have the layout of an IO result");
  }
  if (lean_io_result_is_ok(io_result)) return false;
  decode_io_error(lean_io_result_get_error(io_result), out);
  return true;
}

lean_obj_res tlrt_lean_double_io_error_to_string(b_lean_obj_arg io_error) {
  const std::string s = io_error_to_string(io_error);
  return lean_mk_string_from_bytes(s.data(), s.size());
}

}  // extern "C"
