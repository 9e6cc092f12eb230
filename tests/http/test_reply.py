"""triage.http.reply: what a call answers, as a value (Reply, Exchange), and what of it is stored."""
from __future__ import annotations

from triage.http.reply import STORED_LIST_ITEMS, STORED_LIST_KEEP, Exchange, Reply, trim_for_storage


def test_reply_reads_its_status_and_body() -> None:
    r = Reply("GET", "http://h/v1/models", "/v1/models", 200, '{"data": []}', "application/json", 0.012)
    assert r.ok and not r.transport_failed and r.json() == {"data": []}
    assert r.summary() == "GET /v1/models: HTTP 200 in 12 ms"
    assert Reply("GET", "u", "/x", 200, "not json").json() is None
    assert not Reply("GET", "u", "/x", 302, location="http://elsewhere").ok


def test_a_failed_reply_says_why() -> None:
    r = Reply("GET", "u", "/metrics", error_kind="timeout", error="ReadTimeout: no complete answer")
    assert r.transport_failed and not r.ok
    assert r.summary() == "GET /metrics: timeout (ReadTimeout: no complete answer)"
    assert Reply("GET", "u", "/v1/models", 401, '{"error": "no key"}').describe().startswith(
        "GET /v1/models: HTTP 401: no key (an API key is required")


def test_an_exchange_names_a_proxys_answer_and_never_the_servers() -> None:
    ex = Exchange("POST", "/v1/embeddings", {"input": "x"}, status=504, body="<html>",
                  proxy="nginx's 504 Gateway Timeout")
    assert not ex.ok and "a proxy's answer, not the server's" in ex.describe()
    assert ex.to_dict()["proxy"] == "nginx's 504 Gateway Timeout"
    plain = Exchange("POST", "/v1/embeddings", None, status=400, body={"error": {"message": "too long"}})
    assert plain.error_message() == "too long" and "proxy" not in plain.to_dict()
    assert plain.describe() == "POST /v1/embeddings: HTTP 400: too long"


def test_to_dict_trims_vectors_unless_asked_not_to() -> None:
    ex = Exchange("POST", "/v1/embeddings", {"input": "x"}, status=200, body={"data": [{"embedding": [0.5] * 20}]})
    assert ex.to_dict()["body"]["data"][0] == {"embedding": [0.5] * 8, "embedding_len": 20}
    assert ex.to_dict(trim_vectors=False)["body"]["data"][0]["embedding"] == [0.5] * 20


def test_trim_for_storage_keeps_heads_and_lengths() -> None:
    assert trim_for_storage({"tokens": list(range(100))}) == {"tokens": list(range(64)), "tokens_len": 100}
    long = trim_for_storage("y" * 5000)
    assert long.startswith("y" * 4000) and long.endswith("[5000 chars]")
    many = trim_for_storage(list(range(STORED_LIST_ITEMS + 1)))
    assert len(many) == STORED_LIST_KEEP + 1
    assert many[-1] == f"... and {STORED_LIST_ITEMS + 1 - STORED_LIST_KEEP:,} more"
    deep: object = 1
    for _ in range(40):
        deep = [deep]
    assert "[nested too deep]" in repr(trim_for_storage(deep))
