"""Failure modes of the Kubernetes side of a deployment (issue 31): a liveness probe that cannot see a hang.

Facts: shared/reference/vllm-embedding-facts.md (section 3: ``GET /health`` answers 200 while the engine is
livelocked; the closing notes: an ``httpGet /health`` liveness probe keeps passing through #55427), the
Kubernetes probe documentation (tasks/configure-pod-container/configure-liveness-readiness-startup-probes:
``exec`` probes, ``timeoutSeconds``, ``failureThreshold``) and prometheus-operator's ``PrometheusRule`` CRD
(monitoring.coreos.com/v1). Which releases can livelock is the pooling-livelock record's range (read there,
never copied); the probe that can see the hang and the alert are this record's fix.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from triage.catalogue.model import ConfigLike, FailureMode, modes_of

PROBE_TIMEOUT_S = 5  # the tiny request's own time-out inside the probe
PROBE_DOCS = "kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/"
RULE_COMMAND = "python -m triage fleet rules --prometheus-rule"


def _probe_port(probe: Any) -> Any:
    port = probe.get("httpGet", {}).get("port") if isinstance(probe, dict) else None
    return port if isinstance(port, int) else 8000  # a named port cannot be dialled from inside: vLLM's default


def exec_probe(cfg: ConfigLike) -> dict[str, Any]:
    """A liveness probe that sends one tiny embedding with a time-out: a queue held by a stuck request fails it.

    python3, not curl: every vLLM image runs Python, none promises curl (a probe whose binary is missing fails
    every time and restarts a healthy pod). The API key, when the server wants one, is read from the container's
    own ``VLLM_API_KEY`` at probe time, never written into the manifest."""
    old = cfg.get("liveness_probe") if isinstance(cfg.get("liveness_probe"), dict) else {}
    model = cfg.get("served_model_name") or cfg.get("model") or "MODEL"
    url = f"http://127.0.0.1:{_probe_port(old)}/v1/embeddings"
    # double quotes only: the YAML dump then needs no escaping, and the line reads as it runs
    script = (
        'import json, os, urllib.request as u; k = os.environ.get("VLLM_API_KEY"); '
        'h = {"Content-Type": "application/json"} | ({"Authorization": "Bearer " + k} if k else {}); '
        f'u.urlopen(u.Request("{url}", json.dumps({{"model": {json.dumps(str(model))}, "input": "ping"}}).encode(), '
        f"h), timeout={PROBE_TIMEOUT_S})"
    )
    probe: dict[str, Any] = {"exec": {"command": ["python3", "-c", script]}}
    for key in ("initialDelaySeconds",):
        if isinstance(old.get(key), int):
            probe[key] = old[key]
    probe.update({"periodSeconds": 15, "timeoutSeconds": PROBE_TIMEOUT_S * 2, "failureThreshold": 3})
    return {"livenessProbe": probe}


def exec_probe_yaml(cfg: ConfigLike) -> str:
    """The probe as YAML to paste under the vLLM container (safe_dump: it loads back as written)."""
    return yaml.safe_dump(exec_probe(cfg), sort_keys=False, width=1 << 16)


def _liveness_fix(cfg: ConfigLike) -> str:
    return (
        "Replace the httpGet /health liveness probe with an exec probe that sends one tiny embedding with a "
        f"{PROBE_TIMEOUT_S} s time-out (the livenessProbe YAML below, under the vLLM container): a request queued "
        "behind a stuck one times out, the probe fails and the kubelet restarts the pod. Keep /health for "
        "readiness. Pick the time-out above your longest healthy step under load, or the probe restarts a busy "
        f"pod. And alert on the hang itself: the stall rule as a PrometheusRule (`{RULE_COMMAND}`, the same rules "
        "as `fleet rules`), which also sees hangs a restart would hide. The lasting fix is the livelock's own."
    )


LIVENESS_BLIND = FailureMode(
    id="liveness-probe-blind",
    title="The liveness probe asks /health, which cannot tell a hung engine from a working one",
    mechanism=(
        "vLLM's /health says the API server and its engine process are up, not that requests complete: while a "
        "pooling request livelocks the scheduler the endpoint keeps returning 200, so an httpGet /health "
        "liveness probe passes, the kubelet never restarts the container and every embedding request waits. "
        "Only a probe that asks for real work (one tiny embedding with a time-out) or an alert on engine "
        "progress sees it."
    ),
    refs=("vllm#55427", PROBE_DOCS, "prometheus-operator PrometheusRule (monitoring.coreos.com/v1)"),
    evidence={
        "checklist": "a livenessProbe with httpGet path /health on the vLLM container (a manifest, Helm values, "
        "`kubectl get pod -o yaml`) of a release that can livelock",
        "kube": "a pod with restartCount 0 and Ready while its clients time out; `kubectl describe pod` shows no "
        "Unhealthy events during the hang",
    },
    now="restart the pod yourself (kubectl delete pod NAME): its probe never will.",
    fix_for=_liveness_fix,
)

KUBERNETES_MODES = modes_of(globals())
