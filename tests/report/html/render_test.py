#!/usr/bin/env python3
"""report.html renders in headless Chromium and draws every chart.

usage: render_test.py CONVLAB CHROMIUM WORKDIR

1. A small results folder from the built convlab: `train tiny` (intervals, the
   step's limit, find-context) and `layers` on one problem (roofline, peak,
   picks); `convlab html` draws report.html from it.
2. `chromium --dump-dom` runs the page's layout note (report_html.cpp records
   every chart's box in body[data-layout]): every expected chart is laid out
   with a non-empty box.
3. `chromium --screenshot` renders the whole page; the PNG (decoded here with
   zlib, no imaging library) is not blank, and every chart's box holds ink:
   at least 1 % of its pixels differ from the white background.
Exit 0 when all hold, 1 with one line per failure.
"""
import html
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

CHARTS = ["chart-policy-time", "chart-breakdown", "chart-layers", "chart-attribution", "chart-in-context",
          "chart-roofline", "chart-peak", "chart-pick"]


def run(cmd, timeout=240):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, text=True)
    if r.returncode != 0:
        sys.exit("FAIL: %s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()[-400:]))
    return r.stdout


def chromium(binary, work, *args):
    return [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--user-data-dir=" + os.path.join(work, "profile"), *args]


def decode_png(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit truecolour PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("FAIL: %s is not a PNG" % path)
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                sys.exit("FAIL: unexpected PNG format (depth %d, colour type %d)" % (depth, colour))
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def ink(rows, bpp, x0, y0, x1, y1):
    """Fraction of pixels in [x0, x1) x [y0, y1) that are not (near) white."""
    total = marked = 0
    for y in range(max(0, y0), min(len(rows), y1)):
        row = rows[y]
        for x in range(max(0, x0), min(len(row) // bpp, x1)):
            r, g, b = row[x * bpp], row[x * bpp + 1], row[x * bpp + 2]
            total += 1
            marked += (r < 240 or g < 240 or b < 240)
    return marked / total if total else 0.0


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: render_test.py CONVLAB CHROMIUM WORKDIR")
    convlab, browser, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    res = os.path.join(work, "results")
    os.makedirs(res)
    run([convlab, "train", "tiny", "--batch", "4", "--iters", "3", "--warmup", "1", "--classes", "4", "--threads", "2",
         "--policy", "default;find;find-context;fixed:cpu.im2col_gemm", "--json", os.path.join(res, "train.json")])
    run([convlab, "layers", "mb2_ic16oc16_ih14iw14_kh3kw3_ph1pw1", "--threads", "2", "--json",
         os.path.join(res, "layers.json")])
    # Two commands, two runs: the page draws them together only when asked.
    run([convlab, "html", res, "--mixed-runs"])
    page = os.path.join(res, "report.html")
    text = open(page, encoding="utf-8").read()
    for bad in ("<link", "src=\"http", "href=\"http", "url(http", "@import", "src=\"//"):
        if bad in text:
            return "FAIL: report.html refers outside itself (%s)" % bad

    # Every in-page link has its target.
    import re
    ids = set(re.findall(r'id="([^"]+)"', text))
    for target in re.findall(r'href="#([^"]+)"', text):
        if target not in ids:
            return "FAIL: report.html links to #%s, which the page does not have" % target

    # Laid out at 1400 px, nothing (a wide table) makes the page wider than the window.
    dom = run(chromium(browser, work, "--window-size=1400,1000", "--dump-dom", "file://" + page))
    start = dom.find('data-layout="')
    if start < 0:
        return "FAIL: the page's layout note did not run (no body[data-layout] in the rendered DOM)"
    layout = json.loads(html.unescape(dom[start + 13:dom.index('"', start + 13)]))
    failures = []
    for c in CHARTS:
        box = layout.get(c)
        if not box or box[2] < 100 or box[3] < 50:
            failures.append("chart %s is missing or has an empty box (%s)" % (c, box))
    width, height = layout["page"]
    if width > 1400:
        failures.append("the page is %d px wide in a 1400 px window: something overflows" % width)
    shot = os.path.join(work, "report.png")
    run(chromium(browser, work, "--window-size=%d,%d" % (max(width, 800), min(height + 40, 16000)),
                 "--screenshot=" + shot, "file://" + page))
    w, h, bpp, rows = decode_png(shot)
    page_ink = ink(rows, bpp, 0, 0, w, h)
    if page_ink < 0.02:
        failures.append("the page is blank: %.2f %% of its pixels are not white" % (100 * page_ink))
    for c in CHARTS:
        box = layout.get(c)
        if not box:
            continue
        x, y, bw, bh = box
        f = ink(rows, bpp, x, y, x + bw, y + bh)
        print("%-20s box %s ink %.1f %%" % (c, box, 100 * f))
        if f < 0.01:
            failures.append("chart %s drew nothing: %.2f %% ink in its box %s" % (c, 100 * f, box))
    print("page %dx%d, %.1f %% ink" % (w, h, 100 * page_ink))
    return "\n".join("FAIL: " + f for f in failures) if failures else None


if __name__ == "__main__":
    msg = main()
    if msg:
        print(msg)
        sys.exit(1)
    print("ok: report.html rendered, every chart drew")
