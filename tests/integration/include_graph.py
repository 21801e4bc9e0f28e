#!/usr/bin/env python3
"""include_graph -- the layering rules of framework/, checked on the source tree:

- framework/include/iommulab/ (the plugin ABI) includes nothing from framework/;
- no cycle between framework folders in the graph of quoted #include "folder/file.h" edges
  (a file's folder is its directory under framework/, so engine/sim is a folder of its own).

Exit 0 when both hold, 1 with every offending edge or cycle printed otherwise.
Usage: include_graph.py SOURCE_ROOT
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main(root):
    fw = os.path.join(root, "framework")
    edges = {}
    bad = []
    for d, _, files in os.walk(fw):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            src = os.path.relpath(d, fw)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for inc in INCLUDE.findall(text):
                tgt = os.path.dirname(inc)
                if src.startswith("include"):
                    if tgt:  # only siblings ("lab.h") are allowed in the public headers
                        bad.append(f"{os.path.relpath(path, root)}: public header includes {inc}")
                    continue
                if tgt and tgt != src:
                    edges.setdefault(src, {}).setdefault(tgt, os.path.relpath(path, root))
    cycles = set()

    def walk(node, stack):
        for nxt in edges.get(node, {}):
            if nxt in stack:
                cyc = stack[stack.index(nxt):] + [nxt]
                i = cyc.index(min(cyc[:-1]))
                cycles.add(" -> ".join(cyc[i:-1] + cyc[:i] + [cyc[i]]))
            elif len(stack) < 64:
                walk(nxt, stack + [nxt])

    for n in sorted(edges):
        walk(n, [n])
    for c in sorted(cycles):
        parts = c.split(" -> ")
        why = ", ".join(f"{a}->{b} ({edges[a][b]})" for a, b in zip(parts, parts[1:]))
        bad.append(f"include cycle between folders: {c}: {why}")
    for line in bad:
        print(line)
    print(f"{len(edges)} folders with outgoing includes, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
