"""``diagnose URL``: the dashboard's one Diagnose entry as a command — the checklist, a look at the engine now, the
safe probes and the log post-mortem as one stored run (triage/diagnose.py), its progress printed as it comes, then
the run's one verdict and fix as the page and the exports give them (``triage.headline.record_verdict``)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from triage.cli import (
    CLI_SCHEMA,
    add_api_key_arg,
    add_db_arg,
    add_format_args,
    api_key_from_env,
    base_url,
    command_deadline,
    number,
    open_store,
    print_json,
)
from triage.cli.inputs import read_log_head_tail, read_small
from triage.findings import reaches
from triage.headline import Verdict, record_verdict
from triage.textsafe import one_line


def register(p: argparse.ArgumentParser) -> None:
    """Diagnose a vLLM server in one run, as the dashboard's Diagnose page does: the checklist, a few seconds of
    /metrics (is the engine stalled now?), the probes that never hang a server (conformance, vectors) and, given a
    log, its post-mortem. Stored as one run; prints its verdict and the fix to copy."""
    from triage.cli.check import truncation_arg

    p.add_argument("url", type=base_url, metavar="URL", help="the server's base URL, e.g. http://127.0.0.1:8000")
    p.add_argument("--log-file", metavar="F", help="the server's log ('-' = stdin)")
    p.add_argument("--cmdline-file", metavar="F",
                   help="the vllm serve / docker run command line, or a deployment file (Kubernetes manifest, "
                        "production-stack Helm values, compose file) ('-' = stdin)")
    p.add_argument("--kube-file", metavar="F", action="extend", nargs="+", default=[],
                   help="kubectl's view of the server's pod (describe text, get -o yaml, logs); repeatable")
    p.add_argument("--model", help="model id your client sends (default: the first of /v1/models)")
    p.add_argument("--truncate", type=truncation_arg, metavar="N|-1|none",
                   help="truncate_prompt_tokens your client sends (default: unknown, and the verdict says so)")
    add_api_key_arg(p)
    p.add_argument("--insecure", action="store_true", help="do not verify TLS certificates")
    p.add_argument("--timeout", type=number(0.0, 3600, above=True), default=10.0,
                   help="seconds each HTTP call may take, whole answer included (default 10)")
    p.add_argument("--deadline", type=number(0.0, 86_400, above=True), default=600.0,
                   help="seconds the whole run may take (default 600)")
    add_db_arg(p)
    add_format_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from triage.cli.check import _from_kube
    from triage.target import Target

    stdin_used: list[bool] = []
    try:
        cmdline = read_small(args.cmdline_file, "--cmdline-file", stdin_used) if args.cmdline_file else None
        log_text = read_log_head_tail(args.log_file, stdin_used) if args.log_file else None
        kube_texts = tuple((f if f != "-" else "stdin", read_log_head_tail(f, stdin_used, flag="--kube-file"))
                           for f in args.kube_file)
    except (OSError, ValueError) as e:
        print(f"diagnose: cannot read input: {e}", file=sys.stderr)
        return 2
    file = args.cmdline_file if args.cmdline_file and args.cmdline_file != "-" else None
    cmdline, file, log_text = _from_kube(kube_texts, cmdline, file, log_text)
    spec = Target(url=args.url, model=args.model, truncation=args.truncate, cmdline=cmdline, cmdline_file=file,
                  log_text=log_text, kube=kube_texts, api_key=api_key_from_env(args), verify_tls=not args.insecure,
                  timeout_s=args.timeout)
    store = open_store(args.db)
    text = args.format == "text"
    rec = _diagnose(spec, store, args.deadline, text)
    verdict = record_verdict(rec)  # the one verdict: laid out here, never recomputed
    run_id = int(rec.run.id or 0)
    code = 1 if any(reaches(f.status, args.fail_on) for f in rec.findings) else 0
    if text:
        _print_verdict(verdict)
        print(f"run {run_id}: {verdict.status} (stored in {store.url.split('///')[-1]}); exit {code}")
    else:
        from triage.cli.check import finding_json

        print_json({"schema": CLI_SCHEMA, "run_id": run_id, "status": verdict.status,
                    "verdict": {"status": verdict.status, "headline": verdict.headline, "fix": verdict.fix},
                    "fix_blocks": [{"kind": b.kind, "title": b.title, "code": b.code, "language": b.language,
                                    "note": b.note} for b in verdict.blocks],
                    "findings": [finding_json(f) for f in rec.findings]})
    return code


def _diagnose(spec: Any, store: Any, deadline_s: float, text: bool) -> Any:
    """The run, recorded as it comes (progress printed when ``text``); the stored run (a ``RunRecord``)."""
    from triage.cli import CommandError
    from triage.diagnose import diagnose_events, progress_line
    from triage.recorder import Recorder, record

    recorder = Recorder(store)
    try:
        with command_deadline(deadline_s, "diagnose"):
            for ev in record(diagnose_events(spec), recorder):
                line = progress_line(ev) if text else None
                if line:
                    print(f"-- {one_line(line)}", flush=True)
    except CommandError as e:  # the deadline: the Recorder closed the run as interrupted (what came before stays)
        raise CommandError(f"{e}; run {recorder.run_id} stored as interrupted") from None
    rec = store.get_run(recorder.run_id, with_samples=False) if recorder.run_id is not None else None
    if rec is None:
        raise CommandError("the run was not stored")
    return rec


def _print_verdict(v: Verdict) -> None:
    print(f"verdict: {v.status.upper()}: {one_line(v.headline)}")
    if v.fix:
        print(f"fix: {one_line(v.fix)}")
    for b in v.blocks:
        print(f"== {one_line(b.title)}" + (f" ({one_line(b.note)})" if b.note else ""))
        for line in str(b.code).splitlines():
            print(f"   {line}")
