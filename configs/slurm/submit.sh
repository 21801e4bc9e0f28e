#!/bin/bash
# submit.sh -- submit a sweep as a Slurm job array of N shards and the merge that runs once
# every shard has succeeded; prints the two job ids ("ARRAY MERGE").
#
#   configs/slurm/submit.sh N SCENARIO.ini OUT_DIR [iommulab run options...]
#
# The shards go to OUT_DIR.shard0 .. OUT_DIR.shard(N-1), the merged run to OUT_DIR. Extra
# sbatch options (partition, time, --cpus-per-task) go in $SBATCH_OPTS; $IOMMULAB (the
# binary) is passed on to the jobs. Relative paths are resolved against the current directory,
# where the jobs run too (sbatch's default).
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
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2086 # SBATCH_OPTS is a list of options
array=$(sbatch --parsable ${SBATCH_OPTS:-} --array="0-$((shards - 1))" \
	--export=ALL,SHARDS="$shards" "$here/sweep.sbatch" "$scenario" "$out" "$@")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_OPTS:-} --dependency="afterok:$array" \
	"$here/merge.sbatch" "$out" "$out" "$shards")
echo "${array} ${merge%%;*}"
