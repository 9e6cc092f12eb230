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
from triage.catalogue.kubernetes import LIVENESS_BLIND, exec_probe, exec_probe_yaml
from triage.config import merge
from triage.engine import run_checklist
from triage.fleet.rules import rules_yaml
from triage.sources import Fact, SourceResult
from triage.target import Target

SEED = Path(__file__).resolve().parents[1] / "fixtures" / "deploy" / "seed-deployment.yaml"
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
    # the probe that can see the hang, as YAML to paste: it loads, runs python's own HTTP client with a time-out
    probe = yaml.safe_load(f.evidence["exec_probe"])["livenessProbe"]
    cmd = probe["exec"]["command"]
    assert cmd[:2] == ["python3", "-c"]
    ast.parse(cmd[2])
    assert "/v1/embeddings" in cmd[2] and "timeout=5" in cmd[2] and "Qwen/Qwen3-Embedding-0.6B" in cmd[2]
    assert probe["timeoutSeconds"] > 5 and probe["initialDelaySeconds"] == 60  # kept from the user's probe
    # the alert beside it: today's rules file, as the operator's CRD
    rule = yaml.safe_load(f.evidence["prometheus_rule"])
    assert rule["kind"] == "PrometheusRule" and rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["spec"] == yaml.safe_load(rules_yaml())


def test_probe_sends_the_key_from_the_container_env_never_the_manifest() -> None:
    text = exec_probe_yaml({"model": "m", "api_key_required": True})
    assert "VLLM_API_KEY" in text and "Bearer" in text


def test_record_sentences_are_its_own() -> None:
    """One record per failure mode: none of the livelock record's sentences is copied here."""
    mine = " ".join([LIVENESS_BLIND.title, LIVENESS_BLIND.mechanism, LIVENESS_BLIND.fix({}), LIVENESS_BLIND.now])
    for sentence in POOLING_LIVELOCK.mechanism.split(". ") + [POOLING_LIVELOCK.now, POOLING_LIVELOCK.title]:
        assert sentence.strip(". ") not in mine
