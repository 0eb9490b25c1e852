#!/bin/bash
# What mongosim spends on a contended lock, two ways, for two mongosim binaries (a change's
# before and after):
#   instructions: each binary serves one lockbench cell (notify, 32 threads, hold 0) under
#     valgrind's callgrind; instructions per acquisition and per command come from callgrind's
#     counts and the cell's own counters (instruction counts do not depend on the machine's
#     load, so this part is fair on a busy machine);
#   time: lockbench cells (notify; 2 and 32 threads at holds 0, 1, 10 ms; 2, 8 and 32
#     processes at 1 ms) against each binary, alternating, REPS times (run it alone).
# Each binary runs as a one-member replica set on a port of its own, initiated here.
#
#   scripts/mongosim_cost.sh OLD_MONGOSIM NEW_MONGOSIM OUT_DIR [REPS]
#
# Needs build/bin/lockbench and valgrind. Writes OUT_DIR/callgrind/{old,new}.out (callgrind's
# raw counts) with each cell's lockbench.json, OUT_DIR/time/{old,new}.N/lockbench.json, and
# OUT_DIR/summary.md (scripts/mongosim_cost_report.py); every process it starts is stopped on
# exit, Ctrl-C included.
set -euo pipefail
old=$1 new=$2 out=$3 reps=${4:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
lockbench=$here/build/bin/lockbench
[ -x "$lockbench" ] || { echo "mongosim_cost: $lockbench is not built" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "mongosim_cost: valgrind is not installed" >&2; exit 2; }
mkdir -p "$out/callgrind" "$out/time"
logs=$(mktemp -d)  # the servers' own logs: shown when one does not come up, then removed
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$logs"
}
trap cleanup EXIT INT TERM

# replSetInitiate over OP_MSG (a one-member set on 127.0.0.1:PORT), then hello until the member
# is a writable primary; retried while it does not accept connections yet.
initiate() {
  python3 - "$1" <<'PY'
import socket, struct, sys, time
port = int(sys.argv[1])
def bson(d):
    out = b""
    for k, v in d.items():
        key = k.encode() + b"\0"
        if isinstance(v, int): out += b"\x10" + key + struct.pack("<i", v)
        elif isinstance(v, str): s = v.encode() + b"\0"; out += b"\x02" + key + struct.pack("<i", len(s)) + s
        elif isinstance(v, dict): out += b"\x03" + key + bson(v)
        elif isinstance(v, list): out += b"\x04" + key + bson({str(i): x for i, x in enumerate(v)})
    return struct.pack("<i", len(out) + 5) + out + b"\0"
cmd = {"replSetInitiate": {"_id": "rs0", "members": [{"_id": 0, "host": "127.0.0.1:%d" % port}]},
       "$db": "admin"}
initiated = False
def ask(cmd):
    body = struct.pack("<I", 0) + b"\0" + bson(cmd)
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall(struct.pack("<iiii", 16 + len(body), 1, 0, 2013) + body)
    return s.recv(65536)
OK = b"\x01ok\x00" + struct.pack("<d", 1.0)
WRITABLE = b"\x08isWritablePrimary\x00\x01"
for attempt in range(3000):  # 10 minutes at most: a member under valgrind starts slowly
    try:
        if not initiated:
            reply = ask(cmd)
            if OK not in reply: sys.exit("replSetInitiate refused: %r" % reply)
            initiated = True
        if WRITABLE in ask({"hello": 1, "$db": "admin"}): sys.exit(0)
    except OSError:
        pass  # not accepting connections yet
    time.sleep(0.2)
sys.exit("mongosim on port %d never became a writable primary" % port)
PY
}

# start NAME PORT PROGRAM... : a one-member set, initiated, its member a writable primary.
start() {
  local name=$1 port=$2; shift 2
  "$@" --port "$port" --replSet rs0 > "$logs/$name.log" 2>&1 &
  pids+=($!)
  initiate "$port" || { tail -20 "$logs/$name.log" >&2; exit 1; }
}

cell() {  # cell URI OUT_JSON_DIR ARGS...
  local uri=$1 dir=$2; shift 2
  "$lockbench" --uri "$uri" --strategies notify --mode threads --locks 1 --out "$dir" "$@" \
    > "$dir.log" 2>&1
}

echo "mongosim_cost: instructions (callgrind)"
port=27571
for side in old new; do
  bin=$old; [ "$side" = new ] && bin=$new
  start "callgrind-$side" $port valgrind --tool=callgrind \
    --callgrind-out-file="$out/callgrind/$side.out" "$bin"
  cell "mongodb://127.0.0.1:$port/?replicaSet=rs0&serverSelectionTimeoutMS=60000&socketTimeoutMS=120000" \
    "$out/callgrind/$side" --contention 32 --holds-ms 0 --slices none --seconds-per-cell 30 \
    --database cost
  kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true; unset 'pids[-1]'
  port=$((port + 1))
done

echo "mongosim_cost: time (alternating, $reps repetitions)"
start time-old 27581 "$old"
start time-new 27582 "$new"
for rep in $(seq 1 "$reps"); do
  for side in old new; do
    p=27581; [ "$side" = new ] && p=27582
    cell "mongodb://127.0.0.1:$p/?replicaSet=rs0" "$out/time/$side.$rep" --contention 2 32 \
      --holds-ms 0 1 10 --slices processes --seconds-per-cell 4 --database "cost$rep"
    echo "  $side, repetition $rep: done"
  done
done

python3 "$here/scripts/mongosim_cost_report.py" "$out" "$reps" > "$out/summary.md"
echo "mongosim_cost: wrote $out/summary.md"
