"""Smoke test of mongosim with Debian's pymongo (python3-pymongo 3.11, run by /usr/bin/python3).

Connects with replicaSet=rs0 to the server in $MONGOSIM_URI (with_mongosim.js starts one), then
checks discovery, insert/find/update, find_one_and_update with upsert, a server error with its
code, and serverStatus. Prints one line per check and "N passed, M failed"; exits 0 only when
every check passed, 77 when pymongo is not installed.
"""

import os
import sys

try:
    import pymongo
    from pymongo import ReturnDocument
    from pymongo.errors import DuplicateKeyError, OperationFailure
except ImportError as err:
    print(f"smoke_pymongo: pymongo is not importable by {sys.executable} ({err}); not run")
    sys.exit(77)

SERVER_SELECTION_TIMEOUT_MS = 10000
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def expect_equal(actual, expected, what):
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


@check
def discovers_replica_set_primary(ctx):
    client = ctx["client"]
    expect_equal(client.is_primary, True, "is_primary")
    hello = client.admin.command("isMaster")
    expect_equal(hello.get("setName"), "rs0", "setName")
    expect_equal(hello.get("maxWireVersion"), 21, "maxWireVersion")
    expect_equal(hello.get("logicalSessionTimeoutMinutes"), 30, "logicalSessionTimeoutMinutes")


@check
def insert_and_find(ctx):
    coll = ctx["coll"]
    coll.insert_one({"_id": 1, "x": 10})
    result = coll.insert_many([{"_id": 2, "x": 20}, {"_id": 3, "x": 30}])
    expect_equal(result.inserted_ids, [2, 3], "inserted_ids")
    docs = list(coll.find({"x": {"$gt": 15}}).sort("_id", pymongo.DESCENDING))
    expect_equal(docs, [{"_id": 3, "x": 30}, {"_id": 2, "x": 20}], "find")


@check
def update(ctx):
    coll = ctx["coll"]
    one = coll.update_one({"_id": 1}, {"$inc": {"x": 5}})
    expect_equal((one.matched_count, one.modified_count), (1, 1), "update_one counts")
    many = coll.update_many({}, {"$set": {"seen": True}})
    expect_equal(many.matched_count, 3, "update_many matched")
    upsert = coll.update_one({"_id": 9}, {"$set": {"x": 90}}, upsert=True)
    expect_equal(upsert.upserted_id, 9, "upserted_id")
    expect_equal(coll.find_one({"_id": 1}), {"_id": 1, "x": 15, "seen": True}, "document")


@check
def find_one_and_update_upsert(ctx):
    coll = ctx["coll"]
    before = coll.find_one_and_update({"_id": "lock-a"}, {"$set": {"owner": "p1"}}, upsert=True)
    expect_equal(before, None, "upsert returning the document before")
    after = coll.find_one_and_update(
        {"_id": "lock-b"},
        {"$set": {"owner": "p2"}, "$inc": {"token": 1}},
        upsert=True,
        return_document=ReturnDocument.AFTER,
    )
    expect_equal(after, {"_id": "lock-b", "owner": "p2", "token": 1}, "upsert returning after")
    expect_equal(coll.count_documents({}), 6, "count_documents")


@check
def duplicate_key_error(ctx):
    try:
        ctx["coll"].insert_one({"_id": 1})
    except DuplicateKeyError as err:
        expect_equal(err.code, 11000, "code")
        expect_equal(err.details.get("keyPattern"), {"_id": 1}, "keyPattern")
        return
    raise AssertionError("duplicate _id was accepted")


@check
def unknown_command_error(ctx):
    try:
        ctx["db"].command("noSuchCommandHere")
    except OperationFailure as err:
        expect_equal(err.code, 59, "code")
        expect_equal(err.details.get("codeName"), "CommandNotFound", "codeName")
        return
    raise AssertionError("unknown command succeeded")


@check
def server_status(ctx):
    status = ctx["client"].admin.command("serverStatus")
    expect_equal(status.get("ok"), 1.0, "ok")
    if not str(status.get("version", "")).startswith("7.0."):
        raise AssertionError(f"version {status.get('version')!r} is not 7.0.x")
    commands = status.get("metrics", {}).get("commands", {})
    if commands.get("insert", {}).get("total", 0) < 2:
        raise AssertionError(f"serverStatus.metrics.commands.insert: {commands.get('insert')!r}")


def main():
    uri = os.environ.get("MONGOSIM_URI")
    if not uri:
        print("smoke_pymongo: set MONGOSIM_URI (with_mongosim.js does)", file=sys.stderr)
        return 1
    print(f"smoke_pymongo: pymongo {pymongo.version} against {uri}")
    client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=SERVER_SELECTION_TIMEOUT_MS)
    db = client["smoke_pymongo"]
    failed = 0
    try:
        client.drop_database("smoke_pymongo")
        ctx = {"client": client, "db": db, "coll": db["items"]}
        for fn in CHECKS:
            try:
                fn(ctx)
                print(f"ok - {fn.__name__}")
            except Exception as err:  # noqa: BLE001 - every failure is reported, then counted
                failed += 1
                print(f"not ok - {fn.__name__}: {type(err).__name__}: {err}")
    finally:
        client.close()
    print(f"{len(CHECKS) - failed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
