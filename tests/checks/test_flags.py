"""checks.flags: each rule reports on its own; with none, one PASS (a command line given) or UNKNOWN finding."""
from __future__ import annotations

from checks import flags
from triage.config import merge
from triage.sources import SourceResult


def _cfg(stated: bool, **facts):
    res = SourceResult("cmdline", stated_args=set(facts) if stated else None)
    for k, v in facts.items():
        res.add(k, v)
    return merge([res], {}, None)


def test_nothing_given_is_unknown_and_a_clean_line_passes():
    assert [(f.check, f.status.value) for f in flags.check(_cfg(False))] == [("flags", "unknown")]
    assert [(f.check, f.status.value) for f in flags.check(_cfg(True, runner="pooling"))] == [("flags", "pass")]


def test_rules_report_in_order():
    cfg = _cfg(True, runner="generate", gpu_memory_utilization=0.99, disable_log_stats=True)
    assert [f.check for f in flags.check(cfg)] == ["flags-runner", "flags-oom-risk", "flags-log-stats"]


def test_no_generate_warning_when_the_log_shows_pooling_served() -> None:
    """Issue 42 (c): 'No --runner for a causal model' is not said when the evidence shows embeddings served."""
    from checks.flags import served_pooling
    from triage.config import EffectiveConfig
    from triage.sources import Fact

    def cfg(**facts: object) -> EffectiveConfig:
        c = EffectiveConfig()
        for k, v in facts.items():
            c.set(Fact(k, v, "log", "test"))
        return c

    assert served_pooling(cfg(supported_tasks=["embed", "token_embed"])).startswith("Supported tasks")
    assert "/v1/embeddings (3)" in served_pooling(cfg(pooling_requests_ok={"/v1/embeddings": 3}))
    assert "task 'embed'" in served_pooling(cfg(task="embed"))
    assert served_pooling(cfg(supported_tasks=["generate"])) == ""
    assert served_pooling(cfg()) == ""
    # a refusal only the pooling path words (the Matryoshka 400, '…for embedding generation'): pooling is served
    assert "Matryoshka" in served_pooling(cfg(pooling_refusals={"the Matryoshka refusal of `dimensions`": 1}))


def test_a_pooling_only_refusal_in_the_paste_is_read_as_pooling_served() -> None:
    from triage.sources.startup_log import collect, pooling_refusals

    text = ("openai.BadRequestError: Error code: 400 - {'error': {'message': 'Model \"Qwen/Qwen3-Embedding-0.6B\" "
            "does not support matryoshka representation, changing output dimensions will lead to poor results.'}}")
    assert list(pooling_refusals(text)) == ["the Matryoshka refusal of `dimensions`"]
    assert collect(text).facts["pooling_refusals"].value
    assert pooling_refusals("openai.BadRequestError: Error code: 400 - {'error': 'bad'}") == {}


def _runner_said(line: str) -> list[str]:
    from triage.sources import cmdline

    return [f.title for f in flags.check(merge([cmdline.collect(line)])) if f.check == "flags-runner"]


def test_no_generate_warning_for_a_decoder_with_a_pooling_architecture() -> None:
    """Issue 42 (LightRAG#198): bge-multilingual-gemma2 is Gemma2Model, served for pooling without --runner; a
    *ForCausalLM embedder (Qwen3-Embedding) still gets the warning."""
    assert _runner_said("vllm serve BAAI-bge-multilingual-gemma2") == []
    assert _runner_said("vllm serve intfloat/e5-mistral-7b-instruct") == []
    assert _runner_said("vllm serve Qwen/Qwen3-Embedding-0.6B") != []


def _runner_findings(line: str, version: str | None) -> list[tuple[str, str]]:
    from triage.sources import cmdline

    answers = {"vllm_version": version} if version else {}
    return [(f.status.value, f.title) for f in flags.check(merge([cmdline.collect(line)], answers))
            if f.check == "flags-runner"]


def test_a_sentence_transformers_checkpoint_is_pooling_from_0102_and_a_question_when_the_release_is_unknown() -> None:
    """Qwen3-Embedding ships a sentence-transformers Pooling module: vLLM >= 0.10.2 picks the pooling runner from it
    (ModelConfig._get_default_runner_type, read in the 0.31.0 and 0.32.0 lab venvs: get_pooling_config first), so a
    bare `vllm serve Qwen/Qwen3-Embedding-0.6B` serves embeddings there; 0.7 … 0.10.1 resolve it to generate."""
    line = "vllm serve Qwen/Qwen3-Embedding-0.6B --port 8000"
    assert _runner_findings(line, "0.11.0") == [] and _runner_findings(line, "0.32.0") == []
    [(status, title)] = _runner_findings(line, "0.9.2")
    assert status == "warn" and "--task" in title
    [(status, title)] = _runner_findings(line, None)
    assert status == "unknown" and "0.10.2" in title and "which release" in title


def test_a_removed_task_leaves_the_runner_to_the_removed_flag_finding() -> None:
    """Issue 42 (gpustack#3991, qwen3emb#24): --task embed/score is the removed-flag finding's (its fix names
    --runner pooling), never also 'served for generation'."""
    assert _runner_said("vllm serve Qwen/Qwen3-Embedding-0.6B --task embed") == []
    assert _runner_said("docker run vllm/vllm-openai:v0.13.0 Qwen/Qwen3-Embedding-0.6B --task embed") == []
