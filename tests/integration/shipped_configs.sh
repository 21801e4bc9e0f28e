#!/bin/bash
# shipped_configs.sh -- every scenario in configs/ (and configs/parallel/, configs/slurm/) loads:
# `run --dry-run` plans it with exit 0, so a key renamed or a plugin removed cannot leave a
# shipped file that only fails when a user runs it. Each must also plan at least one trial.
#
#   shipped_configs.sh SOURCE_DIR IOMMULAB
set -uo pipefail

src=$1 iommulab=$2
n=0 bad=0
while IFS= read -r -d '' ini; do
	n=$((n + 1))
	if ! out=$("$iommulab" run "$ini" --dry-run 2>&1); then
		echo "FAIL: $ini does not load:"
		echo "$out" | sed 's/^/  /'
		bad=$((bad + 1))
	elif ! echo "$out" | grep -q '^total: [1-9][0-9]* trial'; then
		echo "FAIL: $ini plans no trial:"
		echo "$out" | tail -3 | sed 's/^/  /'
		bad=$((bad + 1))
	fi
done < <(find "$src/configs" -name '*.ini' -print0 | sort -z)
[ "$n" -gt 20 ] || { echo "FAIL: only $n scenarios found under $src/configs"; exit 1; }
echo "$n shipped scenarios, $bad that do not load"
[ "$bad" -eq 0 ]
