"""Client-library and Open WebUI verdicts on results recorded from real lab servers and real client libraries.

Recordings: tests/fixtures/real/vectors/README.md. Wording and fixes are asserted against the
catalogue records, never copied.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from triage.catalogue import get
from triage.catalogue.vectors import LANGCHAIN_SETTING
from triage.findings import Status
from triage.probes import client_libraries as clients, openwebui
from triage.probes.conformance_findings import vectors

from .recorded import VECTORS, recording, reply_of

SMALL = VECTORS / "0.32.0-tiny-qwen3-livelock" / "vectors.json"  # BERT vocabulary, ~30k ids
BIG = VECTORS / "0.32.0-tiny-qwen3-bigvocab-defaults" / "vectors.json"  # 120k word-level vocabulary


def case(check: str) -> clients.ClientCase:
    return next(c for c in clients.CASES if c.check == check)


def result(rec: dict, check: str) -> clients.ClientResult:
    return clients.ClientResult(**rec["clients"][check])


def judge(rec: dict, check: str):
    plain = vectors(reply_of(rec["plain_clients"]))
    return clients.verdict(case(check), result(rec, check), plain, "http://h/v1", rec["target"]["model"])


@pytest.mark.parametrize("check", ["clients-openai-float", "clients-openai-base64", "clients-openai-default",
                                   "clients-langchain-no-ctx-check", "clients-litellm"])
def test_clients_that_send_text_get_the_plain_vectors(check: str) -> None:
    rec = recording(SMALL)
    f = judge(rec, check)
    assert f.status == Status.PASS, f.title
    assert f.evidence["cosine"] >= 0.99


def test_langchain_defaults_small_vocab_is_refused_with_400() -> None:
    rec = recording(SMALL)
    r = result(rec, "clients-langchain-defaults")
    assert "out of vocabulary" in (r.error or "")
    assert any(s["input_kind"] == "token ids" for s in r.sent)
    f = judge(rec, "clients-langchain-defaults")
    assert f.status == Status.FAIL
    assert LANGCHAIN_SETTING in f.fix
    mode = get("client-token-ids")
    assert f.fix == mode.fix({"client": f"{case('clients-langchain-defaults').client} "
                                        f"({case('clients-langchain-defaults').setting})"})
    assert f.refs == list(mode.refs)


def test_langchain_defaults_big_vocab_is_silent_and_meaningless() -> None:
    rec = recording(BIG)
    r = result(rec, "clients-langchain-defaults")
    assert r.error is None and r.vectors  # 200: vLLM accepted the tiktoken ids
    f = judge(rec, "clients-langchain-defaults")
    assert f.status == Status.FAIL
    assert abs(f.evidence["cosine"]) < 0.5
    assert LANGCHAIN_SETTING in f.fix
    assert judge(rec, "clients-langchain-no-ctx-check").status == Status.PASS


def test_a_cut_base64_vector_fails_naming_the_client() -> None:
    rec = recording(SMALL)
    r = result(rec, "clients-openai-base64")
    cut = clients.ClientResult([v[: len(v) // 4] for v in r.vectors], r.sent)
    f = clients.verdict(case("clients-openai-base64"), cut, vectors(reply_of(rec["plain_clients"])), "b", "m")
    assert f.status == Status.FAIL and "OpenAI SDK" in f.title
    assert f.fix == get("base64-truncated").fix({})


def test_missing_library_is_unknown() -> None:
    f = clients.verdict(case("clients-litellm"), clients.ClientResult(error="not installed: x"), [[1.0]], "b", "m")
    assert f.status == Status.UNKNOWN


def test_offline_tiktoken_cache_is_named_by_sha1_of_the_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    d, how = clients.offline_tiktoken(tmp_path)
    if d is None:
        pytest.skip(how)
    assert (tmp_path / hashlib.sha1(clients.CL100K_URL.encode()).hexdigest()).stat().st_size > 1_000_000
    import tiktoken
    assert tiktoken.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]


@pytest.mark.parametrize("name,problem", [("missing-v1", "missing-v1"), ("model-name", "model-name")])
def test_openwebui_misconfigurations(name: str, problem: str) -> None:
    rec = recording(SMALL)
    e, models = (reply_of(d) for d in rec["openwebui"][name])
    s = openwebui.OpenWebUISettings(e.path.rsplit("/embeddings", 1)[0], None, e.request["model"], 1)
    f = openwebui.verdict(s, e, models)
    assert e.status == 404 and f.status == Status.FAIL
    assert f.evidence["problem"] == problem
    assert f.fix == get("openwebui-misconfig").fix({"problem": problem, "base_url": s.base_url,
                                                    "served": f.evidence["served_models"], "model": s.model})


def test_openwebui_good_settings_pass_with_its_batch() -> None:
    rec = recording(SMALL)
    e, models = (reply_of(d) for d in rec["openwebui"]["ok"])
    s = openwebui.OpenWebUISettings(e.path.rsplit("/embeddings", 1)[0], None, e.request["model"], 4)
    f = openwebui.verdict(s, e, models)
    assert f.status == Status.PASS and f.evidence["request"]["batch"] == 4


def test_openwebui_settings_from_env() -> None:
    env = {"RAG_OPENAI_API_BASE_URL": "http://x:8000", "RAG_OPENAI_API_KEY": "sk-secret-42", "RAG_EMBEDDING_MODEL": "m",
           "RAG_EMBEDDING_BATCH_SIZE": "8"}
    s = openwebui.OpenWebUISettings.from_env(env)
    assert s is not None and (s.base_url, s.model, s.batch_size) == ("http://x:8000", "m", 8)
    assert s.public()["api_key"] == "set" and "sk-secret-42" not in json.dumps(s.public())
    assert openwebui.OpenWebUISettings.from_env({}) is None


def test_openwebui_missing_key_recorded_401() -> None:
    p = VECTORS / "0.32.0-tiny-qwen3-apikey" / "openwebui-401.json"
    if not p.exists():
        pytest.skip("no recording")
    e, models = (reply_of(d) for d in json.loads(p.read_text()))
    s = openwebui.OpenWebUISettings(e.path.rsplit("/embeddings", 1)[0], None, e.request["model"], 2)
    f = openwebui.verdict(s, e, models)
    assert e.status == 401 and f.status == Status.FAIL and f.evidence["problem"] == "api-key"
    assert f.fix == get("openwebui-misconfig").fix({"problem": "api-key"})
