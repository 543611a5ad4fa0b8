// tlrt-fuzz: seeded random sequences of calls over every symbol of the ABI tables that libtlrt.so
// exports, with outcomes checked against the spec's failure conventions and the ownership
// counters checked after every batch. See tools/fuzz/README.md.
//
//   tlrt-fuzz --seed S --calls N [--time-limit SECONDS] [--backend cpu|cuda] [--verbose]
//             [--batch-size N] [--children fork|exec] [--memory-cap-mib N]
//             [--child-timeout SECONDS] [--list-symbols] [--exit-holding-buffer]
//             [--only LIST] [--min-success PERCENT]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/cli_values.h"
#include "tlrt/torchlean_abi.h"
#include "tools/fuzz/fuzz_session.h"

// Sanitizer builds: a huge request must reach the library's out-of-memory path (malloc returning
// null) instead of ending the process inside the allocator. Unused in other builds.
extern "C" __attribute__((visibility("default"), used)) const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}

namespace {

void usage(FILE* out) {
  std::fputs(
      "usage: tlrt-fuzz --seed S --calls N [--time-limit SECONDS] [--backend cpu|cuda] "
      "[--verbose]\n"
      "                 [--batch-size N] [--children fork|exec] [--memory-cap-mib N]\n"
      "                 [--child-timeout SECONDS] [--list-symbols] [--exit-holding-buffer]\n"
      "                 [--only LIST] [--min-success PERCENT]\n"
      "Calls every symbol of abi/spec/*.tsv that the library exports with generated arguments.\n"
      "Ends with one line \"N passed, M failed\"; exits 1 on any finding, 2 when it cannot run.\n"
      "  --children fork|exec  how calls that may end the process are isolated: fork (default\n"
      "                        for cpu) or a fresh execution of this binary that replays the\n"
      "                        batch (default and required for cuda)\n"
      "  --exit-holding-buffer keep one buffer alive until static destruction at exit\n"
      "  --only LIST           fuzz only the symbols of these table groups or whose names\n"
      "                        contain one of these words (comma-separated)\n"
      "  --min-success PERCENT exit 1 when a symbol with consistent operands (operand_builder)\n"
      "                        and at least 20 calls succeeds in fewer than PERCENT of them\n",
      out);
}

}  // namespace

int main(int argc, char** argv) {
  tlrt_fuzz::FuzzOptions options;
  // The command line a spawned child repeats (plus its own --replay).
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--replay") == 0) {
      ++i;
      continue;
    }
    options.command_line.push_back(argv[i]);
  }
  bool have_seed = false, have_calls = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    auto need = [&](bool ok) {
      if (!ok) {
        std::fprintf(stderr, "tlrt-fuzz: bad or missing value for %s\n", a.c_str());
        usage(stderr);
        std::exit(2);
      }
      ++i;
    };
    uint64_t n = 0;
    if (a == "--seed") {
      need(tlrt::parse_whole_number(value, &options.seed));
      have_seed = true;
    } else if (a == "--calls") {
      need(tlrt::parse_whole_number(value, &options.calls));
      have_calls = true;
    } else if (a == "--time-limit") {
      need(tlrt::parse_positive_number(value, &options.time_limit_seconds));
    } else if (a == "--backend") {
      need(value != nullptr && (std::strcmp(value, "cpu") == 0 || std::strcmp(value, "cuda") == 0));
      options.backend = value;
    } else if (a == "--verbose") {
      options.verbose = true;
    } else if (a == "--list-symbols") {
      options.list_symbols = true;
    } else if (a == "--exit-holding-buffer") {
      options.exit_holding_buffer = true;
    } else if (a == "--batch-size") {
      need(tlrt::parse_whole_number(value, &options.batch_size) && options.batch_size > 0);
    } else if (a == "--memory-cap-mib") {
      need(tlrt::parse_whole_number(value, &options.memory_cap_mib) &&
           options.memory_cap_mib >= 16);
    } else if (a == "--child-timeout") {
      need(tlrt::parse_whole_number(value, &n) && n > 0 && n < 100000);
      options.child_timeout_seconds = static_cast<int>(n);
    } else if (a == "--children") {
      need(value != nullptr &&
           (std::strcmp(value, "fork") == 0 || std::strcmp(value, "exec") == 0));
      options.isolation = std::strcmp(value, "fork") == 0 ? tlrt_fuzz::Isolation::fork_child
                                                          : tlrt_fuzz::Isolation::spawn_child;
      options.isolation_given = true;
    } else if (a == "--only") {
      std::vector<std::string> words;
      for (const char* p = value; p != nullptr && *p != '\0';) {
        const char* comma = std::strchr(p, ',');
        const size_t len = comma ? static_cast<size_t>(comma - p) : std::strlen(p);
        if (len > 0) words.emplace_back(p, len);
        p += len + (comma ? 1 : 0);
      }
      need(!words.empty());
      options.only = words;
    } else if (a == "--min-success") {
      double percent = 0;
      need(tlrt::parse_positive_number(value, &percent) && percent <= 100);
      options.min_success_percent = percent;
    } else if (a == "--replay") {
      // Internal: BATCH:CALL:HASH, set by a parent that runs calls in re-executed children.
      unsigned long long b = 0, c = 0, h = 0;
      need(value != nullptr && std::sscanf(value, "%llu:%llu:%llu", &b, &c, &h) == 3);
      options.replay = true;
      options.replay_batch = b;
      options.replay_call = c;
      options.replay_hash = h;
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "tlrt-fuzz: unknown argument %s\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  if (!options.list_symbols && !options.replay && (!have_seed || !have_calls)) {
    usage(stderr);
    return 2;
  }
  if (options.backend == "cuda") {
    if (options.isolation_given && options.isolation == tlrt_fuzz::Isolation::fork_child) {
      std::fprintf(stderr,
                   "tlrt-fuzz: --children fork cannot be used with the cuda backend (a "
                   "CUDA context does not survive fork)\n");
      return 2;
    }
    options.isolation = tlrt_fuzz::Isolation::spawn_child;
  }
  // Keeps libtlrt.so a direct dependency even with --as-needed: every other symbol is looked up
  // by name at run time.
  static uint32_t (*volatile const keep_library_linked)(uint32_t) = &torchlean_cuda_runtime_status;
  (void)keep_library_linked;
  tlrt_fuzz::FuzzSession session(options);
  return session.run();
}
