#!/usr/bin/env bash
# make bench: multi against s6, start-stop-daemon (sequential and in
# parallel), supervisord and celery multi on the same work, interleaved over
# several rounds, on a tmpfs folder and on a disk folder, and the Go
# benchmarks of the hot paths. See docs/benchmarks.md for what is measured
# and how.
#
#   bash testdata/bench/bench.sh [MULTI_BINARY]
#
# Knobs (environment):
#   BENCH_NS="1 10 100 500 1000" node counts (add 2000 5000 for the scale run)
#   BENCH_ROUNDS=3               rounds (each runs every tool on every N; 5 in the
#                                quick modes below)
#   BENCH_TOOLS="multi multi-settle0 multi-notify multi-session multi-notify-session
#                multi-ready-notify multi-ready-fd s6 s6-ready start-stop-daemon
#                start-stop-daemon-P supervisord celery"
#                                (start-stop-daemon-P: xargs -P 2×CPUs; s6: s6-svscan + s6-svlisten;
#                                *-session: MULTI_CONTAINMENT=session, no cgroups; *-ready-*:
#                                nodes that say READY=1 / write to fd 3, s6-ready: notification-fd)
#   BENCH_DIR=                   where the runs' files go (default /dev/shm, a tmpfs)
#   BENCH_DISK_DIR=              a disk filesystem for a second pass with every tool
#                                but celery (default: /var/tmp or /tmp, the first
#                                that is not a tmpfs; "" skips the pass)
#   BENCH_DISK_NS="1 500 1000"   node counts of that pass (N=1 and 1000: the wait-overhead targets)
#   BENCH_PAR=                   parallel calls of start-stop-daemon -P and s6-svc (default 2×CPUs)
#   BENCH_CELERY_MAX=100         largest N for celery multi (workers are ~40 MiB each)
#   BENCH_CELERY_ROUNDS=1        rounds for celery multi (it sleeps 2 s between polls)
#   BENCH_COST_N=1000            nodes that take BENCH_COST_DELAY to stop (0 skips)
#   BENCH_COST_DELAY=10s
#   BENCH_GO=1                   also run the Go benchmarks (0 skips them)
#   BENCH_GOTIME=500ms           their -benchtime
#   BENCH_GOTIME_MULTI=5x        -benchtime of package multi's (a fixed count: each
#                                iteration starts nodes outside the timer, so a time
#                                target ran ~900 iterations of StopWaitTail/1, 10 minutes)
#   BENCH_APPLY=1                apply of an unchanged project against status (apply.sh;
#                                BENCH_APPLY_N=1000 nodes, BENCH_APPLY_ROUNDS=5; 0 skips it)
#   BENCH_INSTALL=1              install missing peers with apt-get (0: fail instead)
#   BENCH_OUT=testdata/bench/out results.tsv, table.md, gobench.txt, bench.png
#   BENCH_PNG=                   where to write the plot (default BENCH_OUT/bench.png)
#   BENCH_TAIL_NS="1 100 1000"   the ready tail (issue 22): last node's READY=1 to
#                                start's return ("" skips it)
#   BENCH_TAIL_ROUNDS=5          its rounds (the target is a median of 5)
#   BENCH_TAIL_MODES="notify fd:3"  its --ready checks
#   BENCH_TAIL_GAPS="0 1ms"      its readies: 0 all at once, else one every gap
#
# Quick modes, for just the rows of issues 21 and 22 (each about 2-3 minutes
# on a quiet machine; no Go benchmarks, no disk or cost pass, only s6 of the
# peers, nothing to install but s6); either or both:
#   BENCH_READY=1   the ready tail (--ready=notify only unless BENCH_TAIL_MODES
#                   says more), and start of BENCH_NS (default 1000) with
#                   --ready=notify and --ready=fd:3 against s6 with notification-fd
#   BENCH_CGROUP=1  start and stopwait of BENCH_NS (default "1 1000") with a
#                   cgroup per node (as root, the default) against
#                   MULTI_CONTAINMENT=session, poll and --wait=notify
set -euo pipefail
cd "$(dirname "$0")/../.."

multi=${1:-}
out=${BENCH_OUT:-testdata/bench/out}
mkdir -p "$out"
out=$(realpath "$out")

driver_pid=
policy_rc_d=
cleanup() {
  # The driver kills, by pid, every process it started; give it the chance.
  if [[ -n $driver_pid ]] && kill -0 "$driver_pid" 2>/dev/null; then
    kill -TERM "$driver_pid" 2>/dev/null || true
    wait "$driver_pid" 2>/dev/null || true
  fi
  if [[ -n $policy_rc_d ]]; then rm -f "$policy_rc_d"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

say() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

# --- quick modes -----------------------------------------------------------
quick=
quick_tools=
if [[ ${BENCH_READY:-0} == 1 ]]; then
  quick=1
  quick_tools+=" multi-ready-notify multi-ready-fd s6-ready"
fi
if [[ ${BENCH_CGROUP:-0} == 1 ]]; then
  quick=1
  quick_tools+=" multi multi-session multi-notify multi-notify-session"
fi
if [[ -n $quick ]]; then
  # Set but empty (BENCH_NS= or BENCH_TOOLS=): none, e.g. the tail alone.
  : "${BENCH_TOOLS=${quick_tools# }}"
  if [[ ${BENCH_READY:-0} == 1 ]]; then : "${BENCH_NS=1000}"; else : "${BENCH_NS=1 1000}"; fi
  : "${BENCH_GO:=0}" "${BENCH_DISK_DIR=}" "${BENCH_COST_N:=0}" "${BENCH_APPLY:=0}"
  # Their targets are ratios of two medians (cgroup ÷ session, multi ÷
  # s6): of 3 rounds, one slow round of either side decides the verdict.
  : "${BENCH_ROUNDS:=5}"
  if [[ ${BENCH_READY:-0} == 1 ]]; then : "${BENCH_TAIL_MODES:=notify}"; else : "${BENCH_TAIL_NS=}"; fi
fi

# --- the peers, from Debian's packages --------------------------------------
missing=()
command -v start-stop-daemon >/dev/null || missing+=(dpkg)
[[ -x /usr/bin/s6-svscan && -x /usr/bin/s6-svlisten && -x /usr/bin/s6-ftrig-listen ]] || missing+=(s6)
if [[ -z $quick ]]; then
  [[ -x /usr/bin/supervisord && -x /usr/bin/supervisorctl ]] || missing+=(supervisor)
  /usr/bin/python3 -c 'import celery' 2>/dev/null || missing+=(python3-celery)
  [[ -x /usr/bin/celery ]] || missing+=(celery)
  command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
fi
if ((${#missing[@]})); then
  if [[ ${BENCH_INSTALL:-1} == 0 || $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
    echo "bench: missing ${missing[*]}; install them (apt-get install ${missing[*]}) or run as root with apt" >&2
    exit 1
  fi
  say "installing ${missing[*]}"
  # Packages must not start services (supervisor's init script) while they
  # install: the benchmark runs its own supervisord.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    policy_rc_d=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy_rc_d"
    chmod +x "$policy_rc_d"
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [[ -n $policy_rc_d ]]; then rm -f "$policy_rc_d"; policy_rc_d=; fi
fi

# --- build ------------------------------------------------------------------
say "building multi and the driver"
if [[ -z $multi ]]; then
  multi=$out/multi
  go build -tags urfave_cli_no_docs -o "$multi" .
fi
multi=$(realpath "$multi")
go build -o "$out/driver" ./testdata/bench/driver
CGO_ENABLED=0 go build -o "$out/readynode" ./testdata/bench/readynode

bench_dir=${BENCH_DIR:-}
if [[ -z $bench_dir ]]; then
  bench_dir=/dev/shm
  [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]] || bench_dir=${TMPDIR:-/tmp}
fi

# The disk pass: a folder on a disk filesystem (ext4 here), not a tmpfs.
if [[ -v BENCH_DISK_DIR ]]; then
  disk_dir=$BENCH_DISK_DIR
else
  disk_dir=
  for d in /var/tmp /tmp; do
    t=$(stat -f -c %T "$d" 2>/dev/null) || continue
    if [[ $t != tmpfs ]]; then disk_dir=$d; break; fi
  done
fi

fstype() { findmnt -n -o FSTYPE -T "$1" 2>/dev/null || stat -f -c %T "$1"; }

# What every results file records, to trace its numbers to the tree.
commit=$(git rev-parse HEAD 2>/dev/null || echo '?')
dirty=$(git status --porcelain 2>/dev/null | grep -q . && echo dirty || echo clean)
record() {
  echo "# commit: $commit ($dirty tree)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# kernel: $(uname -sr), $(nproc) CPUs"
  echo "# folders: $bench_dir ($(fstype "$bench_dir")); disk ${disk_dir:-none}${disk_dir:+ ($(fstype "$disk_dir"))}"
  echo "# knobs: $(env | grep -E '^BENCH_' | sort | tr '\n' ' ')"
}
began=$(date +%s)

# --- the Go benchmarks ------------------------------------------------------
if [[ ${BENCH_GO:-1} != 0 ]]; then
  say "Go benchmarks (go test -bench; files in $bench_dir)"
  {
    record
    echo "# go test -run '^\$' -bench . -benchtime ${BENCH_GOTIME:-500ms} -count 1 ./nodes ./internal/record ./nodes/pidfile ./internal/cli ./waiter (MULTI_BENCH_DIR=$bench_dir)"
    echo "# go test -run '^\$' -bench . -benchtime ${BENCH_GOTIME_MULTI:-5x} -count 1 ./multi (MULTI_BENCH_DIR=$bench_dir)"
  } >"$out/gobench.txt"
  {
    MULTI_BENCH_DIR=$bench_dir go test -run '^$' -bench . -benchtime "${BENCH_GOTIME:-500ms}" -count 1 \
      ./nodes ./internal/record ./nodes/pidfile ./internal/cli ./waiter
    MULTI_BENCH_DIR=$bench_dir go test -run '^$' -bench . -benchtime "${BENCH_GOTIME_MULTI:-5x}" -count 1 ./multi
  } 2>&1 | tee -a "$out/gobench.txt" | grep -E '^(Benchmark|ok|FAIL|---)' >&2
fi

# --- multi and the peers ----------------------------------------------------
tools=${BENCH_TOOLS-multi multi-settle0 multi-notify multi-session multi-notify-session multi-ready-notify multi-ready-fd s6 s6-ready start-stop-daemon start-stop-daemon-P supervisord celery}
say "multi and its peers (N: ${BENCH_NS:-1 10 100 500 1000}; disk ${disk_dir:-none}: ${BENCH_DISK_NS:-1 500 1000}; rounds: ${BENCH_ROUNDS:-3})"
"$out/driver" \
  -multi "$multi" \
  -n "${BENCH_NS-1 10 100 500 1000}" \
  -rounds "${BENCH_ROUNDS:-3}" \
  -tools "${tools// /,}" \
  -dir "$bench_dir" \
  -disk-dir "$disk_dir" \
  -disk-ns "${BENCH_DISK_NS:-1 500 1000}" \
  -par "${BENCH_PAR:-0}" \
  -celery-max "${BENCH_CELERY_MAX:-100}" \
  -celery-rounds "${BENCH_CELERY_ROUNDS:-1}" \
  -cost-n "${BENCH_COST_N:-1000}" \
  -cost-delay "${BENCH_COST_DELAY:-10s}" \
  -tail-ns "${BENCH_TAIL_NS-1 100 1000}" \
  -tail-rounds "${BENCH_TAIL_ROUNDS:-5}" \
  -tail-modes "${BENCH_TAIL_MODES:-notify fd:3}" \
  -tail-gaps "${BENCH_TAIL_GAPS:-0 1ms}" \
  -app testdata/bench \
  -out "$out" \
  -png "${BENCH_PNG:-$out/bench.png}" &
driver_pid=$!
status=0
wait "$driver_pid" || status=$?
driver_pid=
if [[ ${BENCH_APPLY:-1} == 1 ]]; then
  say "apply of an unchanged project of ${BENCH_APPLY_N:-1000} nodes against status (apply.sh)"
  BENCH_DIR=$bench_dir bash testdata/bench/apply.sh "$multi" | tee "$out/apply.tsv" || status=1
fi
took=$(($(date +%s) - began))
printf 'make bench: %dm%02ds in all (Go benchmarks and driver), commit %s (%s tree)\n' $((took / 60)) $((took % 60)) "${commit:0:12}" "$dirty" | tee -a "$out/table.md" >&2
exit "$status"
