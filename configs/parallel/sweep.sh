#!/bin/bash
# sweep.sh -- a sweep split into N shards run side by side by GNU parallel on one machine,
# then merged: the Slurm recipe's shape without a cluster (one shard per job slot, each
# shard's trials one at a time).
#
#   configs/parallel/sweep.sh N SCENARIO.ini OUT_DIR [iommulab run options...]
#
# The shards go to OUT_DIR.shard0 .. OUT_DIR.shard(N-1), the merged run to OUT_DIR. $JOBS
# (default: N) shards run at once; $IOMMULAB is the binary (default iommulab on the PATH).
# The same as the one-liner
#   parallel iommulab run SCENARIO.ini --shard {}/N --out OUT_DIR.shard{} -j 1 ::: $(seq 0 N-1)
#   iommulab merge OUT_DIR OUT_DIR.shard*
# (with the shards named in order, and a failed shard stopping the merge).
set -euo pipefail

if [ $# -lt 3 ]; then
	echo "usage: $0 N SCENARIO.ini OUT_DIR [run options...]" >&2
	exit 2
fi
shards=$1 scenario=$2 out=$3
shift 3
case $shards in
'' | *[!0-9]* | 0) echo "$0: N must be a number of shards >= 1, not '$shards'" >&2; exit 2 ;;
esac
iommulab=${IOMMULAB:-iommulab}
dirs=()
for ((k = 0; k < shards; k++)); do
	dirs+=("$out.shard$k")
done
# -q: each word of the command stays one argument (paths with blanks). A shard that exits 1
# ran every trial (some failed) and can be merged; 2 and up means it did not run.
mkdir -p "$(dirname "$out")"
rm -f "$out.joblog"
parallel --will-cite -q -j "${JOBS:-$shards}" --joblog "$out.joblog" \
	"$iommulab" run "$scenario" --shard "{}/$shards" --out "$out.shard{}" -j 1 "$@" \
	::: $(seq 0 $((shards - 1))) >/dev/null || true
# The joblog lists jobs as they finish: name the shards in their own order.
bad=$(awk 'NR > 1 && ($7 > 1 || $8 != 0) { print $1 - 1 }' "$out.joblog" | sort -n |
	awk '{ printf " %d", $1 }')
if [ -n "$bad" ]; then
	echo "$0: these shards did not run (see $out.joblog):$bad" >&2
	exit 2
fi
exec "$iommulab" merge "$out" "${dirs[@]}"
