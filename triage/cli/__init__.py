"""Headless CLI: ``python -m triage <command>``; one module per command, each with register(sub).

Exit codes (the contract): 0 nothing reached --fail-on, 1 something did, 2 could not run.
JSON output carries ``"schema": CLI_SCHEMA`` so other tools can tell versions apart.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from triage import SCHEMA

CLI_SCHEMA = SCHEMA

# Each module registers its own sub-command; the order is the help order.
COMMAND_MODULES = ["check", "probe", "watch", "logs", "report", "import_", "fleet", "lab"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m triage",
                                     description="vLLM Embedding Triage: why does my vLLM embedding server misbehave?")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(f"triage.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"triage.cli.{name}":
                continue  # command not built yet
            raise
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: 2 on bad arguments, 0 on --help
        return int(e.code or 0)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def add_db_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=None,
                   help="SQLite path or SQLAlchemy URL (default: $VLLM_TRIAGE_DB or the user data dir)")


def add_api_key_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--api-key-env", metavar="NAME", help="environment variable holding the API key (never stored)")


class ArgError(ValueError):
    """A command-line value that cannot be used; the command prints it and exits 2."""


def api_key_from_env(args: argparse.Namespace) -> str | None:
    """The API key named by --api-key-env (None when not asked for); an unset or empty variable is an ArgError."""
    name = getattr(args, "api_key_env", None)
    if not name:
        return None
    key = os.environ.get(name)
    if not key:
        raise ArgError(f"environment variable {name} (--api-key-env) is not set or empty")
    return key


def add_format_args(p: argparse.ArgumentParser, fail_on: bool = True) -> None:
    p.add_argument("--format", choices=["text", "json"], default="text")
    if fail_on:
        p.add_argument("--fail-on", choices=["warn", "fail"], default="fail",
                       help="exit 1 when a finding reaches this status (default: fail)")
