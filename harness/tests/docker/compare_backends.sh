#!/bin/sh
# One scenario at one seed on the netns backend and on --cluster docker (mongosim image), each
# with --expectation-gate; prints both verdicts (per property) side by side. Passes when both
# runs meet the scenario's expectation and their overall verdicts agree.
#   compare_backends.sh BIN_DIR SCENARIO SEED
# DOCKER_ARGS (optional): more flags for the docker run only, e.g. "--image-kind mongod" (the
# image built here run as a mongod image: clocks through libfaketime instead of a command).
# Exit 77 (skipped) when Docker cannot run here (the docker run says why).
# Not covered: the two runs are separate executions, so their histories differ in timing (the
# seed fixes the plan, not the interleaving); only verdicts are compared.
set -u
bin=$1 scenario=$2 seed=$3
work=$(mktemp -d /tmp/locklab-compare.XXXXXX)
trap 'rm -rf "$work"' EXIT

status_docker=0
# shellcheck disable=SC2086
"$bin/locklab" run "$scenario" --seed "$seed" --expectation-gate --cluster docker \
  ${DOCKER_ARGS:-} --out "$work/docker" >"$work/docker.log" 2>&1 || status_docker=$?
if grep -q "Docker cannot run here" "$work/docker.log"; then
  cat "$work/docker.log"
  echo "SKIP: Docker cannot run here (see above)"
  exit 77
fi
status_netns=0
"$bin/locklab" run "$scenario" --seed "$seed" --expectation-gate --cluster netns \
  --out "$work/netns" >"$work/netns.log" 2>&1 || status_netns=$?

for backend in netns docker; do
  echo "=== $backend (exit $(eval echo \$status_$backend)) ==="
  tail -n 25 "$work/$backend.log"
done
echo "=== verdicts at seed $seed: $(basename "$scenario") ==="
for backend in netns docker; do
  if [ -f "$work/$backend/verdict.json" ]; then
    printf '%-7s %s\n' "$backend" "$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(d["outcome"], " ".join(p["property"] + "=" + p["outcome"] for p in d["properties"]))' \
      "$work/$backend/verdict.json")"
  else
    printf '%-7s %s\n' "$backend" "no verdict"
  fi
done
grep -q '"backend":"docker"' "$work/docker/history.jsonl" 2>/dev/null ||
  { echo "FAIL: the docker run's history does not say backend docker"; exit 1; }
[ "$status_netns" = 0 ] || { echo "FAIL: the netns run did not meet the expectation"; exit 1; }
[ "$status_docker" = 0 ] || { echo "FAIL: the docker run did not meet the expectation"; exit 1; }
a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["outcome"])' "$work/netns/verdict.json")
b=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["outcome"])' "$work/docker/verdict.json")
[ "$a" = "$b" ] || { echo "FAIL: verdicts differ: netns $a, docker $b"; exit 1; }
echo "same verdict: $a"
