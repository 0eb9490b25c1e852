#!/usr/bin/python3
"""locklab worker for lorehov/mongolock (PyPI `mongolock`), re-created here on pymongo 3.

The package cannot be installed here (only Debian packages and npm are reachable), so its lock is
written again from its published description, with the same commands, clocks and defaults:

  lock(key, owner, timeout, expire):
    expire_at = utcnow() + expire            # absolute, computed ONCE, before any waiting
    insert {_id: key, locked: true, owner, created: utcnow(), expire: expire_at}
    on a duplicate key, every 0.1 s (acquire_retry_step) until `timeout` has passed:
      update_one({$or: [{_id: key, locked: false}, {_id: key, expire: {$lt: utcnow()}}]},
                 replace with {locked: true, owner, created: utcnow(), expire: expire_at})
      acquired when it matched a document
  release(key, owner): find_one_and_update({_id: key, owner}, {$set: {locked: false}})
                       (no expiry check: an owner whose lease lapsed still "releases")

Its documented holes: expire_at is fixed before the wait, so a lock obtained after waiting w has
a lease of expire - w (none at all once w > expire) while its user believes it has `expire`; the
clocks are the clients' own (utcnow), so a client whose clock runs ahead takes a live lock; the
owner is a caller-chosen name. No renewal, no lost notification, no fencing token.

Mapping of the protocol's flags (harness/WORKERS.md): key = the lock name, owner = --id (a
user's natural choice: one name per worker), expire = --expiry-ms in seconds, timeout = the same
(a caller waits up to one lease for the lock), write concern from --write-concern in the
connection string, the retry step is the library's fixed 0.1 s. Between one operation's release
and its next lock() the worker rests a uniform --busy-wait-min-ms..--busy-wait-max-ms (a user's
program does other work between tasks; without the rest the releasing worker, which retries at
once, would take the lock again before any waiter's 0.1 s step). --honour-lost,
--extension-cadence-ms and --no-fencing mean nothing here.

What the history says: acquire ok carries no token (value.no_token) and lease_ms = what the user
asked for; value.expire_in_ms is what the grant really had left by this client's clock. An
exception from a command is an unknown outcome (info): the command may have been applied.
"""
import datetime
import json
import os
import random
import signal
import sys
import threading
import time

import pymongo
from pymongo.errors import DuplicateKeyError, PyMongoError
from pymongo.read_concern import ReadConcern

ACQUIRE_RETRY_STEP_S = 0.1  # the library's default
stop = threading.Event()


def parse_flags(argv):
    out, i = {}, 0
    while i < len(argv):
        if not argv[i].startswith("--"):
            sys.exit(f"python-lorehov: unexpected argument {argv[i]!r}")
        key = argv[i][2:]
        if key == "no-fencing":
            out[key], i = "true", i + 1
        elif i + 1 < len(argv):
            out[key], i = argv[i + 1], i + 2
        else:
            sys.exit(f"python-lorehov: --{key} needs a value")
    for key in ("id", "uri", "history"):
        if key not in out:
            sys.exit(f"python-lorehov: --{key} is required")
    return out


class History:
    """One event per line, each line one write(2) on an O_APPEND descriptor."""

    def __init__(self, path, worker):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.worker = worker

    def record(self, kind, f, lock, value=None):
        event = {"process": self.worker, "type": kind, "f": f, "lock": lock}
        if value:
            event["value"] = value
        # t first, as an exact integer of CLOCK_MONOTONIC nanoseconds.
        line = '{"t":%d,%s\n' % (time.monotonic_ns(), json.dumps(event, separators=(",", ":"))[1:])
        os.write(self.fd, line.encode())


class LorehovLock:
    """The library's lock(), re-created (see the module's docstring)."""

    def __init__(self, collection):
        self.collection = collection

    def lock(self, key, owner, timeout_s, expire_s):
        expire_at = datetime.datetime.utcnow() + datetime.timedelta(seconds=expire_s)
        try:
            self.collection.insert_one({"_id": key, "locked": True, "owner": owner,
                                        "created": datetime.datetime.utcnow(),
                                        "expire": expire_at})
            return expire_at
        except DuplicateKeyError:
            pass
        start = time.monotonic()
        while not stop.is_set():
            now = datetime.datetime.utcnow()
            result = self.collection.replace_one(
                {"$or": [{"_id": key, "locked": False}, {"_id": key, "expire": {"$lt": now}}]},
                {"locked": True, "owner": owner, "created": now, "expire": expire_at})
            if result.matched_count == 1:
                return expire_at
            if time.monotonic() - start > timeout_s:
                return None
            stop.wait(ACQUIRE_RETRY_STEP_S)
        return None

    def release(self, key, owner):
        return self.collection.find_one_and_update({"_id": key, "owner": owner},
                                                   {"$set": {"locked": False}})


def increment(history, counter, lock, hold_s):
    """Read the counter, hold, write it back plus one: guarded only by the lock."""
    try:
        doc = counter.find_one({"_id": "counter"})
    except PyMongoError as e:
        history.record("fail", "read", lock, {"resource": "counter", "error": str(e)})
        return
    count = doc["count"] if doc else 0
    history.record("ok", "read", lock, {"resource": "counter", "count": count})
    stop.wait(hold_s)
    if stop.is_set():
        return
    written = {"resource": "counter", "count": count + 1, "read": count}
    history.record("invoke", "write", lock, written)
    try:
        counter.update_one({"_id": "counter"}, {"$set": {"count": count + 1}}, upsert=True)
        history.record("ok", "write", lock, written)
    except PyMongoError as e:
        history.record("info", "write", lock, dict(written, error=str(e)))


def operation(opts, history, locks, counter, rng):
    kind, worker = opts.get("kind", "mutex"), opts["id"]
    lock = "L1" if kind == "counter" else "L%d" % (1 + rng.randrange(int(opts.get("locks", 1))))
    expire_s = int(opts.get("expiry-ms", 2000)) / 1000.0
    hold_s = int(opts.get("critical-section-ms", 50)) / 1000.0
    history.record("invoke", "acquire", lock)
    try:
        expire_at = locks.lock(lock, worker, expire_s, expire_s)
    except PyMongoError as e:
        history.record("info", "acquire", lock, {"error": str(e)})
        return
    if expire_at is None:
        reason = "cancelled" if stop.is_set() else "busy for the whole timeout"
        history.record("fail", "acquire", lock, {"reason": reason})
        return
    left = expire_at - datetime.datetime.utcnow()
    history.record("ok", "acquire", lock, {"lease_ms": int(expire_s * 1000), "no_token": True,
                                           "expire_in_ms": int(left.total_seconds() * 1000)})
    if kind == "counter":
        increment(history, counter, lock, hold_s)
    else:
        stop.wait(hold_s)
    history.record("invoke", "release", lock)
    try:
        released = locks.release(lock, worker)
        if released is not None:
            history.record("ok", "release", lock)
        else:
            history.record("fail", "release", lock, {"reason": "no document with this owner"})
    except PyMongoError as e:
        history.record("info", "release", lock, {"error": str(e)})


def main():
    opts = parse_flags(sys.argv[1:])
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    # --write-concern: "majority" or a member count 1..7; anything else is refused (exit 2)
    # rather than run at another concern than the history records.
    w = opts.get("write-concern", "majority")
    if w != "majority" and w not in [str(n) for n in range(1, 8)]:
        sys.exit(f'python-lorehov: --write-concern: expected majority or 1..7, got "{w}"')
    client = pymongo.MongoClient(opts["uri"] + "&w=" + w)
    db = client[opts.get("database", "locklab")]
    locks = LorehovLock(db["locks"])
    # The counter's read shows every acknowledged write: majority at w:majority, the primary's
    # own ("local") at a numbered w, where the commit point trails what the primary acknowledged.
    level = "majority" if w == "majority" else "local"
    counter = db.get_collection("counter", read_concern=ReadConcern(level))
    history = History(opts["history"], opts["id"])
    rng = random.Random(int(opts.get("seed", 0)))
    operations = int(opts.get("operations", 0))
    done = 0
    rest_ms = (int(opts.get("busy-wait-min-ms", 10)), int(opts.get("busy-wait-max-ms", 800)))
    while not stop.is_set() and (operations == 0 or done < operations):
        operation(opts, history, locks, counter, rng)
        done += 1
        stop.wait(rng.uniform(*rest_ms) / 1000.0)
    client.close()


if __name__ == "__main__":
    main()
