"""The pooling-support table's readers (triage/logs/support_findings.py; issue 42: old releases), on the evidence of
the world cases as posted."""
from __future__ import annotations

from pathlib import Path

from checks import flags, version
from triage.config import merge
from triage.logs import analyze_log
from triage.sources import cmdline
from triage.sources.startup_log import collect

CASES = Path(__file__).resolve().parents[1] / "world" / "cases"


def _case(slug: str, name: str) -> str:
    return (CASES / slug / name).read_text()


def _found(text: str, check: str) -> list:
    return [f for f in analyze_log(text).findings if f.check == check]


def test_vllms_task_refusal_names_the_release_that_added_the_family() -> None:
    """vllm#10035: the 0.6.4-era refusal with the model's name in the paste: the family's row (math-shepherd PRM,
    vllm#9697, 0.6.4) names the upgrade; no --convert classify for a reward model on an old release."""
    [f] = _found(_case("vllm-10035-prm-embedding-task-not-released", "log.txt"), "log-task-unsupported")
    assert f.status.value == "fail" and f.failure_mode == "architecture-unsupported"
    assert "vllm#9697" in f.title and "0.6.4" in f.fix and "--convert classify" not in f.fix


def test_the_task_refusal_on_a_release_with_the_adapter_is_not_age() -> None:
    text = "ValueError: This model does not support the 'embed' task. Supported tasks: ['generate']"
    [f] = [f for f in analyze_log(text).findings if f.check == "log-task-unsupported"]
    assert f.status.value == "fail" and "0.7.0" in f.fix  # no release known: the adapter's release
    [w] = [f for f in collect(f"vLLM API server version 0.8.5\n{text}").findings if f.check == "log-task-unsupported"]
    assert w.status.value == "warn" and "Upgrade" not in w.fix


def test_a_wrappers_task_refusal_is_still_the_wrappers() -> None:
    """Ray Serve LLM's refusal has no 'Supported tasks' after it: not vLLM's."""
    assert not _found("This model does not support the 'embed' task", "log-task-unsupported")


def test_a_traceback_dated_before_embedding_support_names_the_release() -> None:
    """vllm#2749: a cut traceback through LLMEngine._init_workers (0.2 … 0.3) loading SFR-Embedding-Mistral
    (MistralModel, served for embedding from 0.4.3 by vllm#3734)."""
    [f] = _found(_case("vllm-2749-sfr-embedding-mistral-no-embedding-support", "traceback.txt"), "log-traceback")
    assert f.status.value == "fail" and f.failure_mode == "architecture-unsupported"
    assert "0.4.3" in f.fix and "vllm#3734" in f.title


def test_pooling_params_on_the_generation_runner() -> None:
    """vllm#6015: an embeddings request's PoolingParams read as sampling parameters (no `seed`)."""
    text = _case("vllm-6015-gte-qwen2-generate-model-poolingparams-seed", "traceback.txt")
    [f] = _found(text, "log-traceback")
    assert f.status.value == "fail" and "text generator" in f.title and "Upgrade" in f.fix
    assert collect(text).facts["engine_served"].value is True  # the server ran requests: no start-up risk verdict
    line = _case("vllm-6015-gte-qwen2-generate-model-poolingparams-seed", "cmdline.txt")
    said = flags.check(merge([cmdline.collect(line), collect(text)]))
    assert not [f for f in said if f.check == "flags-oom-risk" and f.status.value == "warn"]
    assert all(f.status.value == "unknown" for f in said if f.check == "flags-unknown")


def test_a_converted_class_on_the_generate_path_is_one_of_with_the_vendor_build() -> None:
    """vllm#49657: 'Qwen3MoeForEmbedding' … 'logits_processor' on NGC's 0.13.0+faa43dbf.nv26.01."""
    line = _case("vllm-49657-qwen3moe-convert-embed-ngc", "traceback.txt")
    [f] = [f for f in collect(line).findings if f.check == "log-client-error"]
    assert f.status.value == "warn" and "one of" in f.title and "--runner pooling" in f.fix
    env = _case("vllm-49657-qwen3moe-convert-embed-ngc", "log.txt")
    cfg = merge([collect(env)], {"vllm_version": "0.13.0"})
    v = version.check(cfg)
    assert "NGC" in v.title and "nvcr.io/nvidia/vllm:26.01" in v.title and "upstream" in v.fix


def _runner(line: str, release: str | None) -> list[tuple[str, str, str]]:
    answers = {"vllm_version": release} if release else {}
    return [(f.status.value, f.title, f.fix) for f in flags.check(merge([cmdline.collect(line)], answers))
            if f.check == "flags-runner"]


def test_convert_without_runner_by_release() -> None:
    """vllm#42480: --convert without --runner on a causal LM resolves to generate before vllm#42935 (0.22.0)."""
    line = _case("vllm-42480-convert-embed-runner-auto", "cmdline.txt")
    [(status, title, fix)] = _runner(line, "0.14.1")
    assert status == "fail" and "--runner pooling --convert embed" in fix and "--task" not in fix
    assert _runner(line, "0.31.0") == []
    [(status, _t, _f)] = _runner(line, None)
    assert status == "unknown"


def test_a_stated_release_before_the_familys_support() -> None:
    [(status, title, fix)] = _runner("vllm serve Alibaba-NLP/gte-Qwen2-7B-instruct --task embedding", "0.5.0")
    assert status == "fail" and "0.6.4" in title and "Upgrade" in fix
    assert all(s != "fail" or "predates" not in t
               for s, t, _f in _runner("vllm serve Alibaba-NLP/gte-Qwen2-7B-instruct --task embed", "0.8.5"))


def test_embedding_mode_off_is_a_finding_only_for_a_pooling_model() -> None:
    """0.4.3 … 0.6.3 log 'embedding_mode is False' at every generator's start: a finding for an embedder only."""
    head = ("INFO 08-14 10:01:00 llm_engine.py:161] Initializing an LLM engine (v0.5.4) with config: model='{m}', "
            "seed=0\n")
    line = "WARNING 08-14 10:01:33 serving_embedding.py:170] embedding_mode is False. Embedding API will not work.\n"
    [f] = _found(head.format(m="Alibaba-NLP/gte-Qwen2-7B-instruct") + line, "log-embedding-mode-off")
    assert f.status.value == "warn" and "0.6.4" in f.fix and "vllm#10184" in f.title
    assert not _found(head.format(m="meta-llama/Llama-3-8B-Instruct") + line, "log-embedding-mode-off")


def test_the_registry_refusal_names_the_familys_release() -> None:
    """A cross-encoder refused by an old registry: the family's release, and a reranker's fix (no embedding)."""
    from triage.catalogue import get

    fix = get("architecture-unsupported").fix({"model": "BAAI/bge-reranker-v2-m3", "vllm_version": "0.6.4"})
    assert "0.6.5" in fix and "--convert embed" not in fix.split("Not the embedding")[0]
    assert "registry lists" in get("architecture-unsupported").fix({"model": "org/some-model"})


def test_an_embedders_causal_class_without_a_pooler_and_a_bare_pooling_params_line() -> None:
    head = ("INFO 10-01 10:00:00 llm_engine.py:1] Initializing an LLM engine (v0.6.3) with config: "
            "model='Alibaba-NLP/gte-Qwen2-1.5B-instruct', seed=0\n")
    [f] = _found(head + "AttributeError: 'Qwen2ForCausalLM' object has no attribute 'pooler'\n", "log-client-error")
    assert f.failure_mode == "architecture-unsupported" and "0.6.4" in f.fix
    [g] = _found("AttributeError: 'PoolingParams' object has no attribute 'seed'\n", "log-traceback")
    assert g.status.value == "fail" and "text generator" in g.title


def test_a_pooling_call_on_a_generator_by_the_wording_of_each_era() -> None:
    """vLLM's own refusal of LLM.encode() / the pooling APIs on a model loaded as a generator, spelled by era."""
    old = _found("ValueError: LLM.encode() is only supported for embedding models (XModel).\n",
                 "log-pooling-call-on-generator")
    new = _found("ValueError: LLM.encode() is only supported for pooling models. Try passing `--runner pooling` to use "
                 "the model as a pooling model.\n", "log-pooling-call-on-generator")
    cls = _found("ValueError: Classification API is not supported by this model. Try converting the model using "
                 "`--convert classify`.\n", "log-pooling-call-on-generator")
    assert "0.4.3" in old[0].title and "Upgrade" in old[0].fix
    assert "runner='pooling'" in new[0].fix and "convert='classify'" in cls[0].fix


def test_convert_without_runner_spares_what_resolves_to_pooling_anyway() -> None:
    """A sentence-transformers checkpoint (Qwen3-Embedding) resolves `--runner auto` to pooling from its Pooling
    module on >= 0.10.2, --convert or not."""
    assert _runner("vllm serve Qwen/Qwen3-Embedding-0.6B --convert embed", "0.14.1") == []


def test_an_embedders_missing_pooler_on_a_release_that_serves_it_is_the_missing_task() -> None:
    head = ("INFO 10-01 10:00:00 llm_engine.py:1] Initializing an LLM engine (v0.9.2) with config: "
            "model='Qwen/Qwen3-Embedding-0.6B', seed=0\n")
    [f] = _found(head + "AttributeError: 'Qwen3ForCausalLM' object has no attribute 'pooler'\n", "log-client-error")
    assert f.failure_mode == "generate-runner" and "--task embed" in f.fix and "Upgrade" not in f.fix
