"""Log post-mortem on a 100 MB log, streamed from disk: wall time, CPU time and peak memory.

Builds the file by repeating a log recorded from the real 0.31.0 livelock server
(tests/fixtures/real/logs/, start-up lines, stats lines, the stall and its silence, access
lines) until it reaches --mb megabytes, written in chunks, so building it costs no memory.
Then analyses it in a fresh child process (so its peak RSS is the parser's alone) and
prints the figures, last the ratio of its CPU time to a plain substring-prefilter line scan of
the same file (the floor a Python line loop can reach): both timed --repeat times, alternating, best of each, so
a box whose load moves during the run moves both sides; then the median of the per-pair ratios and their spread
(a load that moved between runs shows there); exits 1 when the peak RSS grows beyond --max-rss-mb.
A path is read by the chunked scan (triage.logs.chunks); --per-line also times the same file given as an open
file (its lines: what `python -m triage logs FILE` feeds the engine through its head/tail tee; they are batched
into chunks where their line ends allow it).

    python bench/bench_logs.py [--mb 100] [--max-rss-mb 200] [--per-line] [--keep PATH] [--repeat 3]

--keep PATH also writes the built log to PATH (to time `python -m triage logs PATH` on it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "fixtures" / "real" / "logs" / "0.31.0-tiny-qwen3-livelock-livelock-031.log"

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
from triage.logs import analyze_log
from triage.vllm import logformats as lf


def scan(path):
    # the floor: a plain Python line scan, one substring prefilter before one regex (CPU seconds)
    c0, n = time.process_time(), 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if "throughput:" in line and lf.STATS_RE.search(line):
                n += 1
    return time.process_time() - c0


base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0, c0 = time.perf_counter(), time.process_time()
a = analyze_log(sys.argv[1], year=2026)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
# the ratio: both sides timed alternately, best of --repeat each (a box shared with other work moves both alike)
cpus, scans = [cpu], [scan(sys.argv[1])]
for _ in range(int(sys.argv[4]) - 1):
    c0 = time.process_time()
    analyze_log(sys.argv[1], year=2026)
    cpus.append(time.process_time() - c0)
    scans.append(scan(sys.argv[1]))
per_line = None
if sys.argv[3] == "1":
    c0 = time.process_time()
    with open(sys.argv[1], encoding="utf-8", errors="replace", newline="") as f:
        b = analyze_log(f, year=2026)
    per_line = time.process_time() - c0
    assert b.to_dict() == a.to_dict(), "the per-line reading differs from the chunked scan"
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "rss_before_mb": base / 1024, "rss_peak_mb": peak / 1024,
                  "lines": a.summary["lines"], "stats_lines": a.summary["stats"]["lines"],
                  "points_kept": len(a.samples), "findings": [(f.check, f.status.value) for f in a.findings],
                  "episodes": len(a.episodes), "cpus_s": cpus, "scans_s": scans, "per_line_s": per_line}))
"""


def build(path: Path, mb: int) -> int:
    text = SOURCE.read_text()
    target = mb * 1_000_000
    n = 0
    with open(path, "w") as f:
        while n < target:
            f.write(text)
            n += len(text)
    return n


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--max-rss-mb", type=float, default=200.0, help="limit on the child's peak RSS")
    ap.add_argument("--per-line", action="store_true", help="also time the file's lines (an open file)")
    ap.add_argument("--keep", metavar="PATH", default=None, help="keep the built log at PATH")
    ap.add_argument("--repeat", type=int, default=3, help="the ratio's runs of each side, alternating (best of)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = Path(args.keep) if args.keep else Path(d) / "big.log"
        size = build(path, args.mb)
        pythonpath = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), str(ROOT), "1" if args.per_line else "0", str(args.repeat)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": pythonpath},
        )
        if out.returncode != 0:
            sys.exit(f"the analysing child failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout)
    mb = size / 1e6
    print(
        f"log: {mb:.1f} MB, {r['lines']:,} lines, {r['stats_lines']:,} stats lines, "
        f"{r['episodes']} stall episodes kept, {r['points_kept']:,} series points kept"
    )
    print(
        f"time: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU ({mb / r['wall_s']:.1f} MB/s wall, "
        f"{mb / r['cpu_s']:.1f} MB/s CPU)"
    )
    print(
        f"memory: peak RSS {r['rss_peak_mb']:.0f} MB (interpreter + imports before parsing: "
        f"{r['rss_before_mb']:.0f} MB; growth {r['rss_peak_mb'] - r['rss_before_mb']:.0f} MB)"
    )
    print(f"findings: {r['findings']}")
    if r["per_line_s"] is not None:
        pl = r["per_line_s"]
        print(f"lines of an open file: {pl:.1f} s CPU ({mb / pl:.1f} MB/s CPU), same analysis")
    ok = r["rss_peak_mb"] <= args.max_rss_mb
    print("OK" if ok else f"FAIL: peak RSS above {args.max_rss_mb} MB")
    best, floor = min(r["cpus_s"]), min(r["scans_s"])
    print(
        f"ratio: analyze_log {best:.2f} s CPU / plain substring-prefilter scan {floor:.2f} s CPU = "
        f"{best / floor:.2f}x (best of {len(r['cpus_s'])} each, alternating; all: analyze "
        f"{', '.join(f'{x:.2f}' for x in r['cpus_s'])}, scan {', '.join(f'{x:.2f}' for x in r['scans_s'])})"
    )
    # each run of the analysis over the scan run right after it: a box whose load moved between runs shows as spread
    # (the best-of ratio above may pair two runs from different minutes); the first pair includes the warm-up
    pairs = sorted(a / s for a, s in zip(r["cpus_s"], r["scans_s"], strict=True))
    print(
        f"pairs: median {statistics.median(pairs):.2f}x, spread {pairs[0]:.2f}-{pairs[-1]:.2f}x over {len(pairs)} "
        f"alternating pairs; load average {os.getloadavg()[0]:.2f}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
