#!/usr/bin/env bash
# apply of an unchanged project against status of the same nodes: a
# project file of one counted group of BENCH_APPLY_N nodes (1000), all
# started; then, BENCH_APPLY_ROUNDS times (5) each, `multi status` and
# `multi apply`, timed; apply must leave every node as it was (the same
# pids) and take at most twice status's median. Prints a TSV row per
# command and the ratio; exits 1 when the bound or the pids fail.
#
#   bash testdata/bench/apply.sh MULTI_BINARY
set -euo pipefail
multi=$(realpath "${1:?usage: apply.sh MULTI_BINARY}")
n=${BENCH_APPLY_N:-1000}
rounds=${BENCH_APPLY_ROUNDS:-5}
dir=$(mktemp -d "${BENCH_DIR:-/dev/shm}/multi-apply.XXXXXX")
chmod 0700 "$dir"
export MULTI_RUNDIR=$dir/run
cleanup() {
  (cd "$dir" && "$multi" kill -q >/dev/null 2>&1) || true
  rm -rf "$dir"
}
trap cleanup EXIT
cd "$dir"
cat > multi.toml <<TOML
[group.w]
command = ["sleep", "3600"]
count = $n
TOML
"$multi" start -q
pids() { for f in "$MULTI_RUNDIR"/*.pid; do cat "$f"; echo; done | sort; }
before=$(pids)
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$multi" "$@" >/dev/null
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000))
}
st=() ap=()
for _ in $(seq "$rounds"); do
  st+=("$(time_ms status)")
  ap+=("$(time_ms apply)")
done
s=$(printf '%s\n' "${st[@]}" | median)
a=$(printf '%s\n' "${ap[@]}" | median)
unchanged=$("$multi" apply | grep -c ': unchanged (pid ' || true)
after=$(pids)
printf 'command\tnodes\tmedian_ms\trounds_ms\n'
printf 'status\t%d\t%d\t%s\n' "$n" "$s" "${st[*]}"
printf 'apply\t%d\t%d\t%s\n' "$n" "$a" "${ap[*]}"
ok=0
if [[ $before != "$after" ]]; then echo "apply changed a node's pid" >&2; ok=1; fi
if ((unchanged != n)); then echo "apply said unchanged for $unchanged of $n nodes" >&2; ok=1; fi
ratio=$(awk -v a="$a" -v s="$s" 'BEGIN {printf "%.2f", a / s}')
echo "apply/status: $ratio (target: at most 2)"
if awk -v a="$a" -v s="$s" 'BEGIN {exit !(a > 2 * s)}'; then ok=1; fi
exit $ok
