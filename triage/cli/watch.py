"""``python -m triage watch --url URL``: sample /metrics on an interval, store samples, print stall alerts.

Text: one line per sample (``--quiet``: alerts only), an ``ENGINE STALLED since …`` line when the
stall rule fires and a ``cleared …`` line when it ends. JSON (schema CLI_SCHEMA) at the end:
{"schema", "run_id", "url", "status", "summary": {ticks, errors, interval_s, stall_threshold_s,
engines: {label: {samples, max_running, …, last}}, alerts: [{engine, kind, since, confirmed_at,
cleared_at, running, waiting}], observer_gaps: {count, longest_s}}, "events": [AlertEvent…]}. A sample that came
late (this process held up: Ctrl-Z, a starved host) judges no stall window; watch says "cannot judge" instead.
Exit: 0 no stall seen (or below --fail-on), 1 a stall alert was raised, 2 could not run.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from triage.cli import CLI_SCHEMA, SECONDS, base_url, number, open_store, print_json
from triage.cli import add_api_key_arg, add_db_arg, add_format_args, api_key_from_env
from triage import events as ev_
from triage.events import AlertEvent, RunEvent
from triage.display import kv_percent_text
from triage.recorder import Recorder
from triage.textsafe import one_line
from triage.stall import DEFAULT_STALL_S

if TYPE_CHECKING:
    from triage.watch import WatchTick


def register(p: argparse.ArgumentParser) -> None:
    """Scrape a vLLM server's /metrics every --interval seconds, store the samples, and apply the stall rule
    (running ≥ 1, waiting 0, no progress for --stall-seconds) to real traffic."""
    p.add_argument("--url", required=True, type=base_url, help="server base URL, e.g. http://127.0.0.1:8000")
    p.add_argument("--interval", type=number(0.01, 86_400, above=True), default=0.5,
        help="seconds between samples (default 0.5)")
    p.add_argument("--duration", type=SECONDS, default=None,
        help="stop after this many seconds (default: until Ctrl-C)")
    p.add_argument(
        "--stall-seconds", type=SECONDS, default=DEFAULT_STALL_S,
        help=f"no-progress seconds that raise the alert (default {DEFAULT_STALL_S:g}, the stall rule's)"
    )
    p.add_argument("--window", type=SECONDS, default=60.0, help="latency quantile window in seconds (default 60)")
    p.add_argument(
        "--retention",
        type=SECONDS,
        default=None,
        metavar="S",
        help="delete stored samples older than S seconds while watching (default: keep all)",
    )
    add_api_key_arg(p)
    p.add_argument("--insecure", action="store_true", help="do not verify TLS certificates")
    p.add_argument("--quiet", action="store_true", help="print only alerts (text format)")
    add_db_arg(p)
    add_format_args(p)
    p.set_defaults(func=run)


def _tick_line(t: WatchTick, version: str | None = None) -> str:
    from triage.watch import hhmmss, state_label

    if t.error:
        return f"{hhmmss(t.ts)}  scrape failed: {t.error}"
    s = t.sample
    if s is None:
        return f"{hhmmss(t.ts)}  (no engine)"
    rate = f"{s.prompt_throughput:.1f}" if s.prompt_throughput is not None else "-"
    kv = kv_percent_text(s.kv_cache_usage_perc)
    label = state_label(t.state, version)
    state = f"  [{label}]" if label else ""
    return (
        f"{hhmmss(t.ts)}  engine {s.engine}: running={_n(s.num_requests_running)} waiting={_n(s.num_requests_waiting)} "
        f"prompt_tokens/s={rate} kv={kv} prompt_tokens_total={_n(s.prompt_tokens_total)}{state}"
    )


def _n(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}"


def run(args: argparse.Namespace) -> int:
    if args.interval <= 0 or args.stall_seconds <= 0:
        print("watch: --interval and --stall-seconds must be > 0", file=sys.stderr)
        return 2
    api_key = api_key_from_env(args)  # an ArgError: main prints it, exit 2
    if args.duration is not None and args.duration <= 0:
        print("watch: --duration must be > 0", file=sys.stderr)
        return 2
    from triage.watch import Watcher, hhmmss  # the engine loads once the arguments are good (bench/bench_cli.py)

    store = open_store(args.db)
    # core → observers: the Recorder writes the run (start, samples as taken, alert findings, summary, end);
    # this command prints what it sees
    recorder = Recorder(store, retention_s=args.retention)  # retention: this watch's own series only
    events: list[AlertEvent] = []
    text = args.format == "text"

    def observe(ev: RunEvent) -> None:
        ev = recorder.observe(ev)
        if ev.kind == ev_.STARTED and text:
            print(
                f"watching {args.url}/metrics every {args.interval:g}s, stall threshold {args.stall_seconds:g}s "
                f"(run {ev.run_id})",
                flush=True,
            )
        elif ev.kind == ev_.ALERT and ev.alert is not None:
            events.append(ev.alert)
            if text:
                a = ev.alert
                print(a.message if a.event == "stalled" else one_line(f"{hhmmss(a.at)}  {a.message}"), flush=True)

    watcher = Watcher(
        args.url,
        observe,
        interval=args.interval,
        stall_s=args.stall_seconds,
        api_key=api_key,
        window_s=args.window,
        verify_tls=not args.insecure,
        batch_size=1,  # each sample is written as it is taken: a watch killed with -9 keeps what it printed
    )

    def on_tick(t: WatchTick) -> None:
        if text and not args.quiet:
            print(one_line(_tick_line(t, watcher.vllm_version)), flush=True)  # an engine label is the server's

    try:
        summary = watcher.run(args.duration, on_tick=on_tick)
    except KeyboardInterrupt:
        summary = watcher.finish()
    except Exception as e:  # the store or the server failed mid-watch: the run is closed with what it saw
        recorder.interrupted(e, "watch stopped")
        print(f"watch: stopped: {type(e).__name__}: {str(e)[:300]}", file=sys.stderr)
        return 2
    run_id = recorder.run_id
    stalled = bool(summary["alerts"])
    if summary["ticks"] and summary["errors"] == summary["ticks"]:
        print(f"watch: every scrape of {args.url}/metrics failed", file=sys.stderr)
        if not text:
            _dump(run_id, args.url, "error", summary, events)
        return 2
    if text:
        print(f"done: {summary['ticks']} samples, {summary['errors']} errors, {len(summary['alerts'])} stall alert(s)")
    else:
        _dump(run_id, args.url, "fail" if stalled else "pass", summary, events)
    return 1 if stalled else 0


def _dump(run_id: int | None, url: str, status: str, summary: dict[str, Any], events: list[AlertEvent]) -> None:
    print_json(
        {
            "schema": CLI_SCHEMA,
            "run_id": run_id,
            "url": url,
            "status": status,
            "summary": summary,
            "events": [e.to_dict() for e in events],
        }
    )
