"""``python -m triage catalogue``: the known failure modes, as a list or as docs/FAILURE-MODES.md.

- ``catalogue``: one line per record (id, releases, title); ``--format json`` the records as data;
- ``catalogue --markdown``: the coverage document (``triage.catalogue.document``), printed;
- ``catalogue --check FILE``: compare FILE with what ``--markdown`` prints (exit 1 and the command that
  regenerates it when they differ).
Exit: 0 done (or FILE is current), 1 FILE differs, 2 could not run.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from triage.cli import CLI_SCHEMA, CommandError, print_json


FORMATTER = argparse.RawDescriptionHelpFormatter


def register(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group()
    what.add_argument("--markdown", action="store_true", help="print docs/FAILURE-MODES.md (generated)")
    what.add_argument("--check", metavar="FILE", help="exit 1 when FILE differs from what --markdown prints")
    p.add_argument("--format", choices=("text", "json"), default="text", help="the list's format")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from triage.catalogue import MODES
    from triage.catalogue.document import REGENERATE, failure_modes_markdown

    if args.markdown:
        sys.stdout.write(failure_modes_markdown())
        return 0
    if args.check:
        try:
            have = Path(args.check).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise CommandError(f"cannot read {args.check}: {type(e).__name__}: {e}") from e
        if have == failure_modes_markdown():
            print(f"{args.check} is current")
            return 0
        print(f"{args.check} differs from the catalogue: regenerate it with `{REGENERATE}`", file=sys.stderr)
        return 1
    if args.format == "json":
        print_json({"schema": CLI_SCHEMA, "records": [m.summary() for m in MODES.values()]})
        return 0
    for m in MODES.values():
        print(f"{m.id}  ({m.affected_text})  {m.title}")
    return 0
