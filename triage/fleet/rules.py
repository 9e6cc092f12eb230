"""Prometheus alerting rules for the stall signatures: the one stall rule (triage.stall) in PromQL.

Same shapes, progress signals and threshold as `StallDetector`: a livelock is running >= 1, a
stuck-waiting is waiting >= 1 with running 0, each with none of the per-step progress signals
(`replicas.PROGRESS`: kv_cache_usage_perc, prefix_cache_queries_total, prompt_tokens_total,
request_success_total) moving; or (`triage.stall.held`) running >= 1 with the KV usage above 0 and unchanged
while other requests finish beside the held one (issue 21: the pooling livelock next to normal traffic).
The detector confirms once the no-progress samples span the
threshold; over raw scrapes that is a range of threshold + one scrape interval holding at least two
samples (`window_s`). A signal a replica does not export cannot veto (``unless``, not ``and``).
Recurrence (issue 21, `triage.recurrence`): a recording rule keeps the livelock verdict as a 0/1 series per
replica (``STATE_RECORD``); ``RECURRING_ALERT`` fires once it fell back to 0 at least ``MIN_RECURRING`` times
inside the window (each episode ended: a client's time-out freed the engine, a retry or the next long document
hung it again), named by the catalogue record `pooling-livelock-client-timeouts`. Two ended episodes are four
changes of the 0/1 series, or three when it is 0 now.
What PromQL cannot follow is the detector's longer window for a step it measured to be slow
(prefill rate x chunk size): alert rules use the plain threshold, so pick it above your longest step. Wording, refs
and what to do come from the catalogue records, like every other verdict path.
"""
from __future__ import annotations

import json
from typing import Any

from triage.catalogue import POOLING_LIVELOCK_CLIENT_TIMEOUTS, explain_stall
from triage.fleet.replicas import BY, DEFAULT_STALL_S, METRICS, PROGRESS, selector
from triage.recurrence import MIN_RECURRING
from triage.stall import LIVELOCK, STUCK_WAITING

GROUP = "vllm-triage"
ALERTS = {LIVELOCK: "VLLMEngineLivelock", STUCK_WAITING: "VLLMEngineStuckWaiting"}
STATE_RECORD = "vllm_triage:engine_livelock"  # 1 while the livelock rule holds on a replica, else 0
RECURRING_ALERT = "VLLMEngineLivelockRecurring"
RECURRENCE_WINDOW = "10m"


def window_s(threshold_s: float, scrape_interval_s: float) -> float:
    """The range a rule looks back over: samples spanning the threshold need one interval more, less a
    millisecond: Prometheus 2.x ranges include both ends, and a range of exactly threshold + interval would
    reach the sample before a two-sample stall (the stall rule's window starts at the first stalled one)."""
    return round(threshold_s + scrape_interval_s - 0.001, 3)


def _range(threshold_s: float, scrape_interval_s: float) -> str:
    return f"[{int(round(window_s(threshold_s, scrape_interval_s) * 1000))}ms]"


def expr(kind: str, threshold_s: float = DEFAULT_STALL_S, scrape_interval_s: float = 15.0, match: str = "") -> str:
    w = _range(threshold_s, scrape_interval_s)
    run, wait = selector(METRICS["num_requests_running"], match), selector(METRICS["num_requests_waiting"], match)
    frozen = "\n".join(f"unless on ({BY}) sum by ({BY}) (changes({selector(METRICS[c], match)}{w})) > 0"
                       for c in PROGRESS)
    enough = f"and on ({BY}) min by ({BY}) (count_over_time({run}{w})) >= 2"
    if kind == LIVELOCK:
        shape = f"sum by ({BY}) (min_over_time({run}{w})) >= 1"
        kv = selector(METRICS["kv_cache_usage_perc"], match)
        # triage.stall.held: a request held (KV usage > 0 and unchanged) while others finish beside it (issue 21)
        held = (f"{shape}\nand on ({BY}) sum by ({BY}) (changes({kv}{w})) == 0\n"
                f"and on ({BY}) sum by ({BY}) (min_over_time({kv}{w})) > 0")
        return f"(\n{shape}\n{frozen}\n{enough}\n)\nor\n(\n{held}\n{enough}\n)"
    elif kind == STUCK_WAITING:
        shape = (f"sum by ({BY}) (min_over_time({wait}{w})) >= 1\n"
                 f"and on ({BY}) sum by ({BY}) (max_over_time({run}{w})) == 0")
    else:
        raise ValueError(f"no alert for stall kind {kind!r}")
    return f"{shape}\n{frozen}\n{enough}"


def state_expr(threshold_s: float = DEFAULT_STALL_S, scrape_interval_s: float = 15.0, match: str = "") -> str:
    """1 while the livelock rule holds, 0 on every other replica that reports vLLM's running gauge."""
    run = selector(METRICS["num_requests_running"], match)
    return (f"(\n{expr(LIVELOCK, threshold_s, scrape_interval_s, match)}\n) >= bool 1\n"
            f"or on ({BY}) 0 * sum by ({BY}) ({run})")


def recurring_expr(window: str = RECURRENCE_WINDOW, times: int = MIN_RECURRING) -> str:
    """At least ``times`` livelock episodes that ended (1 -> 0) inside ``window``."""
    changes = f"changes({STATE_RECORD}[{window}])"
    return f"{changes} >= {2 * times}\nor ({changes} >= {2 * times - 1} and {STATE_RECORD} == 0)"


def _q(s: str) -> str:
    return json.dumps(s)  # a JSON string is a YAML double-quoted scalar


def rules_yaml(threshold_s: float = DEFAULT_STALL_S, scrape_interval_s: float = 15.0, match: str = "",
               for_: str = "0s", recurrence_window: str = RECURRENCE_WINDOW) -> str:
    """The rules file: one group, one alert per stall kind, labelled with the catalogue mode's id; the livelock
    state as a recorded series and the alert on its recurrence."""
    lines = [
        "# Generated by `python -m triage fleet rules`: the stall rule of vllm-triage (triage/stall.py) in PromQL.",
        f"# Stall threshold {threshold_s:g} s, scrape interval {scrape_interval_s:g} s, "
        f"window {window_s(threshold_s, scrape_interval_s):g} s.",
        "groups:",
        f"  - name: {GROUP}",
        "    rules:",
    ]
    for kind, alert in ALERTS.items():
        mode = explain_stall(kind, None)
        lines += [f"      - alert: {alert}", "        expr: |"]
        lines += [f"          {ln}" for ln in expr(kind, threshold_s, scrape_interval_s, match).splitlines()]
        lines += [
            f"        for: {for_}",
            "        labels:",
            "          severity: critical",
            f"          failure_mode: {_q(mode.id)}",
            f"          stall_kind: {_q(kind)}",
            "        annotations:",
            f"          summary: {_q(mode.title + ' on {{ $labels.instance }} (engine {{ $labels.engine }})')}",
            f"          description: {_q(mode.evidence.get('fleet', '') + '. ' + mode.mechanism)}",
            f"          now: {_q(mode.now)}",
            f"          fix: {_q(mode.fix())}",
            f"          refs: {_q(', '.join(mode.refs))}",
        ]
    rec = POOLING_LIVELOCK_CLIENT_TIMEOUTS
    summary = (rec.title + " on {{ $labels.instance }} (engine {{ $labels.engine }}): "
               f"{MIN_RECURRING} or more livelock episodes ended within {recurrence_window}")
    lines += [f"      - record: {STATE_RECORD}", "        expr: |"]
    lines += [f"          {ln}" for ln in state_expr(threshold_s, scrape_interval_s, match).splitlines()]
    lines += [f"      - alert: {RECURRING_ALERT}", "        expr: |"]
    lines += [f"          {ln}" for ln in recurring_expr(recurrence_window).splitlines()]
    lines += [
        "        labels:",
        "          severity: critical",
        f"          failure_mode: {_q(rec.id)}",
        f"          stall_kind: {_q(LIVELOCK)}",
        "        annotations:",
        f"          summary: {_q(summary)}",
        f"          description: {_q(rec.evidence.get('fleet', '') + '. ' + rec.mechanism)}",
        f"          now: {_q(rec.now)}",
        f"          fix: {_q(rec.fix())}",
        f"          refs: {_q(', '.join(rec.refs))}",
    ]
    return "\n".join(lines) + "\n"


PROMETHEUS_RULE_NAME = "vllm-triage-stall"


def prometheus_rule_yaml(*args: Any, name: str = PROMETHEUS_RULE_NAME, namespace: str | None = None,
                         **kwargs: Any) -> str:
    """The same rules file as a prometheus-operator ``PrometheusRule`` (monitoring.coreos.com/v1): its groups
    under ``spec``, line for line what ``rules_yaml`` writes (same arguments), so the two never drift apart."""
    head, body = [], []
    for ln in rules_yaml(*args, **kwargs).splitlines():
        (head if ln.startswith("#") and not body else body).append(ln)
    meta = [f"  name: {name}"] + ([f"  namespace: {namespace}"] if namespace else [])
    lines = [*head, "apiVersion: monitoring.coreos.com/v1", "kind: PrometheusRule", "metadata:", *meta,
             "  labels:", f"    app.kubernetes.io/name: {GROUP}", "spec:", *(f"  {ln}" for ln in body)]
    return "\n".join(lines) + "\n"
