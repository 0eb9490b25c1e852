"""Change streams of mongosim with Debian's pymongo (python3-pymongo 3.11) on a three-member set
(docs/mongodb-behaviour.md, Change streams).

with_mongosim.js --members 3 starts the set and passes $MONGOSIM_URI, $MONGOSIM_HOSTS and
$MONGOSIM_PIDS. Checks: watch() with full_document="updateLookup" returns insert, update (with
mongod's updateDescription), replace and delete events in order; resume_after and
start_at_operation_time resume exactly there; a disallowed stage gets IllegalOperation (20); across
replSetStepDown the stream goes on, and when the member it reads from is killed pymongo resumes on
the new primary by itself, with no event lost or repeated (shown by the events and by command
monitoring). Ordering comes from observed conditions and events, not from sleeps.

What it leaves out: concurrent writers, partitions (a member is killed, not cut off), and large
events.

Prints one line per check and "N passed, M failed"; exits 0 only when every check passed, 77 when
pymongo is not installed.
"""

import sys
import time

from pymongo_check import DEADLINE_S, Members, pymongo, report, run_checks
from pymongo import monitoring
from pymongo.errors import OperationFailure
from pymongo.write_concern import WriteConcern

AWAIT_MS = 200


def next_event(stream):
    """The stream's next event; each try_next is one getMore of at most AWAIT_MS."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        event = stream.try_next()
        if event is not None:
            return event
    raise AssertionError(f"no event within {DEADLINE_S} s")


class Aggregates(monitoring.CommandListener):
    """Every aggregate sent: where it went and its $changeStream stage."""

    def __init__(self):
        self.sent = []

    def started(self, event):
        if event.command_name == "aggregate":
            self.sent.append({"address": "%s:%d" % event.connection_id,
                              "stage": event.command["pipeline"][0].get("$changeStream", {})})

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


def shapes_and_resumes(client):
    coll = client.cs.items.with_options(write_concern=WriteConcern(w="majority"))
    with coll.watch(full_document="updateLookup", max_await_time_ms=AWAIT_MS) as stream:
        stream.try_next()  # the aggregate has run: the stream starts here
        coll.insert_one({"_id": "a", "n": 1, "tags": [1, 2, 3]})
        coll.update_one({"_id": "a"}, {"$set": {"n": 2}, "$pop": {"tags": 1}})
        coll.replace_one({"_id": "a"}, {"r": True})
        coll.delete_one({"_id": "a"})
        got = [next_event(stream) for _ in range(4)]
    types = [e["operationType"] for e in got]
    report("watch() returns insert, update, replace, delete in order",
           types == ["insert", "update", "replace", "delete"], repr(types))
    report("every event names the collection and the document",
           all(e["ns"] == {"db": "cs", "coll": "items"} and e["documentKey"] == {"_id": "a"}
               and isinstance(e["_id"]["_data"], str) for e in got), repr(got))
    report("the update event carries mongod's updateDescription",
           got[1].get("updateDescription") == {"updatedFields": {"n": 2}, "removedFields": [],
                                               "truncatedArrays": [{"field": "tags", "newSize": 2}]},
           repr(got[1]))
    report("the replace event carries the new document",
           got[2].get("fullDocument") == {"_id": "a", "r": True}, repr(got[2]))

    with coll.watch(resume_after=got[1]["_id"], max_await_time_ms=AWAIT_MS) as stream:
        after = [next_event(stream)["operationType"] for _ in range(2)]
    report("resume_after returns exactly the events after the token",
           after == ["replace", "delete"], repr(after))
    with coll.watch(start_at_operation_time=got[2]["clusterTime"],
                    max_await_time_ms=AWAIT_MS) as stream:
        at = [next_event(stream)["operationType"] for _ in range(2)]
    report("start_at_operation_time starts at that event", at == ["replace", "delete"], repr(at))
    try:
        with coll.watch([{"$group": {"_id": 1}}]) as stream:
            stream.try_next()
        report("a stage a change stream does not allow gets IllegalOperation (20)", False,
               "no error")
    except OperationFailure as exc:
        report("a stage a change stream does not allow gets IllegalOperation (20)",
               exc.code == 20, repr(exc.details))


def failover(members):
    aggregates = Aggregates()
    client = pymongo.MongoClient(members.uri, event_listeners=[aggregates],
                                 serverSelectionTimeoutMS=int(DEADLINE_S * 1000))
    writer = pymongo.MongoClient(members.uri,
                                 serverSelectionTimeoutMS=int(DEADLINE_S * 1000))
    try:
        wcoll = writer.cs.failover.with_options(write_concern=WriteConcern(w="majority"))
        seen = []
        with client.cs.failover.watch(max_await_time_ms=AWAIT_MS) as stream:
            stream.try_next()
            wcoll.insert_one({"_id": "e1"})
            seen.append(next_event(stream)["documentKey"]["_id"])
            old = members.primary()
            reply = members.command(old, {"replSetStepDown": 30, "secondaryCatchUpPeriodSecs": 10})
            report("replSetStepDown succeeds", reply.get("ok") == 1, repr(reply))
            new = members.wait_for_primary(old)
            report("a new primary is elected", new >= 0 and new != old, f"old {old}, new {new}")
            wcoll.insert_one({"_id": "e2"})
            seen.append(next_event(stream)["documentKey"]["_id"])
            report("the stream goes on across the step-down without resuming",
                   seen == ["e1", "e2"] and len(aggregates.sent) == 1
                   and aggregates.sent[0]["address"] == members.hosts[old],
                   repr((seen, aggregates.sent)))
            members.kill(old)
            for doc_id in ("e3", "e4"):
                wcoll.insert_one({"_id": doc_id})
                seen.append(next_event(stream)["documentKey"]["_id"])
        last = aggregates.sent[-1] if aggregates.sent else {}
        report("when its member dies pymongo resumes on the new primary, nothing lost or repeated",
               seen == ["e1", "e2", "e3", "e4"] and len(aggregates.sent) >= 2
               and last["address"] != members.hosts[old] and "resumeAfter" in last["stage"],
               repr((seen, aggregates.sent)))
    finally:
        client.close()
        writer.close()


def body(members):
    with pymongo.MongoClient(members.uri, serverSelectionTimeoutMS=int(DEADLINE_S * 1000)) as client:
        shapes_and_resumes(client)
    failover(members)


if __name__ == "__main__":
    sys.exit(run_checks("change_stream_pymongo", body))
