"""Failure modes of the Kubernetes side of a deployment (issue 31): a liveness probe that cannot see a hang.

Facts: shared/reference/vllm-embedding-facts.md (section 3: ``GET /health`` answers 200 while the engine is
livelocked; the closing notes: an ``httpGet /health`` liveness probe keeps passing through #55427), the
Kubernetes probe documentation (tasks/configure-pod-container/configure-liveness-readiness-startup-probes:
``exec`` probes, ``timeoutSeconds``, ``failureThreshold``) and prometheus-operator's ``PrometheusRule`` CRD
(monitoring.coreos.com/v1). Which releases can livelock is the pooling-livelock record's range (read there,
never copied); the probe that can see the hang and the alert are this record's fix. Measured on a real 0.31.0
(tests/catalogue/test_liveness_probe_live.py): through the livelock /health answers 200 and a tiny embedding
returns 200 too (the facts file's "later requests queue behind it" did not hold for it), while the held-request
probe fails and passes again once the held request is aborted.
"""

from __future__ import annotations

from typing import Any

import yaml

from triage.catalogue.load import load
from triage.catalogue.model import ConfigLike

HOLD_S = 10  # the probe reads /metrics twice this far apart: above one healthy step, or a long step reads as held
PROBE_DOCS = "kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/"
RULE_COMMAND = "python -m triage fleet rules --prometheus-rule"


def _probe_port(probe: Any) -> Any:
    port = probe.get("httpGet", {}).get("port") if isinstance(probe, dict) else None
    return port if isinstance(port, int) else 8000  # a named port cannot be dialled from inside: vLLM's default


class _BlockDumper(yaml.SafeDumper):
    """Safe dumping, a multi-line string as a literal block (the probe's script reads as it runs)."""


_BlockDumper.add_representer(str, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v,
                                                                  style="|" if "\n" in v else None))


def probe_script(port: Any = 8000) -> str:
    """The held-request test of the stall rule (triage.stall.held_gauges) on two /metrics reads, stdlib only.

    Not a tiny embedding: on a real 0.31.0 (tests/catalogue/test_liveness_probe_live.py) other requests keep
    succeeding beside the livelocked one, so an embedding probe passes through the hang. What the hang does show is
    a request held in the engine: running >= 1 and the KV cache usage (> 0, its blocks) unchanged while nothing
    leaves. python3, not curl: every vLLM image runs Python, none promises curl (a probe whose binary is missing
    fails every time and restarts a healthy pod); /metrics needs no API key."""
    from triage.vllm.metrics import KV_CACHE_USAGE, OLD_NAMES, RUNNING  # noqa: PLC0415 - the names' one place

    old_kv = next(k for k, v in OLD_NAMES.items() if "vllm:" + v == KV_CACHE_USAGE)  # before 0.12

    return "\n".join([
        "import re, time, urllib.request as u",
        "def read():",
        f"    t = u.urlopen('http://127.0.0.1:{port}/metrics', timeout=5).read().decode()",
        "    v = lambda n: sum(float(x) for x in re.findall('(?m)^' + re.escape(n) + r'(?:{[^}]*})? (\\S+)$', t))",
        f"    return v('{RUNNING}'), v('{KV_CACHE_USAGE}') or v('{old_kv}')",
        "r0, k0 = read()",
        f"time.sleep({HOLD_S})",
        "r1, k1 = read()",
        "held = r0 >= 1 and r1 >= r0 and k0 > 0 and k1 == k0",
        "raise SystemExit('a request is held: running %g, KV cache usage %g unchanged' % (r1, k1) if held else 0)",
        "",
    ])


def exec_probe(cfg: ConfigLike) -> dict[str, Any]:
    """A liveness probe that fails while a request is held in the engine (what the livelock looks like)."""
    old = cfg.get("liveness_probe") if isinstance(cfg.get("liveness_probe"), dict) else {}
    probe: dict[str, Any] = {"exec": {"command": ["python3", "-c", probe_script(_probe_port(old))]}}
    if isinstance(old.get("initialDelaySeconds"), int):
        probe["initialDelaySeconds"] = old["initialDelaySeconds"]
    probe.update({"periodSeconds": 30, "timeoutSeconds": HOLD_S + 10, "failureThreshold": 3})
    return {"livenessProbe": probe}


def exec_probe_yaml(cfg: ConfigLike) -> str:
    """The probe as YAML to paste under the vLLM container (it loads back as written)."""
    return yaml.dump(exec_probe(cfg), Dumper=_BlockDumper, sort_keys=False, width=1 << 16)


def _liveness_fix(cfg: ConfigLike) -> str:
    return (
        "Replace the httpGet /health liveness probe with the exec probe below (under the vLLM container): it reads "
        f"/metrics twice {HOLD_S} s apart and fails while a request is held in the engine (running >= 1, KV cache "
        "usage unchanged), so the kubelet restarts the pod after failureThreshold misses. Keep /health for "
        "readiness. A probe that sends a tiny embedding does not work: other requests keep succeeding beside the "
        f"held one. Keep {HOLD_S} s above your longest healthy step. And alert on the hang itself: the stall rule "
        f"as a PrometheusRule (`{RULE_COMMAND}`, the same rules as `fleet rules`), which also sees hangs a restart "
        "would hide. The lasting fix is the livelock's own."
    )


RECORDS = load(__name__)  # triage/catalogue/data/kubernetes.toml
__getattr__, __dir__ = RECORDS.exports(globals())

KUBERNETES_MODES = RECORDS.modes()
