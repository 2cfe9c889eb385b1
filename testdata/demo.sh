#!/usr/bin/env bash
# make demo: start three nodes, show them, stopwait them, leave nothing
# running. Everything lives in a temporary rundir that is removed at the end.
set -euo pipefail
multi=$(realpath "${1:-bin/multi}")
export MULTI_RUNDIR=$(mktemp -d /tmp/multi-demo.XXXXXX)
cleanup() {
  # Whatever happens, stop every node the demo started, by its lock.
  "$multi" kill >/dev/null 2>&1 || true
  rm -rf "$MULTI_RUNDIR"
}
trap cleanup EXIT

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
# quote prints its arguments as one shell command line, each quoted only
# when it must be, so that what the demo shows can be pasted as it is.
quote() {
  local out="" a q="'"
  for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then out+=" $a"; else out+=" '${a//$q/$q\\$q$q}'"; fi
  done
  printf '%s' "${out# }"
}
# run shows the multi command line, quoted, then runs it.
run() { say "$(quote multi "$@")"; "$multi" "$@"; }

run start w1 w2 w3 -- sh -c 'echo "%n up as pid $$"; trap "echo %n got TERM; exit 0" TERM; while :; do sleep 0.1; done'

run status

say "cat $MULTI_RUNDIR/w1.pid   # the pid; the node's own process holds the file's lock"
cat "$MULTI_RUNDIR/w1.pid"
say "grep POSIX /proc/locks   # one POSIX write lock per node, held by the node's pid"
grep POSIX /proc/locks | grep -F -f <(cat "$MULTI_RUNDIR"/*.pid | sed 's/^/ /;s/$/ /') || true

run start w1   # already running: started again from its record, it is left alone

run status --json w2

say multi stopwait
time "$multi" stopwait

say "multi status   # exit code 3: not running"
"$multi" status || echo "(exit $?)"

say "cat $MULTI_RUNDIR/w1.log"
cat "$MULTI_RUNDIR/w1.log"
