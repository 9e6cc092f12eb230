"""Conformance verdicts on responses recorded from real vLLM servers (0.31.0, 0.32.0, BERT)."""
from __future__ import annotations

import pytest

from triage.findings import Status
from triage.probes import conformance_findings as cc

from .recorded import DIRS, reply

QWEN = DIRS[:2]


@pytest.mark.parametrize("server", DIRS)
def test_v1_prefix_refutes_the_guide(server: str) -> None:
    f = cc.v1_prefix(reply(server, "embed-single"), reply(server, "no-v1-prefix"))
    assert f.status == Status.PASS and f.evidence["verdict"] == "refuted"
    assert f.evidence["exchanges"][1]["status"] == 404
    assert "without `/v1`" in f.evidence["guide_claim"]


@pytest.mark.parametrize("server", DIRS)
def test_array_and_token_ids_accepted(server: str) -> None:
    f = cc.array_input(reply(server, "embed-list"), 2)
    assert f.status == Status.PASS and f.evidence["verdict"] == "refuted"
    t = cc.token_ids(reply(server, "embed-token-ids"), reply(server, "embed-list"))
    assert t.status == Status.PASS


@pytest.mark.parametrize("server", DIRS)
def test_base64_equals_float(server: str) -> None:
    f = cc.base64_equals_float(reply(server, "embed-float"), reply(server, "embed-base64"))
    assert f.status == Status.PASS, f.title
    assert f.evidence["max_abs_diff"] < 1e-6


@pytest.mark.parametrize("server", DIRS)
def test_dimension_and_norm(server: str) -> None:
    f = cc.dimension_norm([reply(server, "embed-list"), reply(server, "embed-single")])
    assert f.status == Status.PASS
    assert f.evidence["dimension"] == (384 if "minilm" in server else 128)


@pytest.mark.parametrize("server", DIRS)
def test_determinism_same_response_twice(server: str) -> None:
    e = reply(server, "embed-float")
    assert cc.determinism(e, e).status == Status.PASS
    other = reply(server, "embed-single")  # a different text: not ~1
    assert cc.determinism(e, other).status == Status.FAIL


@pytest.mark.parametrize("server", DIRS)
def test_overlong_and_truncate_too_big_are_400(server: str) -> None:
    f = cc.overlong_400(reply(server, "error-overlong"), 256, 257)
    assert f.status == Status.PASS
    assert "maximum context length is 256" in f.evidence["exchanges"][0]["body"]["error"]["message"]
    g = cc.truncate_too_big_400(reply(server, "error-truncate-too-big"), 256)
    assert g.status == Status.PASS


def test_overlong_accepted_is_a_failure() -> None:
    f = cc.overlong_400(reply(QWEN[1], "embed-single"), 256, 300)
    assert f.status == Status.FAIL


@pytest.mark.parametrize("server", DIRS)
def test_dimensions_rejected_without_matryoshka(server: str) -> None:
    f = cc.dimensions(reply(server, "dimensions-32"), 32, False)
    assert f.status == Status.PASS and "does not declare Matryoshka" in f.title
    assert "is_matryoshka" in f.fix


def test_dimensions_accepted_when_truncated_right() -> None:
    f = cc.dimensions(reply(QWEN[1], "embed-single"), 128, True)  # a 128-value vector answers dimensions=128
    assert f.status == Status.PASS and "accepted" in f.title


@pytest.mark.parametrize("server", DIRS)
def test_normalize_removed(server: str) -> None:
    f = cc.normalize_removed(reply(server, "error-normalize"))
    assert f.status == Status.PASS and f.evidence["removed"] is True


@pytest.mark.parametrize("server", QWEN)
def test_usage_tokens_vs_tokenize(server: str) -> None:
    emb, tok = reply(server, "embed-token-ids"), reply(server, "tokenize")
    f = cc.usage_tokens(emb, tok)  # [101, 7592, 2088, 102] = "hello world" with specials: 4 tokens both
    assert f.status == Status.PASS, f.title


def test_vectors_decode_base64_little_endian() -> None:
    v = cc.vectors(reply(QWEN[0], "embed-base64"))
    assert len(v) == 1 and len(v[0]) == 128
