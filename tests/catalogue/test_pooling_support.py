"""The pooling-support table (triage/catalogue/pooling_support.py): each family's first release, the frames that date
a traceback, the vendor label, the runner rule of --convert."""
from __future__ import annotations

from triage.catalogue.identity import identify
from triage.catalogue.pooling_support import (
    frame_release,
    predates,
    runner_auto_ignores_convert,
    support_of,
    upgrade_fix,
    vendor_build,
)


def test_each_family_names_its_first_release_and_the_change() -> None:
    for model, since, ref in (("Salesforce/SFR-Embedding-Mistral", "0.4.3", "vllm#3734"),
                              ("Alibaba-NLP/gte-Qwen2-7B-instruct", "0.6.4", "vllm#10184"),
                              ("peiyi9979/math-shepherd-mistral-7b-prm", "0.6.4", "vllm#9697"),
                              ("BAAI/bge-reranker-v2-m3", "0.6.5", "vllm#10400")):
        sup = support_of(identify({"model": model}))
        assert sup is not None and (sup.since, sup.ref) == (since, ref), model
    generic = support_of(identify({"model": "BAAI/bge-m3"}))
    assert generic is not None and generic.since == "0.4.3" and not generic.family
    assert support_of(identify({"model": "meta-llama/Llama-3-8B"})) is None


def test_predates_is_unknown_without_a_release() -> None:
    sup = support_of(identify({"model": "Alibaba-NLP/gte-Qwen2-7B-instruct"}))
    assert sup is not None
    assert predates("0.5.0", sup) is True and predates("0.6.4", sup) is False and predates(None, sup) is None


def test_frames_date_a_traceback_and_vendor_labels_name_the_build() -> None:
    assert frame_release([("engine/llm_engine.py", "_run_workers")]) is not None
    assert frame_release([("v1/engine/core.py", "run_engine_core")]) is None
    assert vendor_build("0.13.0+faa43dbf.nv26.01") == ("NVIDIA's NGC build", "nvcr.io/nvidia/vllm:26.01", "vllm#49657")
    assert vendor_build("0.13.0+cu129") is None and vendor_build("0.13.0") is None


def test_runner_auto_ignores_convert_until_its_fix() -> None:
    assert runner_auto_ignores_convert("0.14.1") is True
    assert runner_auto_ignores_convert("0.31.0") is False and runner_auto_ignores_convert(None) is None


def test_a_rerankers_upgrade_keeps_its_score_head() -> None:
    who = identify({"model": "BAAI/bge-reranker-v2-m3"})
    sup = support_of(who)
    assert sup is not None
    fix = upgrade_fix(who, sup, "0.6.4")
    assert "0.6.5" in fix and "--convert embed" not in fix.split("Not the embedding")[0]
