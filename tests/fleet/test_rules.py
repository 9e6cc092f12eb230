"""The generated alerting rules: valid under `promtool check rules`, and evaluated by Prometheus'
own rule engine (`promtool test rules`) on series shaped like the recorded lab pages: a replica
hung by #55427, a busy healthy one, one stuck waiting."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from triage.catalogue import explain_stall
from triage.cli import main
from triage.fleet.rules import ALERTS, RECURRING_ALERT, rules_yaml, window_s
from triage.stall import DEFAULT_STALL_S, LIVELOCK, STUCK_WAITING
from triage.vllm.metrics import KV_CACHE_USAGE, PREFIX_CACHE_QUERIES, PROMPT_TOKENS, REQUEST_SUCCESS, RUNNING, WAITING

pytestmark = pytest.mark.skipif(not shutil.which("promtool"), reason="promtool not installed (apt: prometheus)")


def _write_rules(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "vllm-triage.rules.yml"
    assert main(["fleet", "rules", "-o", str(out), *args]) == 0
    return out


def test_promtool_check_rules(tmp_path: Path) -> None:
    for args in ([], ["--match", '{job="vllm"}', "--scrape-interval", "30s", "--stall-seconds", "60",
                      "--recurrence-window", "30m"]):
        f = _write_rules(tmp_path, *args)
        p = subprocess.run(["promtool", "check", "rules", str(f)], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "SUCCESS: 4 rules found" in p.stdout
        assert ("[1800s]" if args else "[10m]") in f.read_text()  # the recurrence window


def test_window_holds_the_threshold_and_two_scrapes() -> None:
    assert window_s(DEFAULT_STALL_S, 15) == DEFAULT_STALL_S + 15 - 0.001
    assert f"[{int((DEFAULT_STALL_S + 15) * 1000) - 1}ms]" in rules_yaml(DEFAULT_STALL_S, 15)


def _series(instance: str, running: str, waiting: str, tokens: str, kv: str, queries: str) -> list[dict[str, str]]:
    lab = f'job="vllm",instance="{instance}",engine="0",model_name="m"'
    return [
        {"series": f"{RUNNING}{{{lab}}}", "values": running},
        {"series": f"{WAITING}{{{lab}}}", "values": waiting},
        {"series": f"{PROMPT_TOKENS}_total{{{lab}}}", "values": tokens},
        {"series": f'{REQUEST_SUCCESS}_total{{{lab},finished_reason="stop"}}', "values": tokens},
        {"series": f"{KV_CACHE_USAGE}{{{lab}}}", "values": kv},
        {"series": f"{PREFIX_CACHE_QUERIES}_total{{{lab}}}", "values": queries},
    ]


def _alert(kind: str, instance: str) -> dict[str, object]:
    mode = explain_stall(kind, None)
    return {"exp_labels": {"alertname": ALERTS[kind], "severity": "critical", "failure_mode": mode.id,
                           "stall_kind": kind, "job": "vllm", "instance": instance, "engine": "0"},
            "exp_annotations": {
                "summary": f"{mode.title} on {instance} (engine 0)",
                "description": mode.evidence.get("fleet", "") + ". " + mode.mechanism,
                "now": mode.now, "fix": mode.fix(), "refs": ", ".join(mode.refs)}}


def _recorded(version: str) -> list:
    from triage.sample import PROMETHEUS
    from triage.vllm.metrics import parse_metrics

    d = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "client-timeouts" / f"{version}-tiny-qwen3-livelock"
    rows = [json.loads(ln) for ln in (d / "metrics.jsonl").read_text().splitlines()][::2]
    return [next(iter(parse_metrics(r["page"], r["t"]).engines.values())).with_(source=PROMETHEUS) for r in rows]


def _promtool_series(samples: list) -> list:
    """The recorded samples as promtool input series of one replica (2 s slots)."""
    def vals(field: str) -> str:
        return " ".join(f"{getattr(s, field) or 0:g}" for s in samples)

    return _series("replica:8000", vals("num_requests_running"), vals("num_requests_waiting"),
                   vals("prompt_tokens_total"), vals("kv_cache_usage_perc"), vals("prefix_cache_queries_total"))


def test_rules_fire_for_the_stalled_replicas_only(tmp_path: Path) -> None:
    rules = _write_rules(tmp_path, "--scrape-interval", "2s")
    # 2 s scrapes: 3 idle samples, then 20 stalled ones (values as the recorded 0.31.0 / BERT pages show them)
    series = (_series("hung:8000", "0 0 0 1x20", "0x23", "36x23", "0 0 0 0.00195x20", "36 36 36 292x20")
              + _series("busy:8000", "1x23", "0 1 0 2 0 1 0x17", "0+100x23", "0.1+0.001x23", "0+100x23")
              + _series("waiting:8000", "0x23", "0 0 0 1x20", "27x23", "0x23", "27x23")
              # issue 21: held beside traffic (the recorded 0.31.0 client-timeouts pages): counters move, KV held
              + _series("beside:8000", "0 0 0 1x20", "0x23", "0+27x23", "0 0 0 0.00196x20", "0+27x23"))
    test = {"rule_files": [str(rules)], "evaluation_interval": "2s",
            "tests": [{"interval": "2s", "input_series": series, "alert_rule_test": [
                {"eval_time": "40s", "alertname": ALERTS[LIVELOCK],
                 "exp_alerts": [_alert(LIVELOCK, "hung:8000"), _alert(LIVELOCK, "beside:8000")]},
                {"eval_time": "40s", "alertname": ALERTS[STUCK_WAITING],
                 "exp_alerts": [_alert(STUCK_WAITING, "waiting:8000")]},
                {"eval_time": "4s", "alertname": ALERTS[LIVELOCK], "exp_alerts": []},  # before the stall
            ]}]}
    tf = tmp_path / "test.yml"
    tf.write_text(json.dumps(test))
    p = subprocess.run(["promtool", "test", "rules", str(tf)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


def test_rules_and_scan_agree_on_the_recorded_client_timeouts(tmp_path: Path) -> None:
    """Issue 21: the recorded 0.31.0 traffic (tests/fixtures/real/client-timeouts: SDK time-outs and retries beside
    normal traffic) as 2 s scrapes. At the last sample of every episode the scan finds, the generated alert fires;
    in the middle of every gap of 8 s or more between them it does not."""
    from triage.fleet.replicas import episodes

    samples = _recorded("0.31.0")
    eps = episodes(samples, DEFAULT_STALL_S)
    assert len(eps) >= 8
    t0 = samples[0].ts
    series = _promtool_series(samples)
    at = lambda ts: f"{round((ts - t0) / 2) * 2}s"  # noqa: E731 - the sample's slot on promtool's 2 s grid
    checks = [{"eval_time": at(e.end), "alertname": ALERTS[LIVELOCK],
               "exp_alerts": [_alert(LIVELOCK, "replica:8000")]} for e in eps]
    checks += [{"eval_time": at((a.end + b.start) / 2), "alertname": ALERTS[LIVELOCK], "exp_alerts": []}
               for a, b in zip(eps, eps[1:], strict=False) if b.start - a.end >= 8]
    rules = _write_rules(tmp_path, "--scrape-interval", "2s")
    tf = tmp_path / "test.yml"
    tf.write_text(json.dumps({"rule_files": [str(rules)], "evaluation_interval": "2s",
                              "tests": [{"interval": "2s", "input_series": series, "alert_rule_test": checks}]}))
    p = subprocess.run(["promtool", "test", "rules", str(tf)], capture_output=True, text=True, timeout=60)
    # +-1 for edges (a sample's slot on promtool's grid is rounded from its real time)
    failed = re.findall(r"alertname: \S+, time: (\S+),", p.stdout + p.stderr)
    assert len(failed) <= 1 and (p.returncode == 0 or failed), p.stdout[-3000:] + p.stderr[-2000:]


def _recurring_alert(instance: str, window: str = "10m") -> dict[str, object]:
    from triage.catalogue import POOLING_LIVELOCK_CLIENT_TIMEOUTS as rec
    from triage.recurrence import MIN_RECURRING

    return {"exp_labels": {"alertname": RECURRING_ALERT, "severity": "critical", "failure_mode": rec.id,
                           "stall_kind": LIVELOCK, "job": "vllm", "instance": instance, "engine": "0"},
            "exp_annotations": {
                "summary": f"{rec.title} on {instance} (engine 0): {MIN_RECURRING} or more livelock episodes ended "
                           f"within {window}",
                "description": rec.evidence.get("fleet", "") + ". " + rec.mechanism,
                "now": rec.now, "fix": rec.fix(), "refs": ", ".join(rec.refs)}}


@pytest.mark.parametrize("version", ["0.31.0", "0.32.0"])
def test_the_recurrence_alert_on_the_recorded_client_timeouts(tmp_path: Path, version: str) -> None:
    """Issue 21: the recurring-livelock alert (a recorded 0/1 livelock series, two ended episodes in 10 min) on the
    recorded traffic at 2 s scrapes. 0.31.0: silent while the second episode the scan finds is still going, firing
    from the start of the third on, named by the "#55427 with client time-outs" record; 0.32.0: never."""
    from triage.fleet.replicas import episodes

    samples = _recorded(version)
    eps = episodes(samples, DEFAULT_STALL_S)
    t0 = samples[0].ts
    series = _promtool_series(samples)
    at = lambda ts: f"{round((ts - t0) / 2) * 2}s"  # noqa: E731 - the sample's slot on promtool's 2 s grid
    if version == "0.31.0":
        assert len(eps) >= 4
        checks = [{"eval_time": at(eps[0].end + 1), "alertname": RECURRING_ALERT, "exp_alerts": []},
                  {"eval_time": at(eps[1].start + 1), "alertname": RECURRING_ALERT, "exp_alerts": []}]
        checks += [{"eval_time": at(e.start), "alertname": RECURRING_ALERT,
                    "exp_alerts": [_recurring_alert("replica:8000")]} for e in eps[2:]]
    else:
        assert not eps
        checks = [{"eval_time": f"{t}s", "alertname": RECURRING_ALERT, "exp_alerts": []}
                  for t in range(0, int(samples[-1].ts - t0), 20)]
    rules = _write_rules(tmp_path, "--scrape-interval", "2s")
    tf = tmp_path / "test.yml"
    tf.write_text(json.dumps({"rule_files": [str(rules)], "evaluation_interval": "2s",
                              "tests": [{"interval": "2s", "input_series": series, "alert_rule_test": checks}]}))
    p = subprocess.run(["promtool", "test", "rules", str(tf)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]


def test_prometheus_rule_is_the_rules_file(tmp_path: Path) -> None:
    """`fleet rules --prometheus-rule`: prometheus-operator's CRD whose spec is the rules file, line for line, and
    passes promtool as the plain file does (issue 31: the alert beside a liveness probe that cannot see the hang)."""
    import yaml

    out = tmp_path / "rule.yaml"
    assert main(["fleet", "rules", "--prometheus-rule", "--namespace", "monitoring", "-o", str(out)]) == 0
    doc = yaml.safe_load(out.read_text())
    assert (doc["apiVersion"], doc["kind"], doc["metadata"]["namespace"]) == (
        "monitoring.coreos.com/v1", "PrometheusRule", "monitoring")
    assert doc["spec"] == yaml.safe_load(rules_yaml())
    spec = tmp_path / "spec.yml"
    spec.write_text(yaml.safe_dump(doc["spec"]))
    p = subprocess.run(["promtool", "check", "rules", str(spec)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "SUCCESS: 4 rules found" in p.stdout, p.stdout + p.stderr
