// The fuzzing run (see fuzz_session.h).
#include "tools/fuzz/fuzz_session.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tools/fuzz/isolated_call.h"
#include "tools/fuzz/lean_values.h"
#include "tools/fuzz/operand_builder.h"

extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace tlrt_fuzz {
namespace {

constexpr size_t kMaxPrintedFindings = 60;
constexpr uint64_t kMaxPooledResultBytes = 8ull << 20;

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  return h;
}

// ---- what this process is doing, for the exit hook and crash handlers -------------------------

FuzzSession* g_session = nullptr;
char g_in_flight[2048];
volatile sig_atomic_t g_in_flight_active = 0;
// Set in child processes: their end is classified by the parent, which prints the summary.
bool g_in_child = false;

void set_in_flight(const std::string& what) {
  const size_t n = std::min(what.size(), sizeof g_in_flight - 2);
  std::memcpy(g_in_flight, what.data(), n);
  g_in_flight[n] = '\n';
  g_in_flight[n + 1] = '\0';
  g_in_flight_active = 1;
}

void clear_in_flight() {
  g_in_flight_active = 0;
}

void write_stderr(const char* s) {
  const ssize_t unused = write(STDERR_FILENO, s, std::strlen(s));
  (void)unused;
}

// exit() while a call is in flight: the library panicked (or called exit) during a call this
// process expected to return.
void parent_exit_hook() {
  if (!g_in_flight_active || g_session == nullptr) return;
  g_in_flight_active = 0;
  g_session->report_fatal_in_process_end(Outcome::unexpected_panic);
  std::fflush(stdout);
  _exit(1);
}

// A sanitizer report or a crash during a call made in this process: name the call, and (best
// effort, the process is going down) print the summary so the run still ends with its line.
void report_death(Outcome outcome) {
  if (!g_in_flight_active) return;
  g_in_flight_active = 0;
  write_stderr("tlrt-fuzz: the process died during: ");
  write_stderr(g_in_flight);
  if (g_session != nullptr && !g_in_child) {
    g_session->report_fatal_in_process_end(outcome);
    std::fflush(stdout);
  }
}

void sanitizer_death_callback() {
  report_death(Outcome::sanitizer_report);
}

void crash_signal_handler(int sig) {
  report_death(Outcome::crash);
  signal(sig, SIG_DFL);
  raise(sig);
}

// ---- a buffer held until static destruction (--exit-holding-buffer) ----------------------------

// Constructed before main, so destroyed after every function-local static the library creates
// during the run: dropping a buffer here is what a static object of a program linking libtlrt
// does at exit.
struct BufferHeldUntilExit {
  lean_object* object = nullptr;
  ~BufferHeldUntilExit() {
    if (object != nullptr) lean_dec(object);
  }
} g_buffer_held_until_exit;

}  // namespace

FuzzSession::FuzzSession(const FuzzOptions& options) : options_(options) {
  g_session = this;
}

FuzzSession::~FuzzSession() {
  drop_pool();
  for (lean_object* o : fixtures_.non_buffers) lean_dec(o);
  for (lean_object* o : fixtures_.formats) lean_dec(o);
  if (fixtures_.foreign_external != nullptr) lean_dec(fixtures_.foreign_external);
  if (fixtures_.encoded != nullptr) lean_dec(fixtures_.encoded);
  fixtures_ = Fixtures{};
  if (g_session == this) g_session = nullptr;
}

bool FuzzSession::setup() {
  setenv("TLRT_DEVICE", options_.backend.c_str(), 1);
  abi_ = AbiHandles::resolve();
  if (abi_.of_float_array == nullptr || abi_.release == nullptr || abi_.size == nullptr ||
      abi_.dtype == nullptr || abi_.runtime_status == nullptr) {
    std::fprintf(stderr,
                 "tlrt-fuzz: the library does not export the constructor, release, size, dtype "
                 "and status symbols the fuzzer builds its pool with\n");
    return false;
  }
  if (abi_.runtime_status(0) != 1) {
    std::fprintf(stderr, "tlrt-fuzz: backend %s has no usable device (runtime status %u)\n",
                 options_.backend.c_str(), abi_.runtime_status(0));
    return false;
  }
  catalog_ = build_catalog();
  tallies_.assign(catalog_.size(), SymbolTally{});
  auto selected = [&](const FuzzSymbol& s) {
    if (options_.only.empty()) return true;
    for (const std::string& word : options_.only) {
      if (word == s.spec->group || std::strstr(s.spec->symbol, word.c_str()) != nullptr) {
        return true;
      }
    }
    return false;
  };
  for (const FuzzSymbol& s : catalog_) {
    if (s.skip == SkipReason::none && selected(s)) fuzzable_.push_back(&s);
  }
  if (fuzzable_.empty()) {
    std::fprintf(stderr, "tlrt-fuzz: %s\n",
                 options_.only.empty() ? "no symbol of the tables is exported"
                                       : "no exported symbol matches --only");
    return false;
  }

  // The buffer class, from an empty buffer.
  lean_object* empty = make_float_array({});
  lean_object* probe = abi_.of_float_array(empty, 0);
  lean_dec(empty);
  buffer_class_ = lean_get_external_class(probe);
  lean_dec(probe);

  fixtures_.non_buffers = {make_string("not a buffer"), make_float_array({1.0, 2.0}),
                           make_byte_array({1, 2, 3, 4}), make_format_object(8, 23)};
  fixtures_.non_buffer_names = {"String", "FloatArray", "ByteArray", "structure"};
  fixtures_.foreign_external = make_foreign_external();
  fixtures_.formats = {make_format_object(8, 23), make_format_object(5, 10),
                       make_format_object(4, 3)};
  if (abi_.of_encoded_io != nullptr) {
    // 4 binary16 words (ones), made before the counters' baseline and kept until the end.
    lean_object* bytes = make_byte_array({0x00, 0x3c, 0x00, 0x3c, 0x00, 0x3c, 0x00, 0x3c});
    lean_object* r = abi_.of_encoded_io(bytes, fixtures_.formats[1], 2);
    lean_dec(bytes);
    if (lean_io_result_is_ok(r)) {
      fixtures_.encoded = lean_io_result_get_value(r);
      lean_inc(fixtures_.encoded);
    } else {
      std::fprintf(stderr,
                   "tlrt-fuzz: an encoded buffer could not be made (%s); encoded operands "
                   "are not generated\n",
                   decode_io_result(r).message.c_str());
    }
    lean_dec(r);
  }

  // A memory cap keeps requests for billions of scalars fast failures instead of minutes of
  // filling memory; it is also what makes IO constructors report resourceExhausted.
  if (abi_.set_memory_fraction != nullptr && abi_.device_total_bytes != nullptr) {
    const uint64_t total = abi_.device_total_bytes(0);
    const double cap = static_cast<double>(options_.memory_cap_mib) * 1048576.0;
    const double fraction = total > 0 ? std::min(1.0, cap / static_cast<double>(total)) : 1.0;
    lean_object* r = abi_.set_memory_fraction(fraction);
    const IoResult io = decode_io_result(r);
    lean_dec(r);
    if (!io.ok) {
      std::fprintf(stderr, "tlrt-fuzz: setting the memory fraction %g failed: %s\n", fraction,
                   io.message.c_str());
      return false;
    }
  }
  for (uint32_t id = 0; id <= 8; ++id) baseline_settings_.push_back(abi_.setting(id));
  settle_first_use_state();
  limits_.pool_budget_bytes =
      std::min<uint64_t>(limits_.pool_budget_bytes, (options_.memory_cap_mib << 20) / 6);
  baseline_ = CounterSnapshot::read(abi_);
  return true;
}

// The CUDA backend keeps two things from the caching allocator from their first use until exit:
// the cuBLAS handle's workspace (made with the device's handle by the first matrix product that
// goes to cuBLAS) and a kernel-error record (taken by a generated-kernel run and kept for the
// next). They are made here, before the counters' baseline, so that the per-batch check sees only
// what a batch leaves behind: a product past the small-product kernel's size (1024 x 1 times
// 1 x 1025) and a run of a source with no inputs. Re-executed children skip it: they make one call
// and check no batch.
void FuzzSession::settle_first_use_state() {
  if (options_.backend != "cuda" || options_.replay) return;
  if (abi_.bmm_with_transpose != nullptr) {
    lean_object* left = make_float_array(std::vector<double>(1024, 1.0));
    lean_object* right = make_float_array(std::vector<double>(1025, 1.0));
    lean_object* a = abi_.of_float_array(left, 0);
    lean_object* b = abi_.of_float_array(right, 0);
    lean_object* c = abi_.bmm_with_transpose(a, b, 1, 1024, 1, 1025, 0, 0);
    for (lean_object* o : {left, right, a, b, c}) lean_dec(o);
  }
  if (abi_.kernel_run_buffer != nullptr) {
    lean_object* source = make_string(generated_kernel_source(0, "float"));
    lean_object* inputs = lean_mk_empty_array();
    lean_object* r = abi_.kernel_run_buffer(source, inputs, 1);
    const IoResult io = decode_io_result(r);
    if (!io.ok) {
      std::fprintf(stderr, "tlrt-fuzz: the first generated-kernel run failed: %s\n",
                   io.message.c_str());
    }
    for (lean_object* o : {source, inputs, r}) lean_dec(o);
  }
}

uint64_t FuzzSession::pool_live_bytes() const {
  uint64_t bytes = 0;
  for (const PoolBuffer& b : pool_) {
    if (b.state != BufferState::released) bytes += b.size * dtype_width(b.dtype);
  }
  return bytes;
}

uint64_t FuzzSession::room_bytes() const {
  if (pool_.size() >= limits_.max_pool_entries) return 0;
  const uint64_t live = pool_live_bytes();
  return live >= limits_.pool_budget_bytes ? 0 : limits_.pool_budget_bytes - live;
}

bool FuzzSession::pool_takes(uint64_t size, uint8_t dtype) const {
  // An empty buffer needs no bytes but still an entry.
  return pool_.size() < limits_.max_pool_entries && size * dtype_width(dtype) <= room_bytes();
}

int FuzzSession::make_buffer(uint64_t size, uint8_t dtype) {
  // Checked before the values are drawn, so a refused buffer costs no draws.
  if (!pool_takes(size, dtype)) return -1;
  return make_buffer_of(generator_->host_values(size), dtype);
}

int FuzzSession::make_buffer_of(const std::vector<double>& contents, uint8_t dtype) {
  const uint64_t size = contents.size();
  if (!pool_takes(size, dtype)) return -1;
  lean_object* values = make_float_array(contents);
  set_in_flight("pool setup: torchlean_cuda_buffer_of_float_array(FloatArray[" +
                std::to_string(size) + "], " + std::to_string(dtype) + ")");
  lean_object* b = abi_.of_float_array(values, dtype);
  clear_in_flight();
  lean_dec(values);
  PoolBuffer entry;
  entry.object = b;
  entry.size = size;
  entry.dtype = dtype;
  entry.id = next_buffer_id_++;
  pool_.push_back(entry);
  return static_cast<int>(pool_.size() - 1);
}

int FuzzSession::make_released_buffer(uint64_t size, uint8_t dtype) {
  const int i = make_buffer(std::min<uint64_t>(size, 4096), dtype);
  if (i < 0) return -1;
  set_in_flight("pool setup: torchlean_cuda_buffer_release");
  abi_.release(pool_[i].object);
  clear_in_flight();
  pool_[i].state = BufferState::released;
  return i;
}

void FuzzSession::drop_pool() {
  for (PoolBuffer& b : pool_) lean_dec(b.object);
  pool_.clear();
}

void FuzzSession::seed_pool(CallGenerator& generator, RandomStream& rng) {
  const uint64_t count = 6 + rng.below(5);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t size = generator.element_count();
    const uint8_t dtype = static_cast<uint8_t>(rng.below(2));
    if (pool_live_bytes() + size * 8 > limits_.pool_budget_bytes / 2) size = rng.below(64);
    const int made = make_buffer(size, dtype);
    // A twin of the same size and dtype, so same-shape ops find operands.
    if (made >= 0 && rng.percent(70)) make_buffer(size, dtype);
  }
  const uint64_t released = 1 + rng.below(2);
  for (uint64_t i = 0; i < released; ++i) {
    make_released_buffer(generator.element_count(), static_cast<uint8_t>(rng.below(2)));
  }
}

// Every batch starts from the settings the session started with, so batches are independent
// and a spawned child can replay one from the seed alone.
void FuzzSession::reset_settings() {
  if (abi_.set_setting == nullptr) return;
  auto set = [&](uint32_t id) {
    const int want = baseline_settings_[id];
    if (want < 0 || abi_.setting(id) == want) return;
    lean_object* r = abi_.set_setting(id, static_cast<uint32_t>(want));
    lean_dec(r);
  };
  set(2);  // deterministic first: enabling it switches setting 3 off
  for (uint32_t id = 0; id <= 8; ++id) {
    if (id != 2) set(id);
  }
}

ReturnValue FuzzSession::execute(const CallPlan& plan) {
  const FuzzSymbol& s = *plan.symbol;
  std::vector<ArgValue> args(plan.args.size());
  for (size_t k = 0; k < plan.args.size(); ++k) {
    args[k] = plan.args[k].value;
    if (s.spec->params[k].c_type == CType::owned_object && args[k].object != nullptr) {
      lean_inc(args[k].object);
    }
  }
  return s.spec->shim(s.address, args.data());
}

FuzzSession::Adopted FuzzSession::adopt_results(const CallPlan& plan, const ReturnValue& r) {
  const Judgement& j = plan.judgement;
  Adopted adopted;
  for (size_t k : j.releases) {
    if (k >= plan.args.size() || plan.args[k].pool_index < 0) continue;
    PoolBuffer& b = pool_[plan.args[k].pool_index];
    if (b.state == BufferState::live) adopted.released_bytes += b.size * dtype_width(b.dtype);
    if (b.state == BufferState::unknown) adopted.payload_known = false;
    b.state = BufferState::released;
  }
  if (j.state_unknown_after) {
    adopted.payload_known = false;
    for (const PlannedArg& a : plan.args) {
      if (a.pool_index >= 0 && pool_[a.pool_index].state == BufferState::live) {
        pool_[a.pool_index].state = BufferState::unknown;
      }
    }
  }
  if (r.kind != ReturnCType::object || r.object == nullptr) return adopted;
  lean_object* value = r.object;
  if (plan.symbol->io()) {
    const IoResult io = decode_io_result(r.object);
    if (!io.well_formed || !io.ok) return adopted;
    value = lean_io_result_get_value(r.object);
  }
  std::vector<lean_object*> found;
  collect_result_buffers(value, buffer_class_, found);
  for (lean_object* o : found) {
    const bool known =
        std::any_of(pool_.begin(), pool_.end(), [&](const PoolBuffer& b) { return b.object == o; });
    // A fresh result buffer is referenced once, by the result; one more would never be freed.
    const size_t holders = static_cast<size_t>(std::count(found.begin(), found.end(), o));
    if (!known && lean_is_st(o) && o->m_rc != static_cast<int>(holders)) {
      adopted.shared += std::string(adopted.shared.empty() ? "" : ", ") +
                        "a new result buffer has reference count " + std::to_string(o->m_rc);
    }
    if (known || pool_.size() >= limits_.max_pool_entries) continue;
    const uint64_t size = abi_.size(o);
    const uint8_t dtype = abi_.dtype(o);
    const uint64_t bytes = size * dtype_width(dtype);
    if (dtype > 1 || bytes > kMaxPooledResultBytes) continue;
    if (pool_live_bytes() + bytes > limits_.pool_budget_bytes) continue;
    lean_inc(o);
    PoolBuffer entry;
    entry.object = o;
    entry.size = size;
    entry.dtype = dtype;
    entry.id = next_buffer_id_++;
    pool_.push_back(entry);
    adopted.buffers += 1;
    adopted.bytes += bytes;
  }
  return adopted;
}

void FuzzSession::dispose(const CallPlan& plan, const ReturnValue& r) {
  if (r.kind == ReturnCType::object && r.object != nullptr) lean_dec(r.object);
  if (r.kind == ReturnCType::record && r.record != nullptr && plan.judgement.owned_record_result &&
      abi_.drop_unboxed != nullptr) {
    abi_.drop_unboxed(r.record);
  }
}

void FuzzSession::drop_owned(CallPlan& plan) {
  for (lean_object* o : plan.owned) lean_dec(o);
  plan.owned.clear();
  // Operands made for the call, and its results, leave the pool (no later call holds a pool
  // index), so a batch of such calls fills neither the pool's entries nor its budget.
  std::vector<int> drop = plan.transient_buffers;
  drop.insert(drop.end(), transient_results_.begin(), transient_results_.end());
  std::sort(drop.rbegin(), drop.rend());
  for (int i : drop) {
    lean_dec(pool_[static_cast<size_t>(i)].object);
    pool_.erase(pool_.begin() + i);
  }
  plan.transient_buffers.clear();
  transient_results_.clear();
}

Evaluation FuzzSession::evaluate_call(const CallPlan& plan) {
  const CounterSnapshot before = CounterSnapshot::read(abi_);
  set_in_flight(plan.description);
  const ReturnValue r = execute(plan);
  clear_in_flight();
  const CounterSnapshot after = CounterSnapshot::read(abi_);
  Evaluation e = evaluate_return(plan, r, before, after, abi_, buffer_class_);
  const size_t first_adopted = pool_.size();
  const Adopted adopted = adopt_results(plan, r);
  // The results of a call on operands made for it leave the pool with those operands.
  if (!plan.transient_buffers.empty()) {
    for (size_t i = first_adopted; i < pool_.size(); ++i) {
      transient_results_.push_back(static_cast<int>(i));
    }
  }
  dispose(plan, r);
  // Once its result is dropped, a call may only have changed the counters by what the pool
  // took from it and what it released.
  const CounterSnapshot end = CounterSnapshot::read(abi_);
  std::string leaked = adopted.shared;
  auto expect_delta = [&](const char* name, int64_t delta, int64_t expected) {
    if (delta != expected) {
      leaked += std::string(leaked.empty() ? "" : ", ") + name + " changed by " +
                std::to_string(delta) + " (expected " + std::to_string(expected) + ")";
    }
  };
  expect_delta("wrapper live", static_cast<int64_t>(end.wrapper_live - before.wrapper_live),
               static_cast<int64_t>(adopted.buffers));
  expect_delta("Lean objects", end.lean_objects - before.lean_objects,
               static_cast<int64_t>(adopted.buffers));
  if (adopted.payload_known) {
    expect_delta(
        "payload live bytes",
        static_cast<int64_t>(end.payload_live_bytes - before.payload_live_bytes),
        static_cast<int64_t>(adopted.bytes) - static_cast<int64_t>(adopted.released_bytes));
  }
  if (!leaked.empty() && outcome_acceptable(e.outcome)) {
    e.outcome = Outcome::counter_leak;
    e.detail = "after its result was dropped: " + leaked;
  }
  return e;
}

Evaluation FuzzSession::run_in_process(CallPlan& plan) {
  return evaluate_call(plan);
}

Evaluation FuzzSession::run_isolated(const CallPlan& plan, uint64_t batch, uint64_t index) {
  ChildCapture child;
  if (options_.isolation == Isolation::fork_child) {
    child = run_forked(
        [&](int report_fd) {
          g_in_child = true;
          const Evaluation e = evaluate_call(plan);
          write_report(report_fd, e);
        },
        options_.child_timeout_seconds);
  } else {
    std::vector<std::string> argv = options_.command_line;
    argv.push_back("--replay");
    argv.push_back(std::to_string(batch) + ":" + std::to_string(index) + ":" +
                   std::to_string(fnv1a(plan.description)));
    child = run_spawned(argv, options_.child_timeout_seconds);
  }
  return classify_child(plan, child);
}

void FuzzSession::replay_target(CallPlan& plan, uint64_t hash) {
  if (hash != fnv1a(plan.description)) {
    write_report_line(kReportFd, "DIVERGED the replayed call is " + plan.description);
    std::fflush(stdout);
    _exit(0);
  }
  install_child_exit_hook();
  signal(SIGALRM, SIG_DFL);
  alarm(static_cast<unsigned>(options_.child_timeout_seconds));
  const Evaluation e = evaluate_call(plan);
  write_report(kReportFd, e);
  std::fflush(stdout);
  _exit(0);
}

void FuzzSession::record(const CallPlan& plan, const Evaluation& e, bool isolated, uint64_t batch,
                         uint64_t index) {
  ++calls_made_;
  ++outcome_counts_[static_cast<int>(e.outcome)];
  (isolated ? isolated_calls_ : in_process_calls_) += 1;
  SymbolTally& t = tallies_[static_cast<size_t>(plan.symbol - catalog_.data())];
  ++t.calls;
  if (outcome_acceptable(e.outcome)) {
    ++passed_;
    if (e.outcome == Outcome::ok) ++t.ok;
    if (e.outcome == Outcome::io_error) ++t.io_error;
    if (e.outcome == Outcome::clean_panic) ++t.clean_panic;
  } else {
    ++t.failed;
    ++failed_;
  }
  const std::string where = "batch " + std::to_string(batch) + " call " + std::to_string(index) +
                            (isolated ? " [child]" : " [in-process]");
  if (!outcome_acceptable(e.outcome)) {
    if (printed_findings_++ < kMaxPrintedFindings) {
      std::printf("FAIL %s %s: %s\n    expected %s%s%s\n    got: %s\n", outcome_name(e.outcome),
                  where.c_str(), plan.description.c_str(),
                  plan.judgement.expect == Expect::success   ? "success"
                  : plan.judgement.expect == Expect::failure ? "failure"
                                                             : "success or failure",
                  plan.judgement.reason.empty() ? "" : " (",
                  plan.judgement.reason.empty() ? "" : (plan.judgement.reason + ")").c_str(),
                  e.detail.c_str());
    }
  } else if (options_.verbose) {
    std::printf("%s %s -> %s%s%s\n", where.c_str(), plan.description.c_str(),
                outcome_name(e.outcome), e.detail.empty() ? "" : ": ", e.detail.c_str());
  }
}

void FuzzSession::finding(const std::string& where, Outcome outcome, const std::string& detail) {
  ++failed_;
  ++outcome_counts_[static_cast<int>(outcome)];
  if (printed_findings_++ < kMaxPrintedFindings) {
    std::printf("FAIL %s %s: %s\n", outcome_name(outcome), where.c_str(), detail.c_str());
  }
}

void FuzzSession::check_counters(uint64_t batch) {
  const CounterSnapshot now = CounterSnapshot::read(abi_);
  const CounterSnapshot& base = baseline_;
  std::string problems;
  auto add = [&](const std::string& p) { problems += (problems.empty() ? "" : "; ") + p; };
  auto same = [&](const char* name, uint64_t was, uint64_t is) {
    if (was != is) add(std::string(name) + " " + std::to_string(was) + " -> " + std::to_string(is));
  };
  same("wrapper live", base.wrapper_live, now.wrapper_live);
  same("payload live bytes", base.payload_live_bytes, now.payload_live_bytes);
  same("payloads created minus retired", base.payload_created - base.payload_retired,
       now.payload_created - now.payload_retired);
  same("allocator allocated bytes", base.allocated_bytes, now.allocated_bytes);
  if (now.lean_objects != base.lean_objects) {
    add("Lean objects " + std::to_string(base.lean_objects) + " -> " +
        std::to_string(now.lean_objects));
  }
  if (now.wrapper_created - now.wrapper_finalized != now.wrapper_live) {
    add("wrapper created - finalized != live");
  }
  if (now.wrapper_peak < now.wrapper_live) add("wrapper peak below live");
  if (now.payload_peak_bytes < now.payload_live_bytes) add("payload peak below live");
  if (now.reserved_bytes < now.allocated_bytes) add("reserved below allocated");
  if (now.peak_allocated_bytes < now.allocated_bytes) add("peak allocated below allocated");
  if (now.peak_reserved_bytes < now.reserved_bytes) add("peak reserved below reserved");
  if (!problems.empty()) {
    finding("after batch " + std::to_string(batch), Outcome::counter_leak,
            "with every object of the batch dropped: " + problems);
    baseline_ = now;  // report each leak once
  }
}

void FuzzSession::run_batch(uint64_t batch, uint64_t calls) {
  RandomStream rng(options_.seed, batch);
  CallGenerator generator(rng, pool_, fixtures_, *this, limits_);
  generator_ = &generator;
  pool_.reserve(limits_.max_pool_entries + 8);
  next_buffer_id_ = 0;
  reset_settings();
  seed_pool(generator, rng);
  for (uint64_t i = 0; i < calls; ++i) {
    if (!options_.replay && options_.time_limit_seconds > 0 &&
        now_seconds() - start_seconds_ >= options_.time_limit_seconds) {
      stopped_by_time_ = true;
      break;
    }
    const FuzzSymbol& symbol = *fuzzable_[rng.below(fuzzable_.size())];
    CallPlan plan = generator.plan(symbol);
    judge(plan, RuleContext{pool_, abi_, pool_live_bytes(), limits_.pool_budget_bytes});
    if (options_.replay) {
      if (i == options_.replay_call) replay_target(plan, options_.replay_hash);
      if (!plan.judgement.isolate) {
        evaluate_call(plan);
      }
      drop_owned(plan);
      continue;
    }
    const bool isolated = plan.judgement.isolate;
    const Evaluation e = isolated ? run_isolated(plan, batch, i) : run_in_process(plan);
    record(plan, e, isolated, batch, i);
    drop_owned(plan);
  }
  generator_ = nullptr;
  drop_pool();
  ++batches_;
  if (!options_.replay) check_counters(batch);
}

void FuzzSession::list_symbols() const {
  for (const FuzzSymbol& s : catalog_) {
    std::printf("%-50s %-5s %-22s %-12s", s.spec->symbol, s.io() ? "io" : "pure", rule_name(s.rule),
                s.skip == SkipReason::none         ? "fuzzed"
                : s.skip == SkipReason::unexported ? "unexported"
                : s.skip == SkipReason::raw_record ? "raw-record"
                                                   : "unmodelled");
    for (size_t k = 0; k < s.roles.size(); ++k) {
      std::printf(" %s:%s", s.spec->params[k].name, role_name(s.roles[k]));
    }
    std::printf("\n");
  }
}

void FuzzSession::print_summary(double seconds) {
  std::vector<const FuzzSymbol*> unexported, raw, unmodelled;
  for (const FuzzSymbol& s : catalog_) {
    if (s.skip == SkipReason::unexported) unexported.push_back(&s);
    if (s.skip == SkipReason::raw_record) raw.push_back(&s);
    if (s.skip == SkipReason::unmodelled || s.skip == SkipReason::unsupported_type) {
      unmodelled.push_back(&s);
    }
  }
  std::printf("\ntlrt-fuzz: seed %" PRIu64 ", %" PRIu64 " calls in %" PRIu64
              " batches, backend %s, children by %s, %.1f s%s\n",
              options_.seed, calls_made_, batches_, options_.backend.c_str(),
              options_.isolation == Isolation::fork_child ? "fork" : "re-exec", seconds,
              stopped_by_time_ ? " (stopped by --time-limit)" : "");
  const size_t skipped = unexported.size() + raw.size() + unmodelled.size();
  std::printf("symbols: %zu table rows, %zu fuzzed, %zu skipped", catalog_.size(), fuzzable_.size(),
              skipped);
  if (fuzzable_.size() + skipped < catalog_.size()) {
    std::printf(", %zu not selected by --only", catalog_.size() - fuzzable_.size() - skipped);
  }
  std::printf("\n");
  auto list = [](const char* label, const std::vector<const FuzzSymbol*>& v, bool detail) {
    if (v.empty()) return;
    std::printf("  %s (%zu):", label, v.size());
    for (const FuzzSymbol* s : v) {
      std::printf(" %s%s%s%s", s->spec->symbol, detail ? " [" : "",
                  detail ? s->skip_detail.c_str() : "", detail ? "]" : "");
    }
    std::printf("\n");
  };
  list("skipped_unexported", unexported, false);
  list("skipped_raw_record", raw, true);
  list("skipped_unmodelled", unmodelled, true);
  std::printf("calls: %" PRIu64 " in this process, %" PRIu64 " in child processes\n",
              in_process_calls_, isolated_calls_);
  if (options_.verbose) {
    std::printf("%-50s %8s %8s %8s %8s %8s\n", "symbol", "calls", "ok", "io_error", "panic",
                "failed");
    for (size_t i = 0; i < catalog_.size(); ++i) {
      const SymbolTally& t = tallies_[i];
      if (t.calls == 0) continue;
      std::printf("%-50s %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n",
                  catalog_[i].spec->symbol, t.calls, t.ok, t.io_error, t.clean_panic, t.failed);
    }
  }
  std::printf("counts per class:\n");
  std::printf("  %-20s %" PRIu64 "\n", "ok", outcome_counts_[static_cast<int>(Outcome::ok)]);
  std::printf("  %-20s %" PRIu64 "\n", "io_error",
              outcome_counts_[static_cast<int>(Outcome::io_error)]);
  std::printf("  %-20s %" PRIu64 "\n", "clean_panic",
              outcome_counts_[static_cast<int>(Outcome::clean_panic)]);
  std::printf("  %-20s %zu (symbols)\n", "skipped_unexported", unexported.size());
  for (int o = static_cast<int>(Outcome::crash); o < static_cast<int>(Outcome::count_); ++o) {
    std::printf("  %-20s %" PRIu64 "\n", outcome_name(static_cast<Outcome>(o)), outcome_counts_[o]);
  }
  if (printed_findings_ > kMaxPrintedFindings) {
    std::printf("(%" PRIu64 " findings were not printed)\n",
                printed_findings_ - kMaxPrintedFindings);
  }
  if (options_.min_success_percent > 0) {
    const std::vector<std::string> low = below_success_floor();
    std::printf("success floor %.1f%%: %zu symbol(s) below it%s", options_.min_success_percent,
                low.size(), low.empty() ? "\n" : ":");
    for (const std::string& entry : low) std::printf(" %s", entry.c_str());
    if (!low.empty()) std::printf("\n");
  }
  std::printf("%" PRIu64 " passed, %" PRIu64 " failed\n", passed_, failed_);
  std::fflush(stdout);
}

std::vector<std::string> FuzzSession::below_success_floor() const {
  std::vector<std::string> low;
  for (const FuzzSymbol* s : fuzzable_) {
    const SymbolTally& t = tallies_[static_cast<size_t>(s - catalog_.data())];
    if (!OperandBuilder::models(*s) || t.calls < 20) continue;
    if (100.0 * static_cast<double>(t.ok) <
        options_.min_success_percent * static_cast<double>(t.calls)) {
      low.push_back(std::string(s->spec->symbol) + " " + std::to_string(t.ok) + "/" +
                    std::to_string(t.calls));
    }
  }
  return low;
}

void FuzzSession::report_fatal_in_process_end(Outcome outcome) {
  ++failed_;
  ++outcome_counts_[static_cast<int>(outcome)];
  std::printf(
      "FAIL %s [in-process]: the process ended during a call it expected to return (see "
      "stderr): %s",
      outcome_name(outcome), g_in_flight);
  print_summary(now_seconds() - start_seconds_);
}

int FuzzSession::run() {
  start_seconds_ = now_seconds();
  if (!options_.replay) {
    std::atexit(parent_exit_hook);
    if (&__sanitizer_set_death_callback != nullptr) {
      __sanitizer_set_death_callback(sanitizer_death_callback);
    } else {
      for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, crash_signal_handler);
    }
    signal(SIGPIPE, SIG_IGN);
  }
  g_in_child = options_.replay;
  if (!setup()) return 2;
  if (options_.list_symbols) {
    list_symbols();
    return 0;
  }
  if (options_.replay) {
    run_batch(options_.replay_batch, options_.replay_call + 1);
    write_report_line(kReportFd, "DIVERGED the replay ended before reaching the call");
    return 0;
  }
  std::printf("tlrt-fuzz: seed %" PRIu64 ", %" PRIu64 " calls, batches of %" PRIu64
              ", backend %s, %zu of %zu table symbols fuzzed\n",
              options_.seed, options_.calls, options_.batch_size, options_.backend.c_str(),
              fuzzable_.size(), catalog_.size());
  std::fflush(stdout);
  for (uint64_t batch = 0; calls_made_ < options_.calls && !stopped_by_time_; ++batch) {
    run_batch(batch, std::min(options_.batch_size, options_.calls - calls_made_));
  }
  if (options_.exit_holding_buffer) {
    lean_object* values = make_float_array({1.0, 2.0, 3.0});
    g_buffer_held_until_exit.object = abi_.of_float_array(values, 0);
    lean_dec(values);
    std::printf("holding one buffer until static destruction (--exit-holding-buffer)\n");
  }
  print_summary(now_seconds() - start_seconds_);
  const bool floor_missed = options_.min_success_percent > 0 && !below_success_floor().empty();
  return failed_ > 0 || floor_missed ? 1 : 0;
}

}  // namespace tlrt_fuzz
