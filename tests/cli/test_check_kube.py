"""``check --kube-file F`` (repeatable): kubectl's describe / get -o yaml / logs of the pod as evidence (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from triage.cli import main

FIX = Path(__file__).resolve().parents[1] / "fixtures"
KUBE = FIX / "kube"
TASK_EMBED_LOG = FIX / "real" / "startup" / "0.31.0-task-embed" / "server.log"


def run(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["check", "--format", "json", "--db", str(tmp_path / "t.db"), *args])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip().startswith("{") else {}


def by(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["check"]: f for f in doc["findings"]}


def test_crashloop_describe_and_previous_log(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, doc = run(capsys, tmp_path, "--kube-file", str(KUBE / "describe-crashloop.txt"),
                    "--kube-file", str(TASK_EMBED_LOG), "--no-embed")
    f = by(doc)["kube-crashloop"]
    assert code == 1 and f["status"] == "fail" and f["failure_mode"] == "removed-flag" and "--task" in f["title"]
    assert doc["target"]["kube_files"] == [str(KUBE / "describe-crashloop.txt"), str(TASK_EMBED_LOG)]
    assert doc["config"]["vllm_version"]["source"] in ("kube", "log")


def test_pod_yaml_alone_is_also_the_command_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, doc = run(capsys, tmp_path, "--kube-file", str(KUBE / "pod-oomkilled.yaml"), "--truncate", "2048")
    found = by(doc)
    assert found["kube-oomkilled"]["status"] == "fail" and found["kube-oomkilled"]["failure_mode"] == "oom"
    assert found["kube-liveness-blind"]["status"] == "warn"
    # the pod's spec read as the deployment: the seed's server, the livelock FAIL with the runner read as pooling
    assert found["pooling-livelock-risk"]["status"] == "fail"
    assert doc["config"]["runner"]["value"] == "pooling" and doc["config"]["runner"]["source"] == "cmdline"


def test_unreadable_kube_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["check", "--db", str(tmp_path / "t.db"), "--kube-file", str(tmp_path / "missing.txt")]) == 2
    assert "cannot read input" in capsys.readouterr().err


def test_text_output_prints_the_probe_to_paste(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    seed = str(FIX / "deploy" / "seed-deployment.yaml")
    code = main(["check", "--db", str(tmp_path / "t.db"), "--cmdline-file", seed, "--truncate", "2048"])
    out = capsys.readouterr().out
    assert code == 1 and "[WARN] kube-liveness-blind" in out
    assert "         livenessProbe:" in out and "vllm:num_requests_running" in out  # the YAML, indented under it
    assert "PrometheusRule: kubectl apply -f -:" in out and "--format json" in out  # the long one named
