/*
 * The two mimalloc entry points that Lean code touches, declared the way a Lean toolchain's
 * bundled `lean/mimalloc.h` declares them (C linkage, `bool` flag, noexcept in C++) so a
 * translation unit compiles unchanged against either header. The definitions come from whatever
 * runtime is linked: Lean's own, or the test double in tests/lean_double.
 */
#ifndef TLRT_LEAN_COMPAT_MIMALLOC_H_
#define TLRT_LEAN_COMPAT_MIMALLOC_H_

#include <stddef.h>

#ifdef __cplusplus
/* A C++ definition must repeat the exception specification of mimalloc's own declarations. */
#ifndef mi_attr_noexcept
#define mi_attr_noexcept noexcept
#endif
extern "C" {
#else
#include <stdbool.h>
#ifndef mi_attr_noexcept
#define mi_attr_noexcept
#endif
#endif

/* Only valid for sizes up to 1024 bytes on 64-bit targets (mimalloc's small-object limit). */
void* mi_malloc_small(size_t size) mi_attr_noexcept;

/* Returns cached free memory to the OS; Lean objects are unaffected. */
void mi_collect(bool force) mi_attr_noexcept;

#ifdef __cplusplus
}
#endif

#endif /* TLRT_LEAN_COMPAT_MIMALLOC_H_ */
