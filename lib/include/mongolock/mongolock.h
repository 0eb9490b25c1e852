// mongolock: a distributed lease lock on MongoDB (libmongoc), with fencing tokens.
//
//   mongolock::Provider provider("mongodb://h1,h2,h3/?replicaSet=rs0", "app");
//   mongolock::Lock lock = provider.create_lock("orders");
//   mongolock::Handle held = lock.acquire(std::chrono::seconds(10));
//   store.write(data, held.fencing_token());   // the store refuses tokens lower than it has seen
//   held.release();
//
// What goes over the wire (every command, the lock documents, the TTL index) is in
// docs/mongolock-wire.md, built by lib/src/commands.cpp. Every write carries writeConcern
// {w: "majority" | 1, wtimeout: W} (Options::write_concern, Options::write_timeout_ms); NOW below
// is the server's $$NOW and EXP is Options::expiry_ms. This header states what those commands
// guarantee, and under which assumptions.
//
// ## Fencing
// A resource protected by a lock keeps the highest token it has seen and refuses a lower one
// (an equal one is accepted). Per lock name:
//  * Exclusive holds (Lock, RwLock exclusive) get strictly increasing tokens across release,
//    expiry, force-release, TTL reaping and failover (under the assumptions below): every
//    grant sets token >= stored token + 1 in the same atomic findAndModify that grants it.
//  * Shared holds get the token of their EPOCH: a shared grant made while other shared holds
//    are live joins their token; one made with none live starts a new epoch with NEXT. So all
//    readers that can be live together carry the same token and never refuse each other; an
//    epoch's token is above every exclusive token granted before it (a stale writer is refused
//    once a reader was seen) and below every later exclusive token (a stale reader is refused
//    once a later writer was seen). Readers of one epoch are not fenced from each other.
//  * If the document disappears (TTL reaping, an operator), the next grant starts from the
//    server time floor NOW_ms * 2^20. Every token minted at server time t is below
//    (t+1) * 2^20 (fewer than 2^20 grants of one name per millisecond: one round trip each).
//    The TTL monitor removes a document only after reapAt + reap_after_s ([index]), and reapAt is
//    at least the last grant + expiry_ms (release and force-release never lower it). So the floor
//    exceeds every earlier token under assumption [clock-steps] below.
// Tokens are not consecutive (they jump to the time floor). Valid tokens are > 0.
// A lease lock cannot stop a holder that is paused or partitioned past its lease from acting;
// the fenced resource must compare tokens.
//
// ## Lease timing and the lost notification
// The client starts its lease clock BEFORE sending each acquire or extend request, and the
// server starts the lease when it runs the request, so the server's lease ends after the
// client's view of it under assumptions [clock-rate], [failover-clock] and [suspend].
// lease_deadline() = send time of the last successful acquire/extend + expiry_ms -
// lost_safety_margin_ms. lost() is true once the lost notification fired OR that deadline
// passed (whichever the caller sees first; it never goes back to false). The Provider's timer
// thread marks the hold lost at the deadline, independently of any extension blocked in a
// partition (extensions run on other threads, provider.h "Threads"), and an extension worker
// does so at once when the server refuses an extension; the notification (lost_token(), the
// on_lost callbacks, the kLost event) then runs on one of the Provider's notifier threads, so a
// slow callback of one hold does not hold back another's. Callbacks run on a notifier, on a
// caller of extend() (refused there), or on the caller of on_lost() if the hold is already lost.
// They may call release() and may drop the Handle.
//
// ## Liveness under a clock that is off
// A hold ends when the clock of the primary that judges it passes the end that the granting
// primary's clock wrote. Let d be how far the granter's clock read ahead of the judge's (with
// several clock faults, up to the sum of their moves): the hold lasts up to d longer than
// expiry_ms, and waiters wait for it. Every other time the server writes as NOW + a length
// stretches the same way: a release's time (so the notify GRACE rule below counts from d later),
// a notify entry's KEEP, a tombstone's keep. Such a
// grant can outlive its primary: a secondary may fetch it before the next election and carry it
// into the new primary's history, even after the old primary was cut off and its clock set
// right. The library does not cut such a hold short: a cut re-times the lease on the cutter's
// clock, and a later primary ahead of the cutter (the granter itself, re-elected) would then end
// it while the holder still holds. Liveness after clock faults of d is therefore bounded by
// expiry_ms + d, not expiry_ms (locklab's liveness.recovery bound counts d the same way).
//
// ## Unknown outcomes
// The acquire findAndModify is sent ONCE: not as a retryable write (no txnNumber) and never
// retried by the driver. (A driver retry answered "busy" while the first try is still held
// in a network queue or a blocked connection proves nothing about that try: a retry that
// wrote nothing leaves no session record, so the server runs the held try when it arrives
// and it can grant the lock to an id the caller has given up.) So every reply is the reply of
// the one request that can ever execute. It proves "not held" only when it names another
// holder, or when the request never left the client (server selection failed, no pooled
// client). Everything else is an unknown outcome: a network error or socket timeout after
// sending, a write-concern error (as writeConcernError or a top-level code 64), and every
// server error too, since one can follow an applied write (an interruption while waiting for
// the write concern). What the library does instead of a driver retry: it resolves the
// outcome (below) and, in acquire() or a try_acquire() with time left, makes a new attempt
// with a new id after its backoff. A failover during an attempt therefore costs a resolution
// and a backoff, not a second try of the same request.
// An unknown outcome is resolved with a TOMBSTONE: one update on the lock document that frees
// any hold with the attempt's id and records {id, until: NOW + expiry_ms + reap_after_s} in
// `tombstones`; every acquire pipeline grants only when its id is not listed. Once the
// resolution is acknowledged (with the write concern) and recorded, the attempt holds nothing
// and never will: if it ran earlier its hold was freed, if it runs later (held in a network
// queue, a blockConnection, a lagging thread) it is not granted. Only then does acquire report
// "not acquired" or keep waiting. A resolution that fails (up to 3 tries, none after a stop
// request) throws UnknownOutcome.
// Tombstones are dropped by AGE, never by count: an entry leaves the list only once its
// `until` has passed (the longest a late execution can matter, [tombstone] below), whatever
// the number of attempts of one call or of all callers. So each attempt of a waiting acquire
// may take a new id: however many there are, every earlier one stays tombstoned. The list
// holds at most kTombstonesMax = 1000 kept entries per lock (about 70 KB); a resolution that
// would need one more is refused, nothing is dropped early, and the acquire throws
// UnknownOutcome naming the limit (the attempt may then take effect: its lease lapses by
// itself). The limit allows 1000 resolutions on one lock within expiry_ms + reap_after_s
// (90 s by default), one every 90 ms.
// Why a tombstone and not a retry with the same lsid/txnNumber: libmongoc's generic command
// API chooses the session and txnNumber itself and exposes no way to resend a statement under
// the same ones, and a same-session retry protects only a try that has already written, and
// only while the server keeps the session's transaction record (a retry that runs first and
// writes nothing leaves the held try free to run, as above); the tombstone is a plain
// majority write the acquire pipeline checks in the same atomic step that would grant, on any
// server.
// A failed extension never moves the client's lease deadline.
//
// ## Waiting: backoff and [notify]
// A waiting acquire sleeps between attempts per Options::backoff. kRandom and kAdaptive sleep
// by formula. kNotify waits to be woken instead, for plain locks (an RwLock waits as kRandom):
//  * Queue. Each waiting call carries a ticket (a random waiter id W, the Provider's id P, its
//    lease and owner) in every attempt. A refused attempt appends {w: W, p: P, x: expiry_ms,
//    o: owner, until: NOW + KEEP} to the lock document's `queue` or refreshes its entry in
//    place; an entry whose `until` passed is not live. The HEAD is the first live entry whose
//    waiter is not tombstoned. A notify attempt is granted only when, besides the lock being
//    free, there is no head, W is the head, or the lock has been free for GRACE since its
//    expiresAt (the head did not come: it died, was paused, or missed its wake-up). A grant
//    removes W's entry and the head's (a head that missed its turn queues again at the back on
//    its next attempt) and clears grantW / grantP. A refused attempt changes
//    no entry when its own id is tombstoned (it ran late, after its call resolved it) or when W
//    holds the lock by a hand-over. KEEP = 2 * max(expiry_ms, busy_wait_max_ms), GRACE =
//    busy_wait_max_ms; at most 1000 live entries (a waiter that finds the queue full polls).
//  * Hand-over. The release of a notify Provider's hold grants the lock, in the same update, to
//    the head (other than the releasing id) if its entry carries x: hold id W, a new token, owner
//    o, lease NOW + x, the entry removed, grantW / grantP naming it; otherwise it frees the lock.
//    The waiter takes the hold without a round trip when the grant reaches it: from the
//    release's own reply when the releasing hold and W belong to one Provider and W is
//    registered with its change stream's watcher (below; the release is a findAndModify, sent
//    once, returning the document's holder, token, grantW and grantP; its thread wakes W at
//    once, with no wait for the stream), from its stream otherwise (each hand-over is taken
//    once, whichever path brought it first), or from the reply of its next attempt (which names
//    W holder). Its lease clock starts at the send of
//    its latest attempt whose reply showed the lock not held by W (that attempt ran before the
//    hand-over; before any such reply, its call's first attempt), so the client's lease ends
//    before the server's as for any acquire ("Lease timing"); a hand-over whose token is not
//    above that reply's token ran before it and is over, and is dropped. With less than
//    expiry_ms / 2 left on the client's lease the waiter first extends the hold (only the hold of
//    W with that token; an extension that finds none leaves the call waiting, one with an
//    unknown outcome, or answered only after the lease it started ended on the client's clock,
//    is resolved by a tombstone of W, which frees the hold, and the call waits on with a new
//    waiter id). A call that sent an attempt and gives up without a grant (timeout, try_acquire,
//    cancellation, error) sends one leave, which hands a hold it was handed on and removes its
//    entry; if the leave fails or is not sent, one tombstone of W kept at least KEEP, so no
//    later release hands it the lock. A lost leave and tombstone (or a full tombstone list)
//    leave an entry that lapses after KEEP and, if a release hands it the lock first, a hold
//    that ends with its lease.
//  * Local line. While a hold of a plain lock by a notify Provider is live (or a release of that
//    Provider has handed the lock to one of its own queued waiters, until that waiter's call takes
//    it or ends; or, for at most busy_wait_min_ms, while the first attempt of another of its
//    waiters for the lock is in flight and nothing of the Provider holds it), the Provider's
//    further notify waiters for that lock wait in its local line, in arrival order, sending
//    nothing. The hold's release offers the line's first waiter after the server's queue: the lock
//    goes to the queue's head if it has one, as above, and else to that waiter (hold id W, a new
//    token, lease NOW + expiry_ms, owner; grantW W and grantP null, so no change stream passes the
//    event on), in the same findAndModify (first a short one that matches only a document whose
//    queue is empty and whose tombstones do not list W; when it matches nothing, the full hand-over
//    release with W offered after the queue's entries); the releasing thread wakes W, whose lease
//    clock starts at the release's send, and W's own release offers the next. When the lock leaves
//    the Provider (the release handed it to another Provider's waiter or freed it, or found no
//    hold), the hold is lost, or the hand-over to an own queued waiter is not taken (its call ends
//    without it, before or after the release's reply, or it is not taken within expiry_ms), every
//    waiter in the line leaves it and attempts, queueing on the server in the order its attempts
//    reach the server (the line's order among them is not kept). A waiter in a line keeps a hold
//    slot ("Bounds") from joining until it leaves, so its grant never meets the holds limit. A
//    release with an unknown outcome leaves its offered waiter's id possibly holding: that waiter
//    resolves it with a tombstone (as an attempt's unknown outcome) and attempts with a new id. A
//    waiter whose timeout passes, or whose stop is requested, in the line leaves it (then makes its
//    one last attempt, or throws Cancelled), except while its holder's release offers it the lock:
//    it first waits for that release's reply (one or two round trips of the releasing thread, at
//    most 2 * W of "Bounds"), and returns the hold if that release granted it (a cancelled call
//    hands it on with its leave). A lock freed on the server behind the holder's back
//    (force_release, or a lease that lapsed while the holder's client had not yet noticed) reaches
//    the line only when the holder's client marks the hold lost (its next extension, or its lease's
//    end on its clock): until then the line's waiters wait, where queued waiters would have been
//    woken by the stream's free-lock event. At most 10,000 waiters a line (the next attempts
//    instead).
//  * Wake-up. Each Provider runs one change stream (fullDocument updateLookup) on its plain
//    lock collection, while it has waiters and for 10 s after the last, on one thread and one
//    pooled client that the stream keeps all that time (a URI whose maxPoolSize is below 2 gets
//    no stream: its only client is for the holds' extensions and the attempts, and its waiters
//    sleep as kRandom). The server passes on an event when an update changed the token of, or a
//    replacement wrote (a pipeline update that rewrote most of a small document is logged as
//    one), a document whose grantP is this Provider (each hand-over is delivered once, to
//    grantW, while the looked-up document is still held by it), and when the lock document has
//    no holder
//    and the first entry of its queue is this Provider's (a release by a holder of another
//    strategy, a resolution, a force-release); the waiter named there takes its hand-over or
//    attempts at once. What no event announces, the waiter times itself from the document its
//    attempt returned: a lease lapsing (its end), a head not coming (the end of GRACE), its
//    entry's refresh (KEEP / 2 at the longest). While the stream is not open (opening, broken
//    and being reopened, or not served: a standalone server, no change streams) waiters sleep
//    as kRandom and take hand-overs from their attempts' replies (and, registered ones, from
//    their own Provider's releases). A stream opens at the smallest of its waiters' cluster
//    times (startAtOperationTime; a waiter's cluster time is the operationTime of its first
//    refused attempt when that attempt queued it, a write acknowledged by a majority), so it
//    delivers every release after those attempts, and its opening wakes only waiters it does
//    not cover (with no cluster time, or one below its start); after a broken stream, or an
//    open with a start that failed, the next opens at the member's newest entry and wakes every
//    waiter to attempt again under it. An open stream that has answered nothing for
//    3 * maxAwaitTimeMS + 1 s (a member that stopped answering without closing the
//    connection) counts as not open: its waiters poll until it answers or breaks.
//  * What it guarantees. Safety is that of every acquire: a hand-over is a grant made by an
//    atomic update that mints a token as an acquire does, to one waiter, whose lease clock
//    starts before it. Among notify waiters of one lock, grants follow arrival order while
//    heads are alive, except around the local line: a waiter in a line is never granted while
//    the server's queue has a head, but a waiter that asks after it joined the line (of another
//    Provider, or of its own while the line is closed) can be granted before it, when the
//    line's release finds that waiter queued; the line's waiters then queue, in the order their
//    attempts reach the server, behind whoever asked before those attempts;
//    acquires with other strategies ignore the queue and may overtake it when the lock is free. A
//    waiter that dies queued (its process crashed or paused) can be handed the lock while its entry
//    is live: the lock is then unavailable until that hold's lease ends, as after a holder's crash;
//    entries lapse KEEP after their waiter's last attempt, so the holds handed to a crashed
//    process's waiters end at most KEEP + expiry_ms after the crash (plus the clock bound of
//    "Liveness under a clock that is off").
//  * Cost: a waiter granted from its Provider's local line sends nothing (its grant is its
//    holder's release); besides that, the attempts (one per waiting call while the stream
//    delivers its hand-over) and the leave of a call that gives up, one getMore per batch of events
//    (a hand-over; a replacement of a document this Provider was last handed, while no queued grant
//    or notify release has cleared grantP, which an acquire of another strategy leaves; a free
//    lock's head) and one per maxAwaitTimeMS (min(max(expiry_ms / 4, 25 ms), 1 s, socketTimeoutMS /
//    4)) of a stream without events; destroying a Provider whose stream is open waits for its
//    getMore in flight.
//  * Known gap: an attempt that runs late without having been resolved (sent, then held past a
//    call that threw UnknownOutcome, as a blocked connection can hold it) may queue its waiter
//    again after the call left the queue; a release may then hand the lock to that entry, a
//    hold that ends with its lease.
//
// ## Bounds
//  * Holds: at most 1000 live holds per Provider, counting attempts in flight (each takes its
//    slot while it runs, so 999 holds and two concurrent attempts can refuse one) and waiters in
//    a local line (each keeps one while it waits there); an acquire beyond that throws Error
//    before any round trip. Holds run no threads of their own: a
//    Provider runs at most 34 background threads (33 for its holds, one change stream for
//    notify waiters), whatever its number of holds, besides its driver pool's server monitors
//    (provider.h "Threads").
//  * One round trip takes at most W = P + 2 * (S + T): P = the wait for a pooled client
//    (min(expiry_ms / 2, 30 s); then it fails as "not sent"), S = serverSelectionTimeoutMS,
//    T = socketTimeoutMS (room for a driver try plus one retry, which libmongoc makes only for
//    force_release and inspect; the acquire, resolve, extend and release are sent once,
//    P + S + T). A Provider that builds its own pool sets T = expiry_ms and
//    S = clamp(expiry_ms / 2, 100 ms, 30 s) unless the URI sets them. A release is one round
//    trip, two when it offers a local line's waiter and the short form matches nothing (the
//    queue is not empty, the waiter's id is tombstoned, or the hold is no longer the releaser's;
//    see "Local line").
//  * acquire / try_acquire with timeout D returns within D + 7 * W + 2 * busy_wait_min_ms: the
//    last attempt starts before D has passed, and it (1), its resolution (3 tries) and the check
//    of the collection's indexes (listIndexes, and while the Provider's own index is missing a
//    createIndexes and a second listIndexes: 3, every attempt until the judgement is final, see
//    [index]) are W each. timeout 0 is one attempt: 7 * W + 2 * busy_wait_min_ms. kNotify adds
//    up to 8 * W + 2 * busy_wait_min_ms: a hand-over's extension and its resolution (4, with
//    the resolution's pauses), the leave and its tombstone (2), and the reply of a release
//    that offered the lock to the call's seat in a local line as D passed (2).
//  * Cancellation (std::stop_token) is checked before every attempt, during every backoff
//    sleep, while waiting in a local line and between resolution tries; a round trip in flight
//    is not interrupted, nor a release in flight that offers the call's seat the lock.
//
// ## Assumptions (every guarantee above holds under these; each names what breaks otherwise)
//  [write-concern] Options::write_concern = kMajority. With w:1 an acknowledged grant or
//    tombstone can be rolled back on failover: a token can be issued twice and a resolved
//    acquire can take effect.
//  [journaling] A majority acknowledgement survives crashes only if those members journal it
//    (writeConcernMajorityJournalDefault true, the default, with journaling on). Otherwise a
//    simultaneous crash of a majority can lose a grant, and its token can be issued again.
//  [clock-steps] The primary's wall clock (whichever member is primary, across failovers)
//    never reads more than expiry_ms + reap_after_s below the highest value any primary's
//    clock has read before. The bound is on the total regression, not on each step: two
//    steps back inside the bound add up, and tokens after a TTL reap can then go backwards.
//    Raise reap_after_s (or drop the TTL index) to widen it.
//  [clock-rate] Client and server clocks run at rates that differ by less than
//    lost_safety_margin_ms over one lease (expiry_ms).
//  [failover-clock] A member that becomes primary while a lease runs has a wall clock at most
//    lost_safety_margin_ms (minus the rate error) ahead of the member that granted it. A new
//    primary whose clock is further ahead ends the lease early on the server while the Handle
//    still reads held: the notification lags the real loss by the excess.
//  [suspend] The client's lease clock is std::chrono::steady_clock (CLOCK_MONOTONIC on Linux),
//    which stops while the client host is suspended, while the server's lease runs on. A
//    client suspended while holding learns of the loss up to the suspension's length late.
//    (CLOCK_BOOTTIME would count the suspension; the public API uses steady_clock time points,
//    so the library does not switch.) Do not suspend hosts that hold locks.
//  [tombstone] A resolved acquire request executes, if ever, within expiry_ms + reap_after_s
//    of its resolution, measured on the primary's clock (the reap_after_s of the Provider
//    that resolved it): that is how long its tombstone is kept, and how long the document
//    stays at least (reapAt >= resolution + expiry_ms, reaped reap_after_s later). Nobody
//    deletes the document meanwhile. A forward step of the primary's clock shortens both by
//    the step.
//  [index] No TTL index deletes a lock document sooner than reap_after_s after its reapAt:
//    every TTL index in the plain and rw collections is on {reapAt: 1} alone with
//    expireAfterSeconds >= this Provider's reap_after_s. Versions before reapAt made one on
//    expiresAt in the plain collection ("mongolock_ttl"), which deletes released documents and
//    their tombstones reap_after_s after the release; and the reapAt index keeps the
//    expireAfterSeconds of whichever Provider created it first, so a Provider with a longer
//    reap_after_s would lose its tombstones and token floor early. Either breaks [tombstone]
//    and the fencing floor. Before its first attempt on each collection a Provider reads the
//    indexes (listIndexes); with create_index true and no reapAt index there, it creates its own
//    first (createIndexes) and reads them again, so no acquire goes into a collection whose
//    index value is not yet known. It refuses every acquire with Error while a TTL index breaks
//    this (a value it cannot read counts as breaking), naming the index and the mongosh command
//    that drops it or raises its expireAfterSeconds (the library changes no index itself); with
//    create_index true or false alike. The reading is asked again on every attempt until the
//    judgement is final: a suitable reapAt index seen, or (create_index false) none expected.
//    Not covered: an index made or lowered later, while the Provider runs (with create_index
//    false, or once its judgement is final), is not seen; a Provider whose createIndexes is
//    refused as Unauthorized (13: no privilege) acquires on the indexes it sees, so another
//    Provider's shorter index made after its check can reap its tombstones early. Every other
//    refusal of its createIndexes sends nothing that attempt. A stop asked during the check
//    sends nothing. The check needs the listIndexes privilege (the read role): while
//    listIndexes (or createIndexes, other than as Unauthorized) fails, every attempt counts as
//    one that sent nothing, and acquire's Timeout says so.
//  [fork] A Provider, Lock, RwLock or Handle made before fork() is the parent's: in the child,
//    release() and destruction of a Handle do nothing (the hold stays the parent's; it learns
//    nothing), acquire throws InvalidArgument and other requests fail; destroying a Provider
//    there leaves the parent's background threads alone; make a new Provider in the child.

#pragma once

#include "mongolock/errors.h"
#include "mongolock/handle.h"
#include "mongolock/lock.h"
#include "mongolock/lock_info.h"
#include "mongolock/options.h"
#include "mongolock/provider.h"
#include "mongolock/rw_lock.h"
#include "mongolock/version.h"
