"""Reranker families served as something else (issue 42): partial overrides, another family's label tokens, a
cross-encoder served for embeddings, jina's custom code, mxbai's calibration. One record each (data/
rerank_families.toml); the family facts every fix names come from triage/catalogue/families.toml through
`triage.catalogue.identity`, so each fix is the card's own for the model at hand, never another family's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Optional

from triage.catalogue.identity import (
    ModelIdentity,
    family,
    hf_overrides_of,
    identify,
    missing_overrides,
    overrides_json,
    pooler_config,
    release_has_task,
    serve_edit,
    serve_flags,
)
from triage.catalogue.load import load
from triage.catalogue.model import ConfigLike, Edit
from triage.catalogue.rerank_clues import SERVED_TASK
from triage.catalogue.symptoms import Case, Weight

# what each key of an LLM reranker's overrides does when it is missing (adapters.py / config.py, 0.31/0.32)
MISSING_EFFECT = {
    "architectures": "the checkpoint stays a *ForCausalLM, so --runner pooling serves embeddings (cosines)",
    "classifier_from_token": "no label tokens: nothing to build the score head from (is_original_qwen3_reranker "
                             "asserts two at start)",
    "is_original_qwen3_reranker": "the lm_head rows are never turned into a score head: a 2-label classifier "
                                  "whose head is not in the checkpoint, no score API",
    "method": "the lm_head rows are never turned into a score head: a 2-label classifier whose head is not in "
              "the checkpoint, no score API",
}


def _who(cfg: Any, default: str) -> ModelIdentity:
    """The config's identity; the record's own subject family when the config names no scoring model."""
    who = identify(cfg)
    if who.scoring and who.family is not None:
        return who
    fam = family(default)
    return ModelIdentity(fam.kind, fam, fam.style, who.served_as, who.model, who.evidence)


def _serve(who: ModelIdentity, cfg: Any) -> str:
    """The serve command for the family on the deployment's release (--task score before 0.10.2)."""
    return f"vllm serve {who.model or 'MODEL'} {serve_flags(who, release_has_task(cfg))}"


def _partial_fix(cfg: ConfigLike) -> str:
    who = _who(cfg, "qwen3-reranker")
    missing = missing_overrides(who, hf_overrides_of(cfg))
    if who.family is None or not missing:
        return ("Give every key of the reranker card's --hf-overrides (architectures, classifier_from_token, and "
                "is_original_qwen3_reranker or method): each does one part of building the score head.")
    why = "; ".join(f"{k}: {MISSING_EFFECT.get(k, 'not as the card gives it')}" for k in missing)
    return (f"{who.family.name} needs all of --hf-overrides '{overrides_json(who.family)}'. Missing or different: "
            f"{why}. Serve it with {_serve(who, cfg)}.")


def _conflict_fix(cfg: ConfigLike) -> str:
    """Both families' own serve lines: which one is meant is the deployment's to say."""
    ids = [i for i in (cfg.get("model_family"), cfg.get("served_family")) if isinstance(i, str)]
    fams = [family(i) for i in ids]
    if len(fams) != 2:
        return "Serve the checkpoint with its own family's --hf-overrides (its config.json names the family)."
    (a, b), (model, served) = fams, (cfg.get("model") or "the checkpoint", cfg.get("served_model_name") or "")
    return (f"One of: {a.name} is meant — serve {model} with --hf-overrides '{overrides_json(a)}' and a served name "
            f"that says so; or {b.name} is meant (the served name {served!r} says so) — serve that checkpoint with "
            f"--hf-overrides '{overrides_json(b)}'. Never one family's class on the other's checkpoint.")


def _tokens_fix(cfg: ConfigLike) -> str:
    who = _who(cfg, "qwen3-reranker")
    given = hf_overrides_of(cfg).get("classifier_from_token")
    if who.family is None or not who.family.tokens:
        return ("Use the label tokens the reranker's card gives for classifier_from_token (Qwen3-Reranker: "
                "[\"no\", \"yes\"]; mxbai-rerank-v2: [\"0\", \"1\"]; bge-reranker-v2-gemma: [\"Yes\"]).")
    return (f"{who.family.name}'s label tokens are {json.dumps(list(who.family.tokens))}, not {json.dumps(given)}: "
            f"serve it with {_serve(who, cfg)}.")


def _cross_encoder_fix(cfg: ConfigLike) -> str:
    who = _who(cfg, "cross-encoder")
    head = ("a cross-encoder with its own score head (vLLM resolves its *ForSequenceClassification architecture "
            "to the classify task)" if who.style != "llm" else "an LLM reranker whose score head its card's "
            "overrides build")
    return (f"Remove the embedding conversion (--convert or --task set to embed): {who.name} is {head}. Serve it "
            f"with {_serve(who, cfg)}; /score and /rerank then answer its relevance score. For embeddings, serve an "
            "embedding model instead.")


def _remote_code_fix(cfg: ConfigLike) -> str:
    who = _who(cfg, "jina-reranker-v2")
    return (f"Add --trust-remote-code ({who.name}'s card loads it with custom code): {_serve(who, cfg)}. The flag runs "
            "the model repository's code on the host; pin --revision to a commit you have read.")


def _calibration_fix(cfg: ConfigLike) -> str:
    who = _who(cfg, "mxbai-rerank-v2")
    pc = pooler_config(who) or {"logit_bias": "4.5 (base-v2) or 6.0 (large-v2)"}
    return (f"Add --pooler-config '{json.dumps(pc)}' (vllm#24031: half of mxbai's estimated maximum logit), so the "
            f"scores match mxbai's library: {_serve(who, cfg)}. The order does not change; thresholds do.")


def _style(case: Case) -> str:
    """'llm' | 'cross-encoder' | 'listwise' of the case's model when its identity is a reranker, else ''."""
    who = identify(case)
    return who.style if who.kind == "reranker" else ""


def cross_encoder_embed(case: Case) -> Optional[Weight]:
    """For cross-encoder-served-as-embedder: a cross-encoder's pairs scored as cosines (task embed); against it an
    LLM reranker (its own record is the missing overrides) or a score head that scores the pairs."""
    style, task = _style(case), case.fact(SERVED_TASK)
    if style == "llm":
        return Weight("against", f"{identify(case).name} is an LLM reranker, not a cross-encoder", "model id",
                      decisive=True)
    if task == "classify":
        return Weight("against", "a score head scores the pairs (task classify)", "probe", decisive=True)
    if identify(case).kind not in ("reranker", "unknown"):
        return Weight("against", f"{identify(case).name} is no reranker", "model id", decisive=True)
    if task == "embed" and style in ("cross-encoder", "listwise"):
        return Weight("for", f"{identify(case).name} scored as embedding cosines (task embed)", "probe",
                      decisive=True)
    return None


_CARD_KEYS = ("architectures", "classifier_from_token", "is_original_qwen3_reranker", "method")


def precondition(case: Case, needs: str) -> Optional[Weight]:
    """What a record needs before it can be the cause, read from the case's config: ``overrides`` (some of an LLM
    reranker's card keys given), ``tokens`` (classifier_from_token given), or a family id (the model is of it).
    Decisive against when the config shows it is not there; nothing when the config does not say."""
    who = identify(case)
    if needs in ("overrides", "tokens"):
        hf = hf_overrides_of(case)
        if not hf and case.get("hf_overrides") is None and case.get("model") is None:
            return None  # no config to read
        keys = ("classifier_from_token",) if needs == "tokens" else _CARD_KEYS
        if not any(k in hf for k in keys):
            return Weight("against", f"no {' / '.join(keys)} in --hf-overrides", "cmdline/log", decisive=True)
        return None
    if who.model and (who.family is None or who.family.id != needs):
        return Weight("against", f"{who.model} is not {family(needs).name}", "model id", decisive=True)
    return None


def llm_reranker(case: Case) -> Optional[Weight]:
    """For the missing-overrides record: against it when the model is a cross-encoder (nothing to override)."""
    if _style(case) in ("cross-encoder", "listwise"):
        return Weight("against", f"{identify(case).name} is a cross-encoder: it has no overrides to miss",
                      "model id", decisive=True)
    return None


def _edits(default: str) -> Any:
    def edits(cfg: Mapping[str, Any]) -> list[Edit]:
        who = _who(cfg, default)
        return [Edit(serve=serve_edit(who), why=f"{who.name} served as its card says")]
    edits.__doc__ = f"The card's serve options for the config's family ({default} when it names none)."
    return edits


_partial_edits = _tokens_edits = _edits("qwen3-reranker")
_cross_encoder_edits = _edits("cross-encoder")
_remote_code_edits = _edits("jina-reranker-v2")
_calibration_edits = _edits("mxbai-rerank-v2")


RECORDS = load(__name__)  # triage/catalogue/data/rerank_families.toml
__getattr__, __dir__ = RECORDS.exports(globals())

FAMILY_MODES = RECORDS.modes()
