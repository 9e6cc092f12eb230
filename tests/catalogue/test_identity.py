"""The model's identity (triage/catalogue/identity.py, issue 42) and the rule every fix obeys: a reranker or
classifier never gets --convert embed / --task embed, from any record of the catalogue."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from triage.catalogue import MODES
from triage.catalogue.identity import families, identify, missing_overrides, serve_edit, serve_flags
from triage.logs.startup import extract_startup_config

REC = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "rerank"
QWEN = {"architectures": ["Qwen3ForSequenceClassification"], "classifier_from_token": ["no", "yes"],
        "is_original_qwen3_reranker": True}
MXBAI = {"architectures": ["Qwen2ForSequenceClassification"], "classifier_from_token": ["0", "1"],
         "method": "from_2_way_softmax"}


@pytest.mark.parametrize("cfg, kind, family, style", [
    pytest.param({"model": "Qwen/Qwen3-Reranker-0.6B"}, "reranker", "qwen3-reranker", "llm", id="qwen3-reranker"),
    pytest.param({"model": "tomaarsen/Qwen3-Reranker-0.6B-seq-cls"}, "reranker", "qwen3-reranker-seq-cls",
                 "cross-encoder", id="qwen3-reranker-seq-cls"),
    pytest.param({"model": "Qwen/Qwen3-VL-Reranker-2B"}, "reranker", "qwen3-vl-reranker", "llm", id="qwen3-vl"),
    pytest.param({"model": "mixedbread-ai/mxbai-rerank-large-v2"}, "reranker", "mxbai-rerank-v2", "llm", id="mxbai"),
    pytest.param({"model": "michaelfeil/mxbai-rerank-base-v2-seq"}, "reranker", "mxbai-rerank-v2-seq",
                 "cross-encoder", id="mxbai-seq"),
    pytest.param({"model": "BAAI/bge-reranker-v2-m3"}, "reranker", "bge-reranker", "cross-encoder", id="bge-m3"),
    pytest.param({"model": "BAAI/bge-reranker-v2-gemma"}, "reranker", "bge-reranker-v2-gemma", "llm", id="bge-gemma"),
    pytest.param({"model": "jinaai/jina-reranker-v2-base-multilingual"}, "reranker", "jina-reranker-v2",
                 "cross-encoder", id="jina-v2"),
    pytest.param({"model": "jinaai/jina-reranker-v3"}, "reranker", "jina-reranker-v3", "listwise", id="jina-v3"),
    pytest.param({"model": "cross-encoder/ms-marco-MiniLM-L-6-v2"}, "reranker", "cross-encoder", "cross-encoder",
                 id="ms-marco"),
    pytest.param({"model": "/models/my-rerank", "architecture": "Qwen3ForCausalLM"}, "reranker", "cross-encoder",
                 "llm", id="named-rerank-causal-lm"),
    pytest.param({"model": "Qwen/Qwen3-Embedding-0.6B"}, "embedder", "qwen3-embedding", "", id="qwen3-embedding"),
    pytest.param({"model": "BAAI/bge-m3"}, "embedder", "embedder", "", id="bge-m3-embedder"),
    pytest.param({"model": "/m/x", "architecture": "BertForSequenceClassification"}, "classifier", "classifier", "",
                 id="arch-classifier"),
    pytest.param({"model": "/m/x", "architecture": "BertForTokenClassification"}, "token-classifier",
                 "token-classifier", "", id="arch-token-classifier"),
    pytest.param({"model": "/m/x", "hf_overrides": MXBAI}, "reranker", None, "llm", id="overrides-only"),
    pytest.param({"model": "/root/.cache/vllm-triage/lab/models/tiny-qwen3"}, "unknown", None, "", id="unknown"),
])
def test_identity(cfg: dict[str, Any], kind: str, family: str | None, style: str) -> None:
    who = identify(cfg)
    assert (who.kind, who.family.id if who.family else None, who.style) == (kind, family, style)
    assert who.evidence or kind == "unknown"


@pytest.mark.parametrize("folder, served", [
    pytest.param("0.32.0-rerank", "classify", id="overrides"),
    pytest.param("0.32.0-rerank-no-overrides", "embed", id="no-overrides"),
    pytest.param("0.32.0-cross-encoder", "classify", id="cross-encoder"),
])
def test_identity_from_recorded_start_up_logs(folder: str, served: str) -> None:
    """What the server serves it as comes from the log's 'Supported tasks'; what it is from the model id."""
    who = identify(extract_startup_config((REC / folder / "server.log").read_text()))
    assert who.served_as == served
    assert who.kind == "reranker"  # tiny-qwen3-reranker / tiny-cross-encoder: named rerankers


@pytest.mark.parametrize("model, hf, missing", [
    pytest.param("Qwen/Qwen3-Reranker-4B", QWEN, [], id="qwen-complete"),
    pytest.param("Qwen/Qwen3-Reranker-4B", {"architectures": QWEN["architectures"]},
                 ["classifier_from_token", "is_original_qwen3_reranker"], id="qwen-architectures-only"),
    pytest.param("Qwen/Qwen3-Reranker-4B", {**QWEN, "is_original_qwen3_reranker": False},
                 ["is_original_qwen3_reranker"], id="qwen-flag-false"),
    pytest.param("mixedbread-ai/mxbai-rerank-base-v2", MXBAI, [], id="mxbai-complete"),
    pytest.param("mixedbread-ai/mxbai-rerank-base-v2", {**MXBAI, "classifier_from_token": ["no", "yes"]},
                 ["classifier_from_token"], id="mxbai-with-qwen-tokens"),
    pytest.param("mixedbread-ai/mxbai-rerank-base-v2", QWEN, ["architectures", "classifier_from_token", "method"],
                 id="mxbai-with-qwen-overrides"),
])
def test_missing_overrides(model: str, hf: dict[str, Any], missing: list[str]) -> None:
    assert missing_overrides(identify({"model": model}), hf) == missing


@pytest.mark.parametrize("model, wants", [
    pytest.param("Qwen/Qwen3-Reranker-0.6B", ['"classifier_from_token": ["no", "yes"]', "qwen3_reranker.jinja",
                                             "--convert classify"], id="qwen"),
    pytest.param("mixedbread-ai/mxbai-rerank-base-v2", ['"classifier_from_token": ["0", "1"]', '"logit_bias": 4.5',
                                                       "mxbai_rerank_v2.jinja", "from_2_way_softmax"], id="mxbai-base"),
    pytest.param("mixedbread-ai/mxbai-rerank-large-v2", ['"logit_bias": 6.0'], id="mxbai-large"),
    pytest.param("BAAI/bge-reranker-v2-m3", ["--runner pooling"], id="bge"),
    pytest.param("jinaai/jina-reranker-v2-base-multilingual", ["--trust-remote-code"], id="jina-v2"),
])
def test_each_family_gets_its_card_flags(model: str, wants: list[str]) -> None:
    flags = serve_flags(identify({"model": model}))
    assert all(w in flags for w in wants), flags
    if "mxbai" in model:
        assert '"no", "yes"' not in flags  # mxbai's "0"/"1" are never read as Qwen's tokens
    assert serve_flags(identify({"model": model}), release_has_task=True).startswith("--task score")


RERANKERS = [f for f in families() if f.kind in ("reranker", "classifier", "token-classifier")]
SWEEP = [
    pytest.param({"model": f"org/{f.id}-x", "architecture": (f.architectures or ("",))[0].replace("*", "Bert")},
                 id=f.id) for f in RERANKERS
] + [
    pytest.param({"model": "Qwen/Qwen3-Reranker-0.6B", "supported_tasks": ["embed", "token_embed"],
                  "removed": [{"option": "--task", "use": "--runner pooling (and --convert embed for a causal LM)"}],
                  "vllm_version": "0.32.0"}, id="qwen3-reranker-served-embed"),
    pytest.param({"model": "mixedbread-ai/mxbai-rerank-base-v2", "hf_overrides": {"architectures": ["X"]},
                  "vllm_version": "0.9.2"}, id="mxbai-old-release"),
    pytest.param({"model": "BAAI/bge-reranker-v2-m3", "convert": "embed",
                  "cmdline_removed_flags": [{"option": "--task", "use": "--runner pooling (and --convert embed)"}]},
                 id="bge-reranker-convert-embed"),
]


@pytest.mark.parametrize("cfg", SWEEP)
def test_no_record_gives_a_reranker_convert_embed(cfg: dict[str, Any]) -> None:
    """Every record's fix and edits, for every scoring family: none says --convert embed or --task embed."""
    assert identify(cfg).scoring
    for mode in MODES.values():
        text = mode.fix(cfg)
        assert "--convert embed" not in text and "--task embed" not in text, (mode.id, text)
        for e in mode.edits(cfg) if mode.edits else []:
            assert e.serve.get("convert") != "embed" and e.serve.get("task") != "embed", (mode.id, e)
    assert serve_edit(identify(cfg)).get("convert") != "embed"
