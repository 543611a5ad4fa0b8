/*
 * The mimalloc entry points that code compiled against the sticky-count generation of lean.h
 * (abi/lean_compat/next/lean/lean.h) can reach, declared with the linkage and exception
 * specification of the mimalloc header a Lean toolchain bundles, so a translation unit compiles
 * unchanged against either. The definitions come from whatever runtime is linked: Lean's own, or
 * the test double in tests/lean_double.
 *
 * Compared with the v4.26-v4.29 generation (abi/lean_compat/lean/mimalloc.h), lean.h's inline
 * code no longer calls mi_malloc_small: small objects go through the runtime's
 * lean_alloc_small_object_core, and objects above MI_SMALL_SIZE_MAX through mi_malloc.
 */
#ifndef TLRT_LEAN_COMPAT_NEXT_MIMALLOC_H_
#define TLRT_LEAN_COMPAT_NEXT_MIMALLOC_H_

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

/* mimalloc's small-object limit: 128 machine words, 1024 bytes on 64-bit targets. */
#define MI_SMALL_WSIZE_MAX 128
#define MI_SMALL_SIZE_MAX (MI_SMALL_WSIZE_MAX * sizeof(void*))

/* Any size; NULL when out of memory. */
void* mi_malloc(size_t size) mi_attr_noexcept;

/* Only valid for sizes up to MI_SMALL_SIZE_MAX. */
void* mi_malloc_small(size_t size) mi_attr_noexcept;

/* Frees a block from any of the allocation functions above (NULL is ignored). */
void mi_free(void* p) mi_attr_noexcept;

/* Returns cached free memory to the OS; Lean objects are unaffected. */
void mi_collect(bool force) mi_attr_noexcept;

#ifdef __cplusplus
}
#endif

#endif /* TLRT_LEAN_COMPAT_NEXT_MIMALLOC_H_ */
