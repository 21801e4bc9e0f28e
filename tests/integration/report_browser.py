#!/usr/bin/env python3
"""report_browser -- report.html of a small sim run, rendered by a real browser (headless
Chromium): the page's text holds the plugins and the summary's numbers (as trials.csv says),
every graph is an inline SVG that has content, every linked PNG exists, and the screenshot is
not blank. Exit 77 (meson's SKIP) when chromium is not installed.
Usage: report_browser.py IOMMULAB SOURCE_ROOT OUT_DIR
"""
import csv
import os
import shutil
import struct
import subprocess
import sys
import zlib


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def rate(v):
    """The summary cell of a rate, as report_html.c writes it (put_rate)."""
    if v >= 1e6:
        return "%.3g M" % (v / 1e6)
    if v >= 1e3:
        return "%.3g K" % (v / 1e3)
    return "%.3g " % v


def png_ink(path):
    """The share of the screenshot's pixels that are not white (8-bit RGB or RGBA PNG)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(path + " is not a PNG")
    pos, idat, width, height, bpp = 8, b"", 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                fail("%s: a PNG this test does not decode (depth %d, colour %d)"
                     % (path, depth, colour))
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    ink = 0
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # undo the scanline filter (PNG spec, section 9)
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        ink += sum(1 for x in range(0, stride, bpp) if line[x:x + 3] != b"\xff\xff\xff")
        prev = line
    return ink / max(width * height, 1)


def main(iommulab, root, out):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("SKIP: chromium is not installed (apt-get install chromium)")
        return 77
    shutil.rmtree(out, ignore_errors=True)
    run = subprocess.run([iommulab, "run", os.path.join(root, "configs/cmdq-ways-sim.ini"),
                          "--set", "scenario.duration_ms=2", "--set", "scenario.warmup_ms=0",
                          "--set", "sweep.cpus=1,4", "--set", "plugins.cmdq=cmpxchg,batched",
                          "--out", out, "-j", "1"], capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        fail("iommulab run exited %d:\n%s%s" % (run.returncode, run.stdout, run.stderr))
    page = os.path.join(out, "report.html")
    if not os.path.getsize(page):
        fail(page + " is empty")
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    url = "file://" + os.path.abspath(page)
    dom = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True,
                         timeout=120).stdout
    if "</html>" not in dom:
        fail("chromium printed no DOM for %s" % url)

    with open(os.path.join(out, "trials.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if r["plugin"] not in dom:
            fail("plugin %s is not on the page" % r["plugin"])
        cell = "<td>%s</td>" % rate(float(r["ops_per_sec"]))
        if cell not in dom:
            fail("the summary lacks %s's ops/s at cpus=%s (%s)" % (r["plugin"], r["cpus"], cell))

    svgs = [f for f in os.listdir(os.path.join(out, "plots")) if f.endswith(".svg")]
    n_svg = dom.count("<svg")
    if not svgs or n_svg != len(svgs):
        fail("%d inline <svg> in the page, %d SVG files in plots/" % (n_svg, len(svgs)))
    for chunk in dom.split("<svg")[1:]:
        body = chunk.split("</svg>")[0]
        if "<path" not in body:
            fail("an inline graph has no drawing in it")
    for name in svgs:
        png = os.path.join(out, "plots", name[:-4] + ".png")
        if 'href="plots/%s.png"' % name[:-4] not in dom or not os.path.getsize(png):
            fail("%s is not linked or is empty" % png)

    shot = os.path.join(out, "screenshot.png")
    subprocess.run(base + ["--screenshot=" + shot, "--window-size=1000,1600", url],
                   capture_output=True, timeout=120)
    if not os.path.exists(shot) or not os.path.getsize(shot):
        fail("chromium wrote no screenshot")
    ink = png_ink(shot)
    if ink < 0.01:
        fail("the screenshot is blank (%.4f of it not white)" % ink)
    print("ok: %d trials, %d graphs inline, screenshot %s (%.1f%% ink)"
          % (len(rows), len(svgs), shot, 100 * ink))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
