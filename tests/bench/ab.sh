#!/bin/sh
# ab.sh -- compare two builds of iommulab (before/after a change) on this machine: the plugins'
# native code instruction by instruction, then bench_harness and the native micro workload
# (tests/bench/micro-native.ini) run in interleaved rounds (ABBA order, so a load that drifts
# over the run falls on both), printing the median, min and max of every figure per build and
# the load average of each round. Use release builds (meson setup B --buildtype=release).
#
# usage: tests/bench/ab.sh BUILD_A BUILD_B [ROUNDS]    (ROUNDS: 8 unless given)
# Exit 0 when every trial of both builds ran, 1 when one failed (listed, left out of the
# figures), 2 on bad usage.
set -eu

[ $# -ge 2 ] || { echo "usage: ab.sh BUILD_A BUILD_B [ROUNDS]" >&2; exit 2; }
a=$(cd "$1" && pwd)
b=$(cd "$2" && pwd)
rounds=${3:-8}
here=$(cd "$(dirname "$0")" && pwd)
for d in "$a" "$b"; do
	[ -x "$d/iommulab" ] && [ -x "$d/tests/bench/bench_harness" ] ||
		{ echo "ab.sh: $d has no iommulab or tests/bench/bench_harness" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/iommulab-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Same instructions: every native plugin's disassembly, addresses included.
same=0
differ=""
for so in "$a"/plugins/*.so; do
	name=$(basename "$so")
	case $name in *.sim.so) continue ;; esac
	[ -f "$b/plugins/$name" ] || continue
	objdump -d --no-show-raw-insn "$so" | tail -n +3 >"$work/a.dis"
	objdump -d --no-show-raw-insn "$b/plugins/$name" | tail -n +3 >"$work/b.dis"
	if cmp -s "$work/a.dis" "$work/b.dis"; then
		same=$((same + 1))
	else
		differ="$differ $name"
	fi
done
echo "native plugins with identical instructions: $same; differing:${differ:- none}"

i=1
while [ "$i" -le "$rounds" ]; do
	if [ $((i % 2)) = 1 ]; then order="A B"; else order="B A"; fi
	echo "round $i: $(uptime)"
	for w in $order; do
		if [ "$w" = A ]; then d=$a; else d=$b; fi
		"$d/tests/bench/bench_harness" | sed "s/^/$w /" >>"$work/bench.txt"
		# A failed trial (a 2-CPU spin on a loaded 2-core machine can trip the watchdog) is
		# counted and left out of the figures, not the end of the comparison.
		"$d/iommulab" run "$here/micro-native.ini" --out "$work/micro-$w-$i" >"$work/log" 2>&1 ||
			[ -f "$work/micro-$w-$i/trials.csv" ] ||
			{ cat "$work/log" >&2; echo "ab.sh: micro run $w $i failed" >&2; exit 1; }
	done
	i=$((i + 1))
done
echo "end: $(uptime)"

python3 - "$work" "$a" "$b" <<'PY' || exit 1
import collections, csv, glob, os, re, statistics, sys

work, a, b = sys.argv[1:]
fig = collections.defaultdict(list)
failed = collections.defaultdict(list)
for line in open(os.path.join(work, "bench.txt")):
    m = re.match(r"([AB]) (.*?): ([\d.]+) ns", line)
    if m:
        fig[("bench_harness " + m.group(2) + ", ns", m.group(1))].append(float(m.group(3)))
for d in glob.glob(os.path.join(work, "micro-*")):
    w = os.path.basename(d).split("-")[1]
    for r in csv.DictReader(open(os.path.join(d, "trials.csv"))):
        key = "micro %s cpus=%s, Mops/s" % (r["workload.micro.op"], r["cpus"])
        if r["status"] != "ok":
            failed[w].append("%s (%s)" % (key.split(",")[0], r["status"]))
            continue
        fig[(key, w)].append(float(r["ops_per_sec"]) / 1e6)
print("A = %s\nB = %s" % (a, b))
for key in sorted({k for k, _ in fig}):
    for w in "AB":
        v = fig[(key, w)]
        if not v:
            print("%-48s %s  no successful run" % (key, w))
            continue
        print("%-48s %s  median %7.2f  min %7.2f  max %7.2f  (n=%d)"
              % (key, w, statistics.median(v), min(v), max(v), len(v)))
for w in "AB":
    for f in failed[w]:
        print("failed trial in %s: %s" % (w, f))
sys.exit(1 if any(failed.values()) else 0)
PY
