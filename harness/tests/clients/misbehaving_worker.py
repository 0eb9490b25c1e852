#!/usr/bin/env python3
"""A worker that breaks the worker protocol on purpose, for the harness's own tests.

--mode chooses how: truncated (its last line has no newline when it exits), unknown-f (a line
with an f no worker writes), non-json (a line that is not JSON), exit-at-once (exits 3 before
writing anything). Around the bad line it writes good events (an acquire and a release of L1,
then another), so a test can check that none of them is lost. Then, as a worker must, it exits
0: at once in a run counted by --operations (its two operations are done), on SIGTERM in a run
timed by duration. Of the other protocol flags it reads only --id, --history and --operations.
"""
import os
import signal
import sys
import time


def main():
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    mode, worker = args["--mode"], args["--id"]
    if mode == "exit-at-once":
        print(f"misbehaving worker {worker}: exiting at once", file=sys.stderr)
        sys.exit(3)
    fd = os.open(args["--history"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def line(text):
        os.write(fd, text.encode())

    def event(kind, f, value=None):
        extra = f',"value":{value}' if value else ""
        line(f'{{"t":{time.monotonic_ns()},"process":"{worker}","type":"{kind}","f":"{f}",'
             f'"lock":"L1"{extra}}}\n')

    def hold():
        event("invoke", "acquire")
        event("ok", "acquire", '{"lease_ms":1000,"no_token":true}')
        event("invoke", "release")
        event("ok", "release")

    hold()
    if mode == "unknown-f":
        event("ok", "frobnicate")
    elif mode == "non-json":
        line("this is not json\n")
    hold()
    while not stop and args.get("--operations", "0") == "0":
        time.sleep(0.01)
    if mode == "truncated":
        line(f'{{"t":{time.monotonic_ns()},"process":"{worker}","type":"inv')
    sys.exit(0)


main()
