#!/bin/sh
# plugin_tutorial.sh -- the plugin author's tutorial, step by step, as a test, so the tutorial
# cannot rot: install iommulab into a temporary prefix, copy the installed cmdq skeleton,
# rename it, build it out of tree with the one documented command (pkg-config from that
# prefix), `iommulab verify` it, run it in configs/cmdq-ways.ini next to the built-in plugins
# with --plugin-dir, find its rows in trials.csv and its lines in the graphs, build its sim
# variant and run that on the sim engine; then build the iova template (nocache) with
# its Makefile and run it next to a built-in cache, and `make install` the new cmdq plugin so
# iommulab finds it without flags.
#
# usage: plugin_tutorial.sh SOURCE_ROOT    (KEEP=1 keeps the temporary directory)
# It follows the README's "Writing a plugin" steps; deviations, all for speed only: the install
# uses a prefix of its own (-Dtests=false), and the runs add --set options for shorter trials.
set -eu

src=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/iommulab-tutorial.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
	trap 'echo "kept $work"' EXIT
else
	trap 'rm -rf "$work"' EXIT
fi

# The test harness points these at the build tree; an installed iommulab must not need them.
unset IOMMULAB_PLUGIN_PATH IOMMULAB_PLOT_DIR PKG_CONFIG_SYSROOT_DIR

step() {
	printf '\n== %s\n' "$*"
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# ok_rows TRIALS_CSV PLUGIN: how many rows PLUGIN has in trials.csv, all with status ok (-1
# and the failed rows on stderr if any failed).
ok_rows() {
	python3 - "$1" "$2" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["plugin"] == sys.argv[2]]
bad = [r for r in rows if r["status"] not in ("ok", "noisy")]  # noisy: measured, host busy
for r in bad:
    print("failed trial:", r, file=sys.stderr)
print(len(rows) if not bad else -1)
PY
}

# Run a command quietly; on failure show its output and stop.
quiet() {
	log="$work/last.log"
	if ! "$@" >"$log" 2>&1; then
		cat "$log" >&2
		fail "$*"
	fi
}

step "install into $work/prefix"
quiet meson setup "$work/build" "$src" --prefix="$work/prefix" --libdir=lib \
	-Dtests=false -Dinstall_test=false
quiet meson install -C "$work/build"
PATH="$work/prefix/bin:$PATH"
PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
export PATH PKG_CONFIG_PATH
[ "$(command -v iommulab)" = "$work/prefix/bin/iommulab" ] || fail "installed iommulab not on PATH"
pkg-config --exists iommulab || fail "pkg-config does not find iommulab.pc in $PKG_CONFIG_PATH"
plugindir=$(pkg-config --variable=plugindir iommulab)
skeletondir=$(pkg-config --variable=skeletondir iommulab)
echo "cflags: $(pkg-config --cflags iommulab)"
echo "plugindir: $plugindir"
[ -d "$plugindir" ] || fail "plugindir $plugindir does not exist"

step "the installed iommulab finds the installed plugins without flags"
iommulab list >"$work/list.txt" 2>&1 || { cat "$work/list.txt"; fail "iommulab list"; }
cat "$work/list.txt"
grep -q biglock "$work/list.txt" || fail "biglock not listed by the installed iommulab"

step "tutorial 1: copy the skeleton and name the plugin"
cd "$work"
cp -r "$skeletondir/cmdq" mine
cd mine
mv skeleton.c mine.c
sed -i 's/^#define SKEL_NAME "skeleton"$/#define SKEL_NAME "mine"/' mine.c
grep -q '^#define SKEL_NAME "mine"$' mine.c || fail "SKEL_NAME not found in the skeleton"

step "tutorial 2: build out of tree with the one command"
set -x
cc $(pkg-config --cflags iommulab) -O2 -shared -fPIC -o cmdq-mine.so mine.c
set +x

# pkg-config's flags declare POSIX (-D_GNU_SOURCE); a build with only its -I and strict ISO C
# gets lab.h's own message, not an undeclared CLOCK_MONOTONIC deep inside it.
step "strict ISO C without pkg-config's defines: lab.h says what it needs"
inc=$(pkg-config --cflags-only-I iommulab)
cc -std=c11 $inc -O2 -shared -fPIC -o strict.so mine.c 2>strict.log &&
	fail "-std=c11 built without POSIX's clock_gettime declared"
grep -q "lab.h needs POSIX clock_gettime(CLOCK_MONOTONIC): build with -std=gnu11" strict.log ||
	fail "-std=c11 did not get lab.h's message: $(grep -m1 error strict.log)"
cc -std=c11 -D_POSIX_C_SOURCE=200809L $inc -O2 -shared -fPIC -o strict.so mine.c ||
	fail "-std=c11 -D_POSIX_C_SOURCE=200809L did not build"
rm -f strict.so strict.log

step "tutorial 3: verify"
iommulab verify ./cmdq-mine.so || fail "iommulab verify ./cmdq-mine.so"

step "tutorial 4: run it next to the built-in plugins"
# The tutorial's command, plus three --set that make the trials short (this is a test).
ways="$src/configs/cmdq-ways.ini"
iommulab --plugin-dir . run "$ways" --set plugins.cmdq=cmpxchg,mine \
	--set scenario.duration_ms=100 --set scenario.warmup_ms=20 --set scenario.repeats=1 \
	--out results || fail "iommulab run cmdq-ways.ini"

step "tutorial 5: its rows in trials.csv, its lines in the graphs"
[ -f results/trials.csv ] || fail "no results/trials.csv"
rows=$(ok_rows results/trials.csv mine)
echo "trials.csv: $rows ok rows for mine"
[ "$rows" = 2 ] || fail "expected 2 ok rows for mine (cpus = 1, 2), got $rows"
grep -l mine results/plots/*.dat >/dev/null 2>&1 || fail "mine appears in no results/plots/*.dat"
if command -v gnuplot >/dev/null 2>&1; then
	[ -s results/plots/throughput.png ] || fail "no results/plots/throughput.png"
	grep -q mine results/plots/throughput.svg || fail "mine not in the throughput graph"
fi

step "tutorial 6: the same source built for the sim engine, run on virtual CPUs"
set -x
cc $(pkg-config --cflags iommulab) -O2 -DLAB_ENGINE_SIM -shared -fPIC -o cmdq-mine.sim.so mine.c
set +x
iommulab --plugin-dir . run "$ways" --set "plugins.cmdq=biglock, mine" --set scenario.engine=sim \
	--set scenario.duration_ms=20 --set scenario.warmup_ms=5 --set scenario.repeats=1 \
	--out results-sim || fail "iommulab run cmdq-ways.ini with engine = sim"
rows=$(ok_rows results-sim/trials.csv mine)
echo "trials.csv (sim): $rows ok rows for mine"
[ "$rows" = 2 ] || fail "expected 2 ok sim rows for mine (cpus = 1, 2), got $rows"

step "the iova template builds with its Makefile and runs next to a built-in cache"
cp -r "$skeletondir/iova" "$work/iova"
quiet make -C "$work/iova"
cat >"$work/iova/iova.ini" <<'EOF'
[scenario]
name = iova-nocache
workload = iova
duration_ms = 200
warmup_ms = 50
repeats = 1

[sweep]
cpus = 1, 2

[plugins]
iova = fixed_depot, nocache
EOF
iommulab --plugin-dir "$work/iova" run "$work/iova/iova.ini" --out "$work/iova/results" ||
	fail "iommulab run iova.ini"
rows=$(ok_rows "$work/iova/results/trials.csv" nocache)
echo "trials.csv: $rows ok rows for nocache"
[ "$rows" = 2 ] || fail "expected 2 ok rows for nocache (cpus = 1, 2), got $rows"

step "make install puts the plugin where iommulab finds it without flags"
quiet make NAME=mine SRC=mine.c install
[ -f "$plugindir/cmdq-mine.so" ] || fail "make install did not install cmdq-mine.so"
iommulab verify mine >/dev/null || fail "iommulab verify mine (by name, installed)"

echo
echo "plugin tutorial: all steps passed"
