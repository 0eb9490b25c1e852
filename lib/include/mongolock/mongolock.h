// mongolock: a distributed lease lock on MongoDB (libmongoc), with fencing tokens.
//
//   mongolock::Provider provider("mongodb://h1,h2,h3/?replicaSet=rs0", "app");
//   mongolock::Lock lock = provider.create_lock("orders");
//   mongolock::Handle held = lock.acquire(std::chrono::seconds(10));
//   store.write(data, held.fencing_token());   // the store refuses tokens lower than it has seen
//   held.release();
//
// This header documents what goes over the wire, so the library can be audited against a real
// MongoDB 5.0+ replica set. Every write carries writeConcern {w: "majority" | 1, wtimeout: W}
// (Options::write_concern, Options::write_timeout_ms). NOW is the server's $$NOW; EXP is
// Options::expiry_ms as Int64; ID is the hold's random 128-bit id as 32 hex chars.
//
// ## Plain lock document (collection Options::collection, default "mongolock_locks")
//   { _id: <name>, token: Int64, holder: ID | null, owner: {host, pid, description} | null,
//     acquiredAt: Date, expiresAt: Date }
// The document is never deleted by the library. A lock is free when holder is null or
// expiresAt <= NOW; the client clock never takes part in that decision.
//
//   FREE = {$or: [{$eq: [{$ifNull: ["$holder", null]}, null]},
//                 {$lte: [{$ifNull: ["$expiresAt", Date(0)]}, "$$NOW"]}]}
//   NEXT = {$max: [{$add: [{$ifNull: ["$token", 0]}, 1]},
//                  {$multiply: [{$toLong: "$$NOW"}, 1048576]}]}
//
// acquire (one round trip):
//   {findAndModify: C, query: {_id: N}, upsert: true, new: true, writeConcern: WC,
//    update: [{$set: {token: {$cond: [FREE, NEXT, "$token"]},
//                     holder: {$cond: [FREE, ID, "$holder"]},
//                     owner: {$cond: [FREE, {$literal: OWNER}, "$owner"]},
//                     acquiredAt: {$cond: [FREE, "$$NOW", "$acquiredAt"]},
//                     expiresAt: {$cond: [FREE, {$add: ["$$NOW", EXP]}, "$expiresAt"]}}}]}
//   Held iff the returned document's holder == ID; the token is its `token`. The query is a
//   pure equality on _id, so two concurrent upserts of a missing document are resolved by the
//   server's duplicate-key retry, and no $expr is needed in an upsert query (error 224).
// extend (one round trip; never revives an expired lease):
//   {update: C, updates: [{q: {_id: N, holder: ID, $expr: {$gt: ["$expiresAt", "$$NOW"]}},
//                          u: [{$set: {expiresAt: {$add: ["$$NOW", EXP]}}}]}], writeConcern: WC}
//   Extended iff n == 1.
// release (one round trip; owner-checked, keeps the document and its token):
//   {update: C, updates: [{q: {_id: N, holder: ID},
//                          u: [{$set: {holder: null, owner: null, expiresAt: "$$NOW"}}]}], ...}
// force_release: {findAndModify: C, query: {_id: N}, new: false,
//                 update: [{$set: {holder: null, owner: null, expiresAt: "$$NOW"}}], ...}
// inspect: {aggregate: C, pipeline: [{$match: {_id: N}}, {$set: {_now: "$$NOW"}}], cursor: {},
//           readConcern: {level: RC}}
// index (once per cluster+database+collection per process, in the background):
//   {createIndexes: C, indexes: [{key: {expiresAt: 1}, name: "mongolock_ttl",
//                                 expireAfterSeconds: Options::reap_after_s}]}
//   Its failure (e.g. no privilege, conflicting options) is logged and ignored.
//
// ## Reader/writer lock document (collection Options::rw_collection, "mongolock_rwlocks")
//   { _id, token, holder, owner, acquiredAt, expiresAt   -- the exclusive hold, as above
//     shared: [{id: ID, owner, acquiredAt, expiresAt, token}],
//     reapAt: Date }  -- max expiry over every hold ever granted; the TTL index is on reapAt
// acquire_shared / acquire_exclusive: one findAndModify upsert on {_id: N} with the pipeline
//   {$set: {_live: {$filter: {input: {$ifNull: ["$shared", []]}, as: "s",
//                             cond: {$gt: ["$$s.expiresAt", "$$NOW"]}}}, _xfree: FREE}}
//   {$set: {_grant: G, _next: NEXT}}
//     shared:    G = {$and: ["$_xfree", {$lt: [{$size: "$_live"}, MAX]}]}
//     exclusive: G = {$and: ["$_xfree", {$eq: [{$size: "$_live"}, 0]}]}
//   {$set: {token: {$cond: ["$_grant", "$_next", "$token"]},
//           reapAt: {$cond: ["$_grant", {$max: [{$ifNull: ["$reapAt", Date(0)]}, NOW+EXP]},
//                            "$reapAt"]},
//     shared:    shared: {$cond: ["$_grant", {$concatArrays: ["$_live",
//                   [{id: ID, owner: OWNER, acquiredAt: NOW, expiresAt: NOW+EXP,
//                     token: "$_next"}]]}, "$shared"]}
//     exclusive: holder/owner/acquiredAt/expiresAt as for a plain lock, with "$_grant" for FREE,
//                and shared: {$cond: ["$_grant", [], "$shared"]}}}
//   {$unset: ["_live", "_xfree", "_grant", "_next"]}
//   Held iff the returned document has holder == ID (exclusive) or a shared entry with id == ID.
// extend_shared: update q {_id: N, $expr: <a shared entry has id ID and expiresAt > NOW>},
//   u: [{$set: {shared: {$map: ... expiresAt of entry ID := NOW+EXP}, reapAt: max(reapAt, ..)}}]
// release_shared: update q {_id: N, "shared.id": ID},
//   u: [{$set: {shared: {$filter: {input: "$shared", cond: {$ne: ["$$this.id", ID]}}}}}]
// exclusive extend/release as for a plain lock (extend also raises reapAt).
//
// ## Fencing
// Tokens are strictly increasing per lock name across release, expiry, force-release, TTL reaping
// and (with majority write concern) failover:
//  * The document is never deleted by the library, and every grant sets token to at least the
//    stored token + 1 in the same atomic findAndModify that grants the hold.
//  * If the document disappears (the TTL index reaps it reap_after_s after its last expiry, or an
//    operator deletes it), the next grant starts from the server time floor NOW_ms * 2^20. Every
//    token ever minted at server time t is below (t+1) * 2^20 (that needs fewer than 2^20 grants
//    of one name within one millisecond, which one round trip per grant rules out), and a reaped
//    document's last grant was at least expiry_ms before the reap. So the floor exceeds every
//    earlier token ASSUMING the servers' wall clocks (across failovers) never step back by more
//    than expiry_ms + reap_after_s. Raise reap_after_s, or set create_index = false, to widen
//    that margin.
//  * A grant acknowledged with w:"majority" survives failover, so its token is never re-issued.
//    With w:1 a rolled-back grant's token can be issued again to another holder.
// Tokens are not consecutive (they jump to the time floor). Valid tokens are > 0.
// A lease lock cannot stop a holder that is paused or partitioned past its lease from acting;
// the fenced resource must compare tokens.
//
// ## Lease timing
// The client starts its lease clock BEFORE sending each acquire or extend request, so the server
// lease (starting when the server runs the request) always ends after the client's view of it.
// The lost notification fires at send_time + expiry_ms - lost_safety_margin_ms from a watchdog
// thread per Handle, independently of any request blocked in a partition. A refused extension
// fires it at once. The margin covers client/server clock-rate differences.
//
// ## Unknown outcomes
// A request that may have reached the server but whose reply was lost (network error after send,
// socket timeout, write-concern timeout) is an unknown outcome. For an acquire the library then
// sends an owner-checked release of its own ID (up to 3 tries, within the remaining lease); only
// when that succeeds does it report "not acquired" or keep waiting. Otherwise it throws
// UnknownOutcome, whose lease_expires_by says when a possible hold lapses at the latest.
// A failed extension never moves the client's lease deadline.
#pragma once

#include "mongolock/errors.h"
#include "mongolock/handle.h"
#include "mongolock/lock.h"
#include "mongolock/lock_info.h"
#include "mongolock/options.h"
#include "mongolock/provider.h"
#include "mongolock/rw_lock.h"
