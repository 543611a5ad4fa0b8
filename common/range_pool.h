// The process's host worker threads for contiguous ranges of a loop (kernels/common/
// host_parallel.h): started once, on the first call that can use them, and kept, so a parallel
// host loop costs a wake-up instead of a thread creation per worker (tens of microseconds each in
// a VM, paid on every chunk of a staged transfer).
#pragma once

#include <cstdint>

namespace tlrt {

// Runs fn(ctx, r) exactly once for every r in [0, ranges), on the calling thread and the workers,
// and returns when every call has returned, the workers running in the caller's floating-point
// environment (as threads it started would). fn must not throw. The calling thread takes ranges
// too, from the first, so the job finishes even if no worker wakes in time. Returns false, having
// run nothing, when the workers are running another caller's job, when the calling thread is
// itself inside a job (a nested parallel loop), when no worker thread could be started, or in a
// child process forked after the workers started: the caller then runs the ranges its own way.
bool run_on_range_pool(uint64_t ranges, void (*fn)(void* ctx, uint64_t range), void* ctx);

}  // namespace tlrt
