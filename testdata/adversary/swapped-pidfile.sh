#!/usr/bin/env bash
# swapped-pidfile.sh BIN [--allow-shared-folders]: see README.md.
set -u
M=$1 FLAG=${2:-}
B=$(mktemp -d); chmod 755 "$B"; P=$B/pids; mkdir "$P"; chown nobody "$P"
$M start w1 w2 --rundir="$B/run" $FLAG --pidfile="$P/%n.pid" --logfile="$B/%n.log" -- sleep 300 >/dev/null
echo "start: $?"
w1=$(head -1 "$P/w1.pid" 2>/dev/null) w2=$(head -1 "$P/w2.pid" 2>/dev/null)
setpriv --reuid=65534 --regid=65534 --clear-groups mv "$P/w2.pid" "$P/w1.pid"
$M stop w1 --rundir="$B/run" $FLAG --pidfile="$P/%n.pid"; echo "stop w1: $?"
for p in $w1 $w2; do s=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null); echo "pid $p: ${s:-gone} (Z is gone)"; done
for p in $w1 $w2; do [ "$p" -gt 1 ] && kill -KILL "$p" 2>/dev/null; done
rm -rf "$B"
