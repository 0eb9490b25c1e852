"""Failover smoke test of mongosim with Debian's pymongo (python3-pymongo 3.11) on a three-member set.

with_mongosim.js --members 3 starts the set and passes $MONGOSIM_URI, $MONGOSIM_HOSTS and
$MONGOSIM_PIDS. The driver writes through ?replicaSet=rs0; then an insert is caught in flight
across a step-down: a failCommand fail point on the primary holds that one insert
(blockConnection, before the not-primary check, as in mongod: docs/mongodb-behaviour.md,
Fail points) while
replSetStepDown runs on an admin connection, so the insert then meets a member that is no longer
primary and gets 10107 NotWritablePrimary labelled RetryableWriteError; pymongo retries it exactly
once, on the new primary. Shown by command monitoring, each member's serverStatus insert counter
and a document count. Ordering comes from observed conditions (the old primary has counted the
insert before the step-down starts), not from sleeps; the one timing assumption is that the
step-down completes within the fail point's BLOCK_MS.

Why not failover_node.js's scenario (an insert waiting for w:3 that gets writeConcernError 189):
pymongo 3.11 reads error labels of a writeConcernError from inside that sub-document, while
MongoDB 4.4+ (and mongosim) put them at the top level of the reply, so 3.11 does not retry that
case against a real mongod either.

Prints one line per check and "N passed, M failed"; exits 0 only when every check passed,
77 when pymongo is not installed.
"""

import sys
import threading

from pymongo_check import DEADLINE_S, Members, pymongo, report, run_checks, wait_for
from pymongo import monitoring
from pymongo.write_concern import WriteConcern

BLOCK_MS = 3000  # how long the fail point holds the insert; the step-down takes milliseconds


class InsertAttempts(monitoring.CommandListener):
    """Every insert of the document {_id: 'across'}: where it went and what came back."""

    def __init__(self):
        self.attempts = []
        self.replies = {}

    def started(self, event):
        if event.command_name == "insert" and event.command["documents"][0]["_id"] == "across":
            self.attempts.append({"request_id": event.request_id,
                                  "address": "%s:%d" % event.connection_id,
                                  "txn_number": event.command.get("txnNumber"),
                                  "lsid": event.command.get("lsid")})

    def succeeded(self, event):
        self.replies[event.request_id] = event.reply

    def failed(self, event):
        self.replies[event.request_id] = {"failure": event.failure}


class FailoverMembers(Members):
    def insert_total(self, i):
        insert = self.command(i, "serverStatus")["metrics"]["commands"].get("insert")
        return int(insert["total"]) if insert else 0  # absent until a member served one

    def holds(self, i, doc_id):
        with self.direct(i) as client:
            return client.failover.items.find_one({"_id": doc_id}) is not None


def scenario(members, listener):
    client = pymongo.MongoClient(members.uri, event_listeners=[listener],
                                 appname="failover-pymongo",
                                 serverSelectionTimeoutMS=int(DEADLINE_S * 1000))
    try:
        coll = client.failover.items
        majority = coll.with_options(write_concern=WriteConcern(w="majority"))
        majority.insert_one({"_id": "before"})
        old = members.primary()
        report("driver writes to the set through ?replicaSet=rs0", old >= 0)

        members.command(old, {"configureFailPoint": "failCommand", "mode": {"times": 1},
                              "data": {"failCommands": ["insert"], "blockConnection": True,
                                       "blockTimeMS": BLOCK_MS, "appName": "failover-pymongo"}})
        before = [members.insert_total(i) for i in range(len(members.hosts))]
        outcome = {}

        def insert_across():
            try:
                outcome["result"] = majority.insert_one({"_id": "across"})
            except Exception as exc:  # reported below
                outcome["error"] = exc

        writer = threading.Thread(target=insert_across)
        writer.start()
        try:
            # The old primary counts a command before its fail point holds it.
            wait_for("the insert held on the primary",
                     lambda: members.insert_total(old) == before[old] + 1)
            reply = members.command(old, {"replSetStepDown": 30, "secondaryCatchUpPeriodSecs": 10})
            report("replSetStepDown on an admin connection succeeds", reply.get("ok") == 1)
        finally:
            writer.join(DEADLINE_S)
        report("the insert around the step-down succeeds",
               "result" in outcome and outcome["result"].acknowledged, repr(outcome))

        new = members.wait_for_primary(old)
        report("a new primary is elected", new >= 0 and new != old, f"old {old}, new {new}")

        a = listener.attempts
        report("pymongo retried exactly once, on the new primary, with the same transaction",
               len(a) == 2 and a[0]["address"] == members.hosts[old]
               and a[1]["address"] == members.hosts[new]
               and a[0]["txn_number"] == a[1]["txn_number"] and a[0]["lsid"] == a[1]["lsid"],
               repr(a))
        first = listener.replies.get(a[0]["request_id"], {}) if a else {}
        failure = first.get("failure", {})
        report("the first attempt got 10107 NotWritablePrimary labelled RetryableWriteError",
               failure.get("code") == 10107
               and "RetryableWriteError" in failure.get("errorLabels", []), repr(first))
        after = [members.insert_total(i) for i in range(len(members.hosts))]
        delta = [x - y for x, y in zip(after, before)]
        report("the servers saw one insert attempt each on the old and the new primary",
               new >= 0 and delta[old] == 1 and delta[new] == 1 and sum(delta) == 2, repr(delta))

        majority.insert_one({"_id": "after"})
        report("the document was inserted once and the driver follows the new primary",
               coll.count_documents({"_id": "across"}) == 1 and coll.count_documents({}) == 3
               and members.holds(new, "after"))
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(run_checks("failover_pymongo", lambda _: scenario(FailoverMembers(), InsertAttempts())))
