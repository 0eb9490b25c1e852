// The exact command documents mongolock sends (see mongolock.h for the same text in prose).
//
// Pure builders: no I/O, so tests can print and check them. Write concern is not part of these
// documents; Context adds it as a command option.
// Thread rules: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bson_ptr.h"
#include "mongolock/options.h"

namespace mongolock::detail {

// Per-name counter floor multiplier: a token granted at server time t ms is >= t * 2^20.
inline constexpr int64_t kTokenTimeScale = int64_t{1} << 20;
// TTL indexes, both on reapAt: kTtlIndexName in the rw collection, kReapIndexName in the plain
// one (whose older "mongolock_ttl" index was on expiresAt and reaped released documents early).
inline constexpr const char* kTtlIndexName = "mongolock_ttl";
inline constexpr const char* kReapIndexName = "mongolock_reap";
// Tombstones kept per lock document at once: {id, until} entries, each written by the
// resolution of one acquire attempt and kept until `until` (its resolution + expiry_ms +
// reap_after_s, on the server clock). An acquire whose id is listed is never granted. A
// resolution that would need one more is refused, never an entry dropped early (mongolock.h
// "Unknown outcomes").
inline constexpr int64_t kTombstonesMax = 1000;
// The two statements of resolve_command both match when the tombstone was recorded: the reply's
// n is this many then (each statement counts its match or its upsert).
inline constexpr int64_t kResolveStatements = 2;

// A notify waiter's place in a plain lock's FIFO queue: the document's `queue` array of
// {w: waiter, p: provider, x: lease ms, o: owner, until: Date} in arrival order (mongolock.h
// [notify]). A release by a notify holder grants the lock to the first live entry directly, as
// hold id w with lease x and owner o, and names it in grantW / grantP.
struct QueueTicket {
  std::string_view waiter;    // the waiting call's id (32 hex), the same for all its attempts
  std::string_view provider;  // the Provider's id: its change stream wakes the queue's head
  int64_t keep_ms;            // an entry is live until NOW + keep_ms after its last attempt
  int64_t grace_ms;           // a lock free this long (since expiresAt) goes to any queued waiter
  int64_t expiry_ms = 0;      // the lease a hand-over grants this waiter (> 0)
  const Owner* owner = nullptr;  // the owner a hand-over records for it
};
// Live entries a queue keeps; a waiter that finds it full is not queued (it polls).
inline constexpr int64_t kQueueEntriesMax = 1000;

struct HoldRequest {
  std::string_view collection;
  std::string_view name;
  std::string_view id;  // the per-acquisition id
  const Owner* owner;   // only read by acquire builders
  int64_t expiry_ms;
  // How long a resolution's tombstone is kept: expiry_ms + reap_after_s (resolve only).
  int64_t tombstone_keep_ms = 0;
  // Plain acquire only: queue in FIFO order (notify); nullptr: ignore the queue.
  const QueueTicket* ticket = nullptr;
  // Plain release only: hand the lock over to the queue's first live entry (notify holders).
  bool hand_over = false;
  // Hand-over release only: a waiter of the local line (local_line.h) offered after the queue:
  // granted, as hold id `seat` with this request's lease and owner, when no queued entry is.
  std::string_view seat = {};
  // Extend only: > 0 also requires this token (the claim of a hand-over).
  int64_t token = 0;
};

// Plain locks. With request.ticket the acquire also takes its turn in the FIFO queue: it
// grants only when the queue has no live entry, its own entry is the first live one, or the
// lock has been free for ticket->grace_ms; a grant removes its entry and the head's (one that
// missed its turn), a refusal refreshes its entry or appends it (up to kQueueEntriesMax) --
// except when the attempt's id is tombstoned (a late attempt changes nothing) or the waiter
// holds the lock by a hand-over (it is not queued again behind itself).
Bson acquire_command(const HoldRequest& request);
// A waiting call that gives up, one update sent once: its queue entry is removed and a hold it
// was handed is handed on (or freed), in one pipeline. Idempotent.
Bson leave_queue_command(std::string_view collection, std::string_view name,
                         std::string_view waiter);
Bson extend_command(const HoldRequest& request);
// With request.hand_over the release grants the lock to the first live queue entry that is not
// tombstoned, not the releasing id's, and carries a lease (x); with none and a request.seat, to
// that seat (hold id seat, lease expiry_ms, owner; grantW seat and grantP null, so no Provider's
// stream passes the event on); otherwise it frees.
// The hand-over release is a findAndModify that returns (new: true) the document's holder, token,
// grantW and grantP, so the releaser learns whom it handed the lock to (hand_over_in_release);
// the plain release is an update.
Bson release_command(const HoldRequest& request);
// The short form of a hand-over release that offers request.seat, for a document whose queue is
// empty or missing (the line's usual case) and whose tombstones do not list the seat: one
// findAndModify of one $set stage that grants the seat as release_command would with no queued
// head, returning the same fields. A null value: the queue is not empty, the seat is tombstoned
// (a release that offered it ran late, after its outcome was resolved), or the hold is not
// request.id's; the caller then sends release_command.
Bson seat_release_command(const HoldRequest& request);
// Whether a release's acknowledged reply, of either form, says it removed the hold.
bool release_removed_hold(const bson_t& reply);
struct HandOverSeen {
  std::string waiter;  // the waiter id the lock was handed to (the hold's id)
  int64_t token = 0;
};
// The hand-over an acknowledged hand-over release's reply shows to a waiter of Provider
// `provider_id`, if it made one: the document it left is held by its grantW, for that Provider.
std::optional<HandOverSeen> hand_over_in_release(const bson_t& reply, std::string_view provider_id);

// Reader/writer locks. max_shared 0 = unlimited.
Bson rw_acquire_command(const HoldRequest& request, bool exclusive, int32_t max_shared);
Bson rw_extend_command(const HoldRequest& request, bool exclusive);
Bson rw_release_command(const HoldRequest& request, bool exclusive);

// Resolution of an acquire whose outcome is unknown, one update of two statements on {_id: N}:
// 0: an upsert that frees any hold with this id (the document exists afterwards);
// 1: matched only if the tombstone can be recorded (already kept, or fewer than
//    kTombstonesMax kept): frees the id again and records {id, until} in `tombstones`, so the
//    acquire, should it execute later, is not granted.
// Recorded iff the reply's n == kResolveStatements; otherwise the list is full and the
// acquire may still take effect later.
Bson resolve_command(const HoldRequest& request, bool rw);

// Operators.
Bson force_release_command(std::string_view collection, std::string_view name, bool rw);
Bson inspect_command(std::string_view collection, std::string_view name);
// {listIndexes: C}: the check for the index on expiresAt that earlier versions made.
Bson list_indexes_command(std::string_view collection);
Bson index_command(std::string_view collection, const char* field, const char* name,
                   int64_t reap_after_s);

}  // namespace mongolock::detail
