#!/bin/bash
# slurm_array.sh -- the Slurm recipe for real: a one-node cluster on this machine (munged,
# slurmctld and slurmd with their config, state, sockets and pid files in a temp dir), the
# sweep of configs/cmdq-ways-sim.ini (shortened) submitted with configs/slurm/submit.sh as an
# array of 4 shards plus the merge that depends on it, and the merged trials.csv compared with
# a serial run of the same sweep, row for row. The daemons are stopped by their own pid files
# whatever happens. Skips (77) without the Debian packages slurm-wlm and munge, or when not
# root (slurmd runs the jobs as their user).
#
#   slurm_array.sh SOURCE_DIR IOMMULAB
set -uo pipefail

src=$1 iommulab=$2
for prog in munged mungekey slurmctld slurmd sbatch squeue scontrol; do
	if ! command -v "$prog" >/dev/null 2>&1 && ! [ -x "/usr/sbin/$prog" ]; then
		echo "SKIP: $prog not found (apt-get install slurm-wlm munge)"
		exit 77
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: a one-node Slurm cluster needs root (SlurmUser=root)"
	exit 77
fi
export PATH="$PATH:/usr/sbin"

tmp=$(mktemp -d /tmp/iommulab-slurm-XXXXXX)
stop_daemons() {
	for pidfile in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munged.pid"; do
		[ -s "$pidfile" ] || continue
		pid=$(cat "$pidfile")
		kill "$pid" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null
	done
}
cleanup() {
	stop_daemons
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for log in slurmctld.log slurmd.log munged.log; do
		[ -f "$tmp/$log" ] && { echo "--- $log"; tail -20 "$tmp/$log"; }
	done
	for out in "$tmp"/work/*.out; do
		[ -f "$out" ] && { echo "--- $out"; tail -20 "$out"; }
	done
	exit 1
}

# A free TCP port (bound and released: a race with another process is possible, not likely).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# munge with its own key and socket, so the machine's munge (if any) is left alone.
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/work"
chmod 700 "$tmp/munge"
mungekey --create --keyfile="$tmp/munge/munge.key" || fail "mungekey"
munged --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.sock" \
	--pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" \
	--seed-file="$tmp/munge/munge.seed" --force || fail "munged did not start"

host=$(hostname -s)
cpus=$(nproc)
ctld_port=$(free_port)
d_port=$(free_port)
cat >"$tmp/slurm.conf" <<EOF
ClusterName=iommulab-test
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MessageTimeout=20
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -f "$SLURM_CONF" -i || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 100); do
	state=$(sinfo -h -n "$host" -o %T 2>/dev/null)
	case $state in idle* | mixed* | allocated*) break ;; esac
	sleep 0.2
done
case $state in idle* | mixed* | allocated*) ;; *) fail "the node did not come up (state '$state')" ;; esac

# The sweep: every cmdq strategy at 1 and 16 simulated CPUs, 2 repeats, 2 ms: 24 trials.
sets=(--set sweep.cpus=1,16 --set repeats=2 --set duration_ms=2 --set warmup_ms=1)
cd "$tmp/work" || fail "cd"
ids=$(IOMMULAB="$iommulab" "$src/configs/slurm/submit.sh" 4 "$src/configs/cmdq-ways-sim.ini" \
	"$tmp/work/sweep" "${sets[@]}") || fail "submit.sh"
read -r array merge <<<"$ids"
echo "submitted array $array, merge $merge"
# Wait for both jobs to leave the queue (90 s at most: the sweep takes seconds).
for _ in $(seq 450); do
	[ -z "$(squeue -h -j "$array,$merge" 2>/dev/null)" ] && break
	sleep 0.2
done
[ -z "$(squeue -h -j "$array,$merge" 2>/dev/null)" ] || fail "the jobs did not finish"
[ -f "$tmp/work/sweep/trials.csv" ] || fail "the merge job wrote no sweep/trials.csv"
for k in 0 1 2 3; do
	grep -q "^shard: $k/4$" "$tmp/work/sweep.shard$k/shard.txt" || fail "shard $k: no shard.txt"
done

"$iommulab" run "$src/configs/cmdq-ways-sim.ini" "${sets[@]}" -j 1 --out "$tmp/serial" \
	>/dev/null 2>"$tmp/serial.log" || fail "the serial run: $(tail -3 "$tmp/serial.log")"
cmp "$tmp/serial/trials.csv" "$tmp/work/sweep/trials.csv" ||
	fail "the merged trials.csv differs from the serial run's"
rows=$(($(wc -l <"$tmp/serial/trials.csv") - 1))
[ "$rows" -eq 24 ] || fail "the serial run has $rows trials, not 24"
# summary.json: the same past its meta line (times, paths).
cmp <(grep -v '"meta":' "$tmp/serial/summary.json") <(grep -v '"meta":' "$tmp/work/sweep/summary.json") ||
	fail "summary.json differs"
echo "PASS: 4 Slurm array shards merged ($rows trials) equal the serial run row for row"
