"""Helpers for the probes' unit tests: recorded real responses (tests/fixtures/real/) as Reply values."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.http import Reply
from triage.probes.runner import ProbeOutcome
from triage.sample import EngineSample
from triage.vllm.metrics import MetricsPage, parse_metrics

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
VECTORS = REAL / "vectors"  # recordings of the vectors and clients probe sets (README there)
DIRS = ["0.31.0-tiny-qwen3-livelock", "0.32.0-tiny-qwen3-livelock", "0.32.0-minilm-bert-waiting"]


def reply(server: str, name: str) -> Reply:
    """A recorded reply (method, path, status, request, body) from tests/fixtures/real/<server>/<name>.json."""
    d = json.loads((REAL / server / f"{name}.json").read_text())
    return Reply(method=d["method"], path=d["path"], request=d.get("request"), status=d["status"],
                 body=d.get("body", d.get("body_text")))


def recording(p: Path) -> dict:
    """A vectors/clients recording (a JSON file under VECTORS); the test is skipped when it is missing."""
    if not p.exists():
        pytest.skip(f"no recording {p}")
    return json.loads(p.read_text())


def reply_of(d: dict) -> Reply:
    """A reply as the vectors/clients recordings store it (``Reply.to_dict``'s fields, positionally)."""
    return Reply(d["method"], d["path"], d["request"], d["status"], d["body"], d["error"], d["elapsed_s"])


def page(server: str, name: str) -> MetricsPage:
    return parse_metrics((REAL / server / f"{name}.txt").read_text())


def probe_record(name: str) -> dict:
    """A probe outcome recorded by tests/fixtures/real/probes/capture_probes.py."""
    return json.loads((REAL / "probes" / f"{name}.json").read_text())


def outcome_from_record(d: dict) -> ProbeOutcome:
    """Rebuild a ProbeOutcome from a recorded to_dict() (exchanges are not recorded)."""
    det = dict(d["detail"])
    return ProbeOutcome(probe=d["probe"], set=d["set"], outcome=d["outcome"], description=d["description"],
                        duration_s=d["duration_s"], time_to_verdict_s=d["time_to_verdict_s"],
                        http_status=d["http_status"], request=det.pop("request"), response=det.pop("response"),
                        samples=[EngineSample.from_dict(r) for r in det.pop("samples")], recovery=det.pop("recovery"),
                        extra=det)
