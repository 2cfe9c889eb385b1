#!/usr/bin/env bash
# ready-file-link.sh BIN [--allow-shared-folders]: see README.md.
set -u
M=$1 FLAG=${2:-}
T=$(mktemp -d); chmod 755 "$T"; mkdir -m 700 "$T/root"
echo "root's secret" > "$T/root/secret"; chmod 600 "$T/root/secret"
mkdir "$T/theirs"; chown nobody "$T/theirs"
ln -s "$T/root/secret" "$T/theirs/ready"; chown -h nobody "$T/theirs/ready"
$M run w1 --rundir="$T/run" $FLAG --ready-file="$T/theirs/ready" -- sleep 300 2>"$T/err" & P=$!
for _ in $(seq 100); do grep -q 'ready$\|FAILED' "$T/err" && break; sleep 0.05; done
kill -TERM $P 2>/dev/null; wait $P; echo "exit $?; root's secret now: $(cat "$T/root/secret")"
grep -m1 FAILED "$T/err"
rm -rf "$T"
