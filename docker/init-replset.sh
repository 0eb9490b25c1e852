#!/bin/bash
# Initiates rs0 on the three compose members and waits (bounded) for a primary.
set -euo pipefail
for host in 10.89.7.11 10.89.7.12 10.89.7.13; do
  for _ in $(seq 1 60); do
    mongosh --quiet --host "$host" --eval 'db.adminCommand({ping: 1}).ok' >/dev/null 2>&1 && break
    sleep 1
  done
done
mongosh --quiet --host 10.89.7.11 --eval '
  try {
    rs.initiate({_id: "rs0", settings: {electionTimeoutMillis: 2000}, members: [
      {_id: 0, host: "10.89.7.11:27017"},
      {_id: 1, host: "10.89.7.12:27017"},
      {_id: 2, host: "10.89.7.13:27017"}]});
  } catch (e) {
    if (e.codeName !== "AlreadyInitialized") throw e;
  }
  for (let i = 0; i < 60 && !db.hello().isWritablePrimary && !db.hello().primary; i++) sleep(1000);
  printjson(db.hello().primary);
'
