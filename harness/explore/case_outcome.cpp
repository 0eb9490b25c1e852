#include "explore/case_outcome.h"

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
  std::string key;
  for (const std::string& p : o.violated) key += (key.empty() ? "" : "+") + p;
  return key.empty() ? "invalid" : key;
}

}  // namespace locklab
