"""``python -m triage reproduce``: the lab twin of a deployment; reproduce its symptom, verify each fix there.

Takes check's inputs (the checklist runs first, unsaved, for the effective config) or ``--run N`` (a stored run's
config and target). ``--plan-only`` prints the twin's plan and starts nothing. JSON: {"schema", "run_id",
"reproduced", "fixes": [{"fix", "verified", …}], "plan", "cases", "error"}. Exit: 0 reproduced or not (a finding
either way), 2 no twin could be planned, or the twin could not run ("could not run the twin: <reason>": an option
vLLM refuses, a start-up that failed; nothing was reproduced or ruled out).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from triage.cli import CLI_SCHEMA, CommandError, add_db_arg, base_url, open_store, print_json
from triage.cli.check import truncation_arg


def register(p: argparse.ArgumentParser) -> None:
    """Start a lab twin of the deployment (same release or the nearest agreeing one, a tiny model of the same shape,
    lengths scaled), run the probes that show its symptom, then each fix of the record on a twin with it applied.
    Every twin server is stopped afterwards."""
    p.add_argument("--url", type=base_url)
    p.add_argument("--cmdline", metavar="TEXT")
    p.add_argument("--cmdline-file", metavar="F")
    p.add_argument("--log-file", metavar="F")
    p.add_argument("--truncate", type=truncation_arg, metavar="N|-1|none")
    p.add_argument("--answer", action="extend", nargs="+", default=[], metavar="KEY=VALUE")
    p.add_argument("--run", type=int, metavar="N", help="a stored run's config and target")
    p.add_argument("--plan-only", action="store_true", help="print the twin's plan; start nothing")
    add_db_arg(p)
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=run)


def _facts(args: argparse.Namespace, store: Any) -> tuple[dict[str, Any], int | None, list[str]]:
    """(config values, the client's truncation, records the run reported)."""
    if args.run is not None:
        from triage.twin.plan import facts_of_run

        doc = store.get_run(args.run, with_samples=False)
        if doc is None:
            raise CommandError(f"no run {args.run} in this database")
        return facts_of_run(doc)
    from triage.answers import parse_answers
    from triage.cli.inputs import read_log_head_tail, read_small
    from triage.checklist import CheckOptions, run_checklist
    from triage.target import Target

    cmdline = read_small(args.cmdline_file, "--cmdline-file", []) if args.cmdline_file else args.cmdline
    log = read_log_head_tail(args.log_file, []) if args.log_file else None
    target = Target(url=args.url, truncation=args.truncate, cmdline=cmdline, log_text=log,
                    answers=parse_answers(args.answer) or None)
    res = run_checklist(target, options=CheckOptions(embed_probe=False))
    vals = {k: v.get("value") for k, v in res.config.items() if isinstance(v, dict)}
    modes = [f.failure_mode for f in res.findings if f.failure_mode and f.status.value in ("fail", "warn")]
    return vals, target.truncation.request_value(), modes


def run(args: argparse.Namespace) -> int:
    from triage.lab.install import installed_releases
    from triage.twin.plan import PlanError, plan_twin

    store = open_store(args.db)
    vals, trunc, modes = _facts(args, store)
    installed = installed_releases()
    try:
        plan = plan_twin(vals, trunc, installed, modes)
    except PlanError as e:
        print(f"reproduce: {e}", file=sys.stderr)
        return 2
    if args.plan_only:
        print_json({"schema": CLI_SCHEMA, "plan": plan.to_dict()}) if args.format == "json" else print(plan.release.why)
        return 0
    from triage.events import observers
    from triage.recorder import Recorder
    from triage.twin.reproduce import reproduce

    rec = Recorder(store)
    text = args.format == "text"
    res = reproduce(plan, installed, observers(rec), progress=(lambda m: print(m, file=sys.stderr)))
    doc = {"schema": CLI_SCHEMA, "run_id": rec.run_id, **res.to_dict()}
    if res.error is not None:  # not "reproduced: False": nothing was tried (issue 43)
        if text:
            print(plan.release.why)
        else:
            print_json(doc)
        print(f"reproduce: could not run the twin: {res.error}", file=sys.stderr)
        return 2
    if text:
        print(plan.release.why)
        print(f"reproduced: {res.reproduced}")
        for f in res.fixes:
            print(f"  fix {'VERIFIED' if f['verified'] else 'not verified'}: {f['fix']}")
    else:
        print_json(doc)
    return 0
