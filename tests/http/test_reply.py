"""triage.http.reply: what a call answers, as a value (one ``Reply`` for both clients), and what of it is stored."""
from __future__ import annotations

from triage.http.reply import STORED_LIST_ITEMS, STORED_LIST_KEEP, Reply, trim_for_storage


def test_reply_reads_its_status_and_body() -> None:
    r = Reply.of_text("GET", "/v1/models", 200, '{"data": []}', url="http://h/v1/models",
                      content_type="application/json", elapsed_s=0.012)
    assert r.ok and not r.transport_failed and r.json() == {"data": []} and r.body == {"data": []}
    assert r.summary() == "GET /v1/models: HTTP 200 in 12 ms"
    assert Reply.of_text("GET", "/x", 200, "not json").json() is None
    assert Reply.of_text("GET", "/x", 200, "not json").body == "not json"
    assert Reply.of_text("GET", "/x", 200, '"a json string"').json() == "a json string"
    assert Reply.of_text("GET", "/x", 200, "[" * 100_000).json() is None  # nested too deep: not JSON
    assert not Reply.of_text("GET", "/x", 302, location="http://elsewhere").ok


def test_ok_is_any_2xx_answer_of_either_client() -> None:
    assert Reply.of_text("POST", "/x", 204).ok and Reply("POST", "/x", {}, 201, {}).ok
    assert not Reply("POST", "/x", {}, 199).ok and not Reply("POST", "/x", {}, 300).ok
    assert not Reply("POST", "/x", {}, error="ConnectError: refused", error_kind="refused").ok


def test_a_failed_reply_says_why() -> None:
    r = Reply.of_text("GET", "/metrics", None, error_kind="timeout", error="ReadTimeout: no complete answer")
    assert r.transport_failed and not r.ok
    assert r.summary() == "GET /metrics: timeout (ReadTimeout: no complete answer)"
    assert Reply.of_text("GET", "/v1/models", 401, '{"error": "no key"}').describe().startswith(
        "GET /v1/models: HTTP 401: no key (an API key is required")
    assert Reply("GET", "/health").summary() == "GET /health: HTTP None in 0 ms"  # no elapsed_s yet


def test_a_reply_names_a_proxys_answer_and_never_the_servers() -> None:
    ex = Reply("POST", "/v1/embeddings", {"input": "x"}, status=504, body="<html>",
               proxy="nginx's 504 Gateway Timeout")
    assert not ex.ok and "a proxy's answer, not the server's" in ex.describe()
    assert ex.to_dict()["proxy"] == "nginx's 504 Gateway Timeout"
    plain = Reply("POST", "/v1/embeddings", None, status=400, body={"error": {"message": "too long"}})
    assert plain.error_message() == "too long" and "proxy" not in plain.to_dict()
    assert plain.describe() == "POST /v1/embeddings: HTTP 400: too long"
    assert plain.json() == {"error": {"message": "too long"}}
    assert Reply("GET", "/metrics", None, 200, "# HELP x").json() is None  # a text body is no JSON


def test_to_dict_trims_vectors_unless_asked_not_to() -> None:
    ex = Reply("POST", "/v1/embeddings", {"input": "x"}, status=200, body={"data": [{"embedding": [0.5] * 20}]})
    assert ex.to_dict()["body"]["data"][0] == {"embedding": [0.5] * 8, "embedding_len": 20}
    assert ex.to_dict(trim_vectors=False)["body"]["data"][0]["embedding"] == [0.5] * 20


def test_the_stored_shape_is_the_probes_not_the_sync_clients() -> None:
    """What a probe outcome stores keeps its keys: the sync client's text, url and headers are not stored."""
    r = Reply.of_text("POST", "/v1/embeddings", 400, '{"detail": "x"}', url="http://h/v1/embeddings",
                      content_type="application/json", elapsed_s=0.5)
    assert list(r.to_dict()) == ["method", "path", "request", "status", "body", "error", "elapsed_s"]
    assert r.to_dict()["body"] == {"detail": "x"} and r.error_message() == "x"


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


def test_a_verdict_reads_fields_only_from_a_json_object() -> None:
    """ok is any 2xx now: a 2xx whose body is text or a list gives a verdict no field to read, never a crash."""
    assert Reply.of_text("POST", "/tokenize", 201, "created").obj() == {}
    assert Reply.of_text("POST", "/tokenize", 200, "[1, 2]").obj() == {}
    assert Reply("GET", "/v1/models", None, 204).obj() == {}
    assert Reply.of_text("POST", "/tokenize", 200, '{"count": 3}').obj() == {"count": 3}
