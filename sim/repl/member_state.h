// Replica-set member states with mongod's numbers and names (docs/mongodb-behaviour.md, Member
// states and configuration). The numbers are wire-visible (replSetGetStatus myState/state,
// heartbeat replies), so they never change.
#pragma once

#include <string_view>

namespace mongosim::repl {

enum class MemberState : int {
  kStartup = 0,
  kPrimary = 1,
  kSecondary = 2,
  kRecovering = 3,
  kStartup2 = 5,
  kUnknown = 6,
  kArbiter = 7,
  kDown = 8,
  kRollback = 9,
  kRemoved = 10,
};

// "PRIMARY", "SECONDARY", ... as replSetGetStatus stateStr shows them.
std::string_view member_state_name(MemberState state);

}  // namespace mongosim::repl
