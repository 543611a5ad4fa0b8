// Running one call in a child process and classifying how the child ended.
//
// Reference backend: fork() after the batch's in-process calls; the child inherits the pool and
// runs the call at once. CUDA backend: a CUDA context does not survive fork(), so the child is a
// fresh execution of this binary (posix_spawn of /proc/self/exe with --replay), which replays the
// batch's in-process calls from the seed to rebuild the same pool and then makes the call. Both
// paths report through the same one-line protocol on a pipe.
//
// A child that panics ends through the Lean double's lean_internal_panic: it prints
// "INTERNAL PANIC: <message>" and calls exit(1). The child registers an atexit handler that
// turns any exit() into _exit(kExitThroughExit), which tells a panic apart from a sanitizer's
// exit status and skips the leak check and static destructors of a process that is abandoned.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tools/fuzz/call_rules.h"
#include "tools/fuzz/fuzz_model.h"

namespace tlrt_fuzz {

constexpr int kExitThroughExit = 86;
constexpr int kReportFd = 3;  // where a spawned child writes its report line

struct ChildCapture {
  bool started = false;
  bool killed_for_time = false;
  int wait_status = 0;
  std::string report;  // the child's report line(s)
  std::string output;  // its stdout and stderr (truncated to a bounded size)
};

// Forks; the child runs `body(report_fd)` and must end with _exit(0) after reporting.
ChildCapture run_forked(const std::function<void(int)>& body, int timeout_seconds);
// Spawns `argv` (argv[0] is the program) with stdout and stderr captured and the report pipe on
// descriptor kReportFd.
ChildCapture run_spawned(const std::vector<std::string>& argv, int timeout_seconds);

// In the child: every exit() becomes _exit(kExitThroughExit).
void install_child_exit_hook();
// In the child: writes "OUTCOME <number> <detail>" to `fd`.
void write_report(int fd, const Evaluation& e);
void write_report_line(int fd, const std::string& line);

// The verdict on a child's end for `plan`.
Evaluation classify_child(const CallPlan& plan, const ChildCapture& child);

}  // namespace tlrt_fuzz
