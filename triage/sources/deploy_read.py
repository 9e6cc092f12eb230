"""Which shape a deployment file is, read by its reader (triage/sources/deploy.py, deploy_helm.py).

A text that is structured (YAML mappings, a JSON object) but not one of the shapes, or that cannot be read (tab
indentation, a ``!!python`` tag, broken JSON), is said to be so (``DeployError``): it is never judged as a command
line, whose tokens would be ``kind:`` or ``{`` (issue 43). A plain command line is no YAML mapping and reads on.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from triage.sources import deploy, deploy_helm

_JSON_START = re.compile(r"\A\s*\{")
_DESCRIBE = re.compile(r"(?m)^Name:\s+\S.*\n(?:.*\n){0,40}?^(?:Namespace|Containers|Node):")


def _problem(e: yaml.YAMLError) -> str:
    """A YAML error in a few words, with its line: what the user can fix."""
    mark = getattr(e, "problem_mark", None)
    where = f" (line {mark.line + 1})" if mark is not None else ""
    text = str(getattr(e, "problem", None) or e).split("\n", 1)[0]
    if "\\t" in text or "'\\t'" in text or "tab" in text.lower():
        text = "a tab indents a line (YAML indents with spaces only)"
    elif isinstance(e, yaml.constructor.ConstructorError) and "python/" in str(e):
        text = "a !!python tag (triage reads plain YAML only, never constructs objects)"
    elif isinstance(e, yaml.constructor.ConstructorError):
        text = "a tag plain YAML does not have"
    return text[:160] + where


def _json_docs(text: str, name: str) -> list[tuple[Any, yaml.Node | None]]:
    if len(text.encode("utf-8", "replace")) > deploy.MAX_BYTES:
        raise deploy.DeployError(f"deployment file larger than {deploy.MAX_BYTES} bytes")
    try:
        data = json.loads(text)
    except RecursionError:
        raise deploy.DeployError(f"{name}: JSON nested too deeply to read (hundreds of levels)") from None
    except ValueError as e:
        raise deploy.DeployError(f"{name}: a JSON document that cannot be read ({str(e)[:120]}): not a command line"
                                 ) from None
    return [(data, None)]


def _what(docs: list[tuple[Any, Any]]) -> str:
    kinds = sorted({str(d.get("kind")) for d, _ in docs if isinstance(d, dict) and d.get("kind")})
    if kinds:
        return "kind " + ", ".join(kinds[:5])
    keys = sorted({str(k) for d, _ in docs if isinstance(d, dict) for k in d})
    return "keys " + ", ".join(keys[:6]) if keys else "lists"


def read(text: str, file: str | None = None) -> deploy.Deployment | None:
    """The deployment ``text`` describes, or None when it is not one (then it is a command line).

    Raises DeployError when it is YAML or JSON that cannot be read, that is over the bounds, or that is structured
    but none of the shapes (a Service alone, a ConfigMap, a values file of another chart)."""
    if not text:
        return None
    name = file or "the deployment file"
    is_json = bool(_JSON_START.match(text))
    if not is_json and not deploy.looks_like_yaml(text):
        return None
    if is_json:
        docs: list[tuple[Any, Any]] = _json_docs(text, name)
    else:
        try:
            docs = deploy.load(text)
        except yaml.YAMLError as e:
            if _DESCRIBE.search(text[:200_000]):
                raise deploy.DeployError(f"{name} is `kubectl describe` output, not a command line: give it as a "
                                         "kubectl file (--kube-file), which reads its Args and events") from None
            raise deploy.DeployError(f"{name} cannot be read as YAML: {_problem(e)}; it is not judged as a "
                                     "command line") from None
    if any(isinstance(d, dict) and isinstance(d.get("servingEngineSpec"), dict) for d, _ in docs):
        return deploy_helm.read(docs, name)
    if any(isinstance(d, dict) and (d.get("kind") in deploy.WORKLOADS or d.get("kind") == "List") for d, _ in docs):
        return deploy.kubernetes(docs, name)
    if any(isinstance(d, dict) and isinstance(d.get("services"), dict) for d, _ in docs):
        return deploy.compose(docs, name)
    if any(isinstance(d, (dict, list)) for d, _ in docs):
        raise deploy.DeployError(f"{name} is a {'JSON' if is_json else 'YAML'} document ({_what(docs)}) but no "
                                 "Kubernetes workload, production-stack Helm values or compose file: there is no "
                                 "vLLM command line in it to judge")
    return None
