"""Probe inputs through ``ProbeContext`` (issue 34): the CLI and the dashboard judge the same server the same way.

The target's start-up log, command line and model directory reach the probe sets as fields of the ``Target``
(then the ``ProbeContext``): ``python -m triage probe --log-file/--cmdline-file/--model-path`` and the
dashboard's ``Services.run_probes`` fill them alike, so the vectors set gives the same findings from both.
"""
from __future__ import annotations

import hashlib
import http.server
import json
import math
import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from triage.catalogue import get
from triage.cli import main
from triage.findings import Status
from triage.target import Target

from .recorded import VECTORS

MEAN = VECTORS / "0.32.0-tiny-qwen3-pooling-mean"
LIVE = Path(__file__).parent.parent / "fixtures" / "real" / "0.32.0-tiny-qwen3-livelock"


def _vector(text: str, dim: int) -> list[float]:
    rnd = random.Random(hashlib.sha256(text.encode()).digest())
    v = [rnd.gauss(0.0, 1.0) for _ in range(dim)]
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


@pytest.fixture
def server() -> Iterator[str]:
    """A local double of the recorded pooling-mean server (a real one needs minutes and the heavy lock, and this
    test is about how the inputs reach the probe set, not about vLLM): /v1/models, /version and the /tokenize
    shape as recorded from it, /metrics as recorded from the 0.32.0 lab server, and unit vectors of the recorded
    dimension that depend on the text only (the same text, the same vector)."""
    rec = json.loads((MEAN / "vectors.json").read_text())
    t, dim = rec["target"], rec["model_files"]["dimension"]
    metrics = (LIVE / "metrics-idle.txt").read_bytes()
    bos, eos = rec["tokenize"][1]["body"]["tokens"]

    class Double(http.server.BaseHTTPRequestHandler):
        def _send(self, body: Any, ctype: str = "application/json") -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/v1/models":
                self._send({"object": "list", "data": [{"id": t["model"], "object": "model", "root": t["root"],
                                                        "max_model_len": t["max_model_len"]}]})
            elif self.path == "/version":
                self._send({"version": t["version"]})
            elif self.path == "/metrics":
                self._send(metrics, "text/plain; version=0.0.4")
            else:
                self.send_error(404)

        def do_POST(self) -> None:  # noqa: N802
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if self.path == "/tokenize":
                words = str(req.get("prompt", "")).split()
                toks = [bos, *[1000 + i for i in range(len(words))], eos]
                self._send({"count": len(toks), "max_model_len": t["max_model_len"], "tokens": toks,
                            "token_strs": None})
            elif self.path == "/v1/embeddings":
                inp = req.get("input")
                texts = inp if isinstance(inp, list) else [inp]
                data = [{"index": i, "object": "embedding", "embedding": _vector(str(x), dim)}
                        for i, x in enumerate(texts)]
                self._send({"id": "embd-double", "object": "list", "model": t["model"], "data": data,
                            "usage": {"prompt_tokens": 1, "total_tokens": 1}})
            else:
                self.send_error(404)

        def log_message(self, *a: Any) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Double)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The recorded start-up log (MEAN, --pooler-config), a command line, and a model directory holding the
    recorded model's config.json (LAST pooling by its architecture). No reference vectors (no torch here)."""
    monkeypatch.setattr("triage.sources.model_files.reference_python", lambda *a: None)
    model = tmp_path / "model"
    model.mkdir()
    rec = json.loads((MEAN / "vectors.json").read_text())
    (model / "config.json").write_text(json.dumps(rec["model_files"]["files"]["config.json"]))
    cmd = tmp_path / "cmd.txt"
    cmd.write_text(f"vllm serve {rec['target']['model']} --max-model-len 256 "
                   "--pooler-config '{\"pooling_type\": \"MEAN\"}'\n")
    return {"log": MEAN / "server.log", "cmdline": cmd, "model": model}


def _key(findings: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((f["check"], f["status"], f["title"], f.get("failure_mode") or "") for f in findings)


def test_cli_and_dashboard_give_the_same_findings(server: str, inputs: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from ui.services import Services

    rc = main(["probe", "--url", server, "--set", "vectors", "--log-file", str(inputs["log"]),
               "--cmdline-file", str(inputs["cmdline"]), "--model-path", str(inputs["model"]),
               "--db", str(tmp_path / "cli.db"), "--format", "json", "--quiet"])
    cli = json.loads(capsys.readouterr().out)["findings"]
    assert rc in (0, 1)

    form = Target(url=server, log_text=inputs["log"].read_text(), cmdline=inputs["cmdline"].read_text(),
                  cmdline_file="cmd.txt", model_path=str(inputs["model"]))
    view = Services(str(tmp_path / "ui.db")).run_probes(form, ["vectors"], allow_hang=False)
    ui = [f.to_dict() for f in view.findings]

    assert _key(cli) == _key(ui)
    # the inputs reached the set from both faces: the log's MEAN against the files' LAST is the pooling mismatch
    pooling = next(f for f in cli if f["check"] == "vectors-model-pooling")
    assert pooling["status"] == Status.FAIL.value and pooling["failure_mode"] == get("pooling-mismatch").id
    assert "the start-up log given" in json.dumps(pooling["evidence"])


def test_without_the_log_the_set_says_what_to_give(server: str, inputs: dict[str, Path], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """No side door: a server the lab does not know, no log or command line given, and no environment variable
    read: the pooling stays unknown and the finding names the flag."""
    main(["probe", "--url", server, "--set", "vectors", "--only", "vectors-model-pooling", "vectors-eos",
          "--model-path", str(inputs["model"]), "--db", str(tmp_path / "cli.db"), "--format", "json", "--quiet"])
    out = json.loads(capsys.readouterr().out)["findings"]
    pooling = next(f for f in out if f["check"] == "vectors-model-pooling")
    assert pooling["status"] != Status.FAIL.value
    assert "--log-file" in json.dumps(pooling)
