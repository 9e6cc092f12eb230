"""Reranker deployments (issue 25): detect one from the served task or the flags, and judge how it is served.

A deployment is a reranker when the start-up log's 'Supported tasks' has classify (vLLM's score API runs on
it), when --hf-overrides name a classifier (is_original_qwen3_reranker, classifier_from_token), when
--convert classify is given, or when the model's name says rerank. Nothing of that: no finding (an
embedding deployment). Wording, refs and fixes: triage/catalogue/rerank.py.
"""

from __future__ import annotations

from typing import Any

from checks._util import ev
from triage.catalogue import get
from triage.config import EffectiveConfig
from triage.findings import Finding, Status

CHECK_ID = "rerank-deployment"
ACTIVATION_CHECK = "scores-activation"
QUESTION = ("Is this a reranker (Qwen3-Reranker, BGE-reranker, a cross-encoder)? Paste the `vllm serve …` command "
            "line or the start-up log (its 'Supported tasks' line), and say which rerank client calls it "
            "(/rerank, /v2/rerank, /score; top_n; truncate_prompt_tokens).")


def _overrides(cfg: EffectiveConfig) -> dict[str, Any]:
    hf = cfg.get("hf_overrides")
    return hf if isinstance(hf, dict) else {}


def _pooler_activation(cfg: EffectiveConfig) -> Any:
    """use_activation of --pooler-config (the command line's or the log's non-default args), None when not given."""
    pc = cfg.get("pooler_config")
    if not isinstance(pc, dict):
        args = cfg.get("cmdline_args")
        pc = args.get("pooler_config") if isinstance(args, dict) else None
    return pc.get("use_activation") if isinstance(pc, dict) else None


def check(cfg: EffectiveConfig) -> list[Finding]:
    model = str(cfg.get("model") or cfg.get("served_model_name") or "")
    tasks = cfg.get("supported_tasks")
    tasks = [str(t) for t in tasks] if isinstance(tasks, list) else None
    hf = _overrides(cfg)
    convert = cfg.get("convert")
    named = "rerank" in model.lower()
    classifier_overrides = bool(hf.get("is_original_qwen3_reranker") or hf.get("classifier_from_token"))
    classify_task = tasks is not None and "classify" in tasks
    if not (named or classifier_overrides or convert == "classify" or classify_task):
        return []
    evidence = ev(cfg, "model", "supported_tasks", "hf_overrides", "convert", "runner")
    out: list[Finding] = []
    if convert == "classify" and not classifier_overrides and named:
        out.append(Finding.of(get("classify-without-score-head"), "rerank-convert-classify", Status.FAIL,
                              f"{model}: --convert classify without the reranker's overrides: the score head is "
                              "not in the checkpoint (vllm#43062); /score and /rerank answer 404", evidence, cfg=cfg))
    elif tasks is not None and "embed" in tasks and not classify_task and named:
        out.append(Finding.of(get("reranker-overrides-missing"), CHECK_ID, Status.FAIL,
                              f"{model} is served as an embedding model (Supported tasks {tasks}): /score and "
                              "/rerank answer with cosine similarities, not the reranker's relevance", evidence,
                              cfg=cfg))
    elif (named and not classifier_overrides and cfg.stated_args is not None and convert in (None, "auto", "embed")
          and str(cfg.get("architecture") or "").endswith("ForCausalLM")):
        arch = cfg.get("architecture")
        out.append(Finding.of(get("reranker-overrides-missing"), CHECK_ID, Status.FAIL,
                              f"{model} is a {arch} reranker served without --hf-overrides: vLLM resolves "
                              "--convert auto to embed, and /score and /rerank answer with embedding cosines",
                              {**evidence, **ev(cfg, "architecture")}, cfg=cfg))
    elif named and not classifier_overrides and tasks is None:
        arch = hf.get("architectures")
        out.append(Finding.of(get("reranker-overrides-missing"), CHECK_ID, Status.UNKNOWN,
                              f"{model} looks like a reranker: is it served with its model card's --hf-overrides?",
                              {**evidence, "architectures_override": arch, "question": QUESTION}))
    else:
        how = ("with the model card's overrides (classifier from the 'no'/'yes' tokens)" if classifier_overrides
               else f"with task classify (Supported tasks {tasks})" if classify_task else "as a classifier")
        kind = "reranker" if named or classifier_overrides else "classifier"
        out.append(Finding(CHECK_ID, Status.PASS, f"{kind} deployment: {model or 'the model'} served {how}",
                           {**evidence, "question": QUESTION}))
    if _pooler_activation(cfg) is False:
        out.append(Finding.of(get("scores-are-logits"), ACTIVATION_CHECK, Status.WARN,
                              "--pooler-config use_activation false: /score, /rerank and /classify answer raw "
                              "logits, not probabilities", {**evidence, "use_activation": False},
                              cfg={"use_activation_source": "user"}))
    if hf.get("is_original_qwen3_reranker") and cfg.get("chat_template") is None and cfg.stated_args is not None:
        out.append(Finding.of(get("reranker-template-missing"), "rerank-template", Status.WARN,
                              "original Qwen3 reranker without --chat-template: pairs are scored without the "
                              "prompt it was trained on", {**evidence, "symptoms": []}, cfg=cfg))  # a risk
    return out


def check_facts(facts: dict[str, Any]) -> list[Finding]:
    """The same rule over plain facts ({key: {"value", "source", "detail"}}: a log's start-up config), so the log
    post-mortem can ask it without importing the effective-config module (no import circle through the sources)."""
    return check(EffectiveConfig.from_dict(facts))
