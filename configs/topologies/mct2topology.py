#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mct2topology -- an mctop description (desc/<host>.mct, LPD-EPFL/mctop) as a sim topology.

The .mct pair block ("i j latency", after the "#<host> #HWCs N #Nodes M SMT s" line) is the
latency of one CAS on a line the other hardware context has just CASed (mctop's crawler,
src/mctop.c: cas_prof between two pinned threads, the median of many), in rdtsc ticks. On the
four x86 hosts the TSC is invariant and ticks at the nominal clock, so ns = ticks / GHz at
that clock whatever the cores' turbo state: the one-way transfer the sim's topology holds
(configs/topologies/*.csv: the other shipped matrices are CAS ping-pong round trips / 2).

The sim's CPU i is the i-th thread the lock benchmark placed, so the matrix is written in that
order, not in the OS's HWC numbering (which is socket round robin on lpdquad and scattered on
diassrv8). The lock benchmark itself is not in the mctop repository (no commit has it); its
curves step where mctop's MCTOP_ALLOC_MIN_LAT_CORES policy (src/mctop_alloc.c) would make them
step (diassrv8's MCS at 100 threads, lpdquad's at 60: the first SMT sibling), so that policy is
reproduced here from its description and code (facts, not its source):
  - the start socket is the one with the highest local read bandwidth (#Mem_bw-READ, its own
    node), a later socket replacing the current best only when 5% above it;
  - then the other sockets by latency from the start socket, equal latencies ordered by read
    bandwidth from that socket to the start socket's node (an adjacent-swap pass repeated
    until stable, as mctop sorts its sockets' siblings);
  - every socket's physical cores (the first context of each core) in that socket order, then
    the second contexts of the cores in the same order.
mctop numbers sockets as it discovers them; this assumes the order of their lowest HWC id,
and cores within a socket by their lowest HWC id. A socket is a group of HWCs whose pair
latencies are at most the socket level, the smallest level that gives #Nodes groups; a core
is a group at the SMT level (the lowest non-zero latency, when SMT is 1).

usage: mct2topology.py HOST.mct GHZ "CPU MODEL (where the clock comes from)" > OUT.csv
"""
import sys


def parse(path):
    with open(path) as f:
        lines = f.read().splitlines()
    head = lines[0].split()
    if len(head) < 7 or head[1] != "#HWCs" or head[3] != "#Nodes" or head[5] != "SMT":
        sys.exit(f"{path}:1: not an mctop description ('#host #HWCs N #Nodes M SMT s')")
    host, n, n_nodes, smt = head[0][1:], int(head[2]), int(head[4]), int(head[6])
    lat = [[None] * n for _ in range(n)]
    blocks = {}
    i = 1
    while i < len(lines) and not lines[i].startswith("#"):
        f = lines[i].split()
        if f:
            if len(f) != 3:
                sys.exit(f"{path}:{i + 1}: expected 'i j latency'")
            a, b, v = int(f[0]), int(f[1]), float(f[2])
            if not (0 <= a < n and 0 <= b < n) or v < 0:
                sys.exit(f"{path}:{i + 1}: pair ({a}, {b}) latency {v} out of range")
            lat[a][b] = v
        i += 1
    # The blocks after the pairs: "#Name K" then rows of numbers, up to the next '#'.
    name = None
    for no, l in enumerate(lines[i:], start=i + 1):
        if l.startswith("#"):
            name = l.split()[0]
            blocks[name] = []
        elif name and l.split():
            blocks[name].append((no, l.split()))
    for a in range(n):
        for b in range(n):
            if lat[a][b] is None:
                sys.exit(f"{path}: no latency for pair ({a}, {b}): not a full pair block")
            if lat[a][b] != lat[b][a]:
                sys.exit(f"{path}: pair ({a}, {b}) {lat[a][b]} but ({b}, {a}) {lat[b][a]}")
    return host, n, n_nodes, smt, lat, blocks


def groups(n, lat, level):
    """HWCs connected by latencies <= level, each group sorted, groups by their lowest id."""
    seen, out = set(), []
    for s in range(n):
        if s in seen:
            continue
        g, todo = [], [s]
        seen.add(s)
        while todo:
            x = todo.pop()
            g.append(x)
            for y in range(n):
                if y not in seen and lat[x][y] <= level:
                    seen.add(y)
                    todo.append(y)
        out.append(sorted(g))
    return sorted(out)


def node_table(blocks, name, rows, cols, path):
    t = [[None] * cols for _ in range(rows)]
    for no, f in blocks.get(name, []):
        a, b, v = int(f[0]), int(f[1]), float(f[2])
        if a < rows and b < cols:
            t[a][b] = v
    if any(v is None for r in t for v in r):
        return None
    return t


def placement(path, n, n_nodes, smt, lat, blocks):
    levels = sorted({lat[a][b] for a in range(n) for b in range(n) if a != b})
    sockets = None
    for lv in levels:
        g = groups(n, lat, lv)
        if len(g) == n_nodes:
            sockets = g
            break
    if not sockets:
        sys.exit(f"{path}: no latency level splits the {n} HWCs into {n_nodes} sockets")
    cores = groups(n, lat, levels[0]) if smt else [[h] for h in range(n)]
    per_core = len(cores[0])
    if any(len(c) != per_core for c in cores):
        sys.exit(f"{path}: cores of different sizes at the SMT level {levels[0]}")
    sock_of = {h: s for s, g in enumerate(sockets) for h in g}
    # A socket's local node: the node its first HWC reads fastest (#Mem_latencies, hwc x node).
    mlat = node_table(blocks, "#Mem_latencies", n, n_nodes, path)
    bw = node_table(blocks, "#Mem_bw-READ", n_nodes, n_nodes, path)
    local = [min(range(n_nodes), key=lambda k: mlat[g[0]][k]) if mlat else s
             for s, g in enumerate(sockets)]
    start = 0
    if bw:
        best = bw[0][local[0]]
        for s in range(1, len(sockets)):
            if bw[s][local[s]] > 1.05 * best:
                best, start = bw[s][local[s]], s
    slat = lambda s: lat[sockets[start][0]][sockets[s][0]]
    order = sorted((s for s in range(len(sockets)) if s != start), key=lambda s: (slat(s), s))
    if bw:
        swapped = True
        while swapped:
            swapped = False
            for k in range(1, len(order)):
                a, b = order[k - 1], order[k]
                if slat(a) == slat(b) and bw[b][local[start]] > bw[a][local[start]]:
                    order[k - 1], order[k] = b, a
                    swapped = True
    order = [start] + order
    sock_cores = {s: [c for c in cores if sock_of[c[0]] == s] for s in order}
    placed = [c[ctx] for ctx in range(per_core) for s in order for c in sock_cores[s]]
    assert sorted(placed) == list(range(n))
    return placed, sockets, order, per_core


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, ghz, cpu = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    host, n, n_nodes, smt, lat, blocks = parse(path)
    placed, sockets, order, per_core = placement(path, n, n_nodes, smt, lat, blocks)
    w = sys.stdout.write
    w(f"# mctop {host}: {n} hardware contexts, {len(sockets)} sockets x "
      f"{len(sockets[0]) // per_core} cores x {per_core} HWC; {cpu}.\n")
    w(f"# One-way cache-line transfer (one CAS on a line the other HWC just CASed), ns = "
      f"mctop's rdtsc ticks / {ghz} GHz, lower-triangular.\n")
    w("# Source: github LPD-EPFL/mctop a8f88ca964f1ade84a25ee40230a1b28e8215b0f "
      f"desc/{host}.mct (MIT, (c) 2016 EPFL DPL), via "
      "/work/shared/data/calibration/mctop-locks; written by mct2topology.py.\n")
    w("# CPU i is the i-th thread of mctop's MCTOP_ALLOC_MIN_LAT_CORES placement (cores "
      "first, sockets by latency from the start socket), i.e. OS HWC:\n")
    for k in range(0, n, 20):
        w("#   " + " ".join(str(h) for h in placed[k:k + 20]) + "\n")
    for i in range(n):
        vals = [f"{lat[placed[i]][placed[j]] / ghz:.4g}" for j in range(i)]
        w(",".join(vals + [""] * (n - 1 - i)) + "\n")


if __name__ == "__main__":
    main()
