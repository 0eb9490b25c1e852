#!/usr/bin/env python3
"""A worker that breaks the worker protocol on purpose, for the harness's own tests.

--mode chooses how:
  truncated      its last line has no newline when it exits
  unknown-f      a line with an f no worker writes
  non-json       a line that is not JSON
  exit-at-once   exits 3 before writing anything
  oversized      a line under the 1 MiB line limit as written, far above it as the history
                 encodes it (every 1e14 in it becomes 100000000000000.0)
  no-lock        an acquire ok that does not name its lock
  token-omitted  an acquire ok without its token, from a client whose row says it issues tokens
                 (its good grants carry tokens 1 and 2)
  stdout         writes its events to stdout instead of the --history file, and runs until
                 SIGTERM like any worker in a run timed by duration
  ignore-term    writes its good events, then ignores SIGTERM (and --operations): runs until
                 the harness's SIGKILL
  silent         writes nothing and runs until SIGTERM, even in a run counted by --operations
  good           breaks nothing: its good events, then sleeps (time.sleep) until SIGTERM
  leaves-child   as good, but first starts a child that ignores SIGTERM and sleeps for 10
                 minutes, named on its command line by this worker's --history path; the
                 worker exits on SIGTERM and leaves it running
Around the bad line it writes good events (an acquire and a release of L1, then another), so a
test can check that none of them is lost. Then, as a worker must, it exits 0: at once in a run
counted by --operations (its two operations are done), on SIGTERM in a run timed by duration. Of
the other protocol flags it reads only --id, --history and --operations.
"""
import os
import signal
import subprocess
import sys
import time

# Below the 1 MiB line limit as written ("1e14," is 5 bytes), about 3.6 MB as encoded.
OVERSIZED_NUMBERS = 200_000


def main():
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    mode, worker = args["--mode"], args["--id"]
    if mode == "exit-at-once":
        print(f"misbehaving worker {worker}: exiting at once", file=sys.stderr)
        sys.exit(3)
    if mode == "silent":
        while not stop:
            time.sleep(0.01)
        sys.exit(0)
    if mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "leaves-child":
        subprocess.Popen([sys.executable, "-c",
                          "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                          "time.sleep(600)", args["--history"]])
    if mode == "stdout":
        fd = sys.stdout.fileno()
    else:
        fd = os.open(args["--history"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def line(text):
        os.write(fd, text.encode())

    def event(kind, f, value=None, lock=',"lock":"L1"', token=None):
        extra = f',"value":{value}' if value else ""
        token_field = f',"token":{token}' if token is not None else ""
        line(f'{{"t":{time.monotonic_ns()},"process":"{worker}","type":"{kind}","f":"{f}"'
             f'{lock}{token_field}{extra}}}\n')

    def hold(token):
        grant = '{"lease_ms":1000}' if token else '{"lease_ms":1000,"no_token":true}'
        event("invoke", "acquire")
        event("ok", "acquire", grant, token=token)
        event("invoke", "release", token=token)
        event("ok", "release", token=token)

    tokens = mode == "token-omitted"
    hold(1 if tokens else None)
    if mode == "unknown-f":
        event("ok", "frobnicate")
    elif mode == "non-json":
        line("this is not json\n")
    elif mode == "oversized":
        event("invoke", "release", '{"pad":[' + ",".join(["1e14"] * OVERSIZED_NUMBERS) + "]}")
    elif mode == "no-lock":
        event("ok", "acquire", '{"lease_ms":1000,"no_token":true}', lock="")
    elif mode == "token-omitted":
        event("ok", "acquire", '{"lease_ms":1000}')
    hold(2 if tokens else None)
    while (not stop and args.get("--operations", "0") == "0") or mode == "ignore-term":
        time.sleep(0.01)
    if mode == "truncated":
        line(f'{{"t":{time.monotonic_ns()},"process":"{worker}","type":"inv')
    sys.exit(0)


main()
