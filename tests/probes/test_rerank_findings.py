"""The rerank set's pure verdicts on answers recorded from real 0.31.0/0.32.0 servers (tests/fixtures/real/rerank/)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triage.catalogue import get
from triage.http import Reply
from triage.findings import Status
from triage.probes import rerank_findings as rc
from triage.probes.rerank_clients import RerankResult, verdict

REC = Path(__file__).parent.parent / "fixtures" / "real" / "rerank"


def ex(folder: str, name: str) -> Reply:
    d = json.loads((REC / folder / f"{name}.json").read_text())
    return Reply(d["request"]["method"], d["request"]["path"], d["request"]["body"], d["status"], d["body"])


def docs(folder: str) -> list[str]:
    return ex(folder, "rerank").request["documents"]  # type: ignore[index]


@pytest.mark.parametrize("folder, status", [
    pytest.param("0.32.0-rerank", Status.PASS, id="overrides-all-paths"),
    pytest.param("0.31.0-rerank", Status.PASS, id="0.31-all-paths"),
    pytest.param("0.32.0-rerank-convert-classify", Status.FAIL, id="convert-classify-404"),
])
def test_paths(folder: str, status: Status) -> None:
    exs = {p: ex(folder, n) for p, n in (("/rerank", "rerank"), ("/v1/rerank", "v1-rerank"),
                                          ("/v2/rerank", "v2-rerank"), ("/score", "score"))}
    f = rc.check_paths(exs, "http://127.0.0.1:8000")
    assert f.status == status
    if status == Status.FAIL:
        assert f.fix == get("rerank-api-contract").fix({"base": "http://127.0.0.1:8000"})


@pytest.mark.parametrize("folder", ["0.32.0-rerank", "0.31.0-rerank", "0.32.0-rerank-no-overrides"])
def test_shapes_top_n_and_score_agree(folder: str) -> None:
    full = ex(folder, "rerank")
    assert rc.check_rerank_shape(full, docs(folder)).status == Status.PASS
    assert rc.check_score_consistent(ex(folder, "score"), full).status == Status.PASS
    assert rc.check_top_n(ex(folder, "rerank-top-n"), full, 1).status == Status.PASS


def test_paths_404_with_classify_200_is_the_missing_score_head() -> None:
    folder = "0.32.0-rerank-convert-classify"
    exs = {p: ex(folder, n) for p, n in (("/rerank", "rerank"), ("/v2/rerank", "v2-rerank"), ("/score", "score"))}
    f = rc.check_paths(exs, "http://127.0.0.1:8000", ex(folder, "classify"))
    assert f.status == Status.FAIL and f.failure_mode == "classify-without-score-head"
    assert f.fix == get("classify-without-score-head").fix({})


def test_shape_fails_on_unsorted_results() -> None:
    full = ex("0.32.0-rerank", "rerank")
    body = dict(full.body)
    body["results"] = list(reversed(body["results"]))
    bad = Reply(full.method, full.path, full.request, 200, body)
    f = rc.check_rerank_shape(bad, docs("0.32.0-rerank"))
    assert f.status == Status.FAIL and "not sorted" in f.title


def test_long_document_warns_with_the_record_fix() -> None:
    f = rc.check_long_document(ex("0.32.0-rerank", "rerank-long"), ex("0.32.0-rerank", "rerank-long-truncated"),
                               256, 255)
    assert f.status == Status.WARN
    assert f.fix == get("rerank-long-document").fix({"max_model_len": 256})
    assert "255" in f.fix  # max_model_len - 1 on < 0.32.0


def test_served_task_without_overrides_fails_naming_them() -> None:
    folder = "0.32.0-rerank-no-overrides"
    model = ex(folder, "models").body["data"][0]["id"]
    f = rc.check_served_task(ex(folder, "embeddings"), ex(folder, "classify"), model, ["Qwen3ForCausalLM"])
    assert f.status == Status.FAIL
    assert f.fix == get("reranker-overrides-missing").fix({"model": model})
    assert "is_original_qwen3_reranker" in f.fix and "classifier_from_token" in f.fix


def test_served_task_with_overrides_passes() -> None:
    folder = "0.32.0-rerank"
    f = rc.check_served_task(ex(folder, "embeddings"), ex(folder, "classify"), "m-reranker", ["Qwen3ForCausalLM"])
    assert f.status == Status.PASS


def _case(folder: str) -> dict:
    """The recorded /rerank as a ranking case: the relevant document (index 1 in capture.py) moved first."""
    full = ex(folder, "rerank")
    sc = rc.rerank_scores(full)
    assert sc is not None
    d = docs(folder)
    order = [1, 0, 2]
    return {"query": full.request["query"], "documents": [d[i] for i in order], "scores": [sc[i] for i in order]}


def test_ranking_passes_with_overrides_and_fails_flat_without() -> None:
    ok = rc.check_ranking([_case("0.32.0-rerank")], None, True)
    assert ok.status == Status.PASS
    flat = rc.check_ranking([_case("0.32.0-rerank-no-overrides")], None, False)
    assert flat.status == Status.FAIL and "cosine" in flat.title
    shown = flat.evidence["cases"][0]
    assert shown["expected_order"] == [0, 1, 2] and len(shown["served_order"]) == 3


def test_ranking_unknown_on_random_weights() -> None:
    f = rc.check_ranking([_case("0.32.0-rerank")], "random weights (seed 0)", True)
    assert f.status == Status.UNKNOWN


def test_langchain_null_max_tokens_per_doc_recorded() -> None:
    doc = json.loads((REC / "0.32.0-rerank" / "probe-rerank-clients.json").read_text())
    lc = next(f for f in doc["findings"] if f["check"] == "rerank-client-langchain")
    res = RerankResult(error=lc["evidence"]["error"], status=400)
    f = verdict("rerank-client-langchain", res, {0: 0.2, 1: 0.6}, "http://h:1", "m")
    assert f.status == Status.FAIL
    assert f.fix == get("rerank-api-contract").fix({"base": "http://h:1", "problem": "null-max-tokens-per-doc"})
    ok = verdict("rerank-client-cohere", RerankResult(scores={0: 0.2, 1: 0.6}), {0: 0.2, 1: 0.6}, "http://h:1", "m")
    assert ok.status == Status.PASS


def test_recorded_seed_outcomes_match_the_livelock_record() -> None:
    """0.31.0 hung at max_model_len and -1 through /rerank; 0.32.0 did not (what the #55427 record states)."""
    old = json.loads((REC / "0.31.0-rerank" / "probe-rerank-seed.json").read_text())
    new = json.loads((REC / "0.32.0-rerank" / "probe-rerank-and-seed.json").read_text())
    assert {o["probe"]: o["outcome"] for o in old["outcomes"]} == {
        "rerank-seed-short-long-t256": "livelock", "rerank-seed-short-long-t-1": "livelock",
        "rerank-seed-short-long-t255": "ok"}
    assert all(o["outcome"] == "ok" for o in new["outcomes"] if o["set"] == "rerank-seed")
    assert all(o["recovery"]["recovered"] for o in old["outcomes"] if o["recovery"])
    assert "rerank" in get("pooling-livelock").evidence
