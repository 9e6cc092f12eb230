"""Reranker deployments (issue 25): detect one from the served task or the flags, and judge how it is served.

A deployment is judged here when the model's identity (triage/catalogue/identity.py: its family from the model id,
the architecture, the overrides) is a reranker or classifier, when the start-up log's 'Supported tasks' has
classify (vLLM's score API runs on it), when --hf-overrides name a classifier, or when --convert classify is
given. Nothing of that: no finding (an embedding deployment). Each fix is the family's own card (issue 42):
partial overrides name what is missing, another family's label tokens are named, a cross-encoder served for
embeddings is told so. Wording, refs and fixes: triage/catalogue/rerank.py and rerank_families.py.
"""

from __future__ import annotations

from typing import Any, Optional

from checks._util import ev
from triage.catalogue import get
from triage.catalogue import rerank_families as FAMILY
from triage.catalogue.identity import (
    ModelIdentity,
    family_of_name,
    identify,
    missing_overrides,
    overrides_json,
    pooler_config,
    release_has_task,
)
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


def _how(who: ModelIdentity, hf: dict[str, Any], tasks: Optional[list[str]]) -> str:
    """How a healthy scoring deployment is served, in the words of what was seen (its own label tokens)."""
    tokens = hf.get("classifier_from_token")
    if tokens:
        return f"with the model card's overrides (classifier from the {' / '.join(map(repr, tokens))} tokens)"
    if tasks is not None and "classify" in tasks:
        return f"with task classify (Supported tasks {tasks})"
    if who.kind == "reranker" and who.style in ("cross-encoder", "listwise"):
        return f"as {who.name} ({who.style}: its own score head, nothing to override)"
    return "as a classifier"


def _family_conflict(cfg: EffectiveConfig, evidence: dict[str, Any]) -> Optional[Finding]:
    """The model and --served-model-name name two LLM-reranker families whose card overrides differ: the overrides
    given fit one of them at most, and which is meant is the deployment's to say ("one of", never a guess)."""
    served = cfg.get("served_model_name")
    served = served[0] if isinstance(served, list) and served else served
    a, b = family_of_name(cfg.get("model")), family_of_name(served)
    if a is None or b is None or a.id == b.id or not (a.hf_overrides and b.hf_overrides) \
            or a.hf_overrides.get("architectures") == b.hf_overrides.get("architectures"):
        return None
    given = _overrides(cfg).get("architectures")
    fits = next((f.name for f in (a, b) if given and f.hf_overrides.get("architectures") == given), None)
    said = f"its --hf-overrides architectures {given} are {fits}'s" if fits else "its --hf-overrides fit neither"
    rec = FAMILY.RERANKER_FAMILY_CONFLICT
    return Finding.of(rec, "rerank-family-conflict", Status.WARN,
                      f"{cfg.get('model')} is {a.name}, served as {served!r} ({b.name}); {said} — one of: {a.name} "
                      f"meant, or {b.name} meant (its checkpoint with {b.hf_overrides.get('architectures')}); to "
                      "tell: which checkpoint the deployment means", {**evidence, "symptoms": []},
                      cfg={"model": cfg.get("model"), "served_model_name": served, "model_family": a.id,
                           "served_family": b.id})


def _main(cfg: EffectiveConfig, who: ModelIdentity, evidence: dict[str, Any]) -> Finding:
    """The one verdict on how the model is served for what it is (the first case that holds)."""
    model = who.model or "the model"
    tasks = cfg.get("supported_tasks")
    tasks = [str(t) for t in tasks] if isinstance(tasks, list) else None
    hf = _overrides(cfg)
    convert, task = cfg.get("convert"), cfg.get("task")
    fam = who.family
    llm = who.kind == "reranker" and who.style == "llm"
    classifier_overrides = bool(hf.get("is_original_qwen3_reranker") or hf.get("classifier_from_token")
                                or hf.get("method"))
    served_embed = tasks is not None and "embed" in tasks and "classify" not in tasks
    asked_embed = cfg.stated_args is not None and (convert == "embed" or task in ("embed", "embedding"))
    missing = missing_overrides(who, hf) if fam is not None and fam.hf_overrides and hf else []
    ev_id = {**evidence, "identity": who.to_dict()}
    if convert == "classify" and not classifier_overrides and llm:
        mode = get("classify-without-score-head")
        return Finding.of(mode, "rerank-convert-classify", Status.FAIL,
                          f"{model}: --convert classify without the reranker's overrides: the score head is "
                          f"not in the checkpoint ({mode.refs[0]}); /score and /rerank answer 404", ev_id, cfg=cfg)
    if missing and fam is not None:
        given = hf.get("classifier_from_token")
        if given and given != list(fam.tokens) and all(k not in missing for k in fam.hf_overrides
                                                       if k != "classifier_from_token"):
            return Finding.of(FAMILY.RERANKER_LABEL_TOKENS, "rerank-label-tokens", Status.FAIL,
                              f"{model}: classifier_from_token {given} are not {fam.name}'s "
                              f"{list(fam.tokens)}: the score head measures another answer", ev_id, cfg=cfg)
        return Finding.of(FAMILY.RERANKER_OVERRIDES_PARTIAL, "rerank-overrides-partial", Status.FAIL,
                          f"{model}: --hf-overrides has only part of {fam.name}'s card overrides (missing or "
                          f"different: {', '.join(missing)})", {**ev_id, "missing": missing}, cfg=cfg)
    if who.kind == "reranker" and not llm and (served_embed or asked_embed):
        how = f"Supported tasks {tasks}" if served_embed else (f"--convert {convert}" if convert == "embed"
                                                                else f"--task {task}")
        return Finding.of(FAMILY.CROSS_ENCODER_SERVED_AS_EMBEDDER, "rerank-served-as-embedder", Status.FAIL,
                          f"{model} is a cross-encoder served for embeddings ({how}): /score and /rerank answer "
                          "cosines of two embeddings, not its relevance score", ev_id, cfg=cfg)
    if llm and tasks is not None and not classifier_overrides and not {"embed", "classify"} & set(tasks):
        return Finding.of(get("reranker-overrides-missing"), CHECK_ID, Status.FAIL,
                          f"{model} is {who.name} served for generation (Supported tasks {tasks}) without its "
                          "--hf-overrides: no score head, so /score and /rerank are not there", ev_id, cfg=cfg)
    if llm and served_embed and not classifier_overrides:
        return Finding.of(get("reranker-overrides-missing"), CHECK_ID, Status.FAIL,
                          f"{model} is served as an embedding model (Supported tasks {tasks}): /score and "
                          "/rerank answer with cosine similarities, not the reranker's relevance", ev_id, cfg=cfg)
    arch = str(cfg.get("architecture") or "")
    if llm and not classifier_overrides and cfg.stated_args is not None and (
            asked_embed or (convert in (None, "auto", "embed") and arch.endswith("ForCausalLM"))):
        why = f"a {arch} reranker" if arch else f"{who.name}"
        return Finding.of(get("reranker-overrides-missing"), CHECK_ID, Status.FAIL,
                          f"{model} is {why} served without --hf-overrides: vLLM resolves --convert "
                          f"{convert or 'auto'} to embed, and /score and /rerank answer with embedding cosines",
                          {**ev_id, **ev(cfg, "architecture")}, cfg=cfg)
    if llm and not classifier_overrides and tasks is None:
        card = f" ({fam.name}'s card: --hf-overrides '{overrides_json(fam)}')" if fam and fam.hf_overrides else ""
        return Finding.of(get("reranker-overrides-missing"), CHECK_ID, Status.UNKNOWN,
                          f"{model} looks like a reranker: is it served with its model card's --hf-overrides{card}?",
                          {**ev_id, "architectures_override": hf.get("architectures"), "question": QUESTION})
    kind = "reranker" if who.kind == "reranker" or classifier_overrides else "classifier"
    return Finding(CHECK_ID, Status.PASS, f"{kind} deployment: {model} served {_how(who, hf, tasks)}",
                   {**ev_id, "question": QUESTION})


def _family_notes(cfg: EffectiveConfig, who: ModelIdentity, evidence: dict[str, Any]) -> list[Finding]:
    """What the family's card adds once the main verdict passes: jina's custom code, mxbai's calibration."""
    fam = who.family
    if fam is None or cfg.stated_args is None:
        return []
    out: list[Finding] = []
    if fam.trust_remote_code and cfg.get("trust_remote_code") is not True:
        rec = FAMILY.RERANKER_REMOTE_CODE
        out.append(Finding.of(rec, "rerank-remote-code", Status.UNKNOWN,
                              f"{who.model}: {fam.name}'s card loads it with custom code; does vllm serve start "
                              "without --trust-remote-code?", {**evidence, "question": rec.experiment},
                              fix=rec.fix(cfg)))
    pc = pooler_config(who)
    given = cfg.get("pooler_config")
    if (pc and not missing_overrides(who, _overrides(cfg)) and not release_has_task(cfg)
            and not (isinstance(given, dict) and "logit_bias" in given)):
        out.append(Finding.of(FAMILY.MXBAI_RERANK_CALIBRATION, "rerank-logit-bias", Status.WARN,
                              f"{who.model}: no --pooler-config logit_bias {pc.get('logit_bias')}: scores sit "
                              "above mxbai's own (same order)", evidence, cfg=cfg))
    return out


def check(cfg: EffectiveConfig) -> list[Finding]:
    who = identify(cfg)
    tasks = cfg.get("supported_tasks")
    hf = _overrides(cfg)
    classifier_overrides = bool(hf.get("is_original_qwen3_reranker") or hf.get("classifier_from_token"))
    classify_task = isinstance(tasks, list) and "classify" in tasks
    if not (who.kind in ("reranker", "classifier") or classifier_overrides or cfg.get("convert") == "classify"
            or classify_task):
        return []
    evidence = ev(cfg, "model", "supported_tasks", "hf_overrides", "convert", "runner")
    main = _family_conflict(cfg, evidence) or _main(cfg, who, evidence)
    out: list[Finding] = [main]
    if main.status == Status.PASS:
        out.extend(_family_notes(cfg, who, evidence))
    if _pooler_activation(cfg) is False:
        out.append(Finding.of(get("scores-are-logits"), ACTIVATION_CHECK, Status.WARN,
                              "--pooler-config use_activation false: /score, /rerank and /classify answer raw "
                              "logits, not probabilities", {**evidence, "use_activation": False},
                              cfg={"use_activation_source": "user"}))
    # score templates came with later releases' examples: on 0.7 … 0.10.1 (--task, 'Defaulting to …') there is none
    # the template is the family's: with the family itself in question (rerank-family-conflict), that comes first
    if hf.get("is_original_qwen3_reranker") and cfg.get("chat_template") is None and cfg.stated_args is not None \
            and not release_has_task(cfg) and main.check != "rerank-family-conflict":
        out.append(Finding.of(get("reranker-template-missing"), "rerank-template", Status.WARN,
                              "original Qwen3 reranker without --chat-template: pairs are scored without the "
                              "prompt it was trained on", {**evidence, "symptoms": []}, cfg=cfg))  # a risk
    return out


def check_facts(facts: dict[str, Any]) -> list[Finding]:
    """The same rule over plain facts ({key: {"value", "source", "detail"}}: a log's start-up config), so the log
    post-mortem can ask it without importing the effective-config module (no import circle through the sources)."""
    return check(EffectiveConfig.from_dict(facts))
