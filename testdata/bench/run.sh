#!/bin/bash
# The cost of `multi run` (docs/benchmarks.md): CPU and memory of the run
# process while N nodes (sleep) run, and the time from TERM to its exit.
#   bash testdata/bench/run.sh bin/multi [N...]
# Knobs: IDLE (seconds of idle sampled, default 10), LOG (1: --logfile
# instead of the prefixed pipes).
set -eu
bin=$(realpath "$1"); shift
ns=${*:-1 100 1000}
idle=${IDLE:-10}
tck=$(getconf CLK_TCK)
# wakeups/s: context switches of all the run's threads while idle.
ctxt() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n}'; }
printf '%6s %8s %10s %10s %12s %10s\n' nodes start_s idle_cpu_% wakeups/s rss_kib term_to_exit_s
for n in $ns; do
	d=$(mktemp -d)
	extra=()
	[ "${LOG:-0}" = 1 ] && extra=(--logfile="$d/%n.log")
	t0=$(date +%s.%N)
	"$bin" run "$n" --rundir="$d" --ready-file="$d/ready" "${extra[@]}" -- sleep 100000 >/dev/null 2>"$d/err" &
	pid=$!
	# The ready file appears once every node holds its lock (polled, with a
	# deadline: this is the benchmark, not the program).
	for _ in $(seq 6000); do [ -e "$d/ready" ] && break; sleep 0.01; done
	[ -e "$d/ready" ] || { echo "not ready: $(cat "$d/err")"; kill -KILL $pid; exit 1; }
	t1=$(date +%s.%N)
	read -r -a s0 < <(cut -d' ' -f14,15 /proc/$pid/stat)
	c0=$(ctxt $pid)
	sleep "$idle"
	c1=$(ctxt $pid)
	read -r -a s1 < <(cut -d' ' -f14,15 /proc/$pid/stat)
	rss=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
	ticks=$(( s1[0] + s1[1] - s0[0] - s0[1] ))
	t2=$(date +%s.%N)
	kill -TERM $pid
	wait $pid || true
	t3=$(date +%s.%N)
	printf '%6d %8.2f %10.3f %10.1f %12d %10.3f\n' "$n" "$(echo "$t1 - $t0" | bc)" \
		"$(echo "scale=3; 100 * $ticks / $tck / $idle" | bc)" "$(echo "scale=1; ($c1 - $c0) / $idle" | bc)" \
		"$rss" "$(echo "$t3 - $t2" | bc)"
	rm -rf "$d"
done
