"""History page first render with 1,000 and 10,000 stored runs: both <= 1 s, and the cost must not grow.

Fills a temp SQLite file through the real Store (each run: a target, a config, two findings,
finished), then times the History page's first full render under AppTest with the real
Services on that file (paging happens in SQL: LIMIT/OFFSET and one COUNT). Prints the
figures and the 10k/1k ratio; exits 1 when a limit is broken.

    python bench/bench_history.py [--sizes 1000 10000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlmodel import Session  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from triage.store import FindingRow, Run, Store, Target  # noqa: E402
from ui import services  # noqa: E402

LIMIT_S = 1.0
MAX_RATIO = 1.5  # "does not grow": 10x the runs may cost at most this much more (noise on a shared box)


def fill(store: Store, n: int, n_targets: int = 8) -> None:
    """n finished runs over a few targets, written in bulk (the Store's row types, one transaction)."""
    with Session(store.engine) as s:
        targets = [Target(url=f"http://10.0.0.{i}:8000", model="Qwen/Qwen3-Embedding-4B", truncate_prompt_tokens=4096,
                          label=f"gpu-node-{i}") for i in range(n_targets)]
        s.add_all(targets)
        s.commit()
        ids = [t.id for t in targets]
        runs = []
        for i in range(n):
            fail = i % 3 == 0
            runs.append(Run(target_id=ids[i % n_targets], kind="check", status="fail" if fail else "pass",
                            summary="fail: livelock risk" if fail else "pass",
                            config_json='{"values": {"vllm_version": {"value": "0.31.0", "source": "server"}}}'))
        s.add_all(runs)
        s.commit()
        rows = []
        for r in runs:
            rows.append(FindingRow(run_id=r.id, seq=0, check="vllm-version", status="warn", title="0.31.0"))
            rows.append(FindingRow(run_id=r.id, seq=1, check="pooling-livelock-risk", status=r.status,
                                   title="livelock risk"))
        s.add_all(rows)
        s.commit()


def first_render_s(db: str, expect_rows: int = 25) -> float:
    """Seconds for a fresh session's first render of the History page (new Services, cold page)."""
    services.set_override(services.Services(db))
    try:
        at = AppTest.from_file(str(ROOT / "ui" / "pages" / "history_page.py"), default_timeout=30)
        t0 = time.perf_counter()
        at.run()
        dt = time.perf_counter() - t0
        assert not at.exception, [e.value for e in at.exception]
        if expect_rows:
            assert len(at.dataframe[0].value) == expect_rows, f"the first page should show {expect_rows} runs"
        return dt
    finally:
        services.set_override(None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    warm = str(Path(tempfile.mkdtemp()) / "warm.db")
    fill(Store(warm), 30)
    first_render_s(warm)  # import Streamlit, pandas/pyarrow (dataframes) and the page once
    medians: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as d:
        dbs: dict[int, str] = {}
        for n in args.sizes:
            dbs[n] = str(Path(d) / f"runs-{n}.db")
            t0 = time.perf_counter()
            store = Store(dbs[n])
            fill(store, n)
            assert store.count_runs() == n
            print(f"{n:>6} runs stored in {time.perf_counter() - t0:.1f} s")
        # interleaved, so load from other processes on a shared box hits every size alike
        times: dict[int, list[float]] = {n: [] for n in args.sizes}
        sql: dict[int, list[float]] = {n: [] for n in args.sizes}
        for _ in range(args.repeat):
            for n in args.sizes:
                times[n].append(first_render_s(dbs[n]))
                svc = services.Services(dbs[n])
                t0 = time.perf_counter()
                svc.count_runs()
                svc.list_runs(limit=25, offset=0)
                svc.list_runs(status="fail", limit=25, offset=(n // 3 // 25 - 1) * 25)  # a filter's last page
                sql[n].append(time.perf_counter() - t0)
        for n in args.sizes:
            medians[n] = statistics.median(times[n])
            print(f"{n:>6} runs: first render median {medians[n] * 1000:7.1f} ms "
                  f"(all: {', '.join(f'{t * 1000:.0f}' for t in times[n])} ms); services alone "
                  f"(count + first page + a filter's last page) median {statistics.median(sql[n]) * 1000:.1f} ms")
    ok = all(v <= LIMIT_S for v in medians.values())
    lo, hi = min(args.sizes), max(args.sizes)
    ratio = medians[hi] / medians[lo]
    print(f"ratio {hi}/{lo} runs: {ratio:.2f} (limit {MAX_RATIO}); every render <= {LIMIT_S} s: {ok}")
    return 0 if ok and ratio <= MAX_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
