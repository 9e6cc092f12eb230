"""The CLI's lazy dispatch: the top level answers without the engine; each command still gets its full parser.

Behaviour, not timing (``bench/bench_cli.py`` gives the figures): ``python -X importtime`` lists every module a
run imports, and ``--help``, ``--version``, no command and a wrong command must not import the store's
SQLAlchemy, Streamlit or the HTTP client. The throughput sweep's load machinery (``LOAD``: its socket client, its
generator and worker processes, its trivial server) loads only when a sweep runs: no command's start and no run of
another probe set imports it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from triage import cli

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sqlalchemy", "sqlmodel", "streamlit", "httpx", "plotly", "triage.store", "triage.checklist")
LOAD = {"triage.load_gen", "triage.load_client", "triage.load_echo"}
REC = ROOT / "tests" / "fixtures" / "real" / "0.31.0-tiny-qwen3-livelock"


def _imported(args: list[str], out: list[str] | None = None) -> tuple[int, set[str]]:
    """Exit code and the top-level names of every module ``python -X importtime -m triage ARGS`` imported (its
    stdout appended to ``out`` when given)."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "triage", *args], cwd=ROOT, capture_output=True,
                       text=True, timeout=120, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    if out is not None:
        out.append(p.stdout)
    names = set()
    for line in p.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return p.returncode, names


@pytest.mark.parametrize("args, rc", [
    pytest.param(["--help"], 0, id="help"),
    pytest.param(["--version"], 0, id="version"),
    pytest.param([], 2, id="no-command"),
    pytest.param(["no-such-command"], 2, id="wrong-command"),
    pytest.param(["--no-such-option"], 2, id="wrong-option"),
])
def test_the_top_level_imports_no_engine(args: list[str], rc: int) -> None:
    code, names = _imported(args)
    assert code == rc
    assert "triage.redact" in names  # the listing is real
    loaded = sorted(n for n in names if any(n == h or n.startswith(h + ".") for h in HEAVY))
    assert loaded == []


def test_a_command_imports_only_its_own_module() -> None:
    code, names = _imported(["lab", "--help"])
    assert code == 0 and "triage.lab" in names  # (importlib.import_module's own module gets no importtime line)
    assert not {"triage.checklist", "triage.probes", "triage.export", "sqlalchemy"} & names


def _sub_helps(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {c.dest: c.help for c in action._choices_actions}


def test_the_command_table_is_the_parser_s_commands_each_with_its_own_description() -> None:
    """COMMANDS is the one place of each command's help and the help order; each command's full parser says what
    it does (its module's register docstring, or the module's) — the lazy top level and the full parser agree."""
    parser = cli.build_parser()
    full = _sub_helps(parser)
    assert list(full.items()) == [(name, help_) for name, (_module, help_) in cli.COMMANDS.items()]
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, sub in action.choices.items():
        assert (sub.description or "").strip(), f"{name}: no description"
        assert sub.description.strip() != (full[name] or "").strip(), f"{name}: the description repeats the help"


@pytest.mark.parametrize("argv", [["check", "--help"], ["logs", "--no-such-option"], ["lab", "status", "--bad"]])
def test_each_command_still_has_its_full_parser(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli.main(argv)
    out = capsys.readouterr()
    if argv[-1] == "--help":
        assert rc == 0 and "--truncate" in out.out  # the check module's own options
    else:
        assert rc == 2 and "error:" in out.err


@pytest.mark.parametrize("command", list(cli.COMMANDS))
def test_no_command_s_start_imports_the_load_machinery(command: str) -> None:
    code, names = _imported([command, "--help"])
    assert code == 0 and "triage.redact" in names
    assert not LOAD & names


# A test double of a vLLM server: a child process answering the recorded 0.31.0 answers by path (standard library
# only). Why not a real server: what is tested is which modules the CLI imports, not what a server answers.
REPLAY = r"""
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
rec = sys.argv[1]
ROUTES = {"/v1/models": "models", "/version": "version", "/v1/embeddings": "embed-single", "/tokenize": "tokenize"}
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def _answer(self):
        n = int(self.headers.get("content-length") or 0)
        self.rfile.read(n)
        name = ROUTES.get(self.path)
        body = json.dumps(json.load(open(f"{rec}/{name}.json"))["body"]).encode() if name else b'{"detail":"x"}'
        self.send_response(200 if name else 404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_POST = _answer
    def log_message(self, *a):
        pass
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"""


def test_a_probe_run_of_another_set_imports_no_load_machinery(tmp_path: Path) -> None:
    """``probe --set conformance`` against a server that answers: the sets run (not the early exit of an unreachable
    server) and the load machinery stays unloaded."""
    srv = subprocess.Popen([sys.executable, "-c", REPLAY, str(REC)], stdout=subprocess.PIPE, text=True)
    try:
        assert srv.stdout is not None
        url = f"http://127.0.0.1:{int(srv.stdout.readline())}"
        out: list[str] = []
        code, names = _imported(["probe", "--url", url, "--set", "conformance", "--format", "json", "--db",
                                 str(tmp_path / "t.db")], out)
    finally:
        srv.terminate()
        srv.wait(10)
    checks = {f["check"] for f in json.loads(out[0])["findings"]}
    assert code in (0, 1) and "probe-target" not in checks and "triage.probes.conformance" in names
    assert not LOAD & names
