"""``python -m triage probe``: live probes (seed matrix, conformance, throughput) against a vLLM server."""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from triage.cli.check import add_experiments_arg, truncation_arg
from triage.cli.inputs import read_log_head_tail, read_small
from triage.cli.render import finding_lines
from triage.cli import CLI_SCHEMA, SECONDS, base_url, number, open_store, print_json
from triage.cli import add_api_key_arg, add_db_arg, add_format_args, api_key_from_env
from triage import events as ev_
from triage.events import RunEvent, observers
from triage.findings import reaches
from triage.textsafe import one_line
from triage.probes.registry import HANG_REASON, PROBE_SETS, SETS, HangNotAllowed, resolve_sets
from triage.recorder import Recorder
from triage.stall import DEFAULT_STALL_S
from triage.target import Target

if TYPE_CHECKING:
    from triage.probes.api import ProbeRunResult


def register(p: argparse.ArgumentParser) -> None:
    """Send live probes to a vLLM embedding server while watching /metrics. The seed matrix can hang an affected
    vLLM until aborted: it needs --allow-hang."""
    p.add_argument("--url", required=True, type=base_url, help="server base URL, e.g. http://127.0.0.1:8000")
    add_api_key_arg(p)
    p.add_argument("--model", help="model id to send (default: the first one of /v1/models)")
    p.add_argument("--set", dest="sets", action="extend", nargs="+", choices=[*SETS, "all"],
                   help="probe set (repeatable: `--set A B` or `--set A --set B`; default: conformance)")
    p.add_argument("--truncate-prompt-tokens", type=truncation_arg, metavar="N",
                   help="your client's truncate_prompt_tokens: adds its row to the seed matrix")
    p.add_argument("--only", action="extend", nargs="+", metavar="GLOB",
                   help="run only probes whose name matches (repeatable: `--only A B` or `--only A --only B`)")
    p.add_argument("--allow-hang", action="store_true",
                   help="allow the seed matrix, which may livelock the server until the probe aborts it")
    add_experiments_arg(p)
    p.add_argument("--stall-seconds", type=SECONDS, default=DEFAULT_STALL_S,
                   help=f"no progress this long = stall (default {DEFAULT_STALL_S:g}, the stall rule's)")
    p.add_argument("--deadline", type=number(0.0, 86_400, above=True), default=30.0,
                   help="seconds before an unstalled probe is slow (default 30); every request of a probe "
                        "ends by this + 5 s, whatever the server sends")
    p.add_argument("--scrape-interval", type=number(0.01, 3600, above=True), default=0.5,
        help="seconds between /metrics scrapes (default 0.5)")
    p.add_argument("--log-file", metavar="F",
                   help="the server's start-up log ('-' = stdin): the pooling and overrides it resolved, which the "
                        "vectors and rerank sets judge the answers against")
    p.add_argument("--cmdline-file", metavar="F",
                   help="file with the vllm serve command line or the deployment file ('-' = stdin)")
    p.add_argument("--model-path", metavar="DIR",
                   help="the model's directory readable here, when /v1/models' root is not (the vectors set reads "
                        "its config files)")
    p.add_argument("--insecure", action="store_true", help="do not verify TLS certificates")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    add_db_arg(p)
    add_format_args(p)
    p.set_defaults(func=run)


def _progress(quiet: bool) -> Any:
    def on_event(e: RunEvent) -> None:
        if quiet:
            return
        if e.kind == ev_.PROBE_STARTED:
            print(f"… {e.probe}: {e.data.get('description', '')}", file=sys.stderr, flush=True)
        elif e.kind == ev_.PROBE_ABORTED:
            print(f"  aborted {e.probe} at {e.data['aborted_at_s']} s ({e.data['verdict']})",
                  file=sys.stderr, flush=True)
        elif e.kind == ev_.PROBE_VERDICT:
            print(f"  {e.probe}: {e.data['outcome']} after {e.data['time_to_verdict_s']} s",
                  file=sys.stderr, flush=True)
    return on_event


def to_json(result: ProbeRunResult, sets: list[str]) -> dict[str, Any]:
    return {"schema": CLI_SCHEMA, "command": "probe", "run_id": result.run_id, "target": result.target,
            "sets": sets, "status": result.status.value,
            "outcomes": [{k: v for k, v in o.to_dict().items() if k != "detail"} |
                         {"recovery": o.recovery} for o in result.outcomes],
            "findings": [f.to_dict() for f in result.findings]}


def to_text(result: ProbeRunResult) -> str:
    """The probe run as text, each piece of the server's text (model id, version, error titles) on one line."""
    t = result.target
    lines = [one_line(f"vLLM {t.get('vllm_version') or '?'} at {t.get('url')} model {t.get('model')} "
                      f"max_model_len {t.get('max_model_len')}  (run {result.run_id})"), ""]
    for o in result.outcomes:
        rec = ""
        if o.recovery:
            r = o.recovery
            rec = (f"  aborted at {r['aborted_at_s']} s, recovered at {r['recovered_s']} s" if r.get("recovered")
                   else "  NOT RECOVERED")
        ttv = "-" if o.time_to_verdict_s is None else o.time_to_verdict_s
        lines.append(one_line(f"  {o.outcome:<13} {o.probe:<40} {ttv} s{rec}"))
    lines.append("")
    shown: set[str] = set()
    for f in result.findings:
        lines += finding_lines(f, sweep_lines(f.evidence) if f.check == "throughput" else (), shown=shown)
    lines.append(f"\nstatus: {result.status.value}")
    return "\n".join(lines)


def sweep_lines(evidence: dict[str, Any]) -> list[str]:
    """The throughput sweep in `vllm bench serve`'s units, one line per concurrency (req/s, tokens/s, p50/p90/p99 ms,
    errors), then the client's ceiling beside it (``client_ceiling``'s note)."""

    def ms(v: Any) -> str:
        return f"{1000 * v:.1f}" if isinstance(v, (int, float)) else "-"

    out = [f"C={r.get('concurrency')}: {r.get('requests_per_s')} req/s, {r.get('tokens_per_s')} tok/s, p50/p90/p99 "
           f"{ms(r.get('p50_s'))}/{ms(r.get('p90_s'))}/{ms(r.get('p99_s'))} ms, errors {r.get('errors', 0)}"
           + (f" ({r['processes']} processes)" if (r.get("processes") or 1) > 1 else "")
           for r in evidence.get("rows") or []]
    note = (evidence.get("client_ceiling") or {}).get("note")
    return [*out, note] if note else out


def read_evidence(args: argparse.Namespace) -> dict[str, Any]:
    """The Target fields the probe sets read beyond the API (log, command line, its file's name, model directory),
    read as ``check`` reads them (triage.cli.inputs)."""
    stdin_used: list[bool] = []
    cmdline = read_small(args.cmdline_file, "--cmdline-file", stdin_used) if args.cmdline_file else None
    log_text = read_log_head_tail(args.log_file, stdin_used) if args.log_file else None
    file = args.cmdline_file if args.cmdline_file and args.cmdline_file != "-" else None
    return {"cmdline": cmdline, "cmdline_file": file, "log_text": log_text, "model_path": args.model_path}


def run(args: argparse.Namespace) -> int:
    sets = resolve_sets(args.sets or ["conformance"])
    hangs = [p.id for p in PROBE_SETS if p.can_hang]  # seed, rerank-seed
    if any(s in hangs for s in sets) and not args.allow_hang:
        if args.sets and "all" in args.sets and len(sets) > 1:
            sets = [s for s in sets if s not in hangs]
            print(f"skipping the seed matrix: {HANG_REASON}", file=sys.stderr)
        else:
            print(f"refusing to run the seed matrix: {HANG_REASON}", file=sys.stderr)
            return 2
    if "clients" in sets:
        from triage.probes.client_libraries import INSTALL_HINT, missing_libraries

        missing = missing_libraries()
        if missing:
            print(f"the clients set needs the client libraries ({', '.join(missing)} not installed): {INSTALL_HINT}",
                  file=sys.stderr)
            return 2
    try:
        evidence = read_evidence(args)
    except (OSError, ValueError) as e:
        print(f"probe: cannot read input: {e}", file=sys.stderr)
        return 2
    api_key = api_key_from_env(args)  # an ArgError: main prints it, exit 2
    spec = Target(url=args.url, model=args.model, truncation=args.truncate_prompt_tokens,
                  api_key=api_key, verify_tls=not args.insecure, **evidence)
    from triage.probes.api import run_probes  # the runner (httpx, the sets) loads once the arguments are good

    store = open_store(args.db)
    # core → observers: the Recorder writes the run as it comes (the only writer), then progress is printed
    recorder = Recorder(store)
    try:
        with recorder.guard():
            result = run_probes(spec, sets, args.allow_hang, args.stall_seconds, args.deadline, None,
                                observers(recorder, _progress(args.quiet or args.format == "json")),
                                scrape_s=args.scrape_interval, only=args.only,
                                run_experiments=args.run_experiments)
    except HangNotAllowed as e:
        print(f"refusing to run the seed matrix: {e}", file=sys.stderr)
        return 2
    if args.format == "json":
        print_json(to_json(result, sets), indent=1)
    else:
        print(to_text(result))
    if any(f.check == "probe-target" for f in result.findings):
        return 2
    return 1 if any(reaches(f.status, args.fail_on) for f in result.findings) else 0
