"""``python -m triage import FILE``: read an exported run (JSON, or a bundle's run.json) into the database."""
from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

from triage.cli import CLI_SCHEMA, add_db_arg
from triage.export.json_ import ImportError_, import_run
from triage.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="import a run exported with 'report --format json' (or a bundle)",
                       description="Read a run document (JSON file, '-' for stdin, or a support bundle .zip) "
                                   "into the database as a new run; prints its id.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--format", choices=["text", "json"], default="text")
    add_db_arg(p)
    p.set_defaults(func=run)


def read_document(path: str) -> Any:
    """The run document from a JSON file, stdin, or the run.json inside a bundle."""
    if path == "-":
        return json.loads(sys.stdin.read())
    p = Path(path).expanduser()
    if zipfile.is_zipfile(p):
        with zipfile.ZipFile(p) as zf:
            names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == "run.json"]
            if not names:
                raise ImportError_("the zip holds no run.json: not a vllm-triage bundle")
            return json.loads(zf.read(min(names, key=len)))
    return json.loads(p.read_text(encoding="utf-8"))


def run(args: argparse.Namespace) -> int:
    try:
        data = read_document(args.file)
        store = Store(args.db)
        run_id = import_run(store, data)
    except (OSError, ValueError, zipfile.BadZipFile, KeyError, TypeError) as e:
        # ImportError_ and json.JSONDecodeError are ValueErrors: a user's file, not a crash
        print(f"cannot import {args.file}: {e}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps({"schema": CLI_SCHEMA, "run_id": run_id, "db": store.url}))
    else:
        print(f"imported run {run_id} into {store.url}")
    return 0
