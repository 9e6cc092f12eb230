"""Peak memory (max RSS) of `logs`, `import` and `check` against the worst inputs of issue 16.

Each command runs as its own process under a one-child wrapper, so RUSAGE_CHILDREN's max RSS is
that command's peak. Inputs: a log of one 200 MB line; a 2 GiB run.json inside a zip of a few MB;
the largest run document import accepts (~31 MB of samples); a 1 GiB /metrics page and an endless
chunked /metrics (tests/hardening/hostile.py, a loopback test double). Bound: 600 MB and the
command's deadline plus a few seconds.

    python3 bench/bench_hardening.py            # all
    python3 bench/bench_hardening.py logs check # some
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "hardening"))

LIMIT_MB = 600


def measure(args: list[str], timeout: float) -> tuple[int, float, float, str]:
    """(exit code, seconds, peak RSS MB, last stderr line) of `python -m triage ARGS` in a fresh wrapper."""
    code = (
        "import resource, subprocess, sys, time\n"
        "t = time.monotonic()\n"
        f"p = subprocess.run([sys.executable, '-m', 'triage', *{args!r}], capture_output=True, timeout={timeout})\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "err = p.stderr.decode('utf-8', 'replace').strip().splitlines()\n"
        "print(p.returncode, time.monotonic() - t, rss, (err[-1] if err else '')[:100], sep='\\t')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT),
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=timeout + 30)
    line = out.stdout.rstrip("\n")
    if not line:
        return -1, 0.0, 0.0, out.stderr.strip()[-100:]
    rc, secs, rss, err = line.split("\t", 3)
    return int(rc), float(secs), float(rss), err


def row(name: str, rc: int, secs: float, rss: float, err: str, deadline: float | None = None) -> bool:
    ok = rc in (0, 1, 2) and rss < LIMIT_MB and (deadline is None or secs < deadline + 5)
    print(f"{name:44} exit {rc}  {secs:6.1f} s  peak {rss:6.0f} MB  {'ok' if ok else 'OVER'}  {err}")
    return ok


def bench_logs(tmp: Path) -> bool:
    log = tmp / "one-line.log"
    with open(log, "wb") as f:
        block = b"x" * (1 << 20)
        for _ in range(200):
            f.write(block)
        f.write(b"\n")
    return row("logs: one 200 MB line", *measure(["logs", str(log), "--db", str(tmp / "l.db")], 600))


def bench_import(tmp: Path) -> bool:
    from triage import SCHEMA

    bomb = tmp / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("run.json", "w", force_zip64=True) as m:
        block = b" " * (1 << 24)
        for _ in range(128):  # 2 GiB inflated
            m.write(block)
    ok = row(f"import: zip of {bomb.stat().st_size >> 20} MB holding 2 GiB run.json",
             *measure(["import", str(bomb), "--db", str(tmp / "i.db")], 300))
    doc = {"schema": SCHEMA, "document": "run", "run_format": 1,
           "run": {"kind": "watch", "status": "pass", "config": {}, "meta": {}}, "target": {"url": "http://x"},
           "findings": [], "probes": [], "captures": [],
           "samples": [{"engine": "0", "ts": 1.0 + i, "source": "scrape", "num_requests_running": 1.0,
                        "num_requests_waiting": 0.0, "prompt_tokens_total": float(i), "extra": {}}
                       for i in range(200_000)]}
    big = tmp / "big.json"
    big.write_text(json.dumps(doc))
    del doc
    ok &= row(f"import: largest accepted document ({big.stat().st_size >> 20} MB)",
              *measure(["import", str(big), "--db", str(tmp / "i2.db")], 600))
    return ok


def bench_check(tmp: Path) -> bool:
    from hostile import Behaviour, HostileServer

    ok = True
    for name, b in (("check: 1 GiB /metrics", Behaviour(metrics_bytes=1 << 30)),
                    ("check: endless chunked /metrics", Behaviour(endless_metrics=True)),
                    ("check: /metrics one byte a second", Behaviour(slow=("/metrics",)))):
        with HostileServer(b) as s:
            ok &= row(name + " (--timeout 10)",
                      *measure(["check", "--url", s.url, "--timeout", "10", "--db", str(tmp / "c.db")], 120),
                      deadline=10 + 10)
    return ok


BENCHES = {"logs": bench_logs, "import": bench_import, "check": bench_check}


def main(names: list[str]) -> int:
    ok = True
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as d:
        for n in names or list(BENCHES):
            ok &= BENCHES[n](Path(d))
    print(f"bound {LIMIT_MB} MB; {'all within' if ok else 'SOME OVER'}; {time.monotonic() - t0:.0f} s; "
          f"this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
