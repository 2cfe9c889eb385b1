#!/usr/bin/env bash
# quick.sh BIN N ROUNDS FOLDER...: a quick look at one build, outside
# make bench: ROUNDS times, in FOLDER/q (removed first), `BIN start N --
# sleep 300` then `BIN stopwait`, timed from this shell; prints the sorted
# times of each. Used in docs/benchmarks.md for the journaled ext4 image.
#
#   bash testdata/bench/quick.sh bin/multi 1000 3 /dev/shm /mnt/ext4j
set -euo pipefail
bin=$1 n=$2 rounds=$3
shift 3
for dir in "$@"; do
  starts=() stops=()
  for _ in $(seq "$rounds"); do
    rm -rf "$dir/q"
    t0=$(date +%s.%N)
    "$bin" start --rundir "$dir/q" -q "$n" -- sleep 300 >/dev/null
    t1=$(date +%s.%N)
    "$bin" stopwait --rundir "$dir/q" -q "$n" >/dev/null
    t2=$(date +%s.%N)
    starts+=("$(echo "$t1 - $t0" | bc)") stops+=("$(echo "$t2 - $t1" | bc)")
  done
  rm -rf "$dir/q"
  echo "$dir N=$n start: $(printf '%s\n' "${starts[@]}" | sort -n | tr '\n' ' ')stopwait: $(printf '%s\n' "${stops[@]}" | sort -n | tr '\n' ' ')"
done
