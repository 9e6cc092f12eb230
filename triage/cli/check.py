"""``python -m triage check``: the checklist, headless; text or JSON (schema CLI_SCHEMA) and exit codes.

JSON: {"schema", "run_id", "target" (never the API key), "config" (effective, with provenance),
"status", "findings": [{"check", "status", "title", "evidence", "fix", "refs", "explanation",
"failure_mode"}]}.
Exit: 0 nothing reached --fail-on, 1 something did, 2 could not run (bad arguments or inputs, an
unknown --answer key or a malformed value). ``--answer KEY=VALUE`` states what the evidence lacks
(parsed by triage.answers, shared with the dashboard); JSON "target" echoes the typed answers.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from triage import events as ev_
from triage.answers import KEYS as ANSWER_KEYS, AnswerError, parse_answers
from triage.cli import (
    base_url,
    CLI_SCHEMA,
    add_api_key_arg,
    add_db_arg,
    add_format_args,
    api_key_from_env,
    command_deadline,
    number,
    open_store,
    print_json,
)
from triage.cli.inputs import read_log_head_tail, read_small
from triage.cli.render import INDENT, print_finding
from triage.findings import Finding, Status, reaches
from triage.target import Target, Truncation
from triage.textsafe import one_line

if TYPE_CHECKING:
    from triage.checklist import CheckEvent



def truncation_arg(text: str) -> Truncation:
    """argparse type of --truncate (check) and --truncate-prompt-tokens (probe): the one parser."""
    try:
        return Truncation.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def answer_keys() -> list[str]:
    return list(ANSWER_KEYS)


def register(p: argparse.ArgumentParser) -> None:
    """Diagnose a vLLM embedding deployment from evidence: the live server, the `vllm serve` command line and the
    start-up log. Sends no long request."""
    p.add_argument(
        "--url", type=base_url,
        help="server base URL, e.g. http://127.0.0.1:8000 (optional with --cmdline-file/--log-file)"
    )
    add_api_key_arg(p)
    p.add_argument("--model", help="model id your client sends (default: the first of /v1/models)")
    p.add_argument(
        "--truncate",
        type=truncation_arg,
        metavar="N|-1|none",
        help="truncate_prompt_tokens your client sends with /v1/embeddings",
    )
    p.add_argument(
        "--cmdline-file", metavar="F",
        help="file with the vllm serve / docker run command line, or the deployment file: a Kubernetes manifest, "
             "production-stack Helm values, helm template output or a compose file ('-' = stdin)"
    )
    p.add_argument("--cmdline", metavar="TEXT", help="the command line as text")
    p.add_argument("--deploy-target", metavar="NAME|all",
                   help="with a deployment file holding several vLLM containers / model specs / services: which one "
                        "to judge (its name, e.g. vllm, or 'Deployment/x container vllm'), or 'all' (one run each)")
    p.add_argument("--log-file", metavar="F", help="the server's start-up log ('-' = stdin)")
    p.add_argument("--kube-file", metavar="F", action="extend", nargs="+", default=[],
                   help="kubectl's view of the server's pod (repeatable; each file's kind is told by its shape): "
                        "`kubectl describe pod` text, `kubectl get pod -o yaml`, or `kubectl logs [--previous]` "
                        "output (a log is also the start-up log when --log-file is not given; a pod YAML is also "
                        "the command line when --cmdline-file is not given)")
    p.add_argument(
        "--nvml-file", metavar="F", help="a recorded NVML JSON of the server's host (instead of this machine)"
    )
    p.add_argument(
        "--local-gpu",
        action="store_true",
        help="read this machine's GPUs (NVML/amdsmi) as the server's; automatic for a loopback --url",
    )
    p.add_argument(
        "--answer",
        action="extend",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="answer a checklist question (repeatable), e.g. gpu_name='NVIDIA GeForce RTX 3080 Ti', "
        "gpu_memory_total_bytes=12GiB, vllm_version=0.28.0, max_num_batched_tokens=2048; "
        "keys: " + ", ".join(answer_keys()),
    )
    p.add_argument("--insecure", action="store_true", help="do not verify TLS certificates")
    p.add_argument("--timeout", type=number(0.0, 3600, above=True), default=10.0,
                   help="seconds each HTTP call may take, whole answer included (default 10); the whole check "
                        "ends within 3 x this + 15 s")
    p.add_argument("--no-embed", action="store_true", help="do not send the one 2-token /v1/embeddings request")
    add_experiments_arg(p)
    p.add_argument("--allow-hang", action="store_true",
                   help="with --run-experiments: allow an experiment that may livelock the server (the seed matrix)")
    add_db_arg(p)
    add_format_args(p)
    p.set_defaults(func=run)


def add_experiments_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--run-experiments", action="store_true",
                   help="when a diagnosis says 'one of', run the probe sets that tell the candidates apart and "
                        "diagnose again (one that can hang the server only with --allow-hang)")


def finding_json(f: Finding) -> dict[str, Any]:
    d = f.to_dict()
    return {k: d[k] for k in ("check", "status", "title", "evidence", "fix", "refs", "explanation", "failure_mode")}


def run(args: argparse.Namespace) -> int:
    stdin_used: list[bool] = []
    try:
        cmdline = args.cmdline
        if args.cmdline_file:
            cmdline = read_small(args.cmdline_file, "--cmdline-file", stdin_used)
        # streamed, its head (the start-up lines) and tail kept: a 200 MB log or /dev/zero is never read whole
        log_text = read_log_head_tail(args.log_file, stdin_used) if args.log_file else None
        nvml_rec = json.loads(read_small(args.nvml_file, "--nvml-file", [])) if args.nvml_file else None
        kube_texts = tuple((f if f != "-" else "stdin", read_log_head_tail(f, stdin_used, flag="--kube-file"))
                           for f in args.kube_file)
    except (OSError, ValueError) as e:
        print(f"check: cannot read input: {e}", file=sys.stderr)
        return 2
    try:
        answers = parse_answers(args.answer)
    except AnswerError as e:
        print(f"check: --answer: {e}", file=sys.stderr)
        return 2
    file = args.cmdline_file if args.cmdline_file and args.cmdline_file != "-" else None
    cmdline, kube_texts = _without_secrets(cmdline, file or ("stdin" if args.cmdline_file else "--cmdline"),
                                           kube_texts)
    cmdline, file, log_text = _from_kube(kube_texts, cmdline, file, log_text)
    if not (args.url or cmdline or log_text or kube_texts):
        print("check: give --url, or --cmdline-file/--cmdline/--log-file/--kube-file for offline triage",
              file=sys.stderr)
        return 2
    if args.url and "://" not in args.url:
        print(f"check: --url needs a scheme, e.g. http://{args.url}", file=sys.stderr)
        return 2
    api_key = api_key_from_env(args)  # an ArgError: main prints it, exit 2
    picks = _deploy_picks(cmdline, file, args.deploy_target)
    if isinstance(picks, str):
        print(f"check: {picks}", file=sys.stderr)
        return 2
    codes, docs = [], []
    for pick in picks:
        spec = Target(
            url=args.url,
            model=args.model,
            truncation=args.truncate,
            cmdline=cmdline,
            cmdline_file=file,
            deploy_target=pick,
            log_text=log_text,
            kube=kube_texts,
            api_key=api_key,
            verify_tls=not args.insecure,
            timeout_s=args.timeout,
            answers=answers or None,
        )
        if args.format == "text" and len(picks) > 1:
            print(f"== {pick}")
        code, doc = _judge(args, spec, api_key, answers, nvml_rec)
        if code == 2:  # the run could not finish (said on stderr)
            return 2
        codes.append(code)
        docs.append(doc)
    if args.format != "text":
        print_json(docs[0] if len(docs) == 1 else {"schema": CLI_SCHEMA, "runs": docs})
    return max(codes)


def _yaml_lines(blocks: Any) -> list[str]:
    """A finding's YAML to paste (evidence ``yaml_to_copy``, generated by the engine), indented under it; a long one
    (the PrometheusRule) is named with where to find it whole."""
    out: list[str] = []
    for title, code in (blocks or {}).items() if isinstance(blocks, dict) else ():
        if str(code).count("\n") > 30:
            out.append(f"{INDENT}{one_line(str(title))}: {str(code).count(chr(10))} lines, in --format json "
                       "(evidence yaml_to_copy)")
            continue
        out.append(f"{INDENT}{one_line(str(title))}:")
        out += [f"{INDENT}  {line}" for line in str(code).splitlines()]
    return out


def _without_secrets(cmdline: str | None, where: str, kube_texts: tuple[tuple[str, str], ...]
                     ) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """The inputs without their Kubernetes Secrets (triage.secret_docs), each drop said on stderr (issue 43)."""
    from triage.redact import drop_secret_documents

    def drop(text: str, where: str) -> str:
        kept, gone = drop_secret_documents(text)
        if gone:
            print(f"check: {where}: dropped {', '.join(gone)}: a Secret's data is never read or stored",
                  file=sys.stderr)
        return kept

    if cmdline:
        cmdline = drop(cmdline, where)
    return cmdline, tuple((name, drop(text, name)) for name, text in kube_texts)


def _from_kube(kube_texts: tuple[tuple[str, str], ...], cmdline: str | None, file: str | None,
               log_text: str | None) -> tuple[str | None, str | None, str | None]:
    """What the --kube-file texts also give when nothing else did: a pod's YAML is its command line (the deployment
    reader reads a Pod), a log the start-up log."""
    if not kube_texts:
        return cmdline, file, log_text
    from triage.sources import kube

    kinds = [(name, text, kube.kind_of(text)) for name, text in kube_texts]
    if not cmdline:
        cmdline, file = next(((t, n) for n, t, k in kinds if k == "yaml"), (None, file))
    if not log_text:
        log_text = next((t for _n, t, k in kinds if k == "log"), None)
    return cmdline, file, log_text


def _deploy_picks(cmdline: str | None, file: str | None, want: str | None) -> list[str | None] | str:
    """The targets of a deployment file to judge (one run each), or why not (the CLI asks which)."""
    from triage.sources import deploy, deploy_read

    try:
        dep = deploy_read.read(cmdline or "", file)
    except deploy.DeployError as e:
        return f"{'--cmdline-file' if file else '--cmdline'}: {e}"
    if dep is None:
        return [None]
    if not dep.targets:
        return f"{dep.file}: no vLLM container, model spec or service in it ({'; '.join(dep.skipped) or 'empty'})"
    if want == "all":
        return [t.name for t in dep.targets]
    if want:
        t = dep.pick(want)
        return [t.name] if t else f"{dep.file} has no target {want!r}; it has: {'; '.join(dep.names())}"
    if len(dep.targets) > 1:
        return (f"{dep.file} runs {len(dep.targets)} vLLM servers: {'; '.join(dep.names())}. "
                "Say which with --deploy-target NAME, or --deploy-target all")
    return [dep.targets[0].name]


def _judge(args: argparse.Namespace, spec: Target, api_key: str | None, answers: dict[str, Any],
           nvml_rec: Any) -> tuple[int, dict[str, Any] | None]:
    """One checklist run (text printed as it comes); the exit code and the JSON document."""
    cmdline, log_text = spec.cmdline, spec.log_text
    from triage.checklist import CheckOptions, run_checklist  # the engine loads when the checklist runs (bench_cli.py)
    from triage.events import observers
    from triage.recorder import Recorder

    options = CheckOptions(nvml_recorded=nvml_rec, embed_probe=not args.no_embed,
                           local_gpu=True if args.local_gpu else None)
    store = open_store(args.db)
    text = args.format == "text"

    # core → observers: the Recorder writes each event as it comes (the only writer), then progress is printed
    recorder = Recorder(store)

    def progress(ev: CheckEvent) -> None:
        if not text:
            return
        if ev.kind == "finding" and ev.finding is not None:
            f = ev.finding
            after = _yaml_lines(f.evidence.get("yaml_to_copy")) if f.status.value in ("fail", "warn") else []
            keys = [k for q in f.evidence.get("questions") or [] if isinstance(q, dict) for k in q.get("keys") or []]
            if f.status.value == "unknown" and keys:
                after.append(f"{INDENT}answer: " + " ".join(f"--answer {k}=…" for k in dict.fromkeys(keys)
                                                            if k in ANSWER_KEYS))
            print_finding(f, after=after)
        elif ev.kind == "source":
            print(f"-- {ev.source}: {one_line(ev.message)}")

    try:
        with command_deadline(3 * args.timeout + 15, "check"):
            result = run_checklist(spec, on_event=observers(recorder, progress), options=options)
    except Exception as e:  # the deadline passed, or the database went away: what was committed stays
        why = f"{type(e).__name__}: {str(e)[:300]}"
        if recorder.run_id is not None:
            try:
                recorder.finding(Finding("checklist", Status.ERROR, f"The checklist did not finish: {why}",
                                         {"error": why, "timeout_s": args.timeout}))
                recorder.finish(f"interrupted: {why}", ev_.INTERRUPTED)
            except Exception:  # noqa: BLE001 - the database itself is what failed
                pass
        print(f"check: could not finish the run: {why}", file=sys.stderr)
        return 2, None
    target = {
        "url": args.url,
        "model": args.model,
        "truncate_prompt_tokens": spec.truncation.config_value(),
        "api_key_given": bool(api_key),
        "cmdline_given": bool(cmdline),
        "log_given": bool(log_text),
        "kube_files": [name for name, _ in spec.kube],
        "answers": answers,
    }
    if spec.deploy_target:
        target["deploy_target"] = spec.deploy_target
    experiments = _experiments(args, spec, result, store, text)
    findings = [*result.findings, *(experiments.findings if experiments is not None else [])]
    code = 1 if any(reaches(f.status, args.fail_on) for f in findings) else 0
    doc = None
    if text:
        print(f"run {result.run_id}: {result.status.value} (stored in {store.url.split('///')[-1]}); exit {code}")
    else:
        doc = {
            "schema": CLI_SCHEMA,
            "run_id": result.run_id,
            "target": target,
            "status": result.status.value,
            "config": result.config,
            "findings": [finding_json(f) for f in result.findings],
        }
        if experiments is not None:
            doc["experiments"] = {"run_id": experiments.run_id, "findings": [finding_json(f) for f in
                                                                          experiments.findings]}
    return code, doc


def _experiments(args: argparse.Namespace, spec: Target, result: Any, store: Any, text: bool) -> Any:
    """--run-experiments: the probe sets the checklist's ambiguous diagnoses ask for, as a probe run of their own
    (stored), diagnosed again with the checklist's findings and config; None when there is nothing to run."""
    from triage.differential import is_diagnosis
    from triage.probes.experiments import experiment_sets

    if not args.run_experiments or not spec.url:
        return None
    plan = experiment_sets([f for f in result.findings if is_diagnosis(f)], (), args.allow_hang)
    for probe, why in plan.refused.items():
        print(f"experiment {probe} not run: {why}", file=sys.stderr)
    if not plan.run:
        return None
    from triage.events import observers
    from triage.probes.api import run_probes
    from triage.recorder import Recorder

    values = {k: v.get("value") for k, v in result.config.items() if isinstance(v, dict)}
    out = run_probes(spec, [], args.allow_hang, store=None, on_event=observers(Recorder(store)),
                     run_experiments=True, prior=result.findings, prior_config=values)
    if text:
        for f in out.findings:
            if is_diagnosis(f):
                print_finding(f, suffix=f" (after {', '.join(plan.run)})")
    return out
