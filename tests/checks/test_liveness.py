"""checks/liveness.py: an httpGet /health liveness probe on a release that can livelock (issue 31, Deliver 2).

The probe comes from the deployment file (tests/fixtures/deploy/seed-deployment.yaml) as a fact; the versions from
the pooling-livelock record; the wording and fix from the liveness-probe-blind record."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml

from checks import liveness
from triage.catalogue import POOLING_LIVELOCK
from triage.catalogue.kubernetes import HOLD_S, LIVENESS_BLIND, exec_probe, probe_script
from triage.config import merge
from triage.checklist import run_checklist
from triage.fleet.rules import rules_yaml
from triage.sources import Fact, SourceResult
from triage.target import Target

SEED = Path(__file__).resolve().parents[1] / "fixtures" / "deploy" / "seed-deployment.yaml"
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "0.31.0-tiny-qwen3-livelock"
HEALTH = {"httpGet": {"path": "/health", "port": 8000}, "initialDelaySeconds": 60, "periodSeconds": 10}


def cfg(probe: Any, version: str | None, **more: Any) -> Any:
    res = SourceResult("cmdline")
    for k, v in {"liveness_probe": probe, "vllm_version": version, **more}.items():
        if v is not None:
            res.facts[k] = Fact(k, v, "cmdline", "test")
    return merge([res])


@pytest.mark.parametrize("probe,version,want", [
    pytest.param(HEALTH, "0.28.0", ["warn"], id="health-on-affected"),
    pytest.param({"httpGet": {"path": "/health/", "port": 8000}}, "0.31.0", ["warn"], id="trailing-slash"),
    pytest.param(HEALTH, "0.32.0", ["pass"], id="health-on-fixed"),
    pytest.param(HEALTH, None, ["unknown"], id="release-unknown"),
    pytest.param({"httpGet": {"path": "/v1/models", "port": 8000}}, "0.28.0", [], id="another-path"),
    pytest.param({"tcpSocket": {"port": 8000}}, "0.28.0", [], id="tcp"),
    pytest.param(exec_probe({})["livenessProbe"], "0.28.0", [], id="the-fix-itself"),
    pytest.param(None, "0.28.0", [], id="no-probe"),
])
def test_table(probe: Any, version: str | None, want: list[str]) -> None:
    assert [f.status.value for f in liveness.check(cfg(probe, version))] == want


def test_seed_manifest_probe_is_blind() -> None:
    res = run_checklist(Target(cmdline=SEED.read_text(), cmdline_file="deploy.yaml", truncation="2048"))
    f = next(x for x in res.findings if x.check == liveness.CHECK_ID)
    assert f.status.value == "warn" and f.failure_mode == LIVENESS_BLIND.id
    assert f.refs == list(LIVENESS_BLIND.refs) and f.fix == LIVENESS_BLIND.fix(res.config)
    assert POOLING_LIVELOCK.version_note("0.28.0") == f.evidence["livelock"]
    assert "deploy.yaml, document 2" in f.evidence["liveness_probe"]["detail"]  # where the probe sits
    # the probe that can see the hang, as YAML to paste: it loads, and runs the held-request test on /metrics
    probe = yaml.safe_load(f.evidence["yaml_to_copy"]["livenessProbe: paste under the vLLM container"])["livenessProbe"]
    cmd = probe["exec"]["command"]
    assert cmd[:2] == ["python3", "-c"]
    ast.parse(cmd[2])
    assert "127.0.0.1:8000/metrics" in cmd[2] and "vllm:num_requests_running" in cmd[2]
    assert probe["timeoutSeconds"] > HOLD_S and probe["initialDelaySeconds"] == 60  # kept from the user's probe
    # the alert beside it: today's rules file, as the operator's CRD
    rule = yaml.safe_load(f.evidence["yaml_to_copy"]["PrometheusRule: kubectl apply -f -"])
    assert rule["kind"] == "PrometheusRule" and rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["spec"] == yaml.safe_load(rules_yaml())


class _Page:
    def __init__(self, path: Path) -> None:
        self.body = path.read_bytes()

    def read(self) -> bytes:
        return self.body


@pytest.mark.parametrize("first,second,held", [
    pytest.param("metrics-livelock-3s.txt", "metrics-livelock-9s.txt", True, id="livelocked-0.31.0"),
    pytest.param("metrics-after-abort.txt", "metrics-after-abort.txt", False, id="after-the-abort"),
    pytest.param("metrics-idle.txt", "metrics-after-requests.txt", False, id="idle-then-served"),
])
def test_probe_script_on_recorded_pages(monkeypatch: pytest.MonkeyPatch, first: str, second: str,
                                        held: bool) -> None:
    """The probe's own script on two /metrics pages of a real 0.31.0 (tests/fixtures/real/0.31.0-tiny-qwen3-livelock):
    the network replaced by the recorded pages, the wait by nothing (a test double: the live run is
    tests/catalogue/test_liveness_probe_live.py)."""
    import time
    import urllib.request

    pages = iter([REAL / first, REAL / second])
    seen: list[str] = []
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout: seen.append(url) or _Page(next(pages)))
    monkeypatch.setattr(time, "sleep", lambda s: seen.append(f"sleep {s}"))
    with pytest.raises(SystemExit) as out:
        exec(probe_script(8000), {})  # noqa: S102 - the probe's own text, as the container runs it
    assert seen == ["http://127.0.0.1:8000/metrics", f"sleep {HOLD_S}", "http://127.0.0.1:8000/metrics"]
    assert (out.value.code not in (0, None)) is held
    if held:
        assert "a request is held: running 1" in str(out.value.code)


def test_record_sentences_are_its_own() -> None:
    """One record per failure mode: none of the livelock record's sentences is copied here."""
    mine = " ".join([LIVENESS_BLIND.title, LIVENESS_BLIND.mechanism, LIVENESS_BLIND.fix({}), LIVENESS_BLIND.now])
    for sentence in POOLING_LIVELOCK.mechanism.split(". ") + [POOLING_LIVELOCK.now, POOLING_LIVELOCK.title]:
        assert sentence.strip(". ") not in mine
