#!/bin/bash
# parallel_sweep.sh -- the GNU parallel recipe (configs/parallel/sweep.sh) for real: the sweep of
# configs/cmdq-ways-sim.ini (shortened) in 4 shards side by side, merged, against a serial run
# of the same sweep, row for row. Skips (77) without GNU parallel (apt-get install parallel).
#
#   parallel_sweep.sh SOURCE_DIR IOMMULAB
set -uo pipefail

src=$1 iommulab=$2
if ! command -v parallel >/dev/null 2>&1; then
	echo "SKIP: GNU parallel not found (apt-get install parallel)"
	exit 77
fi
tmp=$(mktemp -d /tmp/iommulab-parallel-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

sets=(--set sweep.cpus=1,16 --set repeats=2 --set duration_ms=2 --set warmup_ms=1)
IOMMULAB="$iommulab" "$src/configs/parallel/sweep.sh" 4 "$src/configs/cmdq-ways-sim.ini" \
	"$tmp/sweep" "${sets[@]}" >"$tmp/sweep.log" 2>&1 || fail "sweep.sh: $(tail -5 "$tmp/sweep.log")"
"$iommulab" run "$src/configs/cmdq-ways-sim.ini" "${sets[@]}" -j 1 --out "$tmp/serial" \
	>/dev/null 2>"$tmp/serial.log" || fail "the serial run: $(tail -3 "$tmp/serial.log")"
cmp "$tmp/serial/trials.csv" "$tmp/sweep/trials.csv" ||
	fail "the merged trials.csv differs from the serial run's"
rows=$(($(wc -l <"$tmp/serial/trials.csv") - 1))
[ "$rows" -eq 24 ] || fail "the serial run has $rows trials, not 24"
cmp <(grep -v '"meta":' "$tmp/serial/summary.json") <(grep -v '"meta":' "$tmp/sweep/summary.json") ||
	fail "summary.json differs"

# A shard that cannot run stops the recipe before the merge, naming it.
IOMMULAB="$iommulab" "$src/configs/parallel/sweep.sh" 2 "$src/configs/cmdq-ways-sim.ini" \
	"$tmp/bad" --set no_such_key=1 >"$tmp/bad.log" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "a sweep of a bad scenario exited $rc, not 2"
grep -q "these shards did not run (see $tmp/bad.joblog): 0 1" "$tmp/bad.log" ||
	fail "the failed shards are not named: $(tail -3 "$tmp/bad.log")"
[ ! -e "$tmp/bad/trials.csv" ] || fail "a merge ran after failed shards"
echo "PASS: 4 GNU parallel shards merged ($rows trials) equal the serial run row for row"
