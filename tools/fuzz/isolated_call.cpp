// Child processes for calls that may end the process (see isolated_call.h).
#include "tools/fuzz/isolated_call.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace tlrt_fuzz {
namespace {

constexpr size_t kOutputLimit = 64 * 1024;

void exit_through_exit() {
  _exit(kExitThroughExit);
}

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Reads both pipes to their end (the child may write more than a pipe holds), then reaps the
// child. A child still running `deadline` seconds after start is killed.
void collect(pid_t pid, int out_fd, int report_fd, int timeout_seconds, ChildCapture& c) {
  const double deadline = now_seconds() + timeout_seconds + 30.0;
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {report_fd, POLLIN, 0}};
  std::string* sinks[2] = {&c.output, &c.report};
  int open_fds = 2;
  char buf[8192];
  while (open_fds > 0) {
    const double left = deadline - now_seconds();
    if (left <= 0) {
      kill(pid, SIGKILL);
      c.killed_for_time = true;
      break;
    }
    const int ready = poll(fds, 2, static_cast<int>(left * 1000) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        if (sinks[i]->size() < kOutputLimit) sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  while (waitpid(pid, &c.wait_status, 0) < 0 && errno == EINTR) {
  }
}

std::string one_line(std::string s) {
  for (char& ch : s) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  return s;
}

// The first line of `text` containing `needle`, or "".
std::string line_with(const std::string& text, const char* needle) {
  const size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at);
  const size_t end = text.find('\n', at);
  const size_t from = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

std::string last_line(const std::string& text) {
  size_t end = text.size();
  while (end > 0 && text[end - 1] == '\n') --end;
  const size_t begin = text.rfind('\n', end == 0 ? 0 : end - 1);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end - (begin == std::string::npos ? 0 : begin + 1));
}

}  // namespace

void install_child_exit_hook() {
  std::atexit(exit_through_exit);
}

void write_report_line(int fd, const std::string& line) {
  const std::string text = one_line(line) + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void write_report(int fd, const Evaluation& e) {
  write_report_line(fd, "OUTCOME " + std::to_string(static_cast<int>(e.outcome)) + " " + e.detail);
}

ChildCapture run_forked(const std::function<void(int)>& body, int timeout_seconds) {
  ChildCapture c;
  int out_pipe[2], report_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return c;
  if (pipe2(report_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return c;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], report_pipe[0], report_pipe[1]}) close(fd);
    return c;
  }
  if (pid == 0) {
    close(out_pipe[0]);
    close(report_pipe[0]);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(out_pipe[1], STDERR_FILENO);
    close(out_pipe[1]);
    signal(SIGALRM, SIG_DFL);
    alarm(static_cast<unsigned>(timeout_seconds));
    install_child_exit_hook();
    body(report_pipe[1]);
    _exit(0);
  }
  close(out_pipe[1]);
  close(report_pipe[1]);
  c.started = true;
  collect(pid, out_pipe[0], report_pipe[0], timeout_seconds, c);
  return c;
}

ChildCapture run_spawned(const std::vector<std::string>& argv, int timeout_seconds) {
  ChildCapture c;
  int out_pipe[2], report_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return c;
  if (pipe2(report_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return c;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, report_pipe[1], kReportFd);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(report_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(report_pipe[0]);
    return c;
  }
  c.started = true;
  collect(pid, out_pipe[0], report_pipe[0], timeout_seconds, c);
  return c;
}

Evaluation classify_child(const CallPlan& plan, const ChildCapture& child) {
  Evaluation e;
  const Judgement& j = plan.judgement;
  const FuzzSymbol& s = *plan.symbol;
  if (!child.started) {
    e.outcome = Outcome::crash;
    e.detail = "the child process could not be started";
    return e;
  }
  for (const char* signature : {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                "runtime error:", "ERROR: UndefinedBehaviorSanitizer",
                                "WARNING: AddressSanitizer", "AddressSanitizer:"}) {
    const std::string line = line_with(child.output, signature);
    if (!line.empty()) {
      e.outcome = Outcome::sanitizer_report;
      e.detail = line;
      return e;
    }
  }
  if (child.killed_for_time ||
      (WIFSIGNALED(child.wait_status) && WTERMSIG(child.wait_status) == SIGALRM)) {
    e.outcome = Outcome::timeout;
    e.detail = "the call did not finish in time";
    return e;
  }
  if (WIFSIGNALED(child.wait_status)) {
    const int sig = WTERMSIG(child.wait_status);
    e.outcome = Outcome::crash;
    e.detail = std::string("signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
    const std::string tail = last_line(child.output);
    if (!tail.empty()) e.detail += "; last output: " + tail;
    return e;
  }
  const int code = WEXITSTATUS(child.wait_status);
  if (code == 0) {
    if (child.report.compare(0, 8, "OUTCOME ") == 0) {
      const char* p = child.report.c_str() + 8;
      char* rest = nullptr;
      const long n = std::strtol(p, &rest, 10);
      if (n >= 0 && n < static_cast<long>(Outcome::count_)) {
        e.outcome = static_cast<Outcome>(n);
        std::string detail = rest != nullptr ? rest : "";
        if (!detail.empty() && detail[0] == ' ') detail.erase(0, 1);
        while (!detail.empty() && detail.back() == '\n') detail.pop_back();
        e.detail = detail;
        return e;
      }
    }
    if (child.report.compare(0, 9, "DIVERGED ") == 0) {
      e.outcome = Outcome::replay_diverged;
      e.detail = one_line(child.report.substr(9));
      return e;
    }
    e.outcome = Outcome::crash;
    e.detail = "the child exited 0 without a report";
    return e;
  }
  if (code == kExitThroughExit) {
    static const char kPanic[] = "INTERNAL PANIC: ";
    const std::string line = line_with(child.output, kPanic);
    if (line.empty()) {
      e.outcome = Outcome::crash;
      e.detail = "exit() without a panic message; last output: " + last_line(child.output);
      return e;
    }
    const std::string message = line.substr(line.find(kPanic) + sizeof kPanic - 1);
    const bool panic_allowed =
        s.io() ? j.may_panic : (j.expect == Expect::failure || j.expect == Expect::either);
    if (!panic_allowed) {
      e.outcome = Outcome::unexpected_panic;
      e.detail = message;
      return e;
    }
    if (j.exact_panic) {
      if (message != j.exact_panic_message) {
        e.outcome = Outcome::malformed_error;
        e.detail = "panic message \"" + message + "\" is not the message given, \"" +
                   j.exact_panic_message + "\"";
        return e;
      }
    } else {
      std::string why;
      if (!message_names_op(s, message, &why)) {
        e.outcome = Outcome::malformed_error;
        e.detail = why + ": \"" + message + "\"";
        return e;
      }
    }
    e.outcome = Outcome::clean_panic;
    e.detail = message;
    return e;
  }
  e.outcome = Outcome::crash;
  e.detail = "exit status " + std::to_string(code) + "; last output: " + last_line(child.output);
  return e;
}

}  // namespace tlrt_fuzz
