#!/usr/bin/env bash
# record-flock.sh BIN: see README.md.
B=$1; R=$(mktemp -d /tmp/recflock.XXXX); chmod 755 $R
$B start $(seq -f 'w%g' 1 30) --rundir $R --settle=0 -- sleep 1000 >/dev/null
setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import fcntl,glob,sys,time
fs=[open(p) for p in glob.glob(sys.argv[1]+"/*.node")]
for f in fs: fcntl.flock(f, fcntl.LOCK_EX)
print("locked", len(fs), flush=True); time.sleep(120)' $R > $R.out &
locker=$!
for i in $(seq 100); do grep -q locked $R.out 2>/dev/null && break; sleep 0.1; done; cat $R.out
/usr/bin/time -f "status of 30 nodes, records locked by uid 65534: %e s, exit %x" $B status --rundir $R >/dev/null
kill $locker; wait $locker 2>/dev/null
$B stopwait --rundir $R >/dev/null; rm -rf $R $R.out
