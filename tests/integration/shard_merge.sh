#!/bin/bash
# shard_merge.sh -- run --shard, merge and report through the command line: which trials a
# shard runs, bad K/N, shards merged in any order equal to the unsharded run byte for byte
# (trials.csv and histograms.csv), runs of another scenario or other plugin builds refused
# naming the difference, overlapping and missing trials, --partial, a shard resumed, shards
# without or with a damaged histograms.csv, and report on a shard and a merge.
#
#   shard_merge.sh SOURCE_DIR IOMMULAB
set -uo pipefail

src=$1 iommulab=$2
tmp=$(mktemp -d /tmp/iommulab-shard-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
# No gnuplot on the PATH: the graphs are not what is tested here, and rendering is slow.
lab() {
	PATH=/nonexistent "$iommulab" "$@"
}
expect() { # expect STATUS LOG PATTERN COMMAND...: exit status and a line of its stderr
	local want=$1 log=$2 pattern=$3 rc
	shift 3
	"$@" >"$log.out" 2>"$log"
	rc=$?
	[ "$rc" -eq "$want" ] || fail "$* exited $rc, not $want: $(tail -3 "$log")"
	grep -qF -- "$pattern" "$log" || fail "$*: no '$pattern' in: $(tail -3 "$log")"
}

ini="$src/configs/cmdq-ways-sim.ini"
sets=(--set sweep.cpus=1,16 --set plugins.cmdq=null,biglock,cmpxchg --set repeats=2
	--set duration_ms=2 --set warmup_ms=1)

for bad in 3/3 -1/3 1/0 x 1/ /3 1/3x 2/1000001; do
	expect 2 "$tmp/bad.log" "--shard wants K/N with 0 <= K < N" lab run "$ini" --shard "$bad"
done

lab run "$ini" "${sets[@]}" -j 1 --out "$tmp/serial" >/dev/null 2>&1 || fail "serial run"
for k in 0 1 2; do
	lab run "$ini" "${sets[@]}" -j 2 --shard "$k/3" --out "$tmp/s$k" >/dev/null 2>"$tmp/s$k.log" ||
		fail "shard $k: $(tail -3 "$tmp/s$k.log")"
	grep -qF "shard $k/3: 4 of them" "$tmp/s$k.log" || fail "shard $k: no plan line"
	printf 'shard: %s/3\ntrials: 4 of 12 (trial i is in shard i mod 3)\n' "$k" |
		cmp - "$tmp/s$k/shard.txt" || fail "shard $k: shard.txt"
	# Its trials are i mod 3 = k, numbered as in the whole sweep, with the serial run's rows.
	want=$(awk -F, -v k="$k" 'NR > 1 && $1 % 3 == k' "$tmp/serial/trials.csv")
	have=$(tail -n +2 "$tmp/s$k/trials.csv")
	[ "$want" = "$have" ] || fail "shard $k's rows are not the serial run's trials i mod 3 = $k"
done

# Merged in any order: the serial run, byte for byte; summary.json but for its meta line.
lab merge "$tmp/m" "$tmp/s2" "$tmp/s0" "$tmp/s1" >"$tmp/m.out" 2>"$tmp/m.log" ||
	fail "merge: $(tail -3 "$tmp/m.log")"
cmp "$tmp/serial/trials.csv" "$tmp/m/trials.csv" || fail "merged trials.csv != serial"
cmp "$tmp/serial/histograms.csv" "$tmp/m/histograms.csv" || fail "merged histograms.csv != serial"
[ "$(($(wc -l <"$tmp/serial/histograms.csv") - 2))" -eq 12 ] || fail "not one histogram per trial"
cmp <(grep -v '"meta":' "$tmp/serial/summary.json") <(grep -v '"meta":' "$tmp/m/summary.json") ||
	fail "merged summary.json != serial"
cmp "$tmp/serial/scenario.ini" "$tmp/m/scenario.ini" || fail "merged scenario.ini"

# A damaged shard.txt (a K past N, a negative count): bad input, saying what it should hold.
for damage in 'shard: 7/2\ntrials: 4 of 12\n' 'shard: 1/3\ntrials: 4 of -1\n'; do
	rm -rf "$tmp/sd" "$tmp/md"
	cp -r "$tmp/s1" "$tmp/sd"
	printf "$damage" >"$tmp/sd/shard.txt"
	expect 2 "$tmp/md.log" "sd/shard.txt is damaged: expected the two lines" \
		lab merge "$tmp/md" "$tmp/s0" "$tmp/sd"
	[ ! -e "$tmp/md" ] || fail "merge wrote $tmp/md from a damaged shard"
	expect 2 "$tmp/rd.log" "shard.txt is damaged: expected" lab report "$tmp/sd"
done
grep -q "== $tmp/s2 (shard 2/3) ==" "$tmp/m/machine.txt" || fail "merged machine.txt"
[ ! -e "$tmp/m/shard.txt" ] || fail "a merge is not a shard"
grep -q "cmpxchg cpus=16" "$tmp/m.out" || fail "merge printed no summary table"
expect 2 "$tmp/again.log" "already holds a trials.csv" lab merge "$tmp/m" "$tmp/s0" "$tmp/s1" "$tmp/s2"

# report: the same table as the run printed.
lab report "$tmp/m" >"$tmp/report.out" 2>&1 || fail "report"
diff <(sed -n '/^plugin \/ point/,/^$/p' "$tmp/m.out") \
	<(sed -n '/^plugin \/ point/,/^$/p' "$tmp/report.out") || fail "report's table != merge's"
grep -qF "$tmp/m: 12 of the scenario's 12 trials" "$tmp/report.out" || fail "report's count"
lab report "$tmp/s1" >"$tmp/report1.out" 2>&1 || fail "report of a shard"
grep -qF "4 of the scenario's 12 trials (shard 1/3: 4 of them" "$tmp/report1.out" ||
	fail "report of a shard: $(tail -2 "$tmp/report1.out")"
expect 2 "$tmp/r.log" "trials.csv" lab report "$tmp/none"

# Refused, naming the difference.
lab run "$ini" "${sets[@]}" --set duration_ms=3 -j 2 --shard 1/3 --out "$tmp/other" >/dev/null 2>&1 ||
	fail "the other scenario's shard"
expect 2 "$tmp/o.log" "scenario.ini and $tmp/other/scenario.ini differ at line" \
	lab merge "$tmp/mo" "$tmp/s0" "$tmp/other" "$tmp/s2"
grep -qF "they are not runs of one resolved scenario" "$tmp/o.log" || fail "o.log"
cp -r "$tmp/s1" "$tmp/s1p"
sed -i 's/^cmdq biglock [^ ]*/cmdq biglock 9.9/' "$tmp/s1p/plugins.txt"
expect 2 "$tmp/p.log" "they ran different plugin builds" lab merge "$tmp/mp" "$tmp/s0" "$tmp/s1p" "$tmp/s2"
expect 2 "$tmp/d.log" "are both shard 0/3" lab merge "$tmp/md" "$tmp/s0" "$tmp/s0"
expect 2 "$tmp/ov.log" "trial 0 is in both" lab merge "$tmp/mv" "$tmp/serial" "$tmp/s0"
lab run "$ini" "${sets[@]}" -j 2 --shard 0/2 --out "$tmp/h0" >/dev/null 2>&1 || fail "h0"
expect 2 "$tmp/sp.log" "shards of different splits" lab merge "$tmp/msp" "$tmp/h0" "$tmp/s1"
expect 2 "$tmp/mi.log" "4 of the sweep's 12 trials are in none of the dirs (trial 1, 4, 7, 10)" \
	lab merge "$tmp/mi" "$tmp/s0" "$tmp/s2"
[ ! -e "$tmp/mi" ] || fail "a refused merge wrote $tmp/mi"
expect 0 "$tmp/pa.log" "warning: 4 of the sweep's 12 trials are missing (trial 1, 4, 7, 10)" \
	lab merge "$tmp/pa" --partial "$tmp/s0" "$tmp/s2"
[ "$(($(wc -l <"$tmp/pa/trials.csv") - 1))" -eq 8 ] || fail "--partial: not 8 rows"
# ...and the partial merge finished by --resume is the whole run.
lab run --resume "$tmp/pa" -j 2 >/dev/null 2>"$tmp/pa-resume.log" || fail "resume of a partial merge"
cmp "$tmp/serial/trials.csv" <(head -1 "$tmp/pa/trials.csv"; tail -n +2 "$tmp/pa/trials.csv" | sort -t, -k1,1n) ||
	fail "partial merge + resume != serial"
cmp "$tmp/serial/histograms.csv" <(head -2 "$tmp/pa/histograms.csv"; tail -n +3 "$tmp/pa/histograms.csv" | sort -s -t, -k1,1n) ||
	fail "partial merge + resume: histograms.csv != serial"
# A shard from before histograms.csv: the merge has none, and says so.
cp -r "$tmp/s1" "$tmp/s1old"
rm "$tmp/s1old/histograms.csv"
expect 0 "$tmp/old.log" "s1old has no histograms.csv" lab merge "$tmp/mold" "$tmp/s0" "$tmp/s1old" "$tmp/s2"
[ ! -e "$tmp/mold/histograms.csv" ] || fail "a merge with an input without histograms wrote some"
cmp "$tmp/serial/trials.csv" "$tmp/mold/trials.csv" || fail "merge without histograms: trials.csv"
# A damaged one is refused with its line.
cp -r "$tmp/s1" "$tmp/s1bad"
sed -i '3s/,op,/,op,x/' "$tmp/s1bad/histograms.csv"
expect 2 "$tmp/bad.log" "s1bad/histograms.csv:3: count 'x" lab merge "$tmp/mbad" "$tmp/s0" "$tmp/s1bad" "$tmp/s2"

# A shard stopped part way is resumed as that shard (from its shard.txt).
cp -r "$tmp/s1" "$tmp/s1r"
head -n 3 "$tmp/s1/trials.csv" >"$tmp/s1r/trials.csv"
expect 2 "$tmp/rs.log" "holds shard 1/3, not --shard 2/3" lab run --resume "$tmp/s1r" --shard 2/3
lab run --resume "$tmp/s1r" -j 1 >/dev/null 2>"$tmp/rs.log" || fail "resume of a shard: $(tail -2 "$tmp/rs.log")"
grep -qF "2 trials were already done, 2 run now" "$tmp/rs.log" || fail "resume of a shard: $(tail -2 "$tmp/rs.log")"
cmp "$tmp/s1/trials.csv" "$tmp/s1r/trials.csv" || fail "resumed shard != shard"
cmp "$tmp/s1/histograms.csv" "$tmp/s1r/histograms.csv" || fail "resumed shard's histograms.csv != shard's"

# More shards than trials: the extra ones are empty and merge all the same.
for k in $(seq 0 12); do
	lab run "$ini" "${sets[@]}" -j 1 --shard "$k/13" --out "$tmp/t$k" >/dev/null 2>&1 || fail "13 shards: $k"
done
lab merge "$tmp/m13" $(for k in $(seq 0 12); do echo "$tmp/t$k"; done) >/dev/null 2>&1 || fail "merge of 13"
cmp "$tmp/serial/trials.csv" "$tmp/m13/trials.csv" || fail "13 shards merged != serial"
cmp "$tmp/serial/histograms.csv" "$tmp/m13/histograms.csv" || fail "13 shards' histograms merged != serial"
echo "PASS"
