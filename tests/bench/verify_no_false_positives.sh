#!/bin/sh
# verify_no_false_positives.sh -- issue 12's "no false positives" measurement: every shipped
# cmdq and iova plugin (null is skipped by verify) must pass `iommulab verify` run after run,
# also with other work competing for the cores. A cmdq plugin's sim part is deterministic (same
# seeds, same schedule, same verdict), so it is the native part that is repeated: per plugin,
# RUNS consecutive `verify NAME --engine native` on the machine as it is, RUNS more with two
# busy-loop processes (`sh -c 'while :; do :; done'`, nice 0, killed by pid at the end)
# competing for the cores, then one full `verify NAME` (native and sim), timed. An iova
# plugin's checks run on real threads only, so each of its runs is the whole `verify NAME`.
#
# Each run is PASS (exit 0), INCONCLUSIVE (exit 1 with no FAIL row: every failure was a
# starved trial's timeout, see README "Inconclusive") or FAIL (its output kept under OUT).
# Prints per plugin the three counts per condition, the median and maximum seconds of one
# native verify, the full verify's verdict and seconds, and the load average before each
# plugin. Use a release build (meson setup build-rel --buildtype=release).
#
# usage: tests/bench/verify_no_false_positives.sh BUILD [RUNS] [PLUGIN...]
#   RUNS: 20 unless given; PLUGIN: every cmdq and iova plugin of BUILD/plugins but null
#   unless given.
# Takes about 30 minutes with RUNS = 20 on a 2-core machine: measured (release build, 10
# plugins) 17 minutes with RUNS = 8 at a load average of 3-10 and 18 minutes with RUNS = 12
# at 1-5; one native verify is 1.6-5 s (median; up to 24 s beside the busy loops or after a
# noise re-run), one full verify 9-42 s (spinlock the longest). It takes the machine
# meanwhile: do not run it beside a build.
# Exit 0 when every run passed, 1 when one failed or was inconclusive, 2 on bad usage.
set -eu

[ $# -ge 1 ] || { echo "usage: verify_no_false_positives.sh BUILD [RUNS] [PLUGIN...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
runs=20
if [ $# -ge 1 ]; then
	runs=$1
	shift
fi
exe=$build/iommulab
[ -x "$exe" ] || { echo "verify_no_false_positives.sh: no $exe" >&2; exit 2; }
if [ $# -ge 1 ]; then
	plugins=$*
else
	plugins=$(cd "$build/plugins" && ls cmdq-*.so iova-*.so | grep -v '\.sim\.so$' |
		sed 's/^cmdq-//; s/^iova-//; s/\.so$//' | grep -vx null)
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/iommulab-nofp.XXXXXX")
busy=""
stop_busy() {
	for pid in $busy; do
		kill "$pid" 2>/dev/null || :
		wait "$pid" 2>/dev/null || :
	done
	busy=""
}
trap stop_busy EXIT INT TERM

now() { date +%s.%N; }

# One verify; its verdict (PASS, INCONCLUSIVE, FAIL) and wall seconds appended to $3.
one() {
	log=$out/$1.$2.$(( $(wc -l < "$3") + 1 )).txt
	t0=$(now)
	set +e
	"$exe" verify "$1" $4 > "$log" 2>&1
	rc=$?
	set -e
	t1=$(now)
	if [ $rc -eq 0 ]; then
		v=PASS
	elif [ $rc -eq 1 ] && ! grep -q '^  [a-z_]* *FAIL ' "$log" &&
	     grep -q '^  [a-z_]* *INCONCLUSIVE ' "$log"; then
		v=INCONCLUSIVE
	else
		v=FAIL
	fi
	reruns=$(grep -o '[0-9]* trials re-run' "$log" | cut -d' ' -f1 || :)
	echo "$v $(awk "BEGIN { print $t1 - $t0 }") ${reruns:-0}" >> "$3"
	if [ $v = PASS ]; then
		rm -f "$log"
	fi
}

# "pass P, INCONCLUSIVE I, FAIL F, re-runs R; one verify median M s, max X s" of a results file.
summary() {
	p=$(grep -c '^PASS' "$1" || :)
	i=$(grep -c '^INCONCLUSIVE' "$1" || :)
	f=$(grep -c '^FAIL' "$1" || :)
	r=$(awk '{ s += $3 } END { print s + 0 }' "$1")
	med=$(cut -d' ' -f2 "$1" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] }')
	max=$(cut -d' ' -f2 "$1" | sort -n | tail -1 | awk '{ printf "%.1f", $1 }')
	echo "pass $p/$((p + i + f)), INCONCLUSIVE $i, FAIL $f (re-runs $r); one verify median ${med} s, max ${max} s"
}

echo "verify_no_false_positives: $exe, $runs runs per condition, logs of non-passing runs in $out"
bad=0
for name in $plugins; do
	echo "$name (load average $(cut -d' ' -f1-3 /proc/loadavg)):"
	# --engine is refused for an iova plugin: its checks are its whole verify.
	part="--engine native"
	[ -e "$build/plugins/iova-$name.so" ] && part=""
	: > "$out/$name.quiet"
	: > "$out/$name.busy"
	: > "$out/$name.full"
	k=0
	while [ $k -lt "$runs" ]; do
		one "$name" quiet "$out/$name.quiet" "$part"
		k=$((k + 1))
	done
	nice -n 0 sh -c 'while :; do :; done' &
	busy="$busy $!"
	nice -n 0 sh -c 'while :; do :; done' &
	busy="$busy $!"
	k=0
	while [ $k -lt "$runs" ]; do
		one "$name" busy "$out/$name.busy" "$part"
		k=$((k + 1))
	done
	stop_busy
	one "$name" full "$out/$name.full" ""
	echo "  ${part:+native, }as the machine is:   $(summary "$out/$name.quiet")"
	echo "  ${part:+native, }2 busy loops beside: $(summary "$out/$name.busy")"
	echo "  full verify${part:+ (native + sim)}:  $(cut -d' ' -f1 "$out/$name.full") in $(cut -d' ' -f2 "$out/$name.full" | awk '{ printf "%.1f", $1 }') s"
	if grep -qv '^PASS' "$out/$name.quiet" "$out/$name.busy" "$out/$name.full"; then
		bad=1
	fi
done
exit $bad
