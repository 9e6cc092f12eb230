"""Which shape a deployment file is, read by its reader (triage/sources/deploy.py, deploy_helm.py)."""

from __future__ import annotations

import yaml

from triage.sources import deploy, deploy_helm


def read(text: str, file: str | None = None) -> deploy.Deployment | None:
    """The deployment ``text`` describes, or None when it is not one (then it is a command line).

    Raises DeployError when it is YAML of a deployment shape but over the bounds."""
    if not text or not deploy.looks_like_yaml(text):
        return None
    try:
        docs = deploy.load(text)
    except yaml.YAMLError:
        return None
    name = file or "the deployment file"
    if any(isinstance(d, dict) and isinstance(d.get("servingEngineSpec"), dict) for d, _ in docs):
        return deploy_helm.read(docs, name)
    if any(isinstance(d, dict) and (d.get("kind") in deploy.WORKLOADS or d.get("kind") == "List") for d, _ in docs):
        return deploy.kubernetes(docs, name)
    if any(isinstance(d, dict) and isinstance(d.get("services"), dict) for d, _ in docs):
        return deploy.compose(docs, name)
    return None
