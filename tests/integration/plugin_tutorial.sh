#!/bin/sh
# plugin_tutorial.sh -- the plugin author's tutorial, step by step, as a test, so the tutorial
# cannot rot: install iommulab into a temporary prefix, copy the installed cmdq skeleton,
# rename it, build it out of tree with the one documented command (pkg-config from that
# prefix), `iommulab verify` it, run it next to the built-in plugins with --plugin-dir, find its
# rows in trials.csv and its lines in the graphs; then build the iova skeleton with its
# Makefile, and `make install` the new plugin so iommulab finds it without flags.
#
# usage: plugin_tutorial.sh SOURCE_ROOT    (KEEP=1 keeps the temporary directory)
# Deviations from the tutorial, both for speed only: the install uses a prefix of its own
# (-Dtests=false), and the scenario copied from quickstart runs shorter trials, once each.
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
mkdir "$work/mine"
cd "$work/mine"
cp "$skeletondir/cmdq/skeleton.c" mine.c
sed -i 's/^#define SKEL_NAME "skeleton"$/#define SKEL_NAME "mine"/' mine.c
grep -q '^#define SKEL_NAME "mine"$' mine.c || fail "SKEL_NAME not found in the skeleton"

step "tutorial 2: build out of tree with the one command"
set -x
cc $(pkg-config --cflags iommulab) -O2 -shared -fPIC -o cmdq-mine.so mine.c
set +x

step "tutorial 3: verify"
iommulab verify ./cmdq-mine.so || fail "iommulab verify ./cmdq-mine.so"

step "tutorial 4: run it next to the built-in plugins"
sed -e 's/^cmdq = .*/cmdq = null, biglock, mine/' \
	-e 's/^duration_ms = .*/duration_ms = 200/' \
	-e 's/^warmup_ms = .*/warmup_ms = 50/' \
	-e 's/^repeats = .*/repeats = 1/' \
	"$src/configs/quickstart.ini" >mine.ini
grep -q '^cmdq = null, biglock, mine$' mine.ini || fail "no cmdq line in quickstart.ini"
iommulab --plugin-dir . run mine.ini --out results || fail "iommulab run mine.ini"

step "tutorial 5: its rows in trials.csv, its lines in the graphs"
[ -f results/trials.csv ] || fail "no results/trials.csv"
rows=$(python3 - results/trials.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
mine = [r for r in rows if r["plugin"] == "mine"]
bad = [r for r in mine if r["status"] != "ok"]
for r in bad:
    print("failed trial:", r, file=sys.stderr)
print(len(mine) if not bad else -1)
PY
)
echo "trials.csv: $rows ok rows for mine"
[ "$rows" = 2 ] || fail "expected 2 ok rows for mine (cpus = 1, 2), got $rows"
grep -l mine results/plots/*.dat >/dev/null 2>&1 || fail "mine appears in no results/plots/*.dat"
if command -v gnuplot >/dev/null 2>&1; then
	[ -s results/plots/throughput.png ] || fail "no results/plots/throughput.png"
	grep -q mine results/plots/throughput.svg || fail "mine not in the throughput graph"
fi

step "the iova skeleton builds with its Makefile and loads"
cp -r "$skeletondir/iova" "$work/iova"
quiet make -C "$work/iova"
iommulab list "$work/iova/iova-skeleton.so" || fail "iommulab list iova-skeleton.so"

step "make install puts the plugin where iommulab finds it without flags"
cp "$skeletondir/cmdq/Makefile" .
quiet make NAME=mine SRC=mine.c install
[ -f "$plugindir/cmdq-mine.so" ] || fail "make install did not install cmdq-mine.so"
iommulab verify mine >/dev/null || fail "iommulab verify mine (by name, installed)"

echo
echo "plugin tutorial: all steps passed"
