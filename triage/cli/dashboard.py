"""``vllm-triage dashboard``: start the Streamlit dashboard (``app.py``) from any directory.

``app.py`` sits beside the ``ui`` package both in a clone and in an install (pyproject ships it as the
top-level module ``app``), so it is found from ``ui``'s location without importing ``ui`` (the engine never
imports Streamlit). The dashboard's settings are the project's ``.streamlit/config.toml``: beside ``app.py``
in a clone, under ``<prefix>/share/vllm-triage/`` in an install; Streamlit reads that file only from the
working directory, so they are passed as ``--section.key value`` flags (flags after ``--`` come later and win).
The process execs Streamlit on POSIX, so the PID that started is the server's.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from triage.cli import CommandError

CONFIG_PARTS = (".streamlit", "config.toml")
SHARE = ("share", "vllm-triage")


def app_path() -> Path:
    """The dashboard's entry script: ``app.py`` beside the ``ui`` package."""
    spec = importlib.util.find_spec("ui")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        app = Path(loc).parent / "app.py"
        if app.is_file():
            return app
    raise CommandError("cannot find app.py beside the ui package: reinstall vllm-triage (pip install vllm-triage)")


def config_file(app: Path) -> Path | None:
    """The project's Streamlit settings: in the clone beside app.py, else the installed copy."""
    for base in (app.parent, Path(sys.prefix).joinpath(*SHARE)):
        path = base.joinpath(*CONFIG_PARTS)
        if path.is_file():
            return path
    return None


def config_flags(path: Path | None) -> list[str]:
    """``--section.key value`` for every setting of a Streamlit config.toml (none without one)."""
    if path is None:
        return []
    with path.open("rb") as f:
        data = tomllib.load(f)
    flags: list[str] = []

    def walk(prefix: str, values: dict[str, object]) -> None:
        for key, value in values.items():
            if isinstance(value, dict):  # a sub-table: [theme.light] is --theme.light.primaryColor
                walk(f"{prefix}.{key}", value)
            else:
                flags.extend([f"--{prefix}.{key}", str(value).lower() if isinstance(value, bool) else str(value)])

    for section, values in data.items():
        if isinstance(values, dict):
            walk(section, values)
    return flags


def command(args: argparse.Namespace) -> list[str]:
    """The Streamlit command line this invocation runs."""
    app = app_path()
    flags = config_flags(config_file(app))
    if args.address is not None:  # the config binds 127.0.0.1 (private by default); --address replaces it
        flags = _without(flags, "--server.address")
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), *flags]
    if args.port is not None:
        cmd += ["--server.port", str(args.port)]
    cmd += ["--server.address", args.address if args.address is not None else "127.0.0.1"]
    extra = list(args.streamlit_args or [])
    return cmd + (extra[1:] if extra[:1] == ["--"] else extra)


def _without(flags: list[str], name: str) -> list[str]:
    out: list[str] = []
    skip = False
    for f in flags:
        if skip:
            skip = False
        elif f == name:
            skip = True
        else:
            out.append(f)
    return out


def register(p: argparse.ArgumentParser) -> None:
    """Start the dashboard (streamlit run app.py) from wherever vllm-triage is installed. Arguments after -- go to
    streamlit run (e.g. -- --server.baseUrlPath x)."""
    p.add_argument("--port", type=int, help="port to serve on (default: Streamlit's, 8501)")
    p.add_argument("--address", help="address to bind (default 127.0.0.1: this machine only; 0.0.0.0 exposes the "
                        "unauthenticated dashboard to the network: put an authenticating proxy in front)")
    p.add_argument("--print-command", action="store_true", help="print the streamlit command line and exit")
    p.add_argument("streamlit_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("streamlit") is None:
        raise CommandError("Streamlit is not installed: pip install vllm-triage")
    cmd = command(args)
    if args.print_command:
        print(" ".join(cmd))
        return 0
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execv(sys.executable, cmd)  # the server takes this PID: stopping it by PID stops the dashboard
    return subprocess.call(cmd)
