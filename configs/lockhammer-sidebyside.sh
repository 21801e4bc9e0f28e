#!/bin/sh
# SPDX-License-Identifier: MIT
# lockhammer-sidebyside -- the micro workload's throughput mode and lockhammer on this host,
# interleaved (for each round, each thread count and each primitive: lockhammer, then
# iommulab), and a table of per-thread ns per op side by side (medians over the rounds).
#
#   configs/lockhammer-sidebyside.sh LOCKHAMMER_BUILD_DIR [ROUNDS]
#
# Lockhammer is the user's to fetch and build (it is not shipped here):
#   git clone https://github.com/ARM-software/synchronization-benchmarks
#   cd synchronization-benchmarks/benchmarks/lockhammer && make
# and LOCKHAMMER_BUILD_DIR is the directory holding lh_incdec_refcount, lh_cas_lockref and
# lh_ticket_spinlock (benchmarks/lockhammer/build, or build.relax_pause in newer trees), or
# benchmarks/lockhammer itself. Without them this script says so and exits
# 77 (the "skipped" status of meson and automake). iommulab is ./build/iommulab beside this
# script's repository, or $IOMMULAB.
#
# What is compared (lockhammer -c 0 -p 0, its "cpu_ns/lock": all threads' CPU time over all
# lock acquires, i.e. per-thread ns per iteration):
#   atomic_add  <-> lh_incdec_refcount  (two atomic adds per iteration: +1 on acquire, -1 on
#                                        release; the table also halves it, per atomic)
#   cas_add     <-> lh_cas_lockref      (two CAS loops per iteration; halved likewise)
#   ticket_lock <-> lh_ticket_spinlock  (one lock and unlock per iteration)
# iommulab's figure: scenario.cpus x 1e9 / ops_per_sec of configs/lockhammer-sidebyside.ini
# (throughput mode: no clock read inside the window; the window is opened and closed once
# per CPU).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
lh=${1:-}
rounds=${2:-3}
iommulab=${IOMMULAB:-$root/build/iommulab}
acquires=${LH_ACQUIRES:-2000000}

if [ -z "$lh" ]; then
	echo "usage: $0 LOCKHAMMER_BUILD_DIR [ROUNDS]" >&2
	echo "lockhammer is not given: build it (see the top of this script) and pass the" >&2
	echo "directory holding lh_incdec_refcount, lh_cas_lockref and lh_ticket_spinlock" >&2
	exit 77
fi
# The directory given, or lockhammer's own (its builds land in build/ in older trees and in
# build.relax_pause/, one per cpu_relax variant, in newer ones).
for d in "$lh" "$lh/build" "$lh/build.relax_pause"; do
	if [ -x "$d/lh_incdec_refcount" ]; then
		lh=$d
		break
	fi
done
for t in incdec_refcount cas_lockref ticket_spinlock; do
	if [ ! -x "$lh/lh_$t" ]; then
		echo "lockhammer not found: $lh/lh_$t is missing or not executable." >&2
		echo "Fetch and build it (the user's step):" >&2
		echo "  git clone https://github.com/ARM-software/synchronization-benchmarks" >&2
		echo "  cd synchronization-benchmarks/benchmarks/lockhammer && make" >&2
		echo "then: $0 .../benchmarks/lockhammer" >&2
		exit 77
	fi
done
if [ ! -x "$iommulab" ]; then
	echo "$iommulab is not built (meson setup build && ninja -C build), or set IOMMULAB" >&2
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lh-side.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
echo "load before: $(uptime)"

r=1
while [ "$r" -le "$rounds" ]; do
	for threads in 1 2; do
		for op in atomic_add cas_add ticket_lock; do
			case $op in
			atomic_add) t=incdec_refcount ;;
			cas_add) t=cas_lockref ;;
			*) t=ticket_spinlock ;;
			esac
			out="$work/lh-$op-$threads-$r.txt"
			"$lh/lh_$t" -t "$threads" -a "$acquires" -c 0 -p 0 >"$out" 2>&1 ||
				echo "warning: lh_$t -t $threads exited $? (see its output below)" >&2
			"$iommulab" run "$here/lockhammer-sidebyside.ini" --set "scenario.cpus=$threads" \
				--set "workload.micro.op=$op" --set scenario.repeats=1 \
				--out "$work/il-$op-$threads-$r" >"$work/il-$op-$threads-$r.log" 2>&1 ||
				echo "warning: iommulab run exited $? ($work/il-$op-$threads-$r.log)" >&2
		done
	done
	r=$((r + 1))
done
echo "load after:  $(uptime)"

python3 - "$work" "$rounds" <<'PY'
import csv, glob, os, re, statistics, sys

work, rounds = sys.argv[1], int(sys.argv[2])
per_iter = {"atomic_add": 2, "cas_add": 2, "ticket_lock": 1}
lh_name = {"atomic_add": "incdec_refcount", "cas_add": "cas_lockref",
           "ticket_lock": "ticket_spinlock"}

def lockhammer_ns(path):
    """Per-thread ns per iteration from one lockhammer run, any of its output formats."""
    lines = open(path, errors="replace").read().splitlines()
    for i, line in enumerate(lines):
        # Current lockhammer: the results table, "... thrds | cpu_ns/lock - crit_ns ...".
        if "cpu_ns/lock" in line and "|" in line:
            for row in lines[i + 1:]:
                cells = row.split("|")
                if len(cells) > 1 and cells[1].split():
                    return float(cells[1].split()[0])
        # Its CSV line "num_threads, cpu_ns/acquire, real/result, mean_lock_depth".
        if line.replace(" ", "").startswith("num_threads,cpu_ns/acquire") and i + 1 < len(lines):
            return float(lines[i + 1].split(",")[1])
    # The 2018 lockhammer: one CSV line, threads, exectx, scheduled ns per access, ...
    for line in reversed(lines):
        f = [x.strip() for x in line.split(",")]
        if len(f) >= 5 and all(re.fullmatch(r"[0-9.]+", x) for x in f[:5]):
            return float(f[2])
    return None

def iommulab_ns(d):
    try:
        rows = list(csv.DictReader(open(os.path.join(d, "trials.csv"))))
    except OSError:
        return None
    v = [float(r["cpus"]) * 1e9 / float(r["ops_per_sec"]) for r in rows
         if r.get("ops_per_sec") and float(r["ops_per_sec"]) > 0]
    return v[0] if v else None

def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None

def fmt(x):
    return "%9.1f" % x if x is not None else "        -"

print("\nper-thread ns per op, median of %d interleaved rounds" % rounds)
print("%-11s %3s  %-16s %9s %9s %9s %7s" % ("op", "thr", "lockhammer", "lh/iter", "lh/prim",
                                             "iommulab", "il/lh"))
for threads in (1, 2):
    for op in ("atomic_add", "cas_add", "ticket_lock"):
        lh = med([lockhammer_ns(p) for p in
                  glob.glob(os.path.join(work, "lh-%s-%d-*.txt" % (op, threads)))])
        il = med([iommulab_ns(d) for d in
                  glob.glob(os.path.join(work, "il-%s-%d-*" % (op, threads)))
                  if os.path.isdir(d)])
        prim = lh / per_iter[op] if lh is not None else None
        ratio = "%7.2f" % (il / prim) if il is not None and prim else "      -"
        print("%-11s %3d  %-16s %s %s %s %s" % (op, threads, lh_name[op], fmt(lh), fmt(prim),
                                                fmt(il), ratio))
if any(lockhammer_ns(p) is None for p in glob.glob(os.path.join(work, "lh-*.txt"))):
    bad = sorted(glob.glob(os.path.join(work, "lh-*.txt")))[0]
    print("\nsome lockhammer output could not be read; the first run said:")
    print(open(bad, errors="replace").read()[-2000:])
PY
