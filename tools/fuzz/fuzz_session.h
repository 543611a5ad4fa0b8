// One fuzzing run: setup (symbols, fixtures, memory cap, baselines), batches of generated calls
// with the pool dropped and the counters checked after each, the replay entry point of spawned
// children, and the summary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/fuzz/abi_handles.h"
#include "tools/fuzz/call_generator.h"
#include "tools/fuzz/call_rules.h"
#include "tools/fuzz/fuzz_model.h"

namespace tlrt_fuzz {

enum class Isolation { fork_child, spawn_child };

struct FuzzOptions {
  uint64_t seed = 1;
  uint64_t calls = 1000;
  double time_limit_seconds = 0;  // 0: none
  std::string backend = "cpu";
  bool verbose = false;
  bool list_symbols = false;
  Isolation isolation = Isolation::fork_child;
  bool isolation_given = false;
  uint64_t batch_size = 100;
  uint64_t memory_cap_mib = 512;
  int child_timeout_seconds = 60;
  bool exit_holding_buffer = false;
  std::vector<std::string> only;   // table groups or name words; empty: every symbol
  double min_success_percent = 0;  // 0: no floor
  // Spawned children: replay batch `replay_batch` up to call `replay_call`, then make that call.
  bool replay = false;
  uint64_t replay_batch = 0;
  uint64_t replay_call = 0;
  uint64_t replay_hash = 0;
  std::vector<std::string> command_line;  // the parent's arguments, for spawning children
};

class FuzzSession : public BufferSource {
 public:
  explicit FuzzSession(const FuzzOptions& options);
  ~FuzzSession() override;

  // Returns the process exit status: 0 clean, 1 findings, 2 the run could not start.
  int run();

  int make_buffer(uint64_t size, uint8_t dtype) override;
  int make_buffer_of(const std::vector<double>& values, uint8_t dtype) override;
  uint64_t room_bytes() const override;
  // Whether the pool takes a new buffer of `size` scalars of `dtype` (an entry and its bytes).
  bool pool_takes(uint64_t size, uint8_t dtype) const;
  int make_released_buffer(uint64_t size, uint8_t dtype) override;

  // Called when a call this process was making ended the process (exit hook, sanitizer death
  // callback, crash signal).
  void report_fatal_in_process_end(Outcome outcome);

 private:
  bool setup();
  void settle_first_use_state();
  void run_batch(uint64_t batch, uint64_t calls);
  Evaluation run_in_process(CallPlan& plan);
  Evaluation run_isolated(const CallPlan& plan, uint64_t batch, uint64_t index);
  void replay_target(CallPlan& plan, uint64_t hash);
  ReturnValue execute(const CallPlan& plan);
  // Makes the call in this process and judges what it returned (also in a forked child).
  Evaluation evaluate_call(const CallPlan& plan);
  // What a call left behind that the pool now owns, for the per-call counter check.
  struct Adopted {
    uint64_t buffers = 0;
    uint64_t bytes = 0;           // payload bytes of the adopted buffers
    uint64_t released_bytes = 0;  // payload bytes of arguments the call released
    bool payload_known = true;    // false when an argument's state was unknown
    std::string shared;           // fresh result buffers referenced more than once
  };
  Adopted adopt_results(const CallPlan& plan, const ReturnValue& r);
  void dispose(const CallPlan& plan, const ReturnValue& r);
  void drop_owned(CallPlan& plan);
  void drop_pool();
  void seed_pool(CallGenerator& generator, RandomStream& rng);
  void reset_settings();
  void check_counters(uint64_t batch);
  uint64_t pool_live_bytes() const;
  void record(const CallPlan& plan, const Evaluation& e, bool isolated, uint64_t batch,
              uint64_t index);
  void finding(const std::string& where, Outcome outcome, const std::string& detail);
  void print_summary(double seconds);
  // The symbols with consistent operands that succeed in fewer than --min-success percent of
  // at least 20 calls, as "symbol ok/calls".
  std::vector<std::string> below_success_floor() const;
  void list_symbols() const;

  FuzzOptions options_;
  AbiHandles abi_;
  std::vector<FuzzSymbol> catalog_;
  std::vector<const FuzzSymbol*> fuzzable_;
  Fixtures fixtures_;
  GenerationLimits limits_;
  const lean_external_class* buffer_class_ = nullptr;
  std::vector<PoolBuffer> pool_;
  int next_buffer_id_ = 0;
  CallGenerator* generator_ = nullptr;  // the current batch's, for BufferSource
  std::vector<int> transient_results_;  // pool entries of the current call's results to drop
  std::vector<int> baseline_settings_;
  CounterSnapshot baseline_;
  bool counters_checked_ = true;

  // Tallies.
  uint64_t outcome_counts_[static_cast<int>(Outcome::count_)] = {};
  uint64_t passed_ = 0, failed_ = 0, in_process_calls_ = 0, isolated_calls_ = 0;
  uint64_t batches_ = 0, calls_made_ = 0, printed_findings_ = 0;
  bool stopped_by_time_ = false;
  double start_seconds_ = 0;
  struct SymbolTally {
    uint64_t calls = 0, ok = 0, io_error = 0, clean_panic = 0, failed = 0;
  };
  std::vector<SymbolTally> tallies_;  // indexed like catalog_
};

}  // namespace tlrt_fuzz
