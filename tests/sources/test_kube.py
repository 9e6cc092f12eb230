"""Kubernetes' view of the pod as evidence (issue 31): `kubectl describe pod`, `kubectl get pod -o yaml` and
`kubectl logs [--previous]` (tests/fixtures/kube/, README there; the previous logs are real servers' start-up logs
from tests/fixtures/real/startup/)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from triage.catalogue import OOM
from triage.catalogue.kubernetes import LIVENESS_BLIND
from triage.checklist import run_checklist
from triage.logs import analyze_log
from triage.sources import deploy, kube
from triage.target import Target

FIX = Path(__file__).resolve().parents[1] / "fixtures"
KUBE = FIX / "kube"
STARTUP = FIX / "real" / "startup"


def text(name: str) -> str:
    return (KUBE / name).read_text()


def log(case: str) -> str:
    return (STARTUP / case / "server.log").read_text()


def by_check(inputs: list[tuple[str, str]]) -> dict[str, object]:
    return {f.check: f for f in kube.collect(inputs).findings}


@pytest.mark.parametrize("name,kind", [
    pytest.param("describe-oomkilled.txt", "describe", id="describe"),
    pytest.param("describe-crashloop.txt", "describe", id="describe-crashloop"),
    pytest.param("pod-oomkilled.yaml", "yaml", id="get-pod-yaml"),
    pytest.param("../deploy/seed-deployment.yaml", "log", id="a-deployment-is-no-pod"),
    pytest.param("../real/startup/0.31.0-task-embed/server.log", "log", id="kubectl-logs"),
])
def test_kind_is_told_by_shape(name: str, kind: str) -> None:
    assert kube.kind_of(text(name)) == kind


def test_a_list_of_pods_is_yaml() -> None:
    pod = yaml.safe_load(text("pod-oomkilled.yaml"))
    listed = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [pod]})
    assert kube.kind_of(listed) == "yaml"
    assert [p.name for p in kube.read_pod_yaml(listed, "pods.yaml")] == ["qwen3-embedding-6f8d9c7b5-k2x9p"]


def test_oversized_yaml_is_not_loaded() -> None:
    big = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n" + "# pad\n" * (deploy.MAX_BYTES // 6 + 1)
    assert kube.kind_of(big) == "log"  # bounded as a deployment file is; read as text, never loaded


@pytest.mark.parametrize("name", ["describe-oomkilled.txt", "pod-oomkilled.yaml"])
def test_oomkilled_is_the_memory_record_with_the_limit(name: str) -> None:
    f = by_check([(name, text(name))])["kube-oomkilled"]
    assert f.status.value == "fail" and f.failure_mode == OOM.id
    assert "OOMKilled" in f.title and "137" in f.title and "4Gi" in f.title
    assert f.evidence["memory_limit"] == "4Gi" and f.evidence["memory_limit_bytes"] == 4 << 30
    assert f.evidence["last_exit_code"] == 137 and f.evidence["restarts"] == 2
    assert f.fix == OOM.fix({"memory_limit": "4Gi"}) and "4Gi" in f.fix
    assert f.refs == list(OOM.refs)


def test_describe_and_yaml_of_one_pod_say_it_once() -> None:
    res = kube.collect([(n, text(n)) for n in ("describe-oomkilled.txt", "pod-oomkilled.yaml")])
    assert [f.check for f in res.findings] == ["kube-oomkilled"]
    assert res.facts["memory_limit"].value == "4Gi" and "describe-oomkilled.txt, line 16" in \
        res.facts["memory_limit"].detail


def test_crashloop_without_the_previous_log_asks_for_it() -> None:
    f = by_check([("d.txt", text("describe-crashloop.txt"))])["kube-crashloop"]
    assert f.status.value == "unknown" and "CrashLoopBackOff" in f.title and "7 restarts" in f.title
    assert "--previous" in f.fix and "qwen3-embedding-5c7b8d9f6-w4m2t -c vllm" in f.fix


@pytest.mark.parametrize("case,check", [
    pytest.param("0.31.0-task-embed", "log-removed-flag", id="removed-flag"),
    pytest.param("0.31.0-max-model-len-too-big", "log-max-model-len", id="max-model-len"),
])
def test_crashloop_names_the_previous_logs_cause(case: str, check: str) -> None:
    f = by_check([("d.txt", text("describe-crashloop.txt")), ("previous.log", log(case))])["kube-crashloop"]
    cause = next(x for x in analyze_log(log(case)).findings if x.check == check)
    assert f.status.value == "fail" and f.failure_mode == cause.failure_mode
    assert cause.title in f.title and f.fix == cause.fix and f.refs == cause.refs
    assert f.evidence["cause"] == check and f.evidence["previous_log"] == "previous.log"


def test_crashloop_with_a_log_of_a_started_server_says_so() -> None:
    f = by_check([("d.txt", text("describe-crashloop.txt")),
                  ("current.log", log("0.31.0-mean-pooling-chunked"))])["kube-crashloop"]
    assert f.status.value == "unknown" and "started" in f.title and "--previous" in f.fix


def test_liveness_kill_is_the_probe_finding_not_a_crash() -> None:
    found = by_check([("d.txt", text("describe-liveness-killed.txt"))])
    assert "kube-crashloop" not in found and "kube-oomkilled" not in found
    f = found["kube-probe-failures"]
    assert f.status.value == "warn" and "liveness" in f.title and "killed" in f.title
    assert any("connection refused" in e["message"] for e in f.evidence["events"])


@pytest.mark.parametrize("line,want", [
    pytest.param("http-get http://:8000/health delay=60s timeout=1s period=10s #success=1 #failure=3",
                 {"httpGet": {"path": "/health", "port": 8000}, "initialDelaySeconds": 60, "timeoutSeconds": 1,
                  "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}, id="http"),
    pytest.param("http-get http://:http/ready delay=0s timeout=1s period=5s #success=1 #failure=3",
                 {"httpGet": {"path": "/ready", "port": "http"}, "initialDelaySeconds": 0, "timeoutSeconds": 1,
                  "periodSeconds": 5, "successThreshold": 1, "failureThreshold": 3}, id="named-port"),
    pytest.param("exec [cat /tmp/healthy] delay=5s timeout=1s period=5s #success=1 #failure=3",
                 {"exec": {"command": ["cat", "/tmp/healthy"]}, "initialDelaySeconds": 5, "timeoutSeconds": 1,
                  "periodSeconds": 5, "successThreshold": 1, "failureThreshold": 3}, id="exec"),
    pytest.param("nonsense", None, id="not-a-probe"),
])
def test_describe_probe_line(line: str, want: object) -> None:
    assert kube.describe_probe(line) == want


@pytest.mark.parametrize("q,n", [("4Gi", 4 << 30), ("512Mi", 512 << 20), ("1G", 10**9), ("1.5Gi", 3 << 29),
                                 ("lots", None), (None, None)])
def test_quantity_bytes(q: str | None, n: int | None) -> None:
    assert kube.quantity_bytes(q) == n


# -- the liveness probe against the livelock (checks/liveness.py) ----------------------------------------------


def test_describe_alone_judges_the_probe_on_the_image_release() -> None:
    res = run_checklist(Target(kube=(("d.txt", text("describe-oomkilled.txt")),)))
    by = {f.check: f for f in res.findings}
    live = by["kube-liveness-blind"]
    assert live.status.value == "warn" and live.failure_mode == LIVENESS_BLIND.id and "0.28.0" in live.title
    assert res.config["vllm_version"]["source"] == "kube" and by["kube-oomkilled"].status.value == "fail"


def test_fixed_release_probe_passes() -> None:
    res = run_checklist(Target(kube=(("d.txt", text("describe-liveness-killed.txt")),)))
    assert {f.check: f.status.value for f in res.findings}["kube-liveness-blind"] == "pass"
