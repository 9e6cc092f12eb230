"""``python -m triage check``: JSON contract, exit codes, storage; offline on recorded logs and live on lab servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import httpx
import pytest

from tests.stored import stored_bytes
from triage.cli import CLI_SCHEMA, main
from triage.store import Store
from triage.lab.server import free_port
from triage.catalogue import POOLING_LIVELOCK

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
LOG_031 = REAL / "0.31.0-tiny-qwen3-livelock" / "server.log"
LOG_032 = REAL / "0.32.0-tiny-qwen3-livelock" / "server.log"
LOG_BERT = REAL / "0.32.0-minilm-bert-waiting" / "server.log"
LIVELOCK_CMD = (
    "vllm serve /root/.cache/vllm-triage/lab/models/tiny-qwen3 --host 127.0.0.1 --port 8000 "
    "--runner pooling --kv-cache-memory-bytes 67108864 --enforce-eager --convert embed "
    "--max-model-len 256 --max-num-batched-tokens 128 --enable-chunked-prefill"
)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", "--format", "json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip().startswith("{") else {}


def by_check(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["check"]: f for f in doc["findings"]}


@pytest.fixture()
def db(tmp_path: Path) -> str:
    return str(tmp_path / "triage.db")


# -- offline: pasted command line + start-up log, no server -----------------------------------------


@pytest.mark.parametrize(
    "log,truncate,status,code",
    [
        pytest.param(LOG_031, "256", "fail", 1, id="0.31-256"),
        pytest.param(LOG_031, "255", "pass", 0, id="0.31-255"),
        pytest.param(LOG_032, "256", "pass", 0, id="0.32"),
    ],
)
def test_offline_verdicts(capsys, tmp_path: Path, db: str, log: Path, truncate: str, status: str, code: int) -> None:
    cmd = tmp_path / "cmd.txt"
    cmd.write_text(LIVELOCK_CMD)
    rc, doc = run_cli(capsys, "--cmdline-file", str(cmd), "--log-file", str(log), "--truncate", truncate, "--db", db)
    assert rc == code
    assert doc["schema"] == CLI_SCHEMA and isinstance(doc["run_id"], int)
    v = by_check(doc)["pooling-livelock-risk"]
    assert v["status"] == status
    assert set(v) >= {"check", "status", "title", "evidence", "fix", "refs"}
    if status == "fail":
        assert v["refs"] == list(POOLING_LIVELOCK.refs) and "255" in v["fix"] and "0.32.0" in v["fix"]
    assert doc["config"]["max_num_batched_tokens"]["value"] == 128
    rec = Store(db).get_run(doc["run_id"])
    assert [f.check for f in rec.findings] == [f["check"] for f in doc["findings"]]


def test_offline_bert_log_only(capsys, db: str) -> None:
    rc, doc = run_cli(capsys, "--log-file", str(LOG_BERT), "--truncate", "256", "--db", db)
    f = by_check(doc)
    assert f["pooling-livelock-risk"]["status"] == "pass" and "off" in f["pooling-livelock-risk"]["title"]
    assert f["budget-below-max-model-len"]["status"] == "fail" and rc == 1


def test_fail_on_warn(capsys, db: str) -> None:
    rc, _ = run_cli(capsys, "--log-file", str(LOG_031), "--truncate", "255", "--db", db, "--fail-on", "warn")
    assert rc == 1  # vllm-version warns on 0.31.0


def test_guide_command_line_myths(capsys, tmp_path: Path, db: str) -> None:
    cmd = tmp_path / "guide.txt"
    cmd.write_text(
        "docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.31.0 vllm-entrypoint api_server "
        "--model Qwen/Qwen3-Embedding-4B --embedding-batch-size 64 --trust-remote-code"
    )
    rc, doc = run_cli(capsys, "--cmdline-file", str(cmd), "--db", db)
    checks = [f["check"] for f in doc["findings"]]
    assert "flags-unknown" in checks and "flags-unknown-command" in checks and rc == 1
    assert by_check(doc)["vllm-version"]["evidence"]["vllm_version"]["source"] == "cmdline"


@pytest.mark.parametrize(
    "args",
    [
        pytest.param([], id="no-evidence"),
        pytest.param(["--log-file", "/nonexistent/x.log"], id="missing-file"),
        pytest.param(["--url", "127.0.0.1:8000"], id="no-scheme"),
        pytest.param(["--url", "http://127.0.0.1:1", "--api-key-env", "VLLM_TRIAGE_TEST_UNSET_VAR"], id="unset-env"),
        pytest.param(["--log-file", str(LOG_031), "--truncate", "lots"], id="bad-truncate"),
    ],
)
def test_could_not_run_exits_2(capsys, db: str, args: list[str]) -> None:
    os.environ.pop("VLLM_TRIAGE_TEST_UNSET_VAR", None)
    assert main(["check", "--db", db, *args]) == 2


def test_unreachable_port_is_a_stored_finding(capsys, db: str) -> None:
    rc, doc = run_cli(capsys, "--url", f"http://127.0.0.1:{free_port()}", "--truncate", "256", "--db", db)
    f = by_check(doc)["server-reachable"]
    assert f["status"] == "error" and f["evidence"]["error_kind"] == "refused" and rc == 1
    assert by_check(doc)["pooling-livelock-risk"]["status"] == "unknown"
    assert Store(db).get_run(doc["run_id"]).findings[0].check == "server-reachable"


def run_module(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m triage check ARGS`` in a child process from the repository root (the module entry)."""
    return subprocess.run([sys.executable, "-m", "triage", "check", *args], input=stdin, capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])


def test_text_output_and_module_entry(tmp_path: Path) -> None:
    p = run_module("--log-file", str(LOG_031), "--truncate", "256", "--db", str(tmp_path / "x.db"))
    assert p.returncode == 1, p.stderr
    assert "[FAIL] pooling-livelock-risk" in p.stdout


# -- real servers and real non-vLLM servers -----------------------------------------------------------


class _Server:
    """A real HTTP server in a thread; `route(method, path, headers, body) -> (status, content_type, bytes)`."""

    def __init__(self, route) -> None:
        outer = self

        class H(BaseHTTPRequestHandler):
            def _do(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                status, ctype, body = outer.route(self.command, self.path, dict(self.headers), self.rfile.read(n))
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up first (its timeout)
                    pass

            do_GET = do_POST = _do

            def log_message(self, *a: object) -> None:
                pass

        self.route = route
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def not_vllm() -> Iterator[_Server]:
    page = b"<html><body><h1>It works!</h1></body></html>"
    s = _Server(lambda m, p, h, b: (200, "text/html", page) if p == "/" else (404, "text/html", b"<h1>404</h1>"))
    yield s
    s.close()


def test_non_vllm_http_server(capsys, db: str, not_vllm: _Server) -> None:
    rc, doc = run_cli(capsys, "--url", not_vllm.url, "--truncate", "256", "--db", db)
    f = by_check(doc)
    assert f["server-reachable"]["status"] == "pass"
    assert f["server-is-vllm"]["status"] == "fail" and rc == 1
    assert f["metrics-parse"]["status"] == "unknown"


def _proxy(upstream: str, metrics_body: bytes | None = None) -> _Server:
    """Forward to a real vLLM server; optionally replace /metrics by something that is not Prometheus text."""

    def route(method: str, path: str, headers: dict, body: bytes):
        if path == "/metrics" and metrics_body is not None:
            return 200, "text/plain", metrics_body
        fwd = {k: v for k, v in headers.items() if k.lower() in ("authorization", "content-type")}
        r = httpx.request(method, upstream + path, headers=fwd, content=body or None, timeout=30)
        return r.status_code, r.headers.get("content-type", "application/json"), r.content

    return _Server(route)


@pytest.mark.real_server
def test_real_031_livelock_profile(capsys, db: str, server_031_livelock) -> None:
    srv = server_031_livelock
    rc, doc = run_cli(capsys, "--url", srv.url, "--log-file", srv.log_path, "--truncate", "256", "--db", db)
    v = by_check(doc)["pooling-livelock-risk"]
    assert v["status"] == "fail" and rc == 1
    assert POOLING_LIVELOCK.refs[0].removeprefix("vllm") in v["title"]
    assert "255" in v["fix"] and "--no-enable-chunked-prefill" in v["fix"]
    assert v["evidence"]["preconditions"]["max_model_len"]["source"] == "server"
    rc, doc = run_cli(capsys, "--url", srv.url, "--log-file", srv.log_path, "--truncate", "255", "--db", db)
    assert by_check(doc)["pooling-livelock-risk"]["status"] == "pass"


@pytest.mark.real_server
def test_real_032_livelock_profile_passes(capsys, db: str, server_032_livelock) -> None:
    srv = server_032_livelock
    rc, doc = run_cli(capsys, "--url", srv.url, "--log-file", srv.log_path, "--truncate", "256", "--db", db)
    v = by_check(doc)["pooling-livelock-risk"]
    assert v["status"] == "pass" and "fix" in v["title"] and rc == 0


@pytest.mark.real_server
def test_real_bert_passes_livelock(capsys, db: str, server_032_bert_waiting) -> None:
    srv = server_032_bert_waiting
    rc, doc = run_cli(capsys, "--url", srv.url, "--log-file", srv.log_path, "--truncate", "256", "--db", db)
    f = by_check(doc)
    assert f["pooling-livelock-risk"]["status"] == "pass" and "off" in f["pooling-livelock-risk"]["title"]
    assert f["budget-below-max-model-len"]["status"] == "fail"


@pytest.mark.real_server
def test_real_wrong_path_prefix(capsys, db: str, server_032_livelock) -> None:
    rc, doc = run_cli(capsys, "--url", server_032_livelock.url + "/v1", "--truncate", "256", "--db", db)
    f = by_check(doc)["server-api-prefix"]
    assert f["status"] == "warn" and server_032_livelock.url in f["fix"]
    assert by_check(doc)["server-is-vllm"]["status"] == "pass"


@pytest.mark.real_server
def test_real_api_key(capsys, db: str, server_032_apikey, monkeypatch) -> None:
    from tests.conftest import API_KEY

    url = server_032_apikey.url
    rc, doc = run_cli(capsys, "--url", url, "--truncate", "256", "--db", db)
    f = by_check(doc)["server-auth"]
    assert f["status"] == "error" and f["evidence"]["api_key_given"] is False and rc == 1
    monkeypatch.setenv("TRIAGE_TEST_KEY", "wrong-key-000")
    rc, doc = run_cli(capsys, "--url", url, "--api-key-env", "TRIAGE_TEST_KEY", "--truncate", "256", "--db", db)
    f = by_check(doc)["server-auth"]
    assert f["status"] == "error" and "rejected" in f["title"] and rc == 1
    monkeypatch.setenv("TRIAGE_TEST_KEY", API_KEY)
    rc, doc = run_cli(capsys, "--url", url, "--api-key-env", "TRIAGE_TEST_KEY", "--truncate", "256", "--db", db)
    assert by_check(doc)["server-auth"]["status"] == "pass"
    assert by_check(doc)["server-is-vllm"]["status"] == "pass"
    dump = stored_bytes(db)
    assert API_KEY.encode() not in dump and b"wrong-key-000" not in dump


@pytest.mark.real_server
def test_real_garbage_metrics_behind_a_proxy(capsys, db: str, server_032_livelock) -> None:
    proxy = _proxy(server_032_livelock.url, metrics_body=b"<html>metrics are disabled here</html>\n{{{ ::: }}}")
    try:
        rc, doc = run_cli(capsys, "--url", proxy.url, "--truncate", "256", "--db", db)
    finally:
        proxy.close()
    f = by_check(doc)
    assert f["metrics-parse"]["status"] == "error"
    assert f["server-is-vllm"]["status"] == "pass"
    assert Store(db).get_run(doc["run_id"]).findings  # nothing lost


@pytest.mark.real_server
@pytest.mark.parametrize(
    "fixture,truncate,status",
    [
        pytest.param("server_031_livelock", "256", "fail", id="0.31-256"),
        pytest.param("server_031_livelock", "255", "pass", id="0.31-255"),
        pytest.param("server_032_livelock", "256", "pass", id="0.32"),
        pytest.param("server_032_bert_waiting", "256", "pass", id="bert"),
    ],
)
def test_real_url_alone_on_the_server_host(capsys, db: str, request, fixture: str, truncate: str, status: str) -> None:
    """On the server's host the URL alone settles it: /proc gives the command line, no log needed."""
    srv = request.getfixturevalue(fixture)
    rc, doc = run_cli(capsys, "--url", srv.url, "--truncate", truncate, "--db", db)
    v = by_check(doc)["pooling-livelock-risk"]
    assert v["status"] == status, v["title"]
    if status == "fail":
        assert rc == 1 and v["evidence"]["preconditions"]["max_num_batched_tokens"]["source"] == "process"


def test_offline_qwen3_4b_on_recorded_h200(capsys, tmp_path: Path, db: str) -> None:
    """The reference deployment: 0.31.0 image, max_model_len 32768, client truncates to 32768, on an H200."""
    cmd = tmp_path / "docker.txt"
    cmd.write_text(
        "docker run --gpus all -p 8000:8000 --ipc=host vllm/vllm-openai:v0.31.0 \\\n"
        "  --model Qwen/Qwen3-Embedding-4B --runner pooling --convert embed --max-model-len 32768\n"
    )
    nvml = Path(__file__).resolve().parents[1] / "fixtures" / "nvml" / "h200.json"
    rc, doc = run_cli(capsys, "--cmdline-file", str(cmd), "--nvml-file", str(nvml), "--truncate", "-1", "--db", db)
    f = by_check(doc)
    v = f["pooling-livelock-risk"]
    assert v["status"] == "fail" and rc == 1
    budget = v["evidence"]["preconditions"]["max_num_batched_tokens"]
    assert budget["value"] == 8192 and budget["source"] == "default-rule"  # H200: 140 GiB -> serve tier 8192
    assert v["evidence"]["preconditions"]["enable_chunked_prefill"]["source"] == "default-rule"
    assert "32767" in v["fix"]
    assert f["gpu-memory"]["status"] == "pass"
    assert f["backend"]["status"] == "pass" and "580.159.04" in f["backend"]["title"]


def test_log_from_stdin(tmp_path: Path) -> None:
    p = run_module("--log-file", "-", "--truncate", "256", "--format", "json", "--db", str(tmp_path / "x.db"),
                   stdin=LOG_031.read_text())
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    assert by_check(doc)["pooling-livelock-risk"]["status"] == "fail"


# -- --answer: the user answers the checklist's questions (triage.answers) --------------------------

SEED_CMD = (
    "docker run --gpus all -p 8094:8000 vllm/vllm-openai:v{v} Qwen/Qwen3-Embedding-4B "
    "--runner pooling --convert embed --max-model-len 2048"
)
SEED_GPU = ["--answer", "gpu_name=NVIDIA GeForce RTX 3080 Ti", "--answer", "gpu_memory_total_bytes=12GiB"]


@pytest.mark.parametrize(
    "version,answers,status,code",
    [
        pytest.param("0.28.0", [], "unknown", 0, id="unanswered"),
        pytest.param("0.28.0", SEED_GPU, "fail", 1, id="answered-gpu"),
        pytest.param("0.28.0", ["--answer", "max_num_batched_tokens=2048"], "fail", 1, id="answered-budget"),
        pytest.param("0.28.0", ["--answer", "max_num_batched_tokens=4096"], "warn", 0, id="budget-above-len"),
        pytest.param("0.32.0", SEED_GPU, "pass", 0, id="fixed-release"),
    ],
)
def test_seed_deployment_answers(capsys, db: str, version: str, answers: list[str], status: str, code: int) -> None:
    from triage.catalogue import POOLING_LIVELOCK

    rc, doc = run_cli(capsys, "--db", db, "--cmdline", SEED_CMD.format(v=version), "--truncate", "2048", *answers)
    assert rc == code
    live = by_check(doc)["pooling-livelock-risk"]
    assert live["status"] == status, live["title"]
    if status == "unknown":
        qs = live["evidence"]["questions"]
        assert all(set(q) >= {"key", "text"} for q in qs)
        assert {"gpu_name", "gpu_memory_total_bytes"} <= {k for q in qs for k in q["keys"]}
    if answers == SEED_GPU and status == "fail":
        assert POOLING_LIVELOCK.refs[0] in live["title"]
        budget = live["evidence"]["preconditions"]["max_num_batched_tokens"]
        assert budget["value"] == 2048 and budget["source"] == "default-rule"
        assert "< 70 GiB" in budget["detail"] and "stated by user" in budget["detail"]
        assert all(n in live["fix"] for n in ("1) ", "2) ", "3) ")) and "2047" in live["fix"]
        assert doc["config"]["gpu_name"] == {
            "value": "NVIDIA GeForce RTX 3080 Ti",
            "source": "user",
            "detail": "stated by user",
        }
        assert doc["target"]["answers"]["gpu_memory_total_bytes"] == 12 << 30
        run = Store(db).get_run(doc["run_id"], with_samples=False)  # the answers are stored with the run
        assert run is not None and run.meta["answers"]["gpu_name"] == "NVIDIA GeForce RTX 3080 Ti"
        assert run.config["values"]["gpu_memory_total_bytes"]["source"] == "user"


@pytest.mark.parametrize(
    "answer,words",
    [
        pytest.param("gpu_mem=12GiB", ["unknown answer key", "gpu_memory_total_bytes", "vllm_version"], id="key"),
        pytest.param("gpu_memory_total_bytes=lots", ["malformed", "12GiB", "24 GB"], id="size"),
        pytest.param("enable_chunked_prefill=perhaps", ["true or false"], id="bool"),
        pytest.param("max_model_len", ["KEY=VALUE"], id="no-value"),
    ],
)
def test_bad_answer_exits_2(capsys, db: str, answer: str, words: list[str]) -> None:
    assert main(["check", "--db", db, "--cmdline", SEED_CMD.format(v="0.28.0"), "--answer", answer]) == 2
    err = capsys.readouterr().err
    for w in words:
        assert w in err


def test_answer_overridden_by_the_log_is_a_conflict(capsys, db: str) -> None:
    rc, doc = run_cli(
        capsys,
        "--db",
        db,
        "--log-file",
        str(LOG_031),
        "--truncate",
        "256",
        "--answer",
        "vllm_version=0.32.0",
        "--answer",
        "max_num_batched_tokens=4096",
    )
    conflicts = [f for f in doc["findings"] if f["check"] == "config-conflict"]
    keys = {f["evidence"]["key"] for f in conflicts}
    assert {"vllm_version", "max_num_batched_tokens"} <= keys
    assert any(o["source"] == "user" for f in conflicts for o in f["evidence"]["others"])
    assert doc["config"]["vllm_version"]["source"] == "log"
    assert by_check(doc)["pooling-livelock-risk"]["status"] == "fail" and rc == 1


def test_text_output_says_which_answers_settle_an_unknown(capsys, db: str) -> None:
    assert main(["check", "--db", db, "--cmdline", SEED_CMD.format(v="0.28.0"), "--truncate", "2048"]) == 0
    out = capsys.readouterr().out
    assert "answer: --answer max_num_batched_tokens=… --answer gpu_name=… --answer gpu_memory_total_bytes=…" in out
