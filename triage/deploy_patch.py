"""A fix as a patch of the user's own deployment file: RFC 6902 JSON Patch operations, written as YAML.

Kubernetes manifests: the vLLM container's ``args`` (or ``command``) list replaced by the fixed one
(``kubectl patch deployment NAME --type=json --patch-file fix.yaml``). production-stack Helm values: the
chart key set (``vllmConfig.enableChunkedPrefill: false``), options the chart has no key for set in
``vllmConfig.extraArgs``. Compose files and shell-script commands get no patch (the fixed command line only).
``apply`` applies the operations (tests re-check the result). No Streamlit here.
"""
from __future__ import annotations

import copy
import json
from typing import Any
from collections.abc import Callable, Mapping

import yaml

from triage.sources.deploy import DeployTarget
from triage.sources.deploy_helm import CHART_KEY


def _ptr(parts: tuple[Any, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def operations(t: DeployTarget, argv: list[str], fixed: list[str], serve: Mapping[str, Any],
               apply_serve: Callable[[list[str], Mapping[str, Any]], list[str]],
               extra_args: list[str] | None = None) -> list[dict[str, Any]] | None:
    """The patch of ``t``'s document that turns ``argv`` into ``fixed``; None where no patch is written."""
    if t.shape == "kubernetes" and t.argv_field in ("args", "command"):
        n = t.command_len
        if t.argv_field == "args" and fixed[:n] == argv[:n]:
            return [{"op": "add", "path": _ptr((*t.pointer, "args")), "value": fixed[n:]}]
        if t.argv_field == "command" or n == len(argv):
            return [{"op": "add", "path": _ptr((*t.pointer, "command")), "value": fixed}]
        return None
    if t.shape == "helm-values":
        vc = (*t.pointer, "vllmConfig")
        ops: list[dict[str, Any]] = []
        rest = {k: v for k, v in serve.items() if k.lstrip("!") not in CHART_KEY}
        for k, v in serve.items():
            if k in CHART_KEY and v is not None:
                ops.append({"op": "add", "path": _ptr((*vc, CHART_KEY[k])), "value": v})
        if rest:
            ops.append({"op": "add", "path": _ptr((*vc, "extraArgs")),
                        "value": apply_serve(list(extra_args or []), rest)})
        return ops or None
    return None


def _comment(text: str) -> str:
    """A YAML comment line holding an outside string (a file or container name): the string as a JSON string,
    ASCII only, so no line end of any kind (``\\n``, ``\\r``, NEL, U+2028) can end the comment and start a line of
    operations of its own (issue 43)."""
    return "# " + json.dumps(text, ensure_ascii=True) + "\n"


def block_text(t: DeployTarget, ops: list[dict[str, Any]]) -> str:
    """The patch file: two comment lines (where, how) and the operations, written by the YAML serializer."""
    how = ("# kubectl patch --type=json --patch-file fix.yaml, or apply by hand\n" if t.shape == "kubernetes" else
           "# set these in your values file (JSON Patch paths), then helm upgrade\n")
    return (_comment(f"{t.origin.file}, document {t.origin.doc}: {t.name}") + how
            + yaml.safe_dump(ops, sort_keys=False, default_flow_style=False, allow_unicode=False))


def apply(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """RFC 6902 add/replace/remove on a loaded YAML document (a copy)."""
    out = copy.deepcopy(doc)
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        node = out
        for p in parts[:-1]:
            if isinstance(node, list):
                node = node[int(p)]
            else:
                node = node.setdefault(p, {}) if op["op"] == "add" else node[p]
        last = parts[-1]
        if isinstance(node, list):
            if op["op"] == "remove":
                node.pop(int(last))
            elif last == "-":
                node.append(op["value"])
            else:
                node[int(last)] = op["value"]
        elif op["op"] == "remove":
            node.pop(last)
        else:
            node[last] = op["value"]
    return out
