"""The CLI's lazy dispatch: the top level answers without the engine; each command still gets its full parser.

Behaviour, not timing (``bench/bench_cli.py`` gives the figures): ``python -X importtime`` lists every module a
run imports, and ``--help``, ``--version``, no command and a wrong command must not import the store's
SQLAlchemy, Streamlit or the HTTP client.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from triage import cli

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sqlalchemy", "sqlmodel", "streamlit", "httpx", "plotly", "triage.store", "triage.checklist")


def _imported(args: list[str]) -> tuple[int, set[str]]:
    """Exit code and the top-level names of every module ``python -X importtime -m triage ARGS`` imported."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "triage", *args], cwd=ROOT, capture_output=True,
                       text=True, timeout=60, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
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
