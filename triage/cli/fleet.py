"""``python -m triage fleet``: triage every replica through the Prometheus that scrapes them;
``fleet rules``: the same stall rule as Prometheus alerting rules.

Text: per replica with a stall, its episodes (kind, start, end, duration), the evidence and the
catalogue's verdict and fix; JSON (schema CLI_SCHEMA): {"schema", "run_id", "status", "fleet":
{replicas: [{name, labels, episodes: [...]}], errors, timings, …}, "findings": [...]}.
Exit: 0 no finding reached --fail-on, 1 one did (a stall), 2 could not run (bad arguments, store).
"""
from __future__ import annotations

import argparse
import math
import re
import sys
import time
from datetime import datetime, UTC
from typing import Any

from triage.cli import (CLI_SCHEMA, SECONDS, add_db_arg, add_format_args, base_url, command_deadline, number,
                        open_store, print_json)
from triage.display import utc_text
from triage.findings import Finding, reaches, worst
from triage.textsafe import one_line
from triage.cli.render import print_finding
from triage.fleet.prom import DEFAULT_DEADLINE_S, MAX_RANGE_STEPS, range_steps
from triage.fleet.replicas import DEFAULT_STALL_S

MAX_DURATION_S = 10 * 365 * 86400.0  # Prometheus keeps weeks, rarely years; more is a typo
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def duration(text: str) -> float:
    """'6h', '15s', '1h30m', '90' (seconds) -> seconds."""
    t = text.strip()
    if len(t) > 40:
        raise argparse.ArgumentTypeError(f"not a duration: {t[:20]!r}… (too long)")
    if re.fullmatch(r"\d+(\.\d+)?", t):
        secs = float(t)
    else:
        parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)", t)
        if not parts or "".join(a + b for a, b in parts) != t:
            raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 15s, 6h, 1h30m)")
        secs = sum(float(a) * _UNITS[b] for a, b in parts)
    if not math.isfinite(secs) or secs > MAX_DURATION_S:
        raise argparse.ArgumentTypeError(f"{t}: at most {MAX_DURATION_S // 86400 // 365:.0f} years")
    return secs


_PROM_DURATION = re.compile(r"(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?")
_LABEL = re.compile(r"[ \t]*([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*(=~|!~|!=|=)[ \t]*"
                    r"(\"(?:[^\"\\\n\r]|\\[^\n\r])*\"|'(?:[^'\\\n\r]|\\[^\n\r])*')[ \t]*(,|$)")


def prom_duration(text: str) -> str:
    """A Prometheus duration written into a rules file as it is ('0s', '5m', '1h30m'): checked, because a
    value like 'banana' or one with a newline made an invalid or injected rules file (issue 33)."""
    t = text.strip()
    if len(t) > 40 or not (t == "0" or t and _PROM_DURATION.fullmatch(t)):
        raise argparse.ArgumentTypeError(f"not a Prometheus duration: {t[:40]!r} (e.g. 0s, 5m, 1h30m)")
    return t


def label_matchers(text: str) -> str:
    """A PromQL label-matcher set ('{job="vllm"}', 'job="vllm",instance=~"10.*"', or empty), checked matcher by
    matcher in one pass: it is pasted into queries and into a rules file, where a newline or a quote would
    write lines of its own (issue 33)."""
    t = text.strip()
    inner = t[1:-1] if t.startswith("{") and t.endswith("}") else t
    pos = 0
    while pos < len(inner.rstrip()):
        m = _LABEL.match(inner, pos)
        if m is None or m.end() == pos:
            raise argparse.ArgumentTypeError(f"not a label selector at character {pos + 1}: {t[:80]!r} "
                                             "(e.g. '{job=\"vllm\"}', 'job=\"vllm\",instance=~\"10.*\"')")
        pos = m.end()
    return t


_NAMESPACE = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")


def k8s_namespace(text: str) -> str:
    """A Kubernetes namespace (an RFC 1123 label: lowercase letters, digits, '-', at most 63): the PrometheusRule's
    ``metadata.namespace``. Refused otherwise (issue 43: a newline wrote a key of its own into the file)."""
    if not _NAMESPACE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not a Kubernetes namespace: {text[:63]!r} (lowercase letters, digits "
                                         "and '-', at most 63, e.g. monitoring)")
    return text


def positive_duration(text: str) -> float:
    """A duration above zero (a step, an interval)."""
    secs = duration(text)
    if secs <= 0:
        raise argparse.ArgumentTypeError(f"{text.strip()}: must be above 0")
    return secs


def instant(text: str) -> float:
    """Unix seconds, or ISO-8601 (UTC when no zone is given)."""
    t = text.strip()[:64]
    try:
        v = float(t)
    except ValueError:
        pass
    else:
        if not math.isfinite(v) or not 0 <= v <= 32_503_680_000:  # unix seconds up to the year 3000
            raise argparse.ArgumentTypeError(f"{t}: not a unix time (finite, 0 .. year 3000)")
        return v
    try:
        d = datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"not a time: {text!r} (unix seconds or ISO-8601)") from e
    return (d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp()


def register(p: argparse.ArgumentParser) -> None:
    """Query the vLLM series of every replica Prometheus scrapes, run the stall rule on each, and give the
    catalogue's verdict and fix per replica."""
    p.add_argument("--prometheus", metavar="URL", type=base_url, help="Prometheus base URL, e.g. http://prometheus:9090")
    p.add_argument("--match", default="", type=label_matchers, metavar="SELECTOR",
                   help="label matchers, e.g. '{job=\"vllm\"}'")
    p.add_argument("--since", type=duration, default=None, metavar="DUR", help="look back this far (default 1h)")
    p.add_argument("--from", dest="start", type=instant, default=None, metavar="TIME", help="range start")
    p.add_argument("--to", dest="end", type=instant, default=None, metavar="TIME", help="range end (default now)")
    p.add_argument("--step", type=positive_duration, default=None,
                   help="query resolution (default: just under the replicas' scrape interval, which Prometheus "
                        "reports: every scrape is read)")
    p.add_argument("--stall-seconds", type=SECONDS, default=DEFAULT_STALL_S,
                   help=f"no-progress seconds that make a stall (default {DEFAULT_STALL_S:g}, the stall rule's)")
    p.add_argument("--concurrency", type=number(1, 32, integer=True), default=4,
        help="queries in flight at once (default 4)")
    p.add_argument("--timeout", type=number(0.0, 3600, above=True), default=DEFAULT_DEADLINE_S,
                   help=f"seconds the whole Prometheus query may take (default {DEFAULT_DEADLINE_S:g}); each replica's "
                        "/version has 2 s more")
    p.add_argument("--no-version", action="store_true",
                   help="do not ask stalled replicas for /version (the verdict then says the version is unknown)")
    add_db_arg(p)
    add_format_args(p)
    p.set_defaults(func=_scan)
    fs = p.add_subparsers(dest="fleet_command", metavar="rules")
    pr = fs.add_parser("rules", help="write Prometheus alerting rules for the stall signatures")
    pr.add_argument("-o", "--output", default="-", help="file to write (default: stdout)")
    pr.add_argument("--stall-seconds", type=SECONDS, default=DEFAULT_STALL_S)
    pr.add_argument("--scrape-interval", type=positive_duration, default=None,
                    help="your Prometheus' (default: what --prometheus reports for the vLLM targets, else 15s)")
    pr.add_argument("--prometheus", metavar="URL", type=base_url,
                    help="read the scrape interval from this Prometheus' targets")
    pr.add_argument("--match", default="", type=label_matchers, metavar="SELECTOR")
    pr.add_argument("--for", dest="for_", default="0s", type=prom_duration,
                    help="alert 'for:' duration (default 0s)")
    pr.add_argument("--recurrence-window", type=positive_duration, default=None,
                    help="the recurring-livelock alert fires on 2 ended episodes within this (default 10m)")
    pr.add_argument("--prometheus-rule", action="store_true",
                    help="write the rules as a prometheus-operator PrometheusRule (monitoring.coreos.com/v1) for "
                         "`kubectl apply`, not a plain rules file")
    pr.add_argument("--namespace", type=k8s_namespace, help="with --prometheus-rule: the PrometheusRule's namespace")
    pr.set_defaults(func=_rules)


def _rules(args: argparse.Namespace) -> int:
    from triage.fleet.rules import RECURRENCE_WINDOW, prometheus_rule_yaml, rules_yaml

    interval = args.scrape_interval
    if interval is None and args.prometheus:
        from triage.fleet.interval import scrape_interval

        now = time.time()
        iv = scrape_interval(args.prometheus, args.match, now - 3600, now)
        interval = iv.seconds
        print(f"scrape interval {iv.seconds:g} s ({iv.source}: {iv.detail})", file=sys.stderr)
    rule_args = (args.stall_seconds, interval or 15.0, args.match, args.for_,
                 f"{int(args.recurrence_window)}s" if args.recurrence_window else RECURRENCE_WINDOW)
    text = (prometheus_rule_yaml(*rule_args, namespace=args.namespace) if args.prometheus_rule
            else rules_yaml(*rule_args))
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as fh:
            fh.write(text)
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _text(res: Any, found: list[Finding], run_id: int | None) -> None:
    """Every outside string (labels, Prometheus' error texts, a replica's version) on one line: a newline in a label
    must not start a line of its own (a forged ``[PASS]``)."""
    iv = res.interval
    how = "" if iv is None else (f" (scrape interval {iv.seconds:g}s from {one_line(iv.source)}"
                                 + ("; every scrape read)" if res.reads_every_scrape else ")"))
    print(f"fleet {one_line(res.prometheus)} {one_line(res.match or '')} {utc_text(res.start)} .. "
          f"{utc_text(res.end)} UTC, step {res.step:g}s{how}: {len(res.replicas)} replicas "
          f"({res.timings.get('total_s', 0):.1f} s)")
    for f in found:
        details: list[str] = []
        for ep_i, ep in enumerate(f.evidence.get("episodes", [])):
            end = "ongoing" if ep["ongoing"] else ep["end_utc"]
            how = f", ended: {ep['ended']}" if ep.get("ended") and not ep["ongoing"] else ""
            how += f" (retry of #{ep['retry_of'] + 1})" if ep.get("retry_of") is not None else ""
            details.append(f"#{ep_i + 1} {ep['kind']}: {ep['start_utc']} -> {end} ({ep['duration_s']:.0f} s{how}); "
                           f"running {ep['evidence']['num_requests_running']}, waiting "
                           f"{ep['evidence']['num_requests_waiting']}, frozen {ep['evidence']['frozen']}")
        if f.evidence.get("version_note"):
            details.append(f"version: {f.evidence['version_note']}")
        if f.evidence.get("replicas") and f.check == "fleet-replicas-clean":
            details.append(", ".join(one_line(r) for r in f.evidence["replicas"][:20])
                           + (" …" if len(f.evidence["replicas"]) > 20 else ""))
        print()
        print_finding(f, details)
    if run_id is not None:
        print(f"\nrun {run_id}")


def _scan(args: argparse.Namespace) -> int:
    if not args.prometheus:
        print("fleet: --prometheus URL is required (or `fleet rules`)", file=sys.stderr)
        return 2
    if args.since is not None and args.start is not None:
        print("fleet: give --since or --from/--to, not both", file=sys.stderr)
        return 2
    end = args.end if args.end is not None else time.time()
    start = args.start if args.start is not None else end - (args.since or 3600.0)
    if start >= end or (args.step is not None and args.step <= 0):
        print("fleet: the range is empty (--from must be before --to; --step > 0)", file=sys.stderr)
        return 2
    steps = range_steps(start, end, args.step) if args.step else 0  # a default step: prom.query_ranges' cap says so
    if steps > MAX_RANGE_STEPS:
        print(f"fleet: the range holds {steps:,} steps of {args.step:g} s: more than the {MAX_RANGE_STEPS:,} steps "
              "cap (shorten --since/--from or widen --step)", file=sys.stderr)
        return 2
    from triage.fleet.record import fleet_events
    from triage.fleet.scan import findings, scan, summary
    from triage.recorder import Recorder, save

    store = open_store(args.db)  # one line, exit 2, the URL's password never printed
    with command_deadline(args.timeout + 2 * 2.0 + 15, "fleet"):  # the backstop behind the scan's own deadline
        res = scan(args.prometheus, start, end, step=args.step, match=args.match, threshold_s=args.stall_seconds,
                   max_workers=args.concurrency, ask_versions=not args.no_version, deadline_s=args.timeout,
                   progress=lambda m: print(m, file=sys.stderr, flush=True))
    found = findings(res)
    run_id = save(fleet_events(res, found), Recorder(store))  # core → observer: the Recorder writes the run
    status = worst(f.status for f in found)
    if args.format == "json":
        print_json({"schema": CLI_SCHEMA, "run_id": run_id, "status": status.value, "fleet": summary(res),
                    "findings": [f.to_dict() for f in found]})
    else:
        _text(res, found, run_id)
    return 1 if reaches(status, args.fail_on) else 0
