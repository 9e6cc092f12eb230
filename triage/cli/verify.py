"""``python -m triage verify --run N``: after a fix, rerun on the real server what run N found, and store the pair.

Reruns run N's probes by name (hang-capable ones only with ``--allow-hang``; the seed's load test joins a rerun seed
matrix) or, for a checklist run, the checklist; the new run carries ``meta.verifies = N`` and the before/after rows
(reports and History show them). JSON: {"schema", "before", "after", "verified", "pairs", "skipped"}.
Exit: 0 verified, 1 not verified, 2 nothing to compare or the run cannot be read.
"""
from __future__ import annotations

import argparse
import sys

from triage.cli import CLI_SCHEMA, add_api_key_arg, add_db_arg, api_key_from_env, number, open_store, print_json


def register(p: argparse.ArgumentParser) -> None:
    """Rerun on the real server what run N found (its probes, or its checklist), plus the seed's load test when the
    seed matrix is rerun, and store the before/after pair."""
    p.add_argument("--run", type=int, required=True, metavar="N", help="the run that showed the symptom")
    p.add_argument("--url", help="the server (default: run N's)")
    p.add_argument("--allow-hang", action="store_true",
                   help="rerun hang-capable probes (the seed matrix, the load test): bounded, always aborted")
    p.add_argument("--deadline", type=number(0.0, 86_400, above=True), default=60.0,
                   help="seconds each probe may take before it is aborted (default 60)")
    p.add_argument("--insecure", action="store_true", help="do not verify TLS certificates")
    add_api_key_arg(p)
    add_db_arg(p)
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from triage.twin.verify import VerifyError, verify

    store = open_store(args.db)
    quiet = args.format == "json"
    try:
        res = verify(store, args.run, allow_hang=args.allow_hang, url=args.url, api_key=api_key_from_env(args),
                     verify_tls=not args.insecure, deadline_s=args.deadline,
                     progress=(lambda m: None) if quiet else (lambda m: print(m, file=sys.stderr)))
    except VerifyError as e:
        print(f"verify: {e}", file=sys.stderr)
        return 2
    if quiet:
        print_json({"schema": CLI_SCHEMA, **res.to_dict()})
    else:
        word = {True: "VERIFIED", False: "NOT VERIFIED", None: "NOTHING TO COMPARE"}[res.verified]
        print(f"{word}: run {res.after} against run {res.before}")
        for r in res.pairs:
            print(f"  {r['item']}: {r['before']} -> {r['after']} ({r['result']})")
        for s in res.skipped:
            print(f"  not rerun: {s}")
    return {True: 0, False: 1, None: 2}[res.verified]
