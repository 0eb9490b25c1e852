#!/usr/bin/python3
"""Initiates the replica set "rs0" of docker/compose.yaml (or any 3 members given) from the host,
and waits (bounded) for a primary that acknowledges a majority write.

Works for mongosim and mongod members alike: the members are named by address, so the host and
every container see the same host names. Re-running it on an initiated set is harmless.

Usage: docker/init-replset.py [HOST:PORT ...]   (default: 10.89.7.11-13:27017)
"""
import sys
import time

from pymongo import MongoClient
from pymongo.errors import OperationFailure, PyMongoError

HOSTS = sys.argv[1:] or ["10.89.7.11:27017", "10.89.7.12:27017", "10.89.7.13:27017"]
TIMEOUT_S = 60


def direct(host):
    return MongoClient(host, directConnection=True, serverSelectionTimeoutMS=2000)


def main():
    deadline = time.monotonic() + TIMEOUT_S
    for host in HOSTS:
        while True:
            try:
                direct(host).admin.command("ping")
                break
            except PyMongoError as e:
                if time.monotonic() > deadline:
                    sys.exit(f"init-replset: {host} does not answer: {e}")
                time.sleep(0.5)
    config = {"_id": "rs0", "settings": {"electionTimeoutMillis": 2000},
              "members": [{"_id": i, "host": h} for i, h in enumerate(HOSTS)]}
    try:
        direct(HOSTS[0]).admin.command("replSetInitiate", config)
    except OperationFailure as e:
        if e.code != 23:  # AlreadyInitialized
            sys.exit(f"init-replset: replSetInitiate on {HOSTS[0]} failed: {e}")
    uri = "mongodb://" + ",".join(HOSTS) + "/?replicaSet=rs0&serverSelectionTimeoutMS=2000"
    while True:
        try:
            client = MongoClient(uri, w="majority", wtimeoutMS=5000)
            client.locklab_init.ready.insert_one({"at": time.time()})
            print(client.primary[0] + ":" + str(client.primary[1]))
            return
        except PyMongoError as e:
            if time.monotonic() > deadline:
                sys.exit(f"init-replset: no primary acknowledging a majority write: {e}")
            time.sleep(0.5)


if __name__ == "__main__":
    main()
