"""engine_stats_figure with a day of 1 s samples (86,400 rows): built within 1 s.

Rows are EngineSample values as the Watcher writes them, built from /metrics pages recorded
from the real 0.31.0 server (idle, after requests, livelock, after abort) laid over a day,
with a stall alert in the middle. Times the figure build (and its JSON for the browser) over
--repeat runs; reports wall and CPU time (the dev box is shared: CPU time is the fairer
figure when it is loaded); exits 1 when the median CPU time is above --limit.

    python bench/bench_chart.py [--samples 86400] [--repeat 5] [--limit 1.0]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from triage.charts import engine_stats_figure  # noqa: E402
from triage.sample import EngineSample  # noqa: E402
from triage.watch import Watcher  # noqa: E402

PAGES = ROOT / "tests" / "fixtures" / "real" / "0.31.0-tiny-qwen3-livelock"
SEQ = ["idle", "after-requests"] + ["livelock-3s"] * 3 + ["livelock-9s"] * 6 + ["after-abort"]


def day(n: int) -> tuple[list[EngineSample], list[dict]]:
    w = Watcher("http://127.0.0.1:9", interval=1, stall_s=5, client=httpx.Client())
    texts = {p: (PAGES / f"metrics-{p}.txt").read_text() for p in set(SEQ)}
    t0 = 1_764_400_000.0
    base = [s for i, p in enumerate(SEQ) for s in w.observe(texts[p], t0 + i).samples]
    rows = [base[i % len(base)].with_(ts=t0 + i) for i in range(n)]
    alerts = [
        {"kind": "livelock", "since": t0 + n // 2, "confirmed_at": t0 + n // 2 + 5, "cleared_at": t0 + n // 2 + 60}
    ]
    return rows, alerts


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=86_400)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--limit", type=float, default=1.0)
    args = ap.parse_args()
    rows, alerts = day(args.samples)
    walls, cpus, js = [], [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        fig = engine_stats_figure(rows, alerts=alerts)
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
        t = time.perf_counter()
        payload = fig.to_json()
        js.append(time.perf_counter() - t)
    pts = sum(len(tr.x) for tr in fig.data)
    print(
        f"{args.samples:,} samples -> {len(fig.data)} traces, {pts:,} points plotted, JSON {len(payload) / 1e3:.0f} kB"
    )
    print(
        f"build: median {statistics.median(walls):.3f} s wall (min {min(walls):.3f}), "
        f"median {statistics.median(cpus):.3f} s CPU; to_json median {statistics.median(js):.3f} s"
    )
    ok = statistics.median(cpus) <= args.limit
    print("OK" if ok else f"FAIL: median CPU time above {args.limit} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
