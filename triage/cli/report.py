"""``python -m triage report RUN_ID|latest --format md|html|json|bundle -o PATH``: export a stored run."""
from __future__ import annotations

from typing import TYPE_CHECKING

import argparse
import sys
from pathlib import Path

from triage import events as ev_
from triage.cli import add_db_arg, open_store
from triage.export import FORMATS, default_filename, render
from triage.findings import reaches
from triage.store import private_file

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a run is saved, not at import
    from triage.store import Store


def register(p: argparse.ArgumentParser) -> None:
    """Export a stored run. Secrets (API keys, Authorization headers, *_KEY/*_TOKEN values) are redacted in every
    format."""
    p.add_argument("run", metavar="RUN_ID|latest", help="a run id, or 'latest'")
    p.add_argument("--format", choices=FORMATS, default="md")
    p.add_argument("-o", "--output", default=None,
                   help="file to write ('-' = stdout); default: stdout for md/json, "
                        "triage-run-ID.html / .zip for html/bundle")
    p.add_argument("--redact", action="extend", nargs="+", default=[], metavar="STRING",
                   help="exact strings to redact besides the built-in patterns (repeatable: `--redact A B` or "
                        "`--redact A --redact B`; give RUN_ID before it)")
    p.add_argument("--fail-on", choices=["warn", "fail"], default=None,
                   help="exit 1 when the run's worst status reaches this level (default: never)")
    add_db_arg(p)
    p.set_defaults(func=run)


def resolve_run_id(store: Store, ref: str) -> int | None:
    if ref == "latest":
        return store.latest_run_id()
    return int(ref) if ref.isascii() and ref.isdigit() and len(ref) <= 19 else None  # more digits: no row id


def run(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    run_id = resolve_run_id(store, args.run)
    record = store.get_run(run_id) if run_id is not None else None
    if record is None:
        shown = args.run if len(args.run) <= 40 else args.run[:40] + "…"
        print(f"no run {shown!r} in {store.url}", file=sys.stderr)
        return 2
    data = render(record, args.format, secrets=args.redact)
    out = args.output
    if out is None:
        out = "-" if args.format in ("md", "json") else default_filename(run_id, args.format)
    if out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        try:
            Path(out).expanduser().parent.mkdir(parents=True, exist_ok=True)
            target = Path(out).expanduser()
            private_file(target)  # exports hold what the database does: 0600 when we create them
            target.write_bytes(data)
        except OSError as e:
            print(f"cannot write {out}: {e}", file=sys.stderr)
            return 2
        print(f"wrote {out} ({len(data)} bytes): run {run_id}, {record.run.kind}, status {record.run.status}",
              file=sys.stderr)
    status = record.run.status
    if args.fail_on and status in ("pass", "warn", "fail", "unknown", "error") and reaches(status, args.fail_on):
        return 1
    if args.fail_on and status == ev_.INTERRUPTED:  # an unfinished run has no verdict: a gate cannot pass on it
        return 1
    return 0
