"""Kubernetes' view of the pod as evidence: ``kubectl describe pod``, ``kubectl get pod -o yaml``, ``kubectl logs``.

What an on-call engineer has first when an embedding server misbehaves in a cluster: the pod's containers
(state, last state with its reason and exit code, restart count, memory limit, liveness probe) and its events
(probe failures, back-off), plus the container's log, often the crashed one's (``--previous``). Each text's kind
is told by its shape (``kind_of``): describe text, pod YAML (a Pod or a List of them; PyYAML's safe loader,
bounded as triage/sources/deploy.py bounds a deployment file), else a log.

The findings (``collect``) read their wording, refs and fix from the catalogue: OOMKilled is the ``oom``
record with the container's memory limit; CrashLoopBackOff is the start-up post-mortem of the log given
(triage/logs: the same verdicts as ``python -m triage logs``), or asks for ``kubectl logs --previous``; probe
failures and kills in the events are said as they are. The liveness probe itself becomes the ``liveness_probe``
fact that checks/liveness.py judges, as a deployment file's does.

One room: the three kubectl texts of one pod feed one source's facts and findings through the pod model (containers,
events) its readers share.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from triage.catalogue import OOM
from triage.catalogue.kubernetes import PROBE_KILLS
from triage.findings import Finding, Status
from triage.sources import RawCapture, SourceResult
from triage.sources import deploy

SOURCE = "kube"
MAX_DESCRIBE_LINES = 20_000  # a describe of one pod is ~100 lines; a pasted namespace stays bounded
OOM_EXIT = 137  # 128 + SIGKILL: what the kernel's OOM killer (and a kubelet kill) leaves
CRASH_LOOP = "CrashLoopBackOff"
OOM_KILLED = "OOMKilled"
_DESCRIBE_RE = re.compile(r"(?m)^Name:\s+\S")
_DESCRIBE_SECTION_RE = re.compile(r"(?m)^(?:Containers|Events|Init Containers|Conditions):")
_FIELD_RE = re.compile(r"^(\s*)([A-Za-z][\w .#/-]*?):(?:\s+(.*?))?\s*$")
# describe's probe line: `http-get http://:8000/health delay=60s timeout=1s period=10s #success=1 #failure=3`
_PROBE_RE = re.compile(r"^(?P<kind>http-get|exec|tcp-socket|grpc)\s+(?P<what>\S.*?)(?:\s+delay=|$)")
_HTTP_RE = re.compile(r"^https?://[^:/]*:(?P<port>[\w-]+)(?P<path>/\S*)?")
_PROBE_NUM_RE = re.compile(r"(delay|timeout|period)=(\d+)s|#(success|failure)=(\d+)")
_PROBE_KEYS = {"delay": "initialDelaySeconds", "timeout": "timeoutSeconds", "period": "periodSeconds",
               "success": "successThreshold", "failure": "failureThreshold"}
_QUANTITY_RE = re.compile(r"^(\d+(?:\.\d+)?)([KMGTPE]i?|[kmgtpe])?$")
_UNITS = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
          "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}


@dataclass(frozen=True)
class Container:
    """One container as the pod's status shows it (None: not shown)."""

    name: str
    line: int | None = None
    image: str | None = None
    state: str | None = None  # running | waiting | terminated
    reason: str | None = None  # the state's reason (CrashLoopBackOff, OOMKilled, Error, ...)
    exit_code: int | None = None
    last_state: str | None = None
    last_reason: str | None = None
    last_exit_code: int | None = None
    restarts: int | None = None
    ready: bool | None = None
    memory_limit: str | None = None
    memory_request: str | None = None
    liveness: dict[str, Any] | None = None

    @property
    def oom_killed(self) -> bool:
        return OOM_KILLED in (self.reason, self.last_reason)

    @property
    def crash_looping(self) -> bool:
        """Waiting in back-off, or restarted after a failed exit (the loop between two back-offs)."""
        failed_before = self.last_state == "terminated" and (self.last_exit_code or 0) != 0
        return self.reason == CRASH_LOOP or bool(failed_before and (self.restarts or 0) > 0)


@dataclass(frozen=True)
class Event:
    type: str
    reason: str
    age: str
    source: str
    message: str
    line: int


@dataclass(frozen=True)
class PodView:
    """One pod as one text showed it: ``kind`` describe | yaml."""

    file: str
    kind: str
    name: str | None
    namespace: str | None = None
    phase: str | None = None
    containers: tuple[Container, ...] = ()
    events: tuple[Event, ...] = ()

    def where(self, line: int | None) -> str:
        return f"{self.file}, line {line}" if line else self.file


@dataclass
class KubeEvidence:
    pods: list[PodView] = field(default_factory=list)
    logs: list[tuple[str, str]] = field(default_factory=list)  # (file, text)
    unread: list[str] = field(default_factory=list)


# -- telling the texts apart ------------------------------------------------------------------------------


def kind_of(text: str) -> str:
    """describe | yaml (a Pod or a List holding pods) | log."""
    head = text[:200_000]
    if _DESCRIBE_RE.search(head) and _DESCRIBE_SECTION_RE.search(head):
        return "describe"
    if deploy.looks_like_yaml(head):
        try:
            docs = deploy.load(text)
        except (yaml.YAMLError, deploy.DeployError):
            return "log"
        if any(_pods_in(d) for d, _ in docs):
            return "yaml"
    return "log"


def _pods_in(d: Any) -> list[dict[str, Any]]:
    if not isinstance(d, dict):
        return []
    if d.get("kind") == "Pod":
        return [d]
    if d.get("kind") == "List" or (isinstance(d.get("kind"), str) and d["kind"].endswith("List")):
        return [i for i in d.get("items") or [] if isinstance(i, dict) and i.get("kind") == "Pod"]
    return []


def read(inputs: Sequence[tuple[str, str]]) -> KubeEvidence:
    """Each (file name, text) read as its kind says."""
    out = KubeEvidence()
    for name, text in inputs:
        if not text or not text.strip():
            out.unread.append(f"{name}: empty")
            continue
        kind = kind_of(text)
        if kind == "describe":
            out.pods += read_describe(text, name)
        elif kind == "yaml":
            out.pods += read_pod_yaml(text, name)
        else:
            out.logs.append((name, text))
    return out


# -- kubectl describe pod -------------------------------------------------------------------------------


def _int(v: Any) -> int | None:
    try:
        return int(str(v).strip())
    except (TypeError, ValueError):
        return None


def describe_probe(text: str) -> dict[str, Any] | None:
    """describe's ``Liveness:`` line as the probe it shows (the pod spec's shape: httpGet/exec/tcpSocket)."""
    m = _PROBE_RE.match(text.strip())
    if not m:
        return None
    out: dict[str, Any] = {}
    what = m["what"].strip()
    if m["kind"] == "http-get":
        h = _HTTP_RE.match(what)
        port: Any = h["port"] if h else None
        out["httpGet"] = {"path": (h["path"] or "/") if h else what, "port": _int(port) if _int(port) else port}
    elif m["kind"] == "exec":
        out["exec"] = {"command": what.strip("[]").split()}
    elif m["kind"] == "tcp-socket":
        out["tcpSocket"] = {"port": what.rsplit(":", 1)[-1]}
    else:
        out["grpc"] = {"port": what.rsplit(":", 1)[-1]}
    for num in _PROBE_NUM_RE.finditer(text):
        key, val = (num[1], num[2]) if num[1] else (num[3], num[4])
        out[_PROBE_KEYS[key]] = int(val)
    return out


def read_describe(text: str, file: str) -> list[PodView]:
    """``kubectl describe pod`` text (one pod or several, each from its ``Name:`` line)."""
    lines = text.splitlines()[:MAX_DESCRIBE_LINES]
    starts = [i for i, ln in enumerate(lines) if ln.startswith("Name:")] or [0]
    return [_describe_one(lines[a:b], a, file) for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]


def _describe_one(lines: list[str], offset: int, file: str) -> PodView:
    top: dict[str, str] = {}
    containers: list[dict[str, Any]] = []
    events: list[Event] = []
    section = ""
    sub = ""  # State | Last State | Limits | Requests: the block a deeper line belongs to
    in_events_table = False
    for i, raw in enumerate(lines):
        lineno = offset + i + 1
        if not raw.strip():
            continue
        m = _FIELD_RE.match(raw)
        indent = len(raw) - len(raw.lstrip(" "))
        if indent == 0:
            section, sub, in_events_table = "", "", False
            if m:
                key, val = m[2], (m[3] or "")
                top.setdefault(key, val)
                section = key
            continue
        if section == "Events":
            if in_events_table:
                cols = re.split(r"\s{2,}", raw.strip(), maxsplit=4)
                if len(cols) == 5:
                    events.append(Event(*cols, line=lineno))
            elif raw.strip().startswith("----"):
                in_events_table = True
            continue
        if section != "Containers":
            continue
        if indent == 2 and m and not m[3]:
            containers.append({"name": m[2], "line": lineno})
            sub = ""
            continue
        if not containers or not m:
            continue
        c = containers[-1]
        key, val = m[2], (m[3] or "")
        if indent == 4:
            sub = key
            if key in ("State", "Last State"):
                c["state" if key == "State" else "last_state"] = val.lower() or None
            elif key == "Image":
                c["image"] = val
            elif key == "Restart Count":
                c["restarts"] = _int(val)
            elif key == "Ready":
                c["ready"] = val.lower() == "true"
            elif key == "Liveness":
                c["liveness"] = describe_probe(val)
        elif indent >= 6:
            pre = "" if sub == "State" else "last_" if sub == "Last State" else None
            if pre is not None and key == "Reason":
                c[pre + "reason"] = val
            elif pre is not None and key == "Exit Code":
                c[pre + "exit_code"] = _int(val)
            elif sub in ("Limits", "Requests") and key == "memory":
                c["memory_limit" if sub == "Limits" else "memory_request"] = val
    return PodView(file, "describe", top.get("Name"), top.get("Namespace"), top.get("Status"),
                   tuple(Container(**c) for c in containers), tuple(events))


# -- kubectl get pod -o yaml ----------------------------------------------------------------------------


def read_pod_yaml(text: str, file: str) -> list[PodView]:
    out = []
    for d, node in deploy.load(text):
        listed = isinstance(d, dict) and d.get("kind") != "Pod"
        for j, pod in enumerate(_pods_in(d)):
            base: deploy.Pointer = ("items", j) if listed else ()
            out.append(_pod_view(pod, node, base, file))
    return out


def _state(s: Any) -> tuple[str | None, str | None, int | None]:
    """(running|waiting|terminated, its reason, its exit code) of a containerStatuses state."""
    if not isinstance(s, dict) or not s:
        return None, None, None
    kind = next((k for k in ("terminated", "waiting", "running") if k in s), None)
    body = s.get(kind) if kind else None
    body = body if isinstance(body, dict) else {}
    return kind, body.get("reason"), _int(body.get("exitCode"))


def _pod_view(pod: dict[str, Any], node: yaml.Node, base: deploy.Pointer, file: str) -> PodView:
    specs = {c.get("name"): (i, c) for i, c in enumerate(deploy.get(pod, "spec", "containers") or [])
             if isinstance(c, dict)}
    containers = []
    statuses = deploy.get(pod, "status", "containerStatuses") or []
    named = {s.get("name"): (i, s) for i, s in enumerate(statuses) if isinstance(s, dict)}
    for name in dict.fromkeys([*specs, *named]):
        si, spec = specs.get(name, (None, {}))
        ti, st = named.get(name, (None, {}))
        state, reason, code = _state(st.get("state"))
        last, last_reason, last_code = _state(st.get("lastState"))
        at = (*base, "status", "containerStatuses", ti) if ti is not None else (*base, "spec", "containers", si)
        probe = spec.get("livenessProbe")
        containers.append(Container(
            name=str(name), line=deploy.line_of(node, at), image=spec.get("image") or st.get("image"),
            state=state, reason=reason, exit_code=code, last_state=last, last_reason=last_reason,
            last_exit_code=last_code, restarts=_int(st.get("restartCount")),
            ready=st.get("ready") if isinstance(st.get("ready"), bool) else None,
            memory_limit=_qty(deploy.get(spec, "resources", "limits", "memory")),
            memory_request=_qty(deploy.get(spec, "resources", "requests", "memory")),
            liveness=probe if isinstance(probe, dict) else None))
    return PodView(file, "yaml", deploy.get(pod, "metadata", "name"), deploy.get(pod, "metadata", "namespace"),
                   deploy.get(pod, "status", "phase"), tuple(containers))


def _qty(v: Any) -> str | None:
    return None if v is None else str(v)


def quantity_bytes(q: str | None) -> int | None:
    """A Kubernetes memory quantity in bytes (16Gi, 512M, 1e9 is not parsed: None)."""
    m = _QUANTITY_RE.match((q or "").strip())
    return int(float(m[1]) * _UNITS[m[2] or ""]) if m else None


# -- the source -----------------------------------------------------------------------------------------


def vllm_containers(pod: PodView) -> list[Container]:
    """The containers that run vLLM (by image); all of them when no image says so (describe may omit it)."""
    picked = [c for c in pod.containers if deploy.image_is_vllm(c.image)]
    return picked or list(pod.containers)


def collect(inputs: Sequence[tuple[str, str]]) -> SourceResult:
    """Facts and findings from the given kubectl outputs; ``unavailable`` when none of them is a pod or a log."""
    res = SourceResult(SOURCE)
    for name, text in inputs:
        res.captures.append(RawCapture(SOURCE, name, text[:2_000_000]))
    try:
        seen = read(inputs)
    except deploy.DeployError as e:
        res.unavailable = str(e)
        return res
    if not seen.pods and not seen.logs:
        res.unavailable = "; ".join(seen.unread) or "no pod in the kubectl output given"
        return res
    judged: set[tuple[str | None, str, str]] = set()
    for pod in seen.pods:
        _facts(res, pod)
        for c in vllm_containers(pod):
            for f in _findings(pod, c, seen.logs):
                key = (pod.name, c.name, f.check)
                if key not in judged:  # the same pod from its describe and its YAML: said once
                    judged.add(key)
                    res.findings.append(f)
        probe = _probe_events(pod)
        if probe is not None and (pod.name, "", probe.check) not in judged:
            judged.add((pod.name, "", probe.check))
            res.findings.append(probe)
    if not seen.pods:
        res.add("kube_logs", [n for n, _ in seen.logs], "kubectl logs given without the pod's describe or YAML")
    return res


def _facts(res: SourceResult, pod: PodView) -> None:
    cs = vllm_containers(pod)
    if not cs:
        return
    c = cs[0]
    where = pod.where(c.line)
    if "kube_pod" in res.facts:  # the same pod's describe and YAML (or another pod): the first text given says it
        return
    res.add("kube_pod", {"pod": pod.name, "namespace": pod.namespace, "phase": pod.phase, "container": c.name,
                         "state": c.state, "reason": c.reason, "last_state": c.last_state,
                         "last_reason": c.last_reason, "last_exit_code": c.last_exit_code,
                         "restarts": c.restarts, "ready": c.ready, "from": pod.kind},
            f"kubectl {'describe pod' if pod.kind == 'describe' else 'get pod -o yaml'} ({where})")
    if c.memory_limit:
        res.add("memory_limit", c.memory_limit, f"resources.limits.memory of container {c.name} ({where})")
    if c.liveness:
        res.add("liveness_probe", c.liveness, f"livenessProbe of pod {pod.name} container {c.name} ({where})")
    release = deploy.image_release(c.image) if deploy.image_is_vllm(c.image) else None
    if release:
        res.add("vllm_version", release, f"image {c.image} of pod {pod.name} ({where})")


def _who(pod: PodView, c: Container) -> str:
    return f"pod {pod.name} container {c.name}"


def _status_ev(pod: PodView, c: Container) -> dict[str, Any]:
    return {"pod": pod.name, "namespace": pod.namespace, "container": c.name, "state": c.state, "reason": c.reason,
            "exit_code": c.exit_code, "last_state": c.last_state, "last_reason": c.last_reason,
            "last_exit_code": c.last_exit_code, "restarts": c.restarts, "memory_limit": c.memory_limit,
            "memory_limit_bytes": quantity_bytes(c.memory_limit), "memory_request": c.memory_request,
            "source": SOURCE, "where": pod.where(c.line)}


def _findings(pod: PodView, c: Container, logs: list[tuple[str, str]]) -> list[Finding]:
    if c.oom_killed:
        code = c.exit_code if c.reason == OOM_KILLED else c.last_exit_code
        loop = f", now {c.reason}" if c.reason and c.reason != OOM_KILLED else ""
        limit = f"its memory limit {c.memory_limit}" if c.memory_limit else "no memory limit shown"
        return [Finding.of(
            OOM, "kube-oomkilled", Status.FAIL,
            f"{_who(pod, c)} was OOMKilled (exit code {code if code is not None else OOM_EXIT}) at {limit}"
            f"{loop} ({OOM.title.lower()})",
            # the record is named by the kill itself: no symptom for the differential to weigh candidates for
            {**_status_ev(pod, c), "symptoms": []}, cfg={"memory_limit": c.memory_limit})]
    if c.crash_looping and not (c.reason != CRASH_LOOP and _liveness_killed(pod, c)):
        return [_crash_loop(pod, c, logs)]
    return []  # a container the kubelet killed for its liveness probe is the probe finding's


def _liveness_killed(pod: PodView, c: Container) -> bool:
    return any(f"{c.name} failed liveness probe" in e.message for e in pod.events)


def _crash_loop(pod: PodView, c: Container, logs: list[tuple[str, str]]) -> Finding:
    """CrashLoopBackOff: the start-up post-mortem of the log given (the crashed container's), else ask for it."""
    ev = _status_ev(pod, c)
    what = (f"{_who(pod, c)} is in {CRASH_LOOP}" if c.reason == CRASH_LOOP else
            f"{_who(pod, c)} restarted after a failed exit")
    what += f" ({c.restarts} restart{'' if c.restarts == 1 else 's'}, last exit code {c.last_exit_code})"
    ask = (f"kubectl logs {pod.name} -c {c.name} --previous > previous.log, then pass it with "
           "--kube-file previous.log (or paste it on the Target page)")
    if not logs:
        return Finding("kube-crashloop", Status.UNKNOWN, f"{what}: the cause is in the crashed container's log",
                       {**ev, "ask": ask},
                       f"Run {ask}: its start-up post-mortem names the cause.")
    from triage.differential import is_diagnosis  # the log post-mortem loads only when a log is judged
    from triage.logs import analyze_log

    for name, text in logs:
        analysis = analyze_log(text)
        own = [f for f in analysis.findings if not is_diagnosis(f)]
        causes = [f for f in own if f.status == Status.FAIL and f.check.startswith("log-")]
        ev_log = {**ev, "previous_log": name,
                  "post_mortem": [{"check": f.check, "status": f.status.value, "title": f.title} for f in own]}
        if causes:
            cause = causes[0]
            return Finding("kube-crashloop", Status.FAIL, f"{what}: the previous start ended: {cause.title}",
                           {**ev_log, "cause": cause.check, "cause_evidence": cause.evidence,
                            # what the differential reads of the cause (its narrowed symptoms, its clues' facts)
                            **{k: cause.evidence[k] for k in ("symptoms", "facts") if k in cause.evidence}},
                           cause.fix,
                           list(cause.refs), cause.explanation, failure_mode=cause.failure_mode)
    started = [f for f in own if f.check in ("log-engine-stats", "log-long-step")]
    why = ("shows a server that started and ran" if started else "names no start-up failure")
    return Finding("kube-crashloop", Status.UNKNOWN, f"{what}: the log given ({name}) {why}",
                   {**ev_log, "ask": ask},
                   f"The log may be the running container's, not the crashed one's: {ask}.")


def _probe_events(pod: PodView) -> Finding | None:
    """Probe failures and the kills they caused, as the pod's events list them."""
    hits = [e for e in pod.events if re.search(r"\b(Liveness|Readiness|Startup) probe failed", e.message)
            or "failed liveness probe" in e.message or "failed startup probe" in e.message]
    if not hits:
        return None
    kinds = sorted({m.group(1).lower() for e in hits if (m := re.search(r"\b(Liveness|Readiness|Startup)", e.message,
                                                                         re.I))})
    killed = [e for e in hits if "will be restarted" in e.message]
    title = (f"pod {pod.name}: {' and '.join(kinds)} probe failures in its events"
             + (": the kubelet killed the container (exit code 137 without OOMKilled is this kill)" if killed else ""))
    return Finding.of(PROBE_KILLS, "kube-probe-failures", Status.WARN, title,
                      {"pod": pod.name, "events": [{"type": e.type, "reason": e.reason, "age": e.age,
                                                    "from": e.source, "message": e.message,
                                                    "where": pod.where(e.line)} for e in hits],
                       "source": SOURCE})
