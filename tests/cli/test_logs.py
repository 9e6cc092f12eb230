"""`python -m triage logs` on recorded real logs: exit codes, JSON contract, text, stdin."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from triage.cli import CLI_SCHEMA, main
from triage.store import Store
from triage.catalogue import POOLING_LIVELOCK

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
LIVELOCK_031 = REAL / "logs" / "0.31.0-tiny-qwen3-livelock-livelock-031.log"
STARTUP_032 = REAL / "0.32.0-tiny-qwen3-livelock" / "server.log"
SEED = (
    "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, "
    "Running: 1 reqs, Waiting: 0 reqs\n"
)  # quoted from the issue


def test_json_on_recorded_livelock(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "t.db")
    rc = main(["logs", str(LIVELOCK_031), "--format", "json", "--db", db, "--year", "2026"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and out["schema"] == CLI_SCHEMA and out["status"] == "fail"
    f = next(x for x in out["findings"] if x["check"] == "log-livelock-suspect")
    assert f["evidence"]["window"]["start"] == "2026-11-29 21:09:07"
    assert out["config"]["vllm_version"] == "0.31.0" and out["config_provenance"]["max_model_len"]["source"] == "log"
    assert out["summary"]["stats"]["lines"] > 5
    rec = Store(db).get_run(out["run_id"])
    assert rec is not None and rec.run.kind == "logs" and rec.run.status == "fail"
    assert rec.samples and all(s.source == "log" for s in rec.samples)
    assert rec.captures[0].kind == "log" and "Engine 000" in rec.captures[0].content


def test_text_on_healthy_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["logs", str(STARTUP_032), "--db", str(tmp_path / "t.db")])
    out = capsys.readouterr().out
    assert rc == 0 and "verdict: PASS" in out and "max_num_batched_tokens" in out and "0.32.0" in out


@pytest.mark.parametrize("fail_on,code", [("fail", 0), ("warn", 1)])
def test_stdin_seed_line(
    fail_on: str, code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(SEED))
    rc = main(["logs", "-", "--no-save", "--fail-on", fail_on])
    out = capsys.readouterr().out
    assert rc == code and "[WARN] log-livelock-suspect" in out and POOLING_LIVELOCK.refs[0] in out


def test_missing_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", str(tmp_path / "nope.log"), "--no-save"]) == 2
    assert "cannot read" in capsys.readouterr().err


def _cli_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    rc = main(argv)
    out = json.loads(capsys.readouterr().out)
    out.pop("run_id"), out.pop("source")
    return rc, out


@pytest.mark.parametrize("log", [LIVELOCK_031, STARTUP_032], ids=["livelock-031", "startup-032"])
def test_file_and_stdin_give_the_same_analysis_and_capture(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regular file goes through the chunked scan and file_head_tail; stdin through the HeadTail tee: same."""
    db = str(tmp_path / "t.db")
    rc_file, by_file = _cli_json(["logs", str(log), "--format", "json", "--db", db, "--year", "2026"], capsys)
    stdin = io.TextIOWrapper(io.BytesIO(log.read_bytes()), encoding="utf-8", errors="replace", newline="")
    monkeypatch.setattr("sys.stdin", stdin)  # untranslated line ends, as the file was read before (a '\r' kept)
    db2 = str(tmp_path / "t2.db")
    rc_stdin, by_stdin = _cli_json(["logs", "-", "--format", "json", "--db", db2, "--year", "2026"], capsys)
    assert rc_file == rc_stdin and by_file == by_stdin
    cap_file = Store(db).get_run(1).captures[0].content  # type: ignore[union-attr]
    cap_stdin = Store(db2).get_run(1).captures[0].content  # type: ignore[union-attr]
    assert cap_file == cap_stdin


def _adversarial(n_lines: int, tail: bytes = b"") -> bytes:
    parts = []
    for i in range(n_lines):
        body = f"INFO 11-29 21:09:{i % 60:02d} line {i} ".encode()
        kinds = [b"ascii", "caf\u00e9 \u2014 \U0001f600".encode(), b"bad \xff\xfe bytes \xe2\x82", b"x" * (i % 700)]
        body += kinds[i % 4]
        parts.append(body + [b"\n", b"\r\n", b"\r"][i % 3])
    return b"".join(parts) + tail


@pytest.mark.parametrize(
    "data",
    [
        _adversarial(40),  # small: the tee itself
        _adversarial(400),  # head, tail window, count of what is left out
        _adversarial(400, b"y" * 9000),  # a last line longer than the tail window: the tee
        _adversarial(400, b"\xe2\x82" + "\u00e9".encode() * 2000 + b"\n"),
        b"z" * 30_000,  # no line end at all
    ],
    ids=["small", "big", "giant-last-line", "multibyte-last-line", "one-line"],
)
def test_file_head_tail_is_the_tee_text(data: bytes, tmp_path: Path) -> None:
    from functools import partial

    from triage.cli.logs import HeadTail, file_head_tail

    path = tmp_path / "a.log"
    path.write_bytes(data)
    limit, max_line = 2000, 300
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        tee = HeadTail(iter(partial(f.readline, max_line), ""), limit)
        for _ in tee:
            pass
    assert file_head_tail(path, limit, max_line) == tee.text()
