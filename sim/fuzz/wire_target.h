// The wire fuzz target: one input is the byte stream a client sends on one connection. It runs
// through the real path a socket's bytes take in mongosim — framing, OP_MSG / OP_QUERY parsing,
// BSON decoding, command dispatch and the data commands — on three fresh members in turn: a
// standalone; the primary of a one-member replica set; and a secondary of a two-member set whose
// other member never answers. Set members are wired as the mongosim program wires one
// (fuzz_member.h: store, replication-state lock, replication coordinator with its threads) and
// initiated by a replSetInitiate sent ahead of the input. The primary is where sessions, txnNumber
// and stmtIds, read concern (afterClusterTime, majority, snapshot), write concern and change
// streams run (a standalone refuses most of them first); the secondary is where the
// member-to-member commands (heartbeats, votes, positions, oplog and rollback fetches) run past
// their topology check (a one-member set has none). A crash, an assertion, a sanitizer report or a
// hang anywhere on that path is a finding.
//
// What this omits: a peer that answers (nothing is fetched from one, no election is won over
// one, no rollback runs: peer_target.h fuzzes those replies), concurrent connections (one input is
// one connection), --dbpath (no journal, no restart), and any wait longer than kServeBudgetMs: when
// serving an input takes longer (a getMore awaiting events, a read waiting for an afterClusterTime
// that never comes), the member is shut down, which must end every wait, and the rest of the input
// is not served.
//
// Used by the libFuzzer entry point (libfuzzer_entry.cpp, clang builds with -DLOCKLAB_FUZZ=ON) and
// by the standalone corpus/mutation driver (fuzz_driver.cpp) that every build runs as a ctest.
// Thread rules: each call builds and tears down its own members; calls may not overlap (the
// process-wide log and SIGPIPE settings are set once).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mongosim::fuzz {

// Inputs longer than this are ignored: a stream this size already holds many messages, and a
// bound keeps every iteration fast.
inline constexpr size_t kMaxInputBytes = 256 * 1024;

// How long one member serves one input before it is shut down (see above). Well-formed sessions
// of the seed corpus take a few milliseconds; a wait is what runs longer.
inline constexpr int64_t kServeBudgetMs = 500;

// The most reply bytes serve_wire_input keeps; the rest are read and dropped.
inline constexpr size_t kMaxReplyBytes = 16 * 1024 * 1024;

enum class Topology { kStandalone, kOneMemberSet, kSecondaryOfTwo };
inline constexpr Topology kTopologies[] = {Topology::kStandalone, Topology::kOneMemberSet,
                                           Topology::kSecondaryOfTwo};

// The members' cursor ids follow this seed (data::StoreOptions::cursor_id_seed), so an input can
// name a cursor it opened: a getMore or killCursors reaches a live cursor, a change stream's
// getMore its wait.
inline constexpr uint64_t kCursorIdSeed = 20261202;

// The id of the n-th cursor (n >= 1) a fresh member opens, for the seed corpus.
int64_t cursor_id(int n);

// Serves `data` as one client connection on a fresh member of each topology in turn.
void run_wire_input(const uint8_t* data, size_t size);

// Serves `data` on one fresh member and returns the bytes it replied, in order (a set member's
// replies begin with the reply to the fixture's replSetInitiate). For the target's own tests.
std::string serve_wire_input(const uint8_t* data, size_t size, Topology topology);
// The same, keeping the replies in `replies` (null: read and dropped).
void serve_wire_input(const uint8_t* data, size_t size, Topology topology, std::string* replies);

}  // namespace mongosim::fuzz
