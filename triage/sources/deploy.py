"""Deployment files as the command line: Kubernetes manifests, production-stack Helm values and compose files.

Most embedding servers are not started by a typed `vllm serve` line but by a file: a Deployment /
StatefulSet / Pod / Job (also ``helm template`` output, a ``kind: List`` from ``kubectl get -o yaml``
and a KServe ``InferenceService`` with its own containers), the vLLM production-stack chart's values
(``servingEngineSpec.modelSpec[]``, rendered by triage/sources/deploy_helm.py the way the chart's
template renders them) or a ``docker compose`` file. ``read`` turns such a file into one
``DeployTarget`` per vLLM container / model spec / service: the argv the container runs, its image,
its environment, its GPUs, each with the file, document and line it came from. ``cmdline.collect``
(through triage/sources/deploy_read.py) parses that argv with the same parser as a pasted line: one
pipeline, two ways in.

The YAML is read with PyYAML's safe loader, bounded in size (``MAX_BYTES``) and in nodes walked
(``MAX_NODES``, alias expansion included). A text that is not YAML of one of these shapes is not a
deployment (``read`` returns None) and is parsed as a command line, as before.

One room: every shape (manifest, Helm values, compose) ends as the same DeployTarget through the same bounded walk;
Helm rendering and the bridge to the command-line parser already live beside it (deploy_helm.py, deploy_read.py).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

import yaml

from triage.catalogue.versions import parse_version
from triage.redact import secret_env_name

MAX_BYTES = 1 << 20
MAX_NODES = 200_000
WORKLOADS = {"Deployment": ("spec", "template", "spec"), "StatefulSet": ("spec", "template", "spec"),
             "DaemonSet": ("spec", "template", "spec"), "ReplicaSet": ("spec", "template", "spec"),
             "Job": ("spec", "template", "spec"), "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
             "Pod": ("spec",), "InferenceService": ("spec", "predictor")}
# the ENTRYPOINT of vLLM's own images (docker/Dockerfile: ENTRYPOINT ["vllm", "serve"]): what runs when a
# container gives args and no command
IMAGE_ENTRYPOINT = ("vllm", "serve")
GPU_RESOURCE = "nvidia.com/gpu"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"  # NVIDIA GPU Feature Discovery's node label
GPU_MEMORY_LABEL = "nvidia.com/gpu.memory"  # MiB, same source

Pointer = tuple[Any, ...]


class DeployError(ValueError):
    """The file looked like a deployment and could not be read within the bounds."""


@dataclass(frozen=True)
class Origin:
    """Where a value sits: the file, the document (1-based) and the line (1-based)."""

    file: str
    doc: int
    line: int | None

    def __str__(self) -> str:
        line = f", line {self.line}" if self.line else ""
        return f"{self.file}, document {self.doc}{line}"


@dataclass(frozen=True)
class DeployTarget:
    """One vLLM container (manifest), model spec (chart values) or service (compose), as its command line."""

    name: str
    shape: str  # kubernetes | helm-values | compose
    argv: tuple[str, ...]
    lines: tuple[int | None, ...]  # the line of each argv token
    origin: Origin  # the container / model spec / service itself
    pointer: Pointer  # where it sits in its document (JSON-pointer parts)
    picked: str  # why this is the vLLM one
    image: str | None = None
    image_line: int | None = None
    env: dict[str, str] = field(default_factory=dict)
    env_lines: dict[str, int | None] = field(default_factory=dict)
    gpu_count: int | None = None
    gpu_line: int | None = None
    gpu_product: str | None = None
    gpu_memory_mib: int | None = None
    gpu_product_line: int | None = None
    command_len: int = 0  # argv tokens that come from `command` (the rest from `args`)
    argv_field: str = "args"  # what a patch edits: args | command | script | command-string | chart
    script_at: Pointer | None = None  # the shell script item (argv_field script)
    liveness: dict[str, Any] | None = None
    liveness_line: int | None = None

    def at(self, line: int | None) -> Origin:
        return Origin(self.origin.file, self.origin.doc, line)


@dataclass(frozen=True)
class Deployment:
    file: str
    shape: str
    targets: tuple[DeployTarget, ...]
    skipped: tuple[str, ...] = ()  # what was seen and is not a vLLM server, with why

    def names(self) -> list[str]:
        return [t.name for t in self.targets]

    def pick(self, name: str | None) -> DeployTarget | None:
        """The target called ``name`` (its full name, or the container/model/service name at its end)."""
        if not self.targets:
            return None
        if not name:
            return self.targets[0]
        for t in self.targets:
            if name in (t.name, t.name.rsplit(" ", 1)[-1], t.name.rsplit("/", 1)[-1]):
                return t
        return None


# -- loading ---------------------------------------------------------------------------------------------


def looks_like_yaml(text: str) -> bool:
    """Cheap test before loading: a mapping key at the start of some line (a command line has none)."""
    return bool(re.search(r"(?m)^(?:---\s*$|\s*[A-Za-z_][\w.-]*:(?:\s|$))", text))


def load(text: str) -> list[tuple[Any, yaml.Node]]:
    """Every document of ``text`` as (data, node tree); safe loading, bounded; YAMLError when not YAML."""
    if len(text.encode("utf-8", "replace")) > MAX_BYTES:
        raise DeployError(f"deployment file larger than {MAX_BYTES} bytes")
    loader = yaml.SafeLoader(text)
    out = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            _bounded(node)
            out.append((loader.construct_document(node), node))
    except RecursionError:  # the parser recurses per nesting level (issue 43: a traceback on the Target page)
        raise DeployError("the file is nested too deeply to read (hundreds of levels): no deployment file is") from None
    finally:
        loader.dispose()
    return out


def _bounded(root: yaml.Node) -> None:
    seen, stack = 0, [root]
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            raise DeployError(f"deployment file has more than {MAX_NODES} YAML nodes (aliases expanded)")
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack += (k, v)
        elif isinstance(node, yaml.SequenceNode):
            stack += node.value


def line_of(node: yaml.Node | None, pointer: Pointer) -> int | None:
    """The 1-based line of the value at ``pointer`` (the nearest enclosing node's where a part is missing)."""
    if node is None:
        return None
    cur = node
    for part in pointer:
        nxt = None
        if isinstance(cur, yaml.MappingNode):
            for k, v in cur.value:
                if isinstance(k, yaml.ScalarNode) and k.value == str(part):
                    nxt = v
                    break
        elif isinstance(cur, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(cur.value):
            nxt = cur.value[part]
        if nxt is None:
            break
        cur = nxt
    return cur.start_mark.line + 1


def get(data: Any, *path: Any) -> Any:
    for p in path:
        if isinstance(data, dict):
            data = data.get(p)
        elif isinstance(data, list) and isinstance(p, int) and 0 <= p < len(data):
            data = data[p]
        else:
            return None
    return data


# -- reading ---------------------------------------------------------------------------------------------


def image_is_vllm(image: Any) -> bool:
    return isinstance(image, str) and "vllm" in image.rsplit(":", 1)[0].lower()


def argv_is_vllm(argv: list[str]) -> bool:
    joined = " ".join(argv)
    return bool(re.search(r"(?:^|[\s/])vllm\s+serve\b|vllm\.entrypoints\.", joined))


def image_release(image: str | None) -> str | None:
    """The vLLM release an image tag names (``vllm/vllm-openai:v0.28.0`` -> 0.28.0), else None."""
    if not image or ":" not in image.rsplit("/", 1)[-1]:
        return None
    tag = image.rsplit(":", 1)[1].split("@", 1)[0]
    return tag.lstrip("v") if parse_version(tag) else None


def _shell_argv(command: list[str]) -> list[str] | None:
    """``["/bin/sh", "-c", "vllm serve …"]``: the script's tokens (what the shell runs), else None."""
    if len(command) >= 3 and command[0].rsplit("/", 1)[-1] in ("sh", "bash", "dash") and command[1] in ("-c", "-ec"):
        try:
            return shlex.split(re.sub(r"\\\r?\n", " ", command[2]), comments=True)
        except ValueError:
            return command[2].split()
    return None


def _strs(v: Any) -> list[str] | None:
    if isinstance(v, list):
        return ["" if x is None else (str(x).lower() if isinstance(x, bool) else str(x)) for x in v]
    return None


def _env_list(env: Any, node: yaml.Node, at: Pointer) -> tuple[dict[str, str], dict[str, int | None]]:
    """A container's ``env`` (Kubernetes list of name/value|valueFrom), secrets never kept."""
    out: dict[str, str] = {}
    lines: dict[str, int | None] = {}
    for i, e in enumerate(env if isinstance(env, list) else []):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            continue
        k = e["name"]
        if "valueFrom" in e:
            ref = get(e, "valueFrom", "secretKeyRef", "name") or get(e, "valueFrom", "configMapKeyRef", "name")
            v = f"(from {ref})" if ref else "(valueFrom)"
        else:
            v = "" if e.get("value") is None else str(e.get("value"))
        out[k] = "[REDACTED]" if secret_env_name(k) and "valueFrom" not in e else v
        lines[k] = line_of(node, (*at, i))
    return out, lines


def kubernetes(docs: list[tuple[Any, yaml.Node]], file: str) -> Deployment:
    targets: list[DeployTarget] = []
    skipped: list[str] = []
    objects: list[tuple[int, dict[str, Any], yaml.Node, Pointer]] = []
    for di, (d, node) in enumerate(docs):
        if isinstance(d, dict) and d.get("kind") == "List":
            items = enumerate(d.get("items") or [])
            objects += [(di, it, node, ("items", j)) for j, it in items if isinstance(it, dict)]
        elif isinstance(d, dict):
            objects.append((di, d, node, ()))
    for di, obj, node, base in objects:
        kind = obj.get("kind")
        if kind not in WORKLOADS:
            if kind:
                skipped.append(f"{kind}/{get(obj, 'metadata', 'name')} (document {di + 1}): not a workload")
            continue
        pod_at = (*base, *WORKLOADS[kind])
        pod = get(obj, *WORKLOADS[kind][0:]) if isinstance(obj, dict) else None
        if not isinstance(pod, dict):
            continue
        obj_name = f"{kind}/{get(obj, 'metadata', 'name') or '?'}"
        product_at, product = _node_product(pod)
        for ci, c in enumerate(pod.get("containers") or []):
            if not isinstance(c, dict):
                continue
            at = (*pod_at, "containers", ci)
            command, args = _strs(c.get("command")), _strs(c.get("args"))
            image = c.get("image") if isinstance(c.get("image"), str) else None
            head = command if command is not None else (list(IMAGE_ENTRYPOINT) if image_is_vllm(image) else [])
            full = [*head, *(args or [])]
            full_at = ([(*at, "command", i) for i in range(len(head))] if command is not None
                       else [(*at, "image")] * len(head)) + [(*at, "args", i) for i in range(len(args or []))]
            shell = _shell_argv(full)
            script_at: Pointer | None = None
            if shell is not None:  # the script's tokens, all on the script item's line; a patch rewrites it
                script_at = full_at[2]
                argv, ncmd, field_ = shell, len(shell), "script"
                lines = [line_of(node, script_at)] * len(shell)
            else:
                argv, ncmd = full, len(head)
                lines = [line_of(node, p) for p in full_at]
                field_ = "args" if args or command is None else "command"
            by_image, by_cmd = image_is_vllm(image), argv_is_vllm(argv)
            cname = c.get("name") or f"#{ci}"
            if not (by_image or by_cmd):
                skipped.append(f"{obj_name} container {cname} (image {image}): neither its image nor its command "
                               "is vLLM")
                continue
            why = (f"container {cname}: image {image} is vLLM's" if by_image else
                   f"container {cname}: its command runs vLLM")
            env, env_lines = _env_list(c.get("env"), node, (*at, "env"))
            gpus = get(c, "resources", "limits", GPU_RESOURCE) or get(c, "resources", "requests", GPU_RESOURCE)
            gpu_at = (*at, "resources", "limits" if get(c, "resources", "limits", GPU_RESOURCE) else "requests",
                      GPU_RESOURCE)
            probe = c.get("livenessProbe") if isinstance(c.get("livenessProbe"), dict) else None
            targets.append(DeployTarget(
                name=f"{obj_name} container {cname}", shape="kubernetes", argv=tuple(argv), lines=tuple(lines),
                origin=Origin(file, di + 1, line_of(node, at)), pointer=at, picked=why, image=image,
                image_line=line_of(node, (*at, "image")), env=env, env_lines=env_lines,
                gpu_count=_int(gpus), gpu_line=line_of(node, gpu_at) if gpus is not None else None,
                gpu_product=product[0] if product else None, gpu_memory_mib=product[1] if product else None,
                gpu_product_line=line_of(node, (*pod_at, *product_at)) if product else None,
                command_len=ncmd, argv_field=field_, script_at=script_at, liveness=probe,
                liveness_line=line_of(node, (*at, "livenessProbe")) if probe else None))
    return Deployment(file, "kubernetes", tuple(targets), tuple(skipped))


def _node_product(pod: dict[str, Any]) -> tuple[Pointer, tuple[str, int | None] | None]:
    """The GPU product a pod asks for: nodeSelector (GPU Feature Discovery's label), else a required
    node-affinity term on it."""
    sel = pod.get("nodeSelector")
    if isinstance(sel, dict) and isinstance(sel.get(GPU_PRODUCT_LABEL), str):
        return ("nodeSelector", GPU_PRODUCT_LABEL), (sel[GPU_PRODUCT_LABEL], _int(sel.get(GPU_MEMORY_LABEL)))
    terms = get(pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                "nodeSelectorTerms")
    for ti, t in enumerate(terms if isinstance(terms, list) else []):
        for ei, e in enumerate(get(t, "matchExpressions") or []):
            if isinstance(e, dict) and e.get("key") == GPU_PRODUCT_LABEL and len(e.get("values") or []) == 1:
                return (("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                         "nodeSelectorTerms", ti, "matchExpressions", ei),
                        (str(e["values"][0]), None))
    return (), None


def _int(v: Any) -> int | None:
    try:
        return int(str(v).strip())
    except (TypeError, ValueError):
        return None


def compose(docs: list[tuple[Any, yaml.Node]], file: str) -> Deployment:
    targets: list[DeployTarget] = []
    skipped: list[str] = []
    for di, (d, node) in enumerate(docs):
        services = d.get("services") if isinstance(d, dict) else None
        for sname, s in (services or {}).items() if isinstance(services, dict) else ():
            if not isinstance(s, dict):
                continue
            at = ("services", sname)
            image = s.get("image") if isinstance(s.get("image"), str) else None
            cmd, ent = s.get("command"), s.get("entrypoint")
            field_ = "command-string" if isinstance(cmd, str) else "command"
            # compose splits a string command as a shell would, without running a shell
            cmd_l = shlex.split(cmd) if isinstance(cmd, str) else (_strs(cmd) or [])
            ent_l = shlex.split(ent) if isinstance(ent, str) else _strs(ent)
            head = ent_l if ent_l is not None else (list(IMAGE_ENTRYPOINT) if image_is_vllm(image) else [])
            argv = [*head, *cmd_l]
            cl = ([line_of(node, (*at, "command"))] * len(cmd_l) if isinstance(cmd, str)
                  else [line_of(node, (*at, "command", i)) for i in range(len(cmd_l))])
            lines = [line_of(node, (*at, "entrypoint" if ent_l is not None else "image"))] * len(head) + cl
            by_image, by_cmd = image_is_vllm(image), argv_is_vllm(argv)
            if not (by_image or by_cmd):
                skipped.append(f"service {sname} (image {image}): neither its image nor its command is vLLM")
                continue
            env, env_lines = _compose_env(s.get("environment"), node, (*at, "environment"))
            gpus, gpu_at = _compose_gpus(s)
            targets.append(DeployTarget(
                name=f"service {sname}", shape="compose", argv=tuple(argv), lines=tuple(lines),
                origin=Origin(file, di + 1, line_of(node, at)), pointer=at,
                picked=f"service {sname}: " + ("image " + str(image) + " is vLLM's" if by_image else
                                               "its command runs vLLM"),
                image=image, image_line=line_of(node, (*at, "image")), env=env, env_lines=env_lines,
                gpu_count=gpus, gpu_line=line_of(node, (*at, *gpu_at)) if gpus is not None else None,
                command_len=len(head), argv_field=field_))
    return Deployment(file, "compose", tuple(targets), tuple(skipped))


def _compose_env(env: Any, node: yaml.Node, at: Pointer) -> tuple[dict[str, str], dict[str, int | None]]:
    out: dict[str, str] = {}
    lines: dict[str, int | None] = {}
    items: list[tuple[Any, str, Any]] = []
    if isinstance(env, dict):
        items = [(k, str(k), v) for k, v in env.items()]
    elif isinstance(env, list):
        items = [(i, *str(e).partition("=")[::2]) for i, e in enumerate(env)]
    for part, k, v in items:
        val = "" if v is None else (str(v).lower() if isinstance(v, bool) else str(v))
        out[k] = "[REDACTED]" if secret_env_name(k) else val
        lines[k] = line_of(node, (*at, part))
    return out, lines


def _compose_gpus(s: dict[str, Any]) -> tuple[int | None, Pointer]:
    """GPUs of a compose service: deploy.resources.reservations.devices (driver nvidia / capability gpu), or
    the ``gpus:`` attribute; ``count: all`` is unknown here (the host's count), said as None."""
    devs = get(s, "deploy", "resources", "reservations", "devices")
    for i, dev in enumerate(devs if isinstance(devs, list) else []):
        if isinstance(dev, dict) and (dev.get("driver") == "nvidia" or "gpu" in (dev.get("capabilities") or [])):
            ids = dev.get("device_ids")
            n = len(ids) if isinstance(ids, list) else _int(dev.get("count"))
            return n, ("deploy", "resources", "reservations", "devices", i)
    return None, ()
