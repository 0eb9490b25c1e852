#include "explore/case_outcome.h"

#include <algorithm>

namespace locklab {

std::string_view to_string(CaseVerdict verdict) {
  switch (verdict) {
    case CaseVerdict::kValid:
      return "valid";
    case CaseVerdict::kInvalid:
      return "invalid";
    case CaseVerdict::kMemberDied:
      return "member-died";
    case CaseVerdict::kUnknown:
      return "unknown";
    case CaseVerdict::kHarnessError:
      return "harness-error";
    case CaseVerdict::kNotRun:
      return "not-run";
  }
  return "?";
}

std::string finding_key(const CaseOutcome& o) {
  if (o.verdict == CaseVerdict::kMemberDied) return "member-died";
  if (o.verdict != CaseVerdict::kInvalid) return "";
  return o.violated.empty() ? "invalid" : o.violated.front();
}

bool matches(const CaseOutcome& o, const std::string& key) {
  if (key == "member-died") return o.verdict == CaseVerdict::kMemberDied;
  if (o.verdict != CaseVerdict::kInvalid) return false;
  if (o.violated.empty()) return key == "invalid";
  return std::find(o.violated.begin(), o.violated.end(), key) != o.violated.end();
}

}  // namespace locklab
