"""``python -m triage knowledge``: the vLLM releases the verdicts know, read from each release's code.

- ``knowledge list``: the releases read (oldest first) and the wheel each was read from;
- ``knowledge options --vllm X [--option OPT]``: that release's ``vllm serve`` options, or one
  option's history across the releases;
- ``knowledge diff A B``: what changed from A to B that matters to an embedding server;
- ``knowledge refresh --vllm X``: fetch X's wheel, read it, print what changed (against the stored
  X when it is known already: nothing, when the data is right; else against the newest older
  release) and store it (``--dry-run``: print only).
Exit: 0 done, 2 could not run.
"""
from __future__ import annotations

import argparse
import sys

from triage.cli import CommandError, print_json


FORMATTER = argparse.RawDescriptionHelpFormatter


def register(p: argparse.ArgumentParser) -> None:
    ks = p.add_subparsers(dest="knowledge_command", metavar="KNOWLEDGE_COMMAND")
    pl = ks.add_parser("list", help="the releases read")
    pl.add_argument("--format", choices=("text", "json"), default="text")
    pl.set_defaults(func=_list)
    po = ks.add_parser("options", help="a release's vllm serve options, or one option's history")
    po.add_argument("--vllm", required=True, metavar="X.Y.Z")
    po.add_argument("--option", help="one option (any spelling): its history across the releases; write it "
                    "with '=', e.g. --option=--log-level")
    po.set_defaults(func=_options)
    pd = ks.add_parser("diff", help="what changed between two known releases")
    pd.add_argument("old", metavar="A")
    pd.add_argument("new", metavar="B")
    pd.set_defaults(func=_diff)
    pr = ks.add_parser("refresh", help="read a release's wheel and add it (the next release: one command)")
    pr.add_argument("--vllm", required=True, action="extend", nargs="+", metavar="X.Y.Z")
    pr.add_argument("--python", help="reader Python (default: the newest lab venv's)")
    pr.add_argument("--dry-run", action="store_true", help="print what changed; store nothing")
    pr.set_defaults(func=_refresh)
    p.set_defaults(func=lambda a: (p.print_help(sys.stderr), 2)[1])


def _known(v: str) -> str:
    from triage.vllm import knowledge

    res = knowledge.for_version(v)
    if not res.exact:
        raise CommandError(f"vLLM {v} is not in the data ({res.reason})")
    return res.release


def _list(args: argparse.Namespace) -> int:
    from triage.vllm.knowledge.store import load_data, materialize, known_releases

    rels = known_releases(load_data())
    rows = [{"release": r, "wheel": materialize(r).get("wheel"), "options": len(materialize(r)["options"])}
            for r in rels]
    if args.format == "json":
        print_json({"releases": rows})
        return 0
    for row in rows:
        print(f"{row['release']:<10} {row['options']:>4} options   read from {row['wheel']}")
    return 0


def _options(args: argparse.Namespace) -> int:
    from triage.vllm import flags, knowledge

    rel = _known(args.vllm)
    if args.option:
        res = knowledge.for_version(rel)
        v = flags.judge(args.option, res)
        has, lacks = knowledge.history(v.option)
        print(f"{v.option} in vllm serve {rel}: {'accepted' if v.accepted else 'NOT accepted'}"
              + (f", sets {v.spec.dest} = {v.sets!r}" if v.spec and v.spec.kind != 'value' else "")
              + (f" (dest {v.spec.dest})" if v.spec and v.spec.kind == "value" else ""))
        print(f"  accepted by: {', '.join(has) or 'none of the releases read'}")
        print(f"  not by:      {', '.join(lacks) or '-'}")
        if v.added_in:
            print(f"  added in {v.added_in}")
        if v.removed_in:
            print(f"  removed in {v.removed_in}")
        return 0
    r = knowledge.release(rel)
    for canonical, e in sorted(r.snap["options"].items()):
        forms = [s for s in e["strings"] if s != canonical]
        print(f"{canonical}  [{e['kind']}]" + (f"  also: {', '.join(forms)}" if forms else ""))
    return 0


def _diff(args: argparse.Namespace) -> int:
    from triage.vllm.knowledge import changes
    from triage.vllm.knowledge.store import materialize

    a, b = _known(args.old), _known(args.new)
    lines = changes.report(materialize(a), materialize(b))
    print(f"vLLM {a} -> {b}: " + (f"{len(lines)} change(s) that matter" if lines else "no change that matters"))
    for line in lines:
        print(f"  {line}")
    return 0


def _refresh(args: argparse.Namespace) -> int:
    from triage.versions import parse_version
    from triage.lab import knowledge as build
    from triage.vllm.knowledge import changes
    from triage.vllm.knowledge.store import known_releases, load_data, materialize

    fresh: dict[str, dict] = {}
    for v in args.vllm:
        if parse_version(v) is None or not v[0].isdigit():
            raise CommandError(f"'{v}' is not a release (e.g. 0.34.0)")
        try:
            snap = build.extract(v, python=args.python, progress=lambda m: print(f"  {m}", file=sys.stderr))
        except build.KnowledgeError as e:
            raise CommandError(str(e)) from e
        known = known_releases(load_data())
        if v in known:
            against = v
            old = materialize(v)
        else:
            older = [r for r in known if parse_version(r) < parse_version(v)]
            against = older[-1] if older else known[0]
            old = materialize(against)
        lines = changes.report(old, snap)
        label = "stored data" if against == v else against
        print(f"vLLM {v} (read from {snap.get('wheel')}) against {label}: "
              + (f"{len(lines)} change(s) that matter" if lines else "no change that matters"))
        for line in lines:
            print(f"  {line}")
        fresh[v] = snap
    if args.dry_run:
        print("dry run: nothing stored")
        return 0
    build.add(fresh)
    print(f"stored: {', '.join(fresh)} -> {build.DATA}")
    return 0
