// The peer fuzz target: one input is the script of a replica-set peer, and a fresh member (a
// secondary of a two-member set, fuzz_member.h) is run against a fake peer that answers from it.
// The member's own threads send what a real member sends (heartbeats; vote requests when its
// election timer fires; oplog fetches from a peer that says it is primary and ahead; the rollback
// conversation when a fetch says its history diverged), and each reply it gets is the script's
// next reply for that command. So the replies a member trusts least -- another process's, on the
// replication threads, whose exceptions nothing above catches -- are what is fuzzed: a crash, an
// assertion, a sanitizer report or a hang of the member is a finding.
//
// The script is a byte stream of OP_MSG messages, each body {reply: <command name>, body:
// <reply document>}, so the wire target's mutators (bson_mutation.h, byte edits) apply as they
// are. Frames are read up to the first malformed one; a body of another shape is skipped.
//
// What this omits: timing is the member's own (heartbeats every kPeerHeartbeatMs, an election
// timeout of kPeerElectionTimeoutMs), so which request meets which reply, and how far a run gets,
// can differ between two runs of one input (libFuzzer's coverage is noisy here; a crash found
// is replayed a few times). One peer and no client: nothing is written on the member but what it
// fetches. No --dbpath. A run ends at the first request after every scripted reply was sent
// (the member has acted on the last one) or when kPeerBudgetMs passed.
// Thread rules: as wire_target.h (calls may not overlap).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/optime.h"
#include "bson/value.h"
#include "repl/member_state.h"

namespace mongosim::fuzz {

inline constexpr int64_t kPeerBudgetMs = 400;
inline constexpr int32_t kPeerHeartbeatMs = 10;
inline constexpr int32_t kPeerElectionTimeoutMs = 60;
// Scripted replies kept from one input; the rest are dropped.
inline constexpr size_t kMaxPeerReplies = 256;

// What a run showed, for the target's own tests.
struct PeerRun {
  std::vector<std::string> received;  // the commands the peer was sent, in order
  repl::MemberState final_state = repl::MemberState::kStartup;
  OpTime last_applied;  // the member's newest oplog entry when the run ended
};

struct PeerRunOptions {
  int64_t budget_ms = kPeerBudgetMs;
  // Ends the run once it holds of what the run shows (looked at whenever the peer receives a
  // request); none: once the script is spent and one more request came (the member has acted on
  // the last reply), or at the budget.
  std::function<bool(const PeerRun&)> until;
};

// Runs the member against a peer scripted by `data`.
void run_peer_input(const uint8_t* data, size_t size);
PeerRun serve_peer_input(const uint8_t* data, size_t size, const PeerRunOptions& options);

// One message of a script: the peer's reply `body` to the next `command` it is sent.
std::string peer_reply(const std::string& command, const bson::Document& body);

}  // namespace mongosim::fuzz
