"""Every client route's verdict on calls recorded against a real 0.32.0 (tests/fixtures/real/clients/README.md).

LiteLLM 1.83.14 (the release that sends encoding_format: null) and the installed 1.110.2, LlamaIndex 0.6.0 /
0.4.0. The records' clues are read on the recorded facts (a table: each record against the calls of the others),
and wording and fixes are asserted against the catalogue records, never copied.
"""
from __future__ import annotations

import dataclasses

import pytest

from triage.catalogue import clients as cf
from triage.catalogue import get
from triage.catalogue.symptoms import Case
from triage.findings import Status
from triage.probes import client_libraries as clients
from triage.probes.client_calls import CALLS
from triage.probes.conformance_findings import vectors

from .recorded import REAL, VECTORS, recording, reply_of

HERE = REAL / "clients" / "0.32.0-tiny-qwen3-livelock"
NULL = HERE / "routes-litellm-1.83.14.json"   # LiteLLM 1.83.14 first on the path (pinned_clients.py)
FIXED = HERE / "routes-litellm-1.110.2.json"  # the extra's LiteLLM at the time of recording
SMALL = VECTORS / "0.32.0-tiny-qwen3-livelock" / "vectors.json"  # LangChain's token ids refused (400)


def case(check: str) -> clients.ClientCase:
    return next(c for c in clients.CASES if c.check == check)


def judge(rec: dict, check: str, plain_status: int | None = None):
    plain_ex = reply_of(rec["plain"])
    served = [d["id"] for d in rec["models"]["body"]["data"]]
    return clients.verdict(case(check), clients.ClientResult(**rec["clients"][check]), vectors(plain_ex),
                           "http://h/v1", rec["target"]["model"], served=served,
                           plain_status=plain_status or plain_ex.status)


def test_every_route_is_a_case_with_a_call() -> None:
    assert {c.check for c in clients.CASES} == set(CALLS)


def test_litellm_1_83_openai_route_is_named_encoding_format_null() -> None:
    rec = recording(NULL)
    f = judge(rec, "clients-litellm-openai")
    mode = get("litellm-encoding-format-null")
    facts = f.evidence["facts"]
    assert f.status == Status.FAIL and f.failure_mode == mode.id, f.title
    assert facts[cf.ENCODING_SENT] == "null" and facts[cf.STATUS] == 400 and facts[cf.LIBRARY_VERSION] == "1.83.14"
    assert "encoding_format" in facts[cf.MESSAGE]
    assert f.fix == mode.fix({"model": rec["target"]["model"]}) and f.refs == list(mode.refs)
    for ok in ("clients-litellm", "clients-litellm-openai-float"):  # hosted_vllm/ and the float fix
        assert judge(rec, ok).status == Status.PASS


def test_vllm_itself_refuses_a_null_encoding_format() -> None:
    rec = recording(NULL)
    ex = reply_of(rec["plain_null"])
    assert ex.status == 400 and "encoding_format" in ex.error_message()


@pytest.mark.parametrize("check", ["clients-litellm", "clients-litellm-openai", "clients-litellm-openai-float"])
def test_a_litellm_that_omits_the_field_passes_every_route(check: str) -> None:
    rec = recording(FIXED)
    f = judge(rec, check)
    assert f.status == Status.PASS, f.title
    assert f.evidence["facts"][cf.ENCODING_SENT] in ("absent", "float")


@pytest.mark.parametrize("check,sent", [("clients-llamaindex-default", cf.LLAMAINDEX_DEFAULT_MODEL),
                                        ("clients-llamaindex-model", None)])
def test_llamaindex_openai_embedding_names_its_model_trap(check: str, sent: str | None) -> None:
    rec = recording(FIXED)
    f = judge(rec, check)
    mode = get("llamaindex-openai-model-name")
    assert f.status == Status.FAIL and f.failure_mode == mode.id, f.title
    assert f.fix == mode.fix({"model": rec["target"]["model"]})
    assert f.evidence["facts"][cf.MODEL_SENT] == sent


@pytest.mark.parametrize("check", ["clients-llamaindex-model-name", "clients-llamaindex-openai-like"])
def test_llamaindex_routes_that_send_the_model_name_pass(check: str) -> None:
    f = judge(recording(FIXED), check)
    assert f.status == Status.PASS and f.evidence["cosine"] >= 0.99, f.title


def _facts(rec: dict, check: str, **over) -> dict:
    return {**judge(rec, check).evidence["facts"], **over}


def _langchain_refused() -> dict:
    rec = recording(SMALL)
    plain = vectors(reply_of(rec["plain_clients"]))
    f = clients.verdict(case("clients-langchain-defaults"), clients.ClientResult(**rec["clients"][
        "clients-langchain-defaults"]), plain, "http://h/v1", rec["target"]["model"])
    return f.evidence["facts"]


def _cut_base64() -> dict:
    rec = recording(SMALL)
    r = clients.ClientResult(**rec["clients"]["clients-openai-base64"])
    cut = dataclasses.replace(r, vectors=[v[: len(v) // 4] for v in r.vectors])
    plain = vectors(reply_of(rec["plain_clients"]))
    return clients.verdict(case("clients-openai-base64"), cut, plain, "h", "m").evidence["facts"]


RECORDS = ("litellm-encoding-format-null", "llamaindex-openai-model-name", "client-token-ids", "base64-truncated")


@pytest.mark.parametrize("name,facts,names", [
    ("litellm-null", lambda: _facts(recording(NULL), "clients-litellm-openai"), "litellm-encoding-format-null"),
    ("llamaindex-ada", lambda: _facts(recording(FIXED), "clients-llamaindex-default"),
     "llamaindex-openai-model-name"),
    ("langchain-ids", _langchain_refused, "client-token-ids"),
    ("base64-cut", _cut_base64, "base64-truncated"),
    # the same LiteLLM call on a server that refuses the texts themselves (the plain request's recorded 400):
    # a server-side 400, which no client record may claim
    ("server-400", lambda: _facts(recording(NULL), "clients-litellm-openai",
                                  **{cf.PLAIN_STATUS: recording(NULL)["plain_null"]["status"]}), None),
])
def test_each_record_singles_out_its_own_call(name: str, facts, names: str | None) -> None:
    named, _ = clients.cause_of(facts(), RECORDS)
    assert (named.id if named else None) == names


def test_the_clues_read_a_run_of_several_findings() -> None:
    rec = recording(NULL)
    fs = (judge(rec, "clients-litellm"), judge(rec, "clients-litellm-openai"), judge(rec, "clients-openai-float"))
    w = get("litellm-encoding-format-null").clues[0].read(Case(findings=fs))
    assert w is not None and w.direction == "for" and w.decisive
    w = get("client-token-ids").clues[0].read(Case(findings=fs))
    assert w is not None and w.direction == "against"


def test_the_routes_finding_lists_every_route_tried() -> None:
    rec = recording(NULL)
    fs = [judge(rec, c.check) for c in clients.CASES if c.check != "clients-langchain-defaults"]
    r = clients.routes(fs)
    assert len(r.evidence["routes"]) == len(fs) and r.status == Status.FAIL
    assert any("openai/" in line and "litellm-encoding-format-null" in line for line in r.evidence["routes"])
    assert "LlamaIndex OpenAILikeEmbedding model_name='<model>'" in r.evidence["working"]


@pytest.mark.parametrize("path,checks,named", [
    (NULL, ["clients-litellm", "clients-litellm-openai", "clients-litellm-openai-float"],
     "litellm-encoding-format-null"),
    (FIXED, ["clients-llamaindex-default", "clients-llamaindex-model", "clients-llamaindex-openai-like"],
     "llamaindex-openai-model-name"),
])
def test_the_differential_names_a_librarys_cause_from_its_routes(path, checks: list[str], named: str) -> None:
    from triage.differential import diagnose

    rec = recording(path)
    fs = [judge(rec, c) for c in checks]
    by = {d.check: d for d in diagnose([*fs, clients.routes(fs)], {}, {})}
    d = by["diagnosis-client-error"]
    assert d.evidence["named"] == named and d.fix == get(named).fix({})
    assert set(by) == {"diagnosis-client-error"}  # a refused client call is no wrong vector, no server rejection


@pytest.mark.parametrize("check", ["clients-langchain-query", "clients-llamaindex-query"])
def test_query_methods_send_the_query_as_given(check: str) -> None:
    """What the Qwen3 query instruction advice is about: no library adds an instruction to a query (measured)."""
    f = judge(recording(FIXED), check)
    assert f.status == Status.PASS and f.evidence["facts"][cf.QUERY_AS_GIVEN] is True, f.title
    assert f.evidence["query_sent"] == [f'["{clients.TEXTS[0]}"]']
