#!/usr/bin/env bash
# torn-records.sh BIN [N]: see README.md.
B=$1; N=${2:-200}; R=$(mktemp -d /tmp/recrace.XXXX)
names=$(seq -f 'w%g' 1 $N)
$B start $names --rundir $R -- sleep 1000 >/dev/null 2>&1 &
$B start $names --rundir $R -- sleep 1001 >/dev/null 2>&1 &
wait
python3 - "$R" "$N" <<'PY'
import json,sys,os
R,N=sys.argv[1],int(sys.argv[2]); wrongcmd=nopid=0
for i in range(1,N+1):
    r=json.load(open(f"{R}/w{i}.node"))
    pid=int(open(f"{R}/w{i}.pid").read().split()[0])
    cmd=open(f"/proc/{pid}/cmdline").read().strip('\0').split('\0')
    if r.get("pid")!=pid: nopid+=1
    if r["command"]!=cmd: wrongcmd+=1
print(f"{N} nodes: {wrongcmd} records name a command not running, {nopid} records do not name the holder's pid")
PY
for f in $R/w*.pid; do p=$(head -1 "$f" 2>/dev/null); [ -n "$p" ] && [ "$p" -gt 1 ] && kill -KILL "$p" 2>/dev/null; done
rm -rf $R
