// A worker written in Go, for the harness's worker clock tests (worker_clock_test.cpp): Go reads
// the time without libc, so libfaketime cannot move its clock, and a run that moves it must say
// so. It writes one good hold of L1 to --history (t from CLOCK_MONOTONIC, as the protocol asks),
// then waits for SIGTERM and exits 0. Of the protocol's flags it reads only --id and --history.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"unsafe"
)

const clockMonotonic = 1

func monotonicNs() int64 {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic,
		uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		fmt.Fprintln(os.Stderr, "clock_gettime:", errno)
		os.Exit(3)
	}
	return ts.Nano()
}

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	args := map[string]string{}
	for i := 1; i+1 < len(os.Args); i += 2 {
		args[os.Args[i]] = os.Args[i+1]
	}
	out, err := os.OpenFile(args["--history"], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	id := args["--id"]
	event := func(kind, f, value string) {
		fmt.Fprintf(out, `{"t":%d,"process":"%s","type":"%s","f":"%s","lock":"L1"%s}`+"\n",
			monotonicNs(), id, kind, f, value)
	}
	event("invoke", "acquire", "")
	event("ok", "acquire", `,"value":{"lease_ms":1000,"no_token":true}`)
	event("invoke", "release", "")
	event("ok", "release", "")
	<-stop
}
