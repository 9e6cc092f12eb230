"""The pod's liveness probe against the hang it should catch: an httpGet /health probe cannot see the livelock.

Reads the ``liveness_probe`` fact (a deployment file's vLLM container, or the pod of ``kubectl get pod -o yaml``)
and the release. Wording, refs and fix come from the catalogue record ``liveness-probe-blind``; which releases
can livelock from ``pooling-livelock``'s range. No probe in the evidence: no finding.
"""

from __future__ import annotations

from typing import Any

from checks._util import ev, unknown, version_of
from triage.catalogue import POOLING_LIVELOCK, fmt
from triage.catalogue.kubernetes import LIVENESS_BLIND, RULE_COMMAND, exec_probe_yaml
from triage.config import EffectiveConfig
from triage.findings import Finding, Status

CHECK_ID = "kube-liveness-blind"
BLIND_PATHS = ("/health",)  # answers 200 through the livelock (facts file, section 3)


def http_path(probe: Any) -> str | None:
    """The path an httpGet probe asks, normalised ('/health/' -> '/health'); None for exec/tcp/grpc probes."""
    get = probe.get("httpGet") if isinstance(probe, dict) else None
    if not isinstance(get, dict):
        return None
    path = str(get.get("path") or "/")
    return path.rstrip("/") or "/"


def check(cfg: EffectiveConfig) -> list[Finding]:
    probe = cfg.get("liveness_probe")
    path = http_path(probe)
    if path not in BLIND_PATHS:
        return []
    from triage.fleet.rules import prometheus_rule_yaml  # the rules `fleet rules` writes, as the operator's CRD

    evidence = {**ev(cfg, "liveness_probe", "vllm_version"), "probe_path": path,
                "prometheus_rule_command": RULE_COMMAND,
                # shown as code blocks by the faces (the finding card, the CLI's text): titles are what to do with it
                "yaml_to_copy": {"livenessProbe: paste under the vLLM container": exec_probe_yaml(cfg),
                                 "PrometheusRule: kubectl apply -f -": prometheus_rule_yaml()}}
    v = version_of(cfg)
    status = POOLING_LIVELOCK.version_status(v)
    bug = POOLING_LIVELOCK.refs[0]
    if status == "unknown":
        return [unknown(CHECK_ID, f"Liveness probe httpGet {path}: blind to the {bug} hang on an affected "
                        "release; the release is unknown", evidence, "vllm_version", LIVENESS_BLIND.fix(cfg))]
    if status != "affected":
        return [Finding(CHECK_ID, Status.PASS,
                        f"Liveness probe httpGet {path} on vLLM {fmt(v)}: this release has no {bug} livelock",
                        {**evidence, "livelock": POOLING_LIVELOCK.version_note(v)},
                        explanation=LIVENESS_BLIND.mechanism)]
    return [Finding.of(LIVENESS_BLIND, CHECK_ID, Status.WARN,
                       f"Liveness probe httpGet {path} cannot see the {bug} hang of vLLM {fmt(v)}: "
                       "the pod is never restarted while it hangs",
                       {**evidence, "livelock": POOLING_LIVELOCK.version_note(v)}, cfg=cfg)]
