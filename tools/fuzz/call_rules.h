// What the spec says a generated call must do: succeed, fail (panic for pure symbols, IO error
// for IO symbols) or either, and whether it may end the process, which decides where it runs.
// Also the checks applied to whatever the call returned.
#pragma once

#include <string>
#include <vector>

#include "tools/fuzz/abi_handles.h"
#include "tools/fuzz/fuzz_model.h"

namespace tlrt_fuzz {

struct RuleContext {
  const std::vector<PoolBuffer>& pool;
  const AbiHandles& abi;
  uint64_t pool_live_bytes;    // payload bytes the pool holds now
  uint64_t pool_budget_bytes;  // a success is only predicted while new payloads fit here
};

// Sets plan.judgement.
void judge(CallPlan& plan, const RuleContext& context);

// True for the numerical operations, which must reject an encoded buffer operand (SPEC-ops 1:
// every row of symbols-ops.tsv but concat1d and slice1d, the byte copies that take encoded
// buffers too); the runtime table's symbols may take one (SPEC-runtime 9).
bool rejects_encoded(const FuzzSymbol& symbol);

// True when `message` is "tlrt: <op>: <detail>" with <op> the symbol's stem, a word-prefix of
// it (zeros for zeros_io, release for release_then), or the snake_case name of the Lean API
// that wraps the symbol (device_info for device_name, per lean_decl); otherwise `why` says what
// is wrong.
bool message_names_op(const FuzzSymbol& symbol, const std::string& message, std::string* why);

// The verdict on a call that returned normally (in this process or in a child).
struct Evaluation {
  Outcome outcome = Outcome::ok;
  std::string detail;
};

// `before`/`after` are the counters around the call; `buffer_class` identifies buffer objects
// in results. Result buffers are inspected through `abi` (size, dtype).
Evaluation evaluate_return(const CallPlan& plan, const ReturnValue& result,
                           const CounterSnapshot& before, const CounterSnapshot& after,
                           const AbiHandles& abi, const lean_external_class* buffer_class);

// Buffer objects reachable from a result through constructor fields (pairs, Option, IO ok).
void collect_result_buffers(lean_object* o, const lean_external_class* buffer_class,
                            std::vector<lean_object*>& out);

}  // namespace tlrt_fuzz
