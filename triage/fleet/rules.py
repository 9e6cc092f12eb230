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

from typing import Any

import yaml

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


class _RulesDumper(yaml.SafeDumper):
    """Safe dumping, a multi-line string (a PromQL expression) as a literal block: the file reads as it runs."""


_RulesDumper.add_representer(str, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v,
                                                                  style="|" if "\n" in v else None))


def dump(data: Any) -> str:
    """``data`` as YAML by the safe serializer (never by joining text): no value can add a key or a rule."""
    return yaml.dump(data, Dumper=_RulesDumper, sort_keys=False, default_flow_style=False, width=1 << 16,
                     allow_unicode=False)


def _annotations(mode: Any, summary: str) -> dict[str, str]:
    return {"summary": summary, "description": mode.evidence.get("fleet", "") + ". " + mode.mechanism,
            "now": mode.now, "fix": mode.fix(), "refs": ", ".join(mode.refs)}


def groups(threshold_s: float = DEFAULT_STALL_S, scrape_interval_s: float = 15.0, match: str = "",
           for_: str = "0s", recurrence_window: str = RECURRENCE_WINDOW) -> dict[str, Any]:
    """The rules as data: one group, one alert per stall kind, labelled with the catalogue mode's id; the livelock
    state as a recorded series and the alert on its recurrence."""
    rules: list[dict[str, Any]] = []
    for kind, alert in ALERTS.items():
        mode = explain_stall(kind, None)
        rules.append({"alert": alert, "expr": expr(kind, threshold_s, scrape_interval_s, match) + "\n",
                      "for": for_, "labels": {"severity": "critical", "failure_mode": mode.id, "stall_kind": kind},
                      "annotations": _annotations(mode, mode.title + " on {{ $labels.instance }} (engine "
                                                  "{{ $labels.engine }})")})
    rec = POOLING_LIVELOCK_CLIENT_TIMEOUTS
    summary = (rec.title + " on {{ $labels.instance }} (engine {{ $labels.engine }}): "
               f"{MIN_RECURRING} or more livelock episodes ended within {recurrence_window}")
    rules.append({"record": STATE_RECORD, "expr": state_expr(threshold_s, scrape_interval_s, match) + "\n"})
    rules.append({"alert": RECURRING_ALERT, "expr": recurring_expr(recurrence_window) + "\n",
                  "labels": {"severity": "critical", "failure_mode": rec.id, "stall_kind": LIVELOCK},
                  "annotations": _annotations(rec, summary)})
    return {"groups": [{"name": GROUP, "rules": rules}]}


def _head(threshold_s: float, scrape_interval_s: float) -> str:
    """The comment lines on top: numbers only (floats), never a value the user typed."""
    return ("# Generated by `python -m triage fleet rules`: the stall rule of vllm-triage (triage/stall.py) "
            "in PromQL.\n"
            f"# Stall threshold {float(threshold_s):g} s, scrape interval {float(scrape_interval_s):g} s, "
            f"window {window_s(threshold_s, scrape_interval_s):g} s.\n")


def rules_yaml(threshold_s: float = DEFAULT_STALL_S, scrape_interval_s: float = 15.0, match: str = "",
               for_: str = "0s", recurrence_window: str = RECURRENCE_WINDOW) -> str:
    """The rules file (``groups``), written by the YAML serializer."""
    return _head(threshold_s, scrape_interval_s) + dump(groups(threshold_s, scrape_interval_s, match, for_,
                                                               recurrence_window))


PROMETHEUS_RULE_NAME = "vllm-triage-stall"


def prometheus_rule_yaml(threshold_s: float = DEFAULT_STALL_S, scrape_interval_s: float = 15.0, match: str = "",
                         for_: str = "0s", recurrence_window: str = RECURRENCE_WINDOW, *,
                         name: str = PROMETHEUS_RULE_NAME, namespace: str | None = None) -> str:
    """The same rules as a prometheus-operator ``PrometheusRule`` (monitoring.coreos.com/v1): ``groups`` under
    ``spec`` (same arguments), so the two never drift apart; the name and namespace are serialized values."""
    meta: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace else {}),
                            "labels": {"app.kubernetes.io/name": GROUP}}
    doc = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": meta,
           "spec": groups(threshold_s, scrape_interval_s, match, for_, recurrence_window)}
    return _head(threshold_s, scrape_interval_s) + dump(doc)
