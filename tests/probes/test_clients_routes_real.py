"""Every client route against a real 0.32.0 lab server, through the real libraries (one shared server).

LiteLLM 1.83.14 (tests/probes/pinned_clients.py says why that release) runs in a child process of the real CLI
(``python -m triage probe --set clients``) with the pinned release first on PYTHONPATH, as a user who has it
would run the tool; the installed release (the extra's) runs in this process. LlamaIndex's routes run with the
installed llama-index-embeddings-openai / -openai-like (the ``clients`` extra pins them).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from triage.catalogue import get
from triage.catalogue import clients as cf
from triage.catalogue.versions import parse_version
from triage.findings import Status
from triage.lab import LabServer
from triage.probes import client_calls
from triage.probes.api import run_probes
from triage.target import Target

from .pinned_clients import LITELLM_NULL, pinned

pytestmark = pytest.mark.real_server
ROOT = Path(__file__).resolve().parents[2]
LITELLM = ["clients-litellm", "clients-litellm-openai", "clients-litellm-openai-float"]
LLAMAINDEX = ["clients-llamaindex-default", "clients-llamaindex-model", "clients-llamaindex-model-name",
              "clients-llamaindex-openai-like"]


def _cli(srv: LabServer, only: list[str], pythonpath: str) -> dict:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    p = subprocess.run([sys.executable, "-m", "triage", "probe", "--url", srv.url, "--set", "clients", "--only",
                        *only, "--format", "json", "--deadline", "120"], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=400)
    doc = json.loads(p.stdout)
    return {f["check"]: f for f in doc["findings"]}


def test_litellm_1_83_openai_route_names_encoding_format_null(server_032_livelock: LabServer) -> None:
    by = _cli(server_032_livelock, LITELLM, f"{pinned(*LITELLM_NULL)}{os.pathsep}{ROOT}")
    f = by["clients-litellm-openai"]
    facts = f["evidence"]["facts"]
    assert facts[cf.LIBRARY_VERSION] == LITELLM_NULL[1]
    assert f["status"] == "fail" and f["failure_mode"] == "litellm-encoding-format-null", f["title"]
    assert facts[cf.ENCODING_SENT] == "null" and facts[cf.STATUS] == 400 and "encoding_format" in facts[cf.MESSAGE]
    assert f["fix"] == get("litellm-encoding-format-null").fix({"model": server_032_livelock.served_model})
    for ok in ("clients-litellm", "clients-litellm-openai-float"):  # hosted_vllm/ and the float fix work
        assert by[ok]["status"] == "pass", by[ok]["title"]
    routes = by["clients-routes"]["evidence"]["routes"]
    assert len(routes) == 3 and any("openai/" in r and "litellm-encoding-format-null" in r for r in routes)


def test_every_route_installed_libraries(server_032_livelock: LabServer) -> None:
    res = run_probes(Target(url=server_032_livelock.url, model=server_032_livelock.served_model, timeout_s=120.0),
                     sets="clients", deadline_s=120.0, only=[*LITELLM, *LLAMAINDEX])
    by = {f.check: f for f in res.findings}
    v = parse_version(client_calls.library_version("clients-litellm-openai"))
    sends_null = v is not None and cf.LITELLM_NULL_FORMAT.contains(v)
    assert by["clients-litellm-openai"].status == (Status.FAIL if sends_null else Status.PASS)
    assert by["clients-litellm"].status == Status.PASS
    for check in ("clients-llamaindex-default", "clients-llamaindex-model"):
        f = by[check]
        assert f.status == Status.FAIL and f.failure_mode == "llamaindex-openai-model-name", (check, f.title)
    assert by["clients-llamaindex-default"].evidence["facts"][cf.MODEL_SENT] == cf.LLAMAINDEX_DEFAULT_MODEL
    assert by["clients-llamaindex-default"].evidence["facts"][cf.STATUS] == 404
    for check in ("clients-llamaindex-model-name", "clients-llamaindex-openai-like"):
        assert by[check].status == Status.PASS and by[check].evidence["cosine"] >= 0.99, by[check].title
    assert len(by["clients-routes"].evidence["routes"]) == len(LITELLM) + len(LLAMAINDEX)
