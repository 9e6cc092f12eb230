"""Drop or upload a deployment file into the command-line field; owns its keys and returns the file's name.

A Kubernetes manifest (also `kubectl get pod -o yaml`), production-stack Helm values, `helm template` output or a
compose file is read by the engine's deployment reader (triage/sources/deploy_read.py) the same as when pasted:
this widget only moves the file's text into the field it is given (``field_key``) and says what the reader
found in it, so the user sees, before running anything, which vLLM server of the file the checklist will judge.
"""
from __future__ import annotations

from typing import Optional

import streamlit as st

from triage.redact import drop_secret_documents
from triage.sources import deploy, deploy_read

MAX_BYTES = deploy.MAX_BYTES  # what the reader loads at most; a bigger file is refused here, with the limit
KEY = "deploy_upload"


def read_upload(name: str, data: bytes) -> tuple[Optional[str], tuple[str, str]]:
    """(the text to put in the field, or None; (message kind, message)) for one uploaded file."""
    if len(data) > MAX_BYTES:
        return None, ("error", f"{name} is {len(data) // 1024} KiB; a deployment file is read up to "
                               f"{MAX_BYTES // 1024} KiB. Paste its vLLM container's part instead.")
    text, gone = drop_secret_documents(data.decode("utf-8", errors="replace"))  # never in the field (issue 43)
    dropped = f" Dropped {', '.join(gone)}: a Secret's data is never read or stored." if gone else ""
    try:
        dep = deploy_read.read(text, name)
    except deploy.DeployError as e:
        return None, ("error", f"{name}: {e}.{dropped}")
    if dep is None:
        return text, ("info", f"{name} is no Kubernetes, Helm values or compose file: read as a command line.{dropped}")
    if not dep.targets:
        return text, ("warning", f"{name}: no vLLM container, model spec or service in it "
                                 f"({'; '.join(dep.skipped) or 'nothing to run'}).{dropped}")
    first = dep.targets[0]
    more = (f" It runs {len(dep.targets)} vLLM servers ({'; '.join(dep.names())}): the checklist judges the first; "
            "`python -m triage check --deploy-target NAME|all` judges another or all.") if len(dep.targets) > 1 else ""
    return text, ("success", f"{name}: {dep.shape} file, judged as {first.name} ({first.picked}).{more}{dropped}")


def _load(field_key: str) -> None:
    up = st.session_state.get(f"{KEY}.file")
    if up is None:  # the file was removed: the field keeps what it holds
        st.session_state.pop(f"{KEY}.msg", None)
        return
    text, msg = read_upload(up.name, up.getvalue())
    st.session_state[f"{KEY}.msg"] = msg
    if text is not None:
        st.session_state[field_key] = text
        st.session_state[f"{KEY}.name"] = up.name


def file_name() -> Optional[str]:
    """The name of the file whose text the field holds (the deployment facts cite it), else None."""
    return st.session_state.get(f"{KEY}.name")


def show(field_key: str) -> Optional[str]:
    """The uploader, filling ``field_key`` (a text area drawn after it) with the file's text on upload."""
    st.file_uploader("…or drop a deployment file: Kubernetes manifest, production-stack Helm values, compose file",
                     type=["yaml", "yml", "json", "txt"], key=f"{KEY}.file", on_change=_load, args=(field_key,))
    msg = st.session_state.get(f"{KEY}.msg")
    if msg:
        getattr(st, msg[0])(msg[1])
    return file_name()
