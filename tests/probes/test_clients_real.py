"""The clients set against real lab servers, through the real client libraries.

Both shapes of LangChain's token-id trap: the tiny Qwen3 with BERT's ~30k vocabulary refuses the
tiktoken ids (400), the 120k-vocabulary lab model accepts them and returns meaningless vectors.
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from triage.catalogue import get
from triage.catalogue.vectors import LANGCHAIN_SETTING
from triage.findings import Status
from lab_servers import serve
from triage.lab import LabServer
from triage.probes.api import run_probes
from triage.target import Target

pytestmark = pytest.mark.real_server


def spec(srv: LabServer) -> object:
    """The probe target."""
    return Target(url=srv.url, model=srv.served_model, timeout_s=120.0)
LANGCHAIN = ["clients-langchain-defaults", "clients-langchain-no-ctx-check"]


def _probe(srv: LabServer, only: list[str] | None = None):
    res = run_probes(spec(srv), sets="clients", deadline_s=120.0,
                     only=only)
    return {f.check: f for f in res.findings}


@pytest.fixture(scope="module")
def server_032_bigvocab() -> Iterator[LabServer]:
    yield from serve("0.32.0", "tiny-qwen3-bigvocab", "defaults", ["--max-model-len", "256"], install_missing=False)


def _assert_langchain(by: dict) -> None:
    mode = get("client-token-ids")
    f = by["clients-langchain-defaults"]
    assert f.status == Status.FAIL, f.title
    assert LANGCHAIN_SETTING in f.evidence["setting"] and LANGCHAIN_SETTING in f.fix
    assert f.refs == list(mode.refs)
    ok = by["clients-langchain-no-ctx-check"]
    assert ok.status == Status.PASS, ok.title
    assert ok.evidence["cosine"] >= 0.99


def test_langchain_defaults_fail_and_false_passes_small_vocab(server_032_livelock: LabServer) -> None:
    by = _probe(server_032_livelock)
    _assert_langchain(by)
    assert "out of vocabulary" in by["clients-langchain-defaults"].evidence["error"]
    for check in ("clients-openai-float", "clients-openai-base64", "clients-openai-default", "clients-litellm",
                  "clients-openwebui"):
        assert by[check].status == Status.PASS, (check, by[check].title)


def test_langchain_defaults_big_vocab_200_meaningless(server_032_bigvocab: LabServer) -> None:
    by = _probe(server_032_bigvocab, LANGCHAIN)
    _assert_langchain(by)
    f = by["clients-langchain-defaults"]
    assert "error" not in f.evidence and abs(f.evidence["cosine"]) < 0.5


def test_openwebui_without_the_servers_key_gets_401(server_032_apikey: LabServer) -> None:
    from triage.probes import openwebui
    key = server_032_apikey.args[server_032_apikey.args.index("--api-key") + 1]
    base = server_032_apikey.url + "/v1"
    f, exs = openwebui.check(openwebui.OpenWebUISettings(base, None, server_032_apikey.served_model, 2),
                             server_032_apikey.url)
    assert exs[0].status == 401 and f.status == Status.FAIL and f.evidence["problem"] == "api-key"
    assert f.fix == get("openwebui-misconfig").fix({"problem": "api-key"})
    ok, _ = openwebui.check(openwebui.OpenWebUISettings(base, key, server_032_apikey.served_model, 2),
                            server_032_apikey.url)
    assert ok.status == Status.PASS and key not in str(ok.evidence)
