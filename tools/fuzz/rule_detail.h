// What the fuzzer's rule files (tools/fuzz/call_rules.cpp, tools/fuzz/sized_rules.cpp) share:
// the verdict a rule sets, the sized ops' entry point, and small helpers on names and arguments.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "tools/fuzz/call_rules.h"

namespace tlrt_fuzz::rule_detail {

inline bool starts_with(const std::string& s, const std::string& head) {
  return s.compare(0, head.size(), head) == 0;
}

inline int param_named(const CallPlan& plan, const char* name) {
  for (size_t k = 0; k < plan.args.size(); ++k) {
    if (std::strcmp(plan.symbol->spec->params[k].name, name) == 0) return static_cast<int>(k);
  }
  return -1;
}

struct Verdict {
  Judgement& j;
  void success() { j.expect = Expect::success; }
  void either(const std::string& why = "") {
    j.expect = Expect::either;
    j.reason = why;
  }
  void failure(const std::string& why) {
    j.expect = Expect::failure;
    j.reason = why;
  }
  // A success that allocates `bytes` new payload bytes.
  void success_within(uint64_t bytes, const RuleContext& c) {
    if (bytes <= c.pool_budget_bytes && c.pool_live_bytes + bytes <= c.pool_budget_bytes) {
      success();
    } else {
      either("new payloads exceed the pool budget (out of memory is allowed)");
    }
  }
};

inline uint64_t saturating_mul(uint64_t a, uint64_t b) {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

// The sized ops' rules (tools/fuzz/sized_rules.cpp): SPEC-ops sections 7-14 and 16, and the legacy
// attention pair.
void judge_sized_op(const CallPlan& plan, const RuleContext& c, Verdict& v, Judgement& j);

}  // namespace tlrt_fuzz::rule_detail
