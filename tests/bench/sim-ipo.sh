#!/bin/sh
# sim-ipo.sh -- the sim's callgrind instructions per lab.h operation, without its start-up: one
# bench_sim trial under callgrind at two virtual durations, the difference of the instruction
# counts over the difference of the lab.h operations. Deterministic to a few instructions
# (the host's addresses move the line table's probes). Needs valgrind.
#   tests/bench/sim-ipo.sh BUILD_DIR PLUGIN CPUS [SCENARIO.ini [D1_MS D2_MS]]
# e.g. tests/bench/sim-ipo.sh build-rel cmpxchg 64  (configs/cmdq-ways-sim.ini, 3 and 6 ms)
set -eu
[ $# -ge 3 ] || { echo "usage: $0 BUILD_DIR PLUGIN CPUS [SCENARIO.ini [D1_MS D2_MS]]" >&2; exit 2; }
build=$1 plugin=$2 cpus=$3 ini=${4:-configs/cmdq-ways-sim.ini} d1=${5:-3} d2=${6:-6}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

one() {
	# The stuck-CPU timer's signal, taken between coroutine stacks, trips a callgrind
	# assertion on runs of more than a few host seconds under it (1024 CPUs).
	out=$(IOMMULAB_STUCK_TIMER=off valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" \
		"$build/tests/bench/bench_sim" "$ini" "$plugin" "$cpus" "$1" 2>/dev/null) || true
	ops=$(echo "$out" | sed -n 's/.* ops, \([0-9]*\) lab.h ops.*/\1/p')
	ir=$(sed -n 's/^summary: *//p' "$tmp/cg.$1")
	[ -n "$ops" ] && [ -n "$ir" ] || { echo "$0: bench_sim failed at $1 ms" >&2; exit 1; }
	echo "$ops $ir"
}
a=$(one "$d1") || exit 1
b=$(one "$d2") || exit 1
set -- $a $b
[ "$3" -gt "$1" ] || { echo "$0: no more lab.h ops at $d2 ms than at $d1 ms" >&2; exit 1; }
echo "$plugin $cpus CPUs: $(( ($4 - $2) / ($3 - $1) )) instructions per lab.h op" \
	"($1 -> $3 lab.h ops, $2 -> $4 instructions, $d1 -> $d2 ms)"
