#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""crosscheck-native-sim -- does the sim, given this machine's probe, agree with a native run?

Runs configs/crosscheck-native-sim.ini (every cmdq strategy and the null baseline at 1 and 2
CPUs) natively, probes the machine before and after, runs the same scenario on the sim with
the probe's topology and atomic cost, and prints per strategy and CPU count: native ops/s and
p50 (mean and 95% CI over repeats), the sim's, and the relative error, sim against native.

    configs/crosscheck-native-sim.py [--iommulab build/iommulab] [--out DIR] [--repeats N]
                                     [--duration-ms N] [--tolerance PCT] [--quick] [--replace]

What the sim side gets from the native side, and why:
  - [machine] topology = the probe's matrix (by default one isolated miss per pair, what the
    sim prices a miss at), atomic_ns = its uncontended add - op_ns;
  - think_ns + H per CPU count, H = the null plugin's native op latency plus its harness_ns
    per op (median over repeats): the native loop's own cost (one chained timestamp, the
    loop, histogram record, think-loop overshoot) that the sim does not run. It is charged outside the measured latency, as natively.
    The run without it is kept too (DIR/sim-raw-cpusN) and its ops/s error printed.

The 2-CPU native run comes first, between DIR/probe-before.csv (the topology the sim gets) and
DIR/probe-after.csv (was the machine the same at its end?), then the 1-CPU one. The sim also
runs on DIR/probe-before-pingpong.csv (iommulab probe --matrix pingpong: the CAS ping-pong
figure, as configs/topologies/ were measured) and without H; both are extra columns. Writes
DIR/crosscheck.csv and DIR/crosscheck.md; exit 0 when every strategy (null aside) is within the tolerance on both
figures with the probe's default topology, 1 when some is not (named), 2 on a failed step.
"""
import argparse
import csv
import math
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
INI = os.path.join(HERE, "crosscheck-native-sim.ini")
THINK_NS = 1000  # the ini's [workload.cmdq] think_ns
OP_NS = 0.5  # [machine] op_ns's default: the sim charges op_ns + atomic_ns for an atomic hit
CPUS = (1, 2)


def fail(msg):
    """A step failed or the input is bad: say why, exit 2."""
    print(f"crosscheck: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd, log):
    """Run cmd, its output appended to log; exit 2 if it fails."""
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT)
    if rc:
        fail(f"'{' '.join(cmd)}' failed (exit {rc}); see {log}")


def probe_figures(path):
    """The `# probe: key = value` lines and the cpu0-cpu1 latency of a probe's file."""
    fig = {}
    rows = []
    with open(path) as f:
        for line in f:
            m = re.match(r"# probe: (\w+) = (\S+)", line)
            if m:
                try:
                    fig[m.group(1)] = float(m.group(2))
                except ValueError:
                    fig[m.group(1)] = m.group(2)
            elif not line.startswith("#"):
                rows.append(line.strip().split(","))
    fig["lat_01_ns"] = float(rows[1][0])
    return fig


def cpu_busy():
    """(busy, steal, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, v[7] if len(v) > 7 else 0, sum(v)


def trials(run_dir):
    """{(plugin, cpus): [row, ...]} of a run's ok trials."""
    out = {}
    with open(os.path.join(run_dir, "trials.csv")) as f:
        for r in csv.DictReader(f):
            if r["status"] in ("ok", "noisy"):  # noisy: measured on a busy host
                out.setdefault((r["plugin"], int(r["cpus"])), []).append(r)
    return out


def stats(values):
    """Mean and 95% CI half-width (Student t) of a list."""
    t95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan")
    sd = math.sqrt(sum((x - mean) ** 2 for x in values) / (n - 1))
    return mean, t95.get(n - 1, 1.96) * sd / math.sqrt(n)


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def err_pct(sim, native):
    return 100.0 * (sim - native) / native if native else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iommulab", default=os.path.join(HERE, "..", "build", "iommulab"))
    ap.add_argument("--out", default=f"results/crosscheck-{time.strftime('%Y%m%d-%H%M%S')}")
    ap.add_argument("--repeats", type=int, default=5, help="native repeats (default 5)")
    ap.add_argument("--duration-ms", type=int, default=1000, help="native, per trial")
    ap.add_argument("--sim-duration-ms", type=int, default=20, help="virtual, per trial")
    ap.add_argument("--tolerance", type=float, default=30.0, help="percent (default 30)")
    ap.add_argument("--replace", action="store_true",
                    help="replace an earlier cross-check in --out (only the files it wrote)")
    ap.add_argument("--quick", action="store_true",
                    help="2 repeats of 50 ms, 2 ms simulated, no verdict (exit 0 once every "
                    "step ran): checks the script, not the sim (the test suite runs it)")
    a = ap.parse_args()
    warmup = 200  # the ini's warmup_ms
    if a.quick:
        a.repeats, a.duration_ms, a.sim_duration_ms, warmup = 2, 50, 2, 20
    exe = os.path.abspath(a.iommulab)
    if not os.access(exe, os.X_OK):
        fail(f"{exe}: no iommulab there: build it (meson setup build && ninja -C build) or "
             "pass --iommulab PATH")
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    log = os.path.join(out, "crosscheck.log")
    earlier = [n for n in os.listdir(out)
            if re.fullmatch(r"(native|sim|sim-raw|sim-pingpong)-cpus\d+|probe-[\w-]+\.csv|"
                            r"crosscheck\.(log|csv|md)", n)]
    if earlier and not a.replace:
        fail(f"{out} already holds a cross-check ({', '.join(sorted(earlier))}): pick another "
             "--out, or --replace it")
    for n in earlier:
        path = os.path.join(out, n)
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)

    # 1. The machine, then the native runs. Only the 2-CPU run moves lines between cores, so
    #    it runs right after the probe whose topology the sim gets, and a second probe checks
    #    the machine still looked the same at its end (a VM's vCPUs can be moved meanwhile).
    before = os.path.join(out, "probe-before.csv")
    before_pp = os.path.join(out, "probe-before-pingpong.csv")
    after = os.path.join(out, "probe-after.csv")
    run([exe, "probe", "--out", before], log)
    run([exe, "probe", "--matrix", "pingpong", "--out", before_pp], log)
    b0, c0, l0 = cpu_busy(), os.times(), os.getloadavg()[0]
    t0 = time.time()
    for c in sorted(CPUS, reverse=True):
        run([exe, "run", INI, "--out", os.path.join(out, f"native-cpus{c}"),
             "--set", f"scenario.cpus={c}",
             "--set", f"scenario.repeats={a.repeats}",
             "--set", f"scenario.duration_ms={a.duration_ms}",
             "--set", f"scenario.warmup_ms={warmup}"], log)
        if c == 2:
            run([exe, "probe", "--out", after], log)
    wall = time.time() - t0
    b1, c1 = cpu_busy(), os.times()
    pb, pp, pa = probe_figures(before), probe_figures(before_pp), probe_figures(after)

    # What else ran meanwhile: the machine's busy time minus our children's, and VM steal.
    hz = os.sysconf("SC_CLK_TCK")
    ours = (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system)
    others = max(0.0, (b1[0] - b0[0]) / hz - ours) / wall
    steal = (b1[1] - b0[1]) / hz / wall

    native = {}
    for c in CPUS:
        native.update(trials(os.path.join(out, f"native-cpus{c}")))

    # 2. The sim, three ways: the probe's default (isolated-miss) topology with the harness
    #    cost H (the comparison), the same without H, and the ping-pong topology with H.
    atomic_ns = max(0.0, pb["atomic_add_ns"] - OP_NS)
    harness = {}
    sims = {"sim": {}, "raw": {}, "pp": {}}
    for c in CPUS:
        null = native.get(("null", c), [])
        harness[c] = median([float(r["harness_ns_per_op"]) + float(r["op_mean_ns"] or 0)
                             for r in null]) if null else 0.0
        h = ["--set", f"workload.cmdq.think_ns={THINK_NS + round(harness[c])}"]
        for name, topo, extra in (("sim", before, h), ("raw", before, []),
                                  ("pp", before_pp, h)):
            d = os.path.join(out, {"sim": "sim", "raw": "sim-raw",
                                   "pp": "sim-pingpong"}[name] + f"-cpus{c}")
            run([exe, "run", INI, "--out", d,
                 "--set", "scenario.engine=sim", "--set", f"machine.topology={topo}",
                 "--set", f"machine.atomic_ns={atomic_ns:.3f}",
                 "--set", f"scenario.cpus={c}", "--set", "scenario.repeats=1",
                 "--set", f"scenario.duration_ms={a.sim_duration_ms}",
                 "--set", "scenario.warmup_ms=2"] + (extra or
                 ["--set", f"workload.cmdq.think_ns={THINK_NS}"]), log)
            sims[name].update(trials(d))

    # 3. The table.
    with open(INI) as f:
        plugins = re.search(r"^cmdq\s*=\s*(.*)$", f.read(), re.M).group(1).split(";")[0]
    plugins = [p.strip() for p in plugins.split(",")]
    rows = []
    misses = []
    misses_pp = []

    def within(row, sfx):
        return all(abs(row[k + sfx]) <= a.tolerance for k in ("ops_err_pct", "p50_err_pct"))

    for p in plugins:
        for c in CPUS:
            n = native.get((p, c), [])
            s = {k: v.get((p, c), []) for k, v in sims.items()}
            if not n or not all(s.values()):
                misses.append(f"{p} cpus={c}: a trial failed")
                continue
            nops, nops_ci = stats([float(r["ops_per_sec"]) for r in n])
            np50, np50_ci = stats([float(r["op_p50_ns"]) for r in n])
            row = {"plugin": p, "cpus": c, "native_repeats": len(n),
                   "native_ops_per_sec": nops, "native_ops_ci95": nops_ci,
                   "native_p50_ns": np50, "native_p50_ci95": np50_ci}
            for k, sfx in (("sim", ""), ("pp", "_pp"), ("raw", "_raw")):
                sops = float(s[k][0]["ops_per_sec"])
                sp50 = float(s[k][0]["op_p50_ns"])
                row["sim_ops_per_sec" + sfx] = sops
                row["ops_err_pct" + sfx] = err_pct(sops, nops)
                row["sim_p50_ns" + sfx] = sp50
                row["p50_err_pct" + sfx] = err_pct(sp50, np50)
                row["sim_line_transfers_per_op" + sfx] = float(
                    s[k][0].get("sim_line_transfers_per_op") or "nan")
            row["harness_ns"] = harness[c]
            row["within"] = "baseline" if p == "null" else "yes" if within(row, "") else "no"
            row["within_pp"] = ("baseline" if p == "null" else
                                "yes" if within(row, "_pp") else "no")
            rows.append(row)
            if row["within"] == "no":
                misses.append(f"{p} cpus={c}: ops/s {row['ops_err_pct']:+.0f}%, "
                              f"p50 {row['p50_err_pct']:+.0f}%")
            if row["within_pp"] == "no":
                misses_pp.append(f"{p} cpus={c}: ops/s {row['ops_err_pct_pp']:+.0f}%, "
                                 f"p50 {row['p50_err_pct_pp']:+.0f}%")

    keys = list(rows[0].keys()) if rows else []
    with open(os.path.join(out, "crosscheck.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})

    head = (f"probe before: cpu0-1 one isolated miss {pb['lat_01_ns']:.1f} ns, CAS ping-pong "
            f"{pp['lat_01_ns']:.1f} ns, add {pb['atomic_add_ns']:.2f} ns, contended add "
            f"{pb.get('contended_add_ns', float('nan')):.1f} ns, contended CAS loop "
            f"{pb.get('contended_cas_ns', float('nan')):.1f} ns, timer {pb['timer_ns']:.1f} ns\n"
            f"probe after the 2-CPU run: isolated miss {pa['lat_01_ns']:.1f} ns "
            f"({err_pct(pa['lat_01_ns'], pb['lat_01_ns']):+.0f}%), ping-pong "
            f"{pa.get('pingpong_01_ns', float('nan')):.1f} ns "
            f"({err_pct(pa.get('pingpong_01_ns', float('nan')), pp['lat_01_ns']):+.0f}%)\n"
            f"native runs: {wall:.0f} s, load average {l0:.2f} before, other processes "
            f"{100 * others:.0f}% of a CPU, steal {100 * steal:.0f}%; "
            f"harness H = {harness[1]:.0f} ns (1 CPU), {harness[2]:.0f} ns (2 CPUs)\n"
            f"sim: atomic = near, atomic_ns = {atomic_ns:.2f}, think_ns = {THINK_NS} + H; "
            f"topology = probe-before.csv (isolated miss, the probe's default); last columns: "
            f"probe-before-pingpong.csv (CAS ping-pong), and the default without H\n")
    tol = f"{a.tolerance:g}"
    lines = [
        f"| strategy | cpus | native ops/s (95% CI) | sim ops/s | err | native p50 ns (95% CI) "
        f"| sim p50 ns | err | within ±{tol}% | ping-pong topology: ops err, p50 err "
        f"| w/o H: ops err |",
        "|---|---:|---:|---:|---:|---:|---:|---:|:---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['plugin']} | {r['cpus']} | {r['native_ops_per_sec']:,.0f} "
            f"(± {r['native_ops_ci95']:,.0f}) | {r['sim_ops_per_sec']:,.0f} "
            f"| {r['ops_err_pct']:+.0f}% | {r['native_p50_ns']:,.0f} "
            f"(± {r['native_p50_ci95']:,.0f}) | {r['sim_p50_ns']:,.0f} "
            f"| {r['p50_err_pct']:+.0f}% | {r['within']} "
            f"| {r['ops_err_pct_pp']:+.0f}%, {r['p50_err_pct_pp']:+.0f}% "
            f"({r['within_pp']}) | {r['ops_err_pct_raw']:+.0f}% |")
    text = head + "\n" + "\n".join(lines) + "\n"
    if misses:
        text += f"\noutside ±{tol}%: " + "; ".join(misses) + "\n"
    if misses_pp:
        text += f"outside ±{tol}% with the ping-pong topology: " + "; ".join(misses_pp) + "\n"
    if abs(err_pct(pa["lat_01_ns"], pb["lat_01_ns"])) > 30:
        text += ("\nthe core-to-core latency moved by more than 30% during the 2-CPU native "
                 "run (the VM's vCPUs were placed elsewhere): the sim's topology does not "
                 "describe all of it\n")
    if others > 0.2 or steal > 0.05:
        text += ("\nother work took %.0f%% of a CPU (steal %.0f%%) during the native runs: "
                 "they measured it too\n" % (100 * others, 100 * steal))
    with open(os.path.join(out, "crosscheck.md"), "w") as f:
        f.write(text)
    print(text, end="")
    print(f"\nresults: {out}/ (crosscheck.csv, crosscheck.md, native-cpus*/, sim*-cpus*/, "
          "probe-*.csv, crosscheck.log)")
    if len(rows) != len(plugins) * len(CPUS):
        return 2  # some trial failed: named in misses
    return 1 if misses and not a.quick else 0


if __name__ == "__main__":
    sys.exit(main())
