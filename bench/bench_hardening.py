"""Peak memory (max RSS) and wall time of the CLI against the worst inputs of issues 16 and 22, and the worst case
of each class.

Each command runs as its own process under a one-child wrapper, so RUSAGE_CHILDREN's max RSS is
that command's peak. Inputs (issue 16): a log of one 200 MB line; a 2 GiB run.json inside a zip of a few MB;
the largest run document import accepts (~31 MB of samples); a 1 GiB /metrics page and an endless
chunked /metrics. Issue 22: a hostile Prometheus (trickle, 400 MB answers, 300,000 series, a bad chunk, a newline
in a label, --since 99999999999999w), the vectors set against 10 million `{}`, million-dimension vectors and 10
million token ids, the client libraries against a 400 MB answer, /dev/zero for import, check --log-file and logs,
a 200 MB log for check, an import of 600,000 findings, URL-userinfo secrets and a hung embedding
(tests/hardening/hostile.py and hostile_prom.py, loopback test doubles). Bound: 600 MB and the command's deadline
plus 5 s. The last lines give the worst case (time, peak RSS) of each class.

    python3 bench/bench_hardening.py                  # all
    python3 bench/bench_hardening.py fleet vectors    # some: redact logs import check fleet
                                                      # vectors devices secrets bounded
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


WORST: dict[str, tuple[float, float, str, str]] = {}  # class -> (seconds, peak MB, case of the time, of the RSS)
CLASS = "caps"  # the class rows are counted under (each bench sets it)


def row(name: str, rc: int, secs: float, rss: float, err: str, deadline: float | None = None) -> bool:
    ok = rc in (0, 1, 2) and rss < LIMIT_MB and (deadline is None or secs < deadline + 5)
    print(f"{name:52} exit {rc}  {secs:6.1f} s  peak {rss:6.0f} MB  {'ok' if ok else 'OVER'}  {err[:90]}", flush=True)
    t, m, tn, mn = WORST.get(CLASS, (0.0, 0.0, "", ""))
    WORST[CLASS] = (max(t, secs), max(m, rss), name if secs >= t else tn, name if rss >= m else mn)
    return ok


def run_measured(name: str, args: list[str], timeout: float, deadline: float | None = None,
                 env: dict[str, str] | None = None) -> bool:
    from hostile import measured

    r = measured(*args, timeout=timeout, env=env)
    err = r.err.strip().splitlines()
    ok = row(name, r.rc, r.elapsed_s, r.peak_mb, err[-1] if err else "", deadline)
    return ok and "Traceback" not in r.err


def bench_logs(tmp: Path) -> bool:
    global CLASS
    CLASS = "caps"
    log = tmp / "one-line.log"
    with open(log, "wb") as f:
        block = b"x" * (1 << 20)
        for _ in range(200):
            f.write(block)
        f.write(b"\n")
    return row("logs: one 200 MB line", *measure(["logs", str(log), "--db", str(tmp / "l.db")], 600))


def bench_import(tmp: Path) -> bool:
    global CLASS
    CLASS = "caps"
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
    global CLASS
    CLASS = "caps"
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


def bench_fleet(tmp: Path) -> bool:
    global CLASS
    from hostile_prom import HostileProm

    CLASS = "caps"
    ok = True
    for mode in ("trickle", "huge", "many-series"):
        with HostileProm(mode) as p:
            ok &= run_measured(f"fleet: Prometheus {mode} (--timeout 10)",
                               ["fleet", "--prometheus", p.url, "--since", "30m", "--timeout", "10", "--no-version",
                                "--db", str(tmp / "f.db")], 120, deadline=10 + 3)
    ok &= run_measured("fleet: --since 99999999999999w", ["fleet", "--prometheus", "http://127.0.0.1:9", "--since",
                                                           "99999999999999w"], 60, deadline=5)
    CLASS = "crashes"
    with HostileProm("one-bad-chunk") as p:
        ok &= run_measured("fleet: one malformed chunk", ["fleet", "--prometheus", p.url, "--since", "30m",
                                                          "--no-version", "--db", str(tmp / "f.db")], 120)
    CLASS = "rendering"
    with HostileProm("label-newline") as p:
        ok &= run_measured("fleet: newline in a label (text)", ["fleet", "--prometheus", p.url, "--since", "30m",
                                                                "--no-version", "--db", str(tmp / "f.db")], 120)
    return ok


def bench_vectors(tmp: Path) -> bool:
    global CLASS
    from hostile import Behaviour, HostileServer

    CLASS = "caps"
    ok = True
    cases = {
        "vectors: 10 million {}": ("vectors", Behaviour(bodies={"/v1/embeddings": b'{"data": [' + b"{}," * 10_000_000
                                                                   + b"{}]}"})),
        "vectors: million-dimension vector": ("vectors", Behaviour(bodies={"/v1/embeddings": b'{"data": [{"index": 0, '
                                                                           b'"embedding": [' + b"0.1," * 1_000_000
                                                                           + b"0.1]}]}"})),
        "vectors: 10 million /tokenize ids": ("vectors", Behaviour(bodies={"/tokenize": b'{"count": 3, "tokens": ['
                                                                          + b"1," * 10_000_000 + b"1]}"})),
        "clients: 400 MB answer to the libraries": ("clients", Behaviour(huge={"/v1/embeddings": 400 << 20},
                                                                         huge_for_libraries=True)),
    }
    for name, (set_, b) in cases.items():
        with HostileServer(b) as s:
            ok &= run_measured(name, ["probe", "--url", s.url, "--set", set_, "--deadline", "5", "--db",
                                      str(tmp / "v.db")], 200, env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    return ok


def bench_devices(tmp: Path) -> bool:
    global CLASS
    from triage import SCHEMA

    CLASS = "caps"
    ok = run_measured("import /dev/zero", ["import", "/dev/zero", "--db", str(tmp / "d.db")], 60)
    ok &= run_measured("check --log-file /dev/zero",
                       ["check", "--log-file", "/dev/zero", "--db", str(tmp / "d.db")], 120)
    ok &= run_measured("logs /dev/zero (default 256 MiB cap)", ["logs", "/dev/zero", "--no-save"], 300)
    log = tmp / "200mb.log"
    filler = b"(APIServer pid=1) INFO 11-30 11:39:44 [loggers.py:1] Avg prompt throughput: 0.0 tokens/s\n" * 4096
    with open(log, "wb") as f:
        f.write((ROOT / "tests/fixtures/real/0.32.0-tiny-qwen3-livelock/server.log").read_bytes())
        while f.tell() < 200 << 20:
            f.write(filler)
    ok &= run_measured("check --log-file of a 200 MB log", ["check", "--log-file", str(log), "--db",
                                                             str(tmp / "d.db")], 300)
    doc = {"schema": SCHEMA, "document": "run", "run_format": 1, "run": {"kind": "check", "status": "pass"},
           "findings": [{"check": "c", "status": "pass"}] * 600_000}
    many = tmp / "many.json"
    many.write_text(json.dumps(doc))
    ok &= run_measured(f"import: 600,000 tiny findings ({many.stat().st_size >> 20} MB)",
                       ["import", str(many), "--db", str(tmp / "d.db")], 120)
    return ok


def bench_secrets(tmp: Path) -> bool:
    global CLASS
    from hostile import Behaviour, HostileServer

    CLASS = "secrets"
    ok = True
    with HostileServer(Behaviour(echo_key=True)) as s:
        for userinfo in (":pw-bench-5e81c0aa", "tok-bench-0d9b7a61"):
            url = s.url.replace("http://", f"http://{userinfo}@")
            ok &= run_measured(f"check --url http://{userinfo.split('-')[0]}…@ (echoed)",
                               ["check", "--url", url, "--timeout", "5", "--db", str(tmp / "s.db")], 60,
                               deadline=3 * 5 + 15)
    ok &= run_measured("check --cmdline with --api-key $'K' and --hf-token",
                       ["check", "--cmdline", "vllm serve m --api-key $'kq-1' --hf-token hf_abcdefghijkl", "--db",
                        str(tmp / "s.db")], 60)
    CLASS = "crashes"
    with HostileServer(Behaviour(slow=("/v1/embeddings",))) as s:
        ok &= run_measured("check: the embedding request hangs (--timeout 3)",
                           ["check", "--url", s.url, "--timeout", "3", "--db", str(tmp / "s.db")], 60,
                           deadline=3 * 3 + 15)
    CLASS = "validation"
    for args in (["watch", "--url", "http://127.0.0.1:9", "--stall-seconds", "nan"],
                 ["fleet", "rules", "--stall-seconds", "-100"],
                 ["check", "--cmdline", "x", "--truncate", str(2**63)]):
        ok &= run_measured(" ".join(args)[:52], args, 60, deadline=5)
    return ok


def bench_redact(tmp: Path) -> bool:
    """Issue 33: each reader of the one redaction point on 100 KB of adversarial input, in process (the
    operation only); bound 50 ms each. Then the 81-character line that froze the old regexes, through the CLI."""
    global CLASS
    sys.path.insert(0, str(ROOT / "tests" / "hardening"))
    from test_secrets_round3 import ADVERSARIAL

    from triage.redact import redact_text

    CLASS = "redact"
    ok = True
    for name, text in ADVERSARIAL.items():
        text = text[:100_000]
        t0 = time.perf_counter()
        redact_text(text)
        secs = time.perf_counter() - t0
        within = secs < 0.05
        ok &= within
        print(f"redact: {name:44} {secs * 1000:7.1f} ms  {'ok' if within else 'OVER'}", flush=True)
        t, m, tn, mn = WORST.get(CLASS, (0.0, 0.0, "", ""))
        WORST[CLASS] = (max(t, secs), m, name if secs >= t else tn, mn)
    line = "vllm serve m --api-key" + " \\\n" * 20  # 81 characters: 19 s with the old regexes
    ok &= run_measured("check --cmdline: --api-key then 20 continuations", ["check", "--cmdline", line, "--db",
                                                                             str(tmp / "r.db")], 60, deadline=5)
    return ok


def bench_bounded(tmp: Path) -> bool:
    """Issue 33, deliver 4: the rerank clients and Open WebUI's reranker against 100,000 results for 3 documents and
    against answers that trickle (--deadline 3: each client call by 3 + 5 s), a log of 500 KB request ids, fleet
    interval discovery that trickles (--timeout 6)."""
    global CLASS
    import json as json_

    from hostile import Behaviour, HostileServer
    from hostile_prom import HostileProm

    CLASS = "bounded"
    rec = json_.loads((ROOT / "tests/fixtures/real/rerank/0.32.0-rerank/rerank.json").read_text())["body"]
    many = json_.dumps({**rec, "results": [{"index": i, "relevance_score": 0.5} for i in range(100_000)]}).encode()
    ok = True
    with HostileServer(Behaviour(bodies={p: many for p in ("/rerank", "/v1/rerank", "/v2/rerank")})) as s:
        ok &= run_measured("rerank: 100,000 results for 3 documents", [
            "probe", "--url", s.url, "--set", "rerank", "--only", "rerank-shape", "score-shape", "rerank-top-n",
            "rerank-client-*", "--deadline", "5", "--format", "json", "--db", str(tmp / "b.db")], 240)
    plain = json_.dumps(rec).encode()
    with HostileServer(Behaviour(bodies={"/rerank": plain, "/v1/rerank": plain, "/v2/rerank": plain},
                                 slow=("/v1/rerank", "/v2/rerank"))) as s:
        ok &= run_measured("rerank clients: answers trickle, --deadline 3", [
            "probe", "--url", s.url, "--set", "rerank", "--only", "rerank-client-*", "--deadline", "3", "--db",
            str(tmp / "b.db")], 240, deadline=4 * 8)  # four client calls, each by --deadline + 5 s
    log = tmp / "ids.log"
    line = (ROOT / "tests/fixtures/real/client-timeouts/0.31.0-tiny-qwen3-livelock/server.log").read_text() \
        .splitlines()[1]
    prefix = line.partition("Added request ")[0]
    with open(log, "w") as f:
        for i in range(200):  # ~100 MB
            rid = f"embd-{i}-" + "b" * (1 << 19)
            f.write(f"{prefix}Added request {rid}.\n{prefix}Aborted request(s) {rid}.\n")
    ok &= row("logs: 400 request ids of 512 KB", *measure(["logs", str(log), "--format", "json", "--no-save"], 300))
    with HostileProm("discovery-trickle") as p:
        ok &= run_measured("fleet: interval discovery trickles, --timeout 6", [
            "fleet", "--prometheus", p.url, "--since", "30m", "--timeout", "6", "--no-version", "--db",
            str(tmp / "f.db")], 60, deadline=6)
    return ok


BENCHES = {"redact": bench_redact, "logs": bench_logs, "import": bench_import, "check": bench_check,
           "fleet": bench_fleet, "vectors": bench_vectors, "devices": bench_devices, "secrets": bench_secrets,
           "bounded": bench_bounded}


def main(names: list[str]) -> int:
    ok = True
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as d:
        for n in names or list(BENCHES):
            ok &= BENCHES[n](Path(d))
    print("\nworst case per class (time | peak RSS, and the case that set each):")
    for cls, (secs, rss, tname, mname) in sorted(WORST.items()):
        print(f"  {cls:10} {secs:6.1f} s ({tname})  |  {rss:6.0f} MB ({mname})")
    print(f"bound {LIMIT_MB} MB; {'all within' if ok else 'SOME OVER'}; {time.monotonic() - t0:.0f} s; "
          f"this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
