# Shared by the docker run tests (sourced, not run): starting a `locklab run --cluster docker` in
# the background, finding the daemon and containers it uses, and checking that nothing of it
# remains. The caller sets bin, scenario, work and fail=0 first.

# The host bridges the runs under directory $1 made: each run records its network's bridge in
# members/docker-network.txt as soon as the network exists (so a run stopped before that made
# none). Only these are checked: other suites' runs may make and keep bridges meanwhile.
run_bridges() {
  find "$1" -name docker-network.txt -exec sed -n 's/^bridge //p' {} + 2>/dev/null
}

# Starts a run named $1 in the background (pid in $pid) and waits (bounded) until the predicate
# $2 holds: "workers" (its workers write the history) or "building" (a docker client of it is
# building an image or creating a container). Extra arguments go to locklab run.
# Exits 77 (skipped) when Docker cannot run here.
start_run() {
  name=$1 until=$2
  shift 2
  "$bin/locklab" run "$scenario" --seed 1 --cluster docker --out "$work/$name" "$@" \
    >"$work/$name.log" 2>&1 &
  pid=$!
  i=0
  while [ $i -lt 2400 ]; do
    if grep -q "Docker cannot run here" "$work/$name.log"; then
      cat "$work/$name.log"; echo "SKIP: Docker cannot run here"; exit 77
    fi
    case $until in
      workers) grep -q '"type":"invoke"' "$work/$name/history.jsonl" 2>/dev/null && return 0 ;;
      building) pgrep -P $pid -f '/docker -H .* (build|import|run) ' >/dev/null && return 0 ;;
    esac
    kill -0 $pid 2>/dev/null || { cat "$work/$name.log"; echo "FAIL: the run ended early"; exit 1; }
    sleep 0.05
    i=$((i + 1))
  done
  echo "FAIL: the run did not reach '$until' within 120 s"; cat "$work/$name.log"; exit 1
}

# The docker client arguments that reach the daemon the run with harness pid $1 uses: the one it
# started (/tmp/locklab-dockerd-<pid>.<start>-<n>) or the user's.
daemon_of() {
  for root in /tmp/locklab-dockerd-"$1".*; do
    [ -S "$root/docker.sock" ] && { echo "-H unix://$root/docker.sock"; return 0; }
  done
  echo ""
}

# Nothing of the run with harness pid $2 and output directory $3 remains ($1 names the case in
# messages). With $4 = had-network, the run got as far as its containers, so it must have
# recorded its bridge (else the bridge check below would check nothing).
check_clean() {
  what=$1 owner=$2 out_dir=$3 had=${4:-}
  if [ "$had" = had-network ] && [ -z "$(run_bridges "$out_dir")" ]; then
    echo "FAIL ($what): the run recorded no bridge under $out_dir"; fail=1
  fi
  for root in /tmp/locklab-dockerd-"$owner".*; do
    [ -e "$root" ] && { echo "FAIL ($what): daemon root $root remains"; fail=1; }
  done
  if [ -S /var/run/docker.sock ] || [ -n "${DOCKER_HOST:-}" ]; then
    left=$(docker ps -aq --filter "label=locklab.owner" --format '{{.Label "locklab.owner"}}' |
      grep -c "^$owner\." || true)
    [ "$left" = 0 ] || { echo "FAIL ($what): $left containers of the run remain"; fail=1; }
  fi
  if pgrep -f "/tmp/locklab-dockerd-$owner\." >/dev/null; then
    echo "FAIL ($what): a daemon of the run still runs"; fail=1
  fi
  for bridge in $(run_bridges "$out_dir"); do
    ip link show "$bridge" >/dev/null 2>&1 && { echo "FAIL ($what): host bridge $bridge remains"; fail=1; }
  done
}
