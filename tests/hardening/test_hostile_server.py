"""check, probe and watch against a hostile server on loopback (tests/hardening/hostile.py: a test double
on purpose, no real vLLM misbehaves this way). Every test is bounded (pytest timeout per test; each CLI
call asserts its own wall time)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from io import BytesIO
from pathlib import Path

import pytest
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import (KEY, METRICS, ROOT, URL_PASSWORD, Behaviour, HostileServer, assert_clean, cli,  # noqa: E402
                     db_bytes)  # noqa: E402

from triage.store import Store  # noqa: E402


@pytest.fixture(autouse=True)
def _key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTILE_KEY", KEY)


def strict_json(text: str) -> object:
    def no_constant(c: str) -> object:
        raise AssertionError(f"{c} is not JSON")

    return json.loads(text, parse_constant=no_constant)


def with_password(url: str) -> str:
    return url.replace("http://", f"http://triage:{URL_PASSWORD}@")


@pytest.mark.timeout(300)
def test_echoed_key_and_url_password_reach_no_stored_printed_or_exported_byte(capsys, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    outs: list[str] = []
    with HostileServer(Behaviour(echo_key=True, escape=True)) as s:
        url = with_password(s.url)
        runs = [
            ("check", "--url", url, "--api-key-env", "HOSTILE_KEY", "--db", str(db)),
            ("check", "--url", url, "--api-key-env", "HOSTILE_KEY", "--db", str(db), "--format", "json"),
            ("probe", "--url", url, "--api-key-env", "HOSTILE_KEY", "--db", str(db), "--format", "json"),
            ("probe", "--url", url, "--api-key-env", "HOSTILE_KEY", "--db", str(db)),
            ("watch", "--url", url, "--api-key-env", "HOSTILE_KEY", "--db", str(db), "--duration", "1.5",
             "--interval", "0.5", "--format", "json"),
            ("watch", "--url", url, "--api-key-env", "HOSTILE_KEY", "--db", str(db), "--duration", "1"),
        ]
        for args in runs:
            r = cli(capsys, *args, within_s=90)
            assert_clean(r, KEY, URL_PASSWORD)
            if "json" in args:
                strict_json(r.out)
            outs.append(r.out + r.err)
    blob = db_bytes(db)
    assert KEY.encode() not in blob and URL_PASSWORD.encode() not in blob
    with Store(str(db)).engine.connect() as c:
        n_runs = c.execute(text("select count(*) from run")).scalar_one()
    assert n_runs == len(runs)
    for run_id in range(1, n_runs + 1):
        for fmt in ("md", "html", "json", "bundle"):
            out = tmp_path / f"r{run_id}.{fmt}"
            r = cli(capsys, "report", str(run_id), "--format", fmt, "-o", str(out), "--db", str(db))
            assert r.rc == 0, r.err
            data = out.read_bytes()
            parts = [data]
            if fmt == "bundle":
                with zipfile.ZipFile(BytesIO(data)) as zf:
                    parts = [zf.read(n) for n in zf.namelist()]
            for p in parts:
                assert KEY.encode() not in p and URL_PASSWORD.encode() not in p, (run_id, fmt)
                if fmt in ("md", "json"):
                    assert b"\x1b" not in p, (run_id, fmt)
            if fmt == "json":
                strict_json(data.decode())


@pytest.mark.timeout(240)
def test_a_trickling_server_cannot_hold_check_watch_or_probe_past_their_deadlines(capsys, tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    with HostileServer(Behaviour(slow=("/metrics",))) as s:
        r = cli(capsys, "check", "--url", s.url, "--timeout", "3", "--db", db, "--format", "json", within_s=3 * 3 + 8)
        assert_clean(r)
        metrics = [f for f in strict_json(r.out)["findings"] if f["check"] == "metrics-parse"]  # type: ignore[index]
        assert metrics and metrics[0]["status"] == "unknown"
        r = cli(capsys, "watch", "--url", s.url, "--duration", "3", "--interval", "0.5", "--db", db, within_s=3 + 5)
        assert_clean(r)
        assert r.rc == 2  # every scrape failed: could not watch
    with HostileServer(Behaviour(slow=("/health", "/v1/models"))) as s:
        r = cli(capsys, "check", "--url", s.url, "--timeout", "3", "--db", db, within_s=3 + 6)
        assert_clean(r)
        r = cli(capsys, "probe", "--url", s.url, "--db", db, "--format", "json", within_s=10 + 6)
        assert_clean(r)
        assert r.rc == 2 and strict_json(r.out)["status"] == "error"  # type: ignore[index]


@pytest.mark.timeout(120)
def test_an_endless_metrics_page_is_cut_not_swallowed(capsys, tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    with HostileServer(Behaviour(endless_metrics=True)) as s:
        r = cli(capsys, "check", "--url", s.url, "--timeout", "5", "--db", db, "--format", "json", within_s=5 + 10)
        assert_clean(r)
        metrics = [f for f in strict_json(r.out)["findings"] if f["check"] == "metrics-parse"]  # type: ignore[index]
        assert metrics[0]["status"] == "unknown"
        r = cli(capsys, "watch", "--url", s.url, "--duration", "2", "--db", db, within_s=2 + 8)
        assert_clean(r)


DEEP = b'{"error": ' * 200_000 + b"1" + b"}" * 200_000
MALFORMED = {
    "models-list-of-strings": Behaviour(bodies={"/v1/models": {"data": ["oops"]}}),
    "models-numeric-root": Behaviour(bodies={"/v1/models": {"data": [{"id": "m", "root": 5, "max_model_len": 256}]}}),
    "max-model-len-zero": Behaviour(max_model_len=0),
    "max-model-len-billions": Behaviour(max_model_len=10**12),
    "tokenize-not-json": Behaviour(bodies={"/tokenize": b"<html>nope</html>"}),
    "tokenize-count-string": Behaviour(bodies={"/tokenize": {"count": "many"}}),
    "vector-with-a-string": Behaviour(bodies={"/v1/embeddings": {"data": [{"embedding": ["oops", 0.1], "index": 0}]}}),
    "embeddings-data-strings": Behaviour(bodies={"/v1/embeddings": {"data": ["oops"]}}),
    "deep-error-bodies": Behaviour(bodies={"/v1/embeddings": DEEP, "/tokenize": DEEP}, status={"/v1/embeddings": 400}),
    "version-not-json": Behaviour(bodies={"/version": b"<html>"}),
}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_answers_become_findings_not_tracebacks(case: str, capsys, tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    with HostileServer(MALFORMED[case]) as s:
        r = cli(capsys, "check", "--url", s.url, "--db", db, "--format", "json", "--timeout", "5", within_s=45)
        assert_clean(r)
        doc = strict_json(r.out)
        checks = {f["check"] for f in doc["findings"]}  # type: ignore[index]
        assert len(checks) > 5, "one bad answer must not lose the rest of the checklist"
        if case == "version-not-json":
            vllm = next(f for f in doc["findings"] if f["check"] == "server-is-vllm")  # type: ignore[index]
            assert "/version" in vllm["title"] and "/v1/models" not in vllm["title"]
        r = cli(capsys, "probe", "--url", s.url, "--db", db, "--format", "json", "--deadline", "5", within_s=120)
        assert_clean(r)
        strict_json(r.out)
    with Store(db).engine.connect() as c:  # through the store: the same check with the store on PostgreSQL
        status = c.execute(text("select status from run order by id desc limit 1")).scalar_one()
    assert status != "running"  # the probe run was closed with a verdict, whatever came back


@pytest.mark.timeout(120)
def test_infinite_and_nan_gauges_keep_json_json(capsys, tmp_path: Path) -> None:
    text = METRICS
    for name, value in (("vllm:num_requests_running{", "+Inf"), ("vllm:num_requests_waiting{", "NaN")):
        text = "\n".join(
            (ln.rsplit(" ", 1)[0] + " " + value) if ln.startswith(name) else ln for ln in text.splitlines()
        ) + "\n"
    db = str(tmp_path / "t.db")
    with HostileServer(Behaviour(metrics_text=text)) as s:
        r = cli(capsys, "watch", "--url", s.url, "--duration", "2", "--interval", "0.5", "--stall-seconds", "0.5",
                "--db", db, "--format", "json", within_s=2 + 8)
        assert_clean(r)
        strict_json(r.out)
        r = cli(capsys, "watch", "--url", s.url, "--duration", "2", "--interval", "0.5", "--stall-seconds", "0.5",
                "--db", db, within_s=2 + 8)
        assert_clean(r)
        r = cli(capsys, "check", "--url", s.url, "--db", db, "--format", "json", within_s=30)
        assert_clean(r)
        strict_json(r.out)


@pytest.mark.timeout(120)
def test_watch_killed_with_sigkill_keeps_what_it_printed(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    path = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)]))  # keeps tests/pgmode in PG mode
    with HostileServer() as s:
        p = subprocess.Popen([sys.executable, "-m", "triage", "watch", "--url", s.url, "--interval", "0.3",
                              "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=str(ROOT),
                             env={**os.environ, "PYTHONPATH": path}, text=True)
        printed = 0
        deadline = time.monotonic() + 60
        try:
            while printed < 5 and time.monotonic() < deadline:
                line = p.stdout.readline()  # type: ignore[union-attr]
                if " engine " in line:
                    printed += 1
        finally:
            os.kill(p.pid, signal.SIGKILL)
            p.wait(10)
    assert printed == 5
    with Store(str(db)).engine.connect() as c:  # SQLite, or PostgreSQL in PG mode (VLLM_TRIAGE_TEST_DB)
        stored = c.exec_driver_sql("select count(*) from metricsample").scalar_one()
    assert stored >= printed
