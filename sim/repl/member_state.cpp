#include "repl/member_state.h"

namespace mongosim::repl {

std::string_view member_state_name(MemberState state) {
  switch (state) {
    case MemberState::kStartup:
      return "STARTUP";
    case MemberState::kPrimary:
      return "PRIMARY";
    case MemberState::kSecondary:
      return "SECONDARY";
    case MemberState::kRecovering:
      return "RECOVERING";
    case MemberState::kStartup2:
      return "STARTUP2";
    case MemberState::kUnknown:
      return "UNKNOWN";
    case MemberState::kArbiter:
      return "ARBITER";
    case MemberState::kDown:
      return "DOWN";
    case MemberState::kRollback:
      return "ROLLBACK";
    case MemberState::kRemoved:
      return "REMOVED";
  }
  return "UNKNOWN";
}

}  // namespace mongosim::repl
