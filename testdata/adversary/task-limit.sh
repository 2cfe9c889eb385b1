#!/usr/bin/env bash
# task-limit.sh BIN: see README.md.
M=$1; CG=/sys/fs/cgroup/pids/multi-adversary-$$; mkdir $CG; echo 25 > $CG/pids.max
R=$(mktemp -d)
sh -c "echo \$\$ > $CG/cgroup.procs; exec $M start 100 --rundir=$R -- sleep 1000" > $R.out 2>&1; rc=$?
echo "exit $rc; started: $(grep -c ': started' $R.out); FAILED: $(grep -c FAILED $R.out); fatal: $(grep -c 'fatal error' $R.out)"
grep -m1 FAILED $R.out | cut -c1-140
echo "pidfiles: $(ls $R/*.pid 2>/dev/null | wc -l); records: $(ls $R/*.node 2>/dev/null | wc -l); processes in cgroup: $(wc -l < $CG/cgroup.procs)"
for p in $(cat $CG/cgroup.procs); do kill -9 $p; done
for i in $(seq 100); do rmdir $CG 2>/dev/null && break; sleep 0.1; done; rm -rf $R $R.out
