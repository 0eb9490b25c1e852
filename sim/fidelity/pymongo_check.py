"""The frame of a pymongo check script on a mongosim set started by with_mongosim.js.

with_mongosim.js passes $MONGOSIM_URI, $MONGOSIM_HOSTS and $MONGOSIM_PIDS. A script imports this
module (which exits 77 when pymongo is not importable, naming the interpreter), calls `report`
once per check, and ends with `sys.exit(run_checks(name, body))`: `body(members)` runs with a
`Members` view of the set; an exception out of it is one more failed check. Prints one line per
check and "N passed, M failed"; the status is 0 only when every check passed and at least one
ran, 1 otherwise (and on a missing environment, with the usage).
"""

import os
import signal
import sys
import time

try:
    import pymongo
except ImportError as err:
    print(f"{os.path.basename(sys.argv[0])}: pymongo is not importable by {sys.executable} "
          f"({err}); not run")
    sys.exit(77)

DEADLINE_S = 30.0
POLL_INTERVAL_S = 0.05
RESULTS = {"passed": 0, "failed": 0}


def report(name, ok, detail=""):
    RESULTS["passed" if ok else "failed"] += 1
    print(f"{'ok' if ok else 'not ok'} - {name}{'' if ok else ': ' + detail}")


def wait_for(what, predicate):
    """Polls `predicate` until it holds; raises naming `what` after DEADLINE_S."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(POLL_INTERVAL_S)
    raise AssertionError(f"{what} not seen within {DEADLINE_S} s")


class Members:
    """The set's members one by one: direct connections, the primary, SIGKILL."""

    def __init__(self):
        self.uri = os.environ["MONGOSIM_URI"]
        self.hosts = os.environ["MONGOSIM_HOSTS"].split(",")
        self.pids = [int(p) for p in os.environ["MONGOSIM_PIDS"].split(",")]
        self.killed = set()

    def direct(self, i):
        return pymongo.MongoClient(f"mongodb://{self.hosts[i]}/?directConnection=true",
                                   serverSelectionTimeoutMS=2000)

    def command(self, i, cmd):
        with self.direct(i) as client:
            return client.admin.command(cmd)

    def primary(self):
        """The live member that alone says it is writable, or -1."""
        writable = [i for i in range(len(self.hosts))
                    if i not in self.killed and self.command(i, "isMaster").get("ismaster")]
        return writable[0] if len(writable) == 1 else -1

    def wait_for_primary(self, not_this):
        """The primary once one other than `not_this` is alone writable, or -1 at the deadline."""
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            p = self.primary()
            if p >= 0 and p != not_this:
                return p
            time.sleep(POLL_INTERVAL_S)
        return -1

    def kill(self, i):
        os.kill(self.pids[i], signal.SIGKILL)
        self.killed.add(i)


def run_checks(name, body):
    if not all(k in os.environ for k in ("MONGOSIM_URI", "MONGOSIM_HOSTS", "MONGOSIM_PIDS")):
        print(f"usage: with_mongosim.js --mongosim PATH --members 3 -- python3 {name}.py")
        return 1
    try:
        body(Members())
    except Exception as exc:  # the scenario itself broke: one more failed check
        report("scenario", False, f"{type(exc).__name__}: {exc}")
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 0 if RESULTS["failed"] == 0 and RESULTS["passed"] > 0 else 1
