"""What the served model IS (issue 42): embedder, reranker, classifier or token classifier, with its family and the
evidence for it. One value, `ModelIdentity`, that every fix reads, so a reranker never gets an embedder's fix.

Decided from, in this order of weight: the family table (triage/catalogue/families.toml) matched on the model id,
path or served name; the architecture (the HF config's, a model directory's config.json, or the log's 'Resolved
architecture'); the --hf-overrides; the served tasks ('Supported tasks', /v1/models). What the server *serves* it as
(``served_as``) is kept apart from what it *is*: a Qwen3-Reranker served with task embed is still a reranker, and
that difference is the finding.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

KINDS = ("embedder", "reranker", "classifier", "token-classifier", "unknown")
SCORING = ("reranker", "classifier", "token-classifier")  # kinds that must never get --convert embed
TEMPLATE_DIR = "examples/pooling/score/template/"


@dataclass(frozen=True)
class Family:
    """One row of families.toml: how a family is recognised and, for a reranker, how its card says to serve it."""

    id: str
    name: str
    kind: str
    style: str = ""
    ids: str = ""
    architectures: tuple[str, ...] = ()
    hf_overrides: Mapping[str, Any] = field(default_factory=dict)
    template: str = ""
    pooler_config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    trust_remote_code: bool = False
    native: bool = False
    pooling_default: bool = False
    st_pooling: bool = False
    pooling_since: str = ""
    pooling_ref: str = ""
    pooling_what: str = ""
    refs: tuple[str, ...] = ()

    @property
    def tokens(self) -> tuple[str, ...]:
        return tuple(self.hf_overrides.get("classifier_from_token") or ())

    def matches_arch(self, arch: str) -> bool:
        return any(arch == a or (a.startswith("*") and arch.endswith(a[1:])) for a in self.architectures)


@lru_cache(maxsize=1)
def families() -> tuple[Family, ...]:
    data = tomllib.loads(Path(__file__).with_name("families.toml").read_text(encoding="utf-8"))
    out = []
    for row in data["family"]:
        row = dict(row)
        row["architectures"] = tuple(row.get("architectures") or ())
        row["refs"] = tuple(row.get("refs") or ())
        out.append(Family(**row))
    return tuple(out)


def family(family_id: str) -> Family:
    return next(f for f in families() if f.id == family_id)


@dataclass(frozen=True)
class ModelIdentity:
    """What the model is (``kind``, ``family``), how it is built (``style`` for a reranker: llm | cross-encoder |
    listwise), what the server serves it as (``served_as``: embed | classify | generate | None when unknown), and
    the evidence for each, as (source, what was seen) pairs."""

    kind: str = "unknown"
    family: Optional[Family] = None
    style: str = ""
    served_as: Optional[str] = None
    model: str = ""
    evidence: tuple[tuple[str, str], ...] = ()

    @property
    def scoring(self) -> bool:
        """A reranker or classifier: its fix is a score/classify head, never an embedding."""
        return self.kind in SCORING

    @property
    def name(self) -> str:
        if self.family is not None:
            return self.family.name
        return {"reranker": "a reranker", "classifier": "a classifier", "token-classifier": "a token classifier",
                "embedder": "an embedding model"}.get(self.kind, "the model")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "family": self.family.id if self.family else None, "style": self.style,
                "served_as": self.served_as, "evidence": [list(e) for e in self.evidence]}


def hf_overrides_of(cfg: Any) -> dict[str, Any]:
    """--hf-overrides as a dict (a JSON string parsed; {} when absent or not an object)."""
    hf = cfg.get("hf_overrides")
    if isinstance(hf, str):
        try:
            hf = json.loads(hf)
        except ValueError:
            hf = None
    return hf if isinstance(hf, dict) else {}


def _architecture(cfg: Any) -> str:
    for key in ("architecture", "resolved_architecture"):
        v = cfg.get(key)
        if isinstance(v, str) and v:
            return v
    archs = cfg.get("architectures")
    return str(archs[0]) if isinstance(archs, (list, tuple)) and archs else ""


def _served_as(tasks: Any) -> Optional[str]:
    if not isinstance(tasks, (list, tuple)):
        return None
    if "classify" in tasks or "score" in tasks:
        return "classify"
    if "embed" in tasks:
        return "embed"
    if "token_classify" in tasks:
        return "token_classify"
    return "generate" if tasks else None


def identify(cfg: Any) -> ModelIdentity:
    """The identity of the model ``cfg`` (an EffectiveConfig, a log's start-up dict or a fix's values) describes."""
    if cfg is None:
        return ModelIdentity()
    model = str(cfg.get("model") or cfg.get("served_model_name") or "")
    names = " ".join(str(cfg.get(k) or "") for k in ("model", "served_model_name", "model_id")).lower()
    arch = _architecture(cfg)
    hf = hf_overrides_of(cfg)
    tasks = cfg.get("supported_tasks")
    served = _served_as(tasks)
    ev: list[tuple[str, str]] = []
    fam: Optional[Family] = None
    named = cfg.get("family")  # a reader that found the family from other evidence (a class name and a route)
    if isinstance(named, str) and any(f.id == named for f in families()):
        fam = family(named)
        ev.append(("reader", f"{fam.name}: {cfg.get('family_why') or 'named by the evidence'}"))
    for f in () if fam is not None else families():
        if f.ids and names.strip() and re.search(f.ids, names):
            fam = f
            ev.append(("model id", f"{model!r} is {f.name}"))
            break
    if fam is None and arch:
        fam = next((f for f in families() if f.matches_arch(arch)), None)
        if fam is not None:
            ev.append(("architecture", f"{arch}: {fam.name}"))
    kind = fam.kind if fam is not None else "unknown"
    style = fam.style if fam is not None else ""
    if kind == "unknown" and (hf.get("classifier_from_token") or hf.get("is_original_qwen3_reranker")):
        kind, style = "reranker", "llm"
        ev.append(("--hf-overrides", "classifier_from_token / is_original_qwen3_reranker: an LLM reranker"))
    if kind == "unknown" and cfg.get("base_weights_no_head"):  # a reranker or classifier checkpoint has its head
        kind = "embedder"
        ev.append(("weights", "a base model's weights (no 'model.' prefix, no head) loaded by a *ForCausalLM: an "
                              "embedding checkpoint"))
    if kind == "reranker" and fam is not None and fam.id == "cross-encoder" and arch.endswith("ForCausalLM"):
        style = "llm"  # a reranker by name whose checkpoint is a causal LM: scored from lm_head rows
        ev.append(("architecture", f"{arch}: an LLM reranker (its card's --hf-overrides build the score head)"))
    if arch and not any(e[0] == "architecture" for e in ev):
        ev.append(("architecture", arch))
    if served is not None:
        ev.append(("served tasks", f"{list(tasks)}"))
    return ModelIdentity(kind, fam, style, served, model, tuple(ev))


def family_of_name(name: Any) -> Optional[Family]:
    """The first family whose ids match this one name (a model id, a path or a served name); None when none does."""
    low = str(name or "").lower().strip()
    return next((f for f in families() if f.ids and low and re.search(f.ids, low)), None)


def size_of(model: str) -> str:
    """'base' / 'large' for a model id that names its size (the mxbai cards calibrate per size), else ''."""
    m = re.search(r"(?:^|[-_/])(base|large)(?:$|[-_/])", model.lower())
    return m.group(1) if m else ""


def missing_overrides(identity: ModelIdentity, hf: Mapping[str, Any]) -> list[str]:
    """The keys of the family's card overrides that --hf-overrides lacks or spells differently (empty: complete)."""
    fam = identity.family
    if fam is None or not fam.hf_overrides:
        return []
    return [k for k, v in fam.hf_overrides.items() if hf.get(k) != v]


def overrides_json(fam: Family) -> str:
    return json.dumps(dict(fam.hf_overrides))


def pooler_config(identity: ModelIdentity) -> dict[str, Any]:
    """The card's pooler-config calibration for this model's size ({} when none)."""
    fam = identity.family
    if fam is None or not fam.pooler_config:
        return {}
    return dict(fam.pooler_config.get(size_of(identity.model), {}))


def serve_flags(identity: ModelIdentity, release_has_task: bool = False) -> str:
    """The serve options this identity needs for its own task (never --convert embed for a scoring kind)."""
    fam = identity.family
    if identity.kind == "reranker" or identity.kind == "classifier":
        runner = "--task score" if release_has_task and identity.kind == "reranker" else "--runner pooling"
        parts = [runner]
        if fam is not None and fam.hf_overrides:
            if not release_has_task:
                parts.append("--convert classify")
            parts.append(f"--hf-overrides '{overrides_json(fam)}'")
        elif identity.style == "llm":
            parts.append("--convert classify --hf-overrides '<its card's architectures, classifier_from_token, "
                         "method>'")
        pc = pooler_config(identity)
        if pc and not release_has_task:  # logit_bias (vllm#24031) and --pooler-config came with 0.10.2
            parts.append(f"--pooler-config '{json.dumps(pc)}'")
        if fam is not None and fam.template and not release_has_task:  # score templates: later releases' examples
            parts.append(f"--chat-template {TEMPLATE_DIR}{fam.template}")
        if fam is not None and fam.trust_remote_code:
            parts.append("--trust-remote-code")
        return " ".join(parts)
    if identity.kind == "embedder":  # before 0.10.2 there is no --runner/--convert: the task is --task embed
        return "--task embed" if release_has_task else "--runner pooling --convert embed"
    return "--runner pooling"  # a token classifier, or a model nothing names (serve_fix says which to add)


def serve_edit(identity: ModelIdentity, release_has_task: bool = False) -> dict[str, Any]:
    """The same as `serve_flags`, as serve options (dest -> value) for a fix block."""
    fam = identity.family
    if release_has_task and identity.kind in ("embedder", "reranker"):  # 0.7 … 0.10.1 spell the task --task
        serve_old: dict[str, Any] = {"task": "embed" if identity.kind == "embedder" else "score"}
        if identity.kind == "reranker" and fam is not None and fam.hf_overrides:
            serve_old["hf_overrides"] = dict(fam.hf_overrides)
        return serve_old
    if identity.kind in ("reranker", "classifier"):
        serve: dict[str, Any] = {"runner": "pooling"}
        if fam is not None and fam.hf_overrides:
            serve.update(convert="classify", hf_overrides=dict(fam.hf_overrides))
        pc = pooler_config(identity)
        if pc:
            serve["pooler_config"] = pc
        if fam is not None and fam.template:
            serve["chat_template"] = TEMPLATE_DIR + fam.template
        if fam is not None and fam.trust_remote_code:
            serve["trust_remote_code"] = True
        return serve
    if identity.kind == "embedder":
        return {"runner": "pooling", "convert": "embed"}
    return {"runner": "pooling"}  # a token classifier, or a model nothing names: the conversion is the user's call


def serve_fix(identity: ModelIdentity, model: str = "", release_has_task: bool = False) -> str:
    """One sentence: how to serve this model for its own task, with the family's card facts."""
    model = model or identity.model or "MODEL"
    flags = serve_flags(identity, release_has_task)
    if identity.kind == "reranker":
        fam = identity.family
        what = ("its card's overrides build the score head from the lm_head rows of "
                f"{list(fam.tokens) if fam and fam.tokens else 'its label tokens'}; " if identity.style == "llm"
                else "a cross-encoder with its own score head: nothing to override; ")
        return (f"{identity.name} is a reranker, not an embedder: serve it for scores with vllm serve {model} "
                f"{flags} ({what}/score and /rerank then answer relevance scores). Not the embedding conversion: "
                "that serves embeddings, and /score would answer cosines.")
    if identity.kind == "classifier":
        return f"{identity.name} is a classifier: serve it with vllm serve {model} {flags} (/classify)."
    if identity.kind == "token-classifier":
        return f"{identity.name} is a token classifier: serve it with vllm serve {model} {flags} (token_classify)."
    if identity.kind == "embedder":
        if release_has_task:
            return (f"Serve it as an embedder with --task embed (vllm serve {model} --task embed), the pooling task as "
                    "releases before 0.10.2 spell it; without --task a causal checkpoint resolves to generate.")
        return "Serve it with --runner pooling --convert embed (vllm serve MODEL --runner pooling --convert embed)."
    q, m = family("qwen3-reranker"), family("mxbai-rerank-v2")
    if release_has_task:
        return ("Serve it with the pooling task for what the model is (nothing here names it; its config.json "
                "architectures and its card tell), spelled as releases before 0.10.2 do: "
                "an embedding model --task embed; an LLM reranker --task score with its card's --hf-overrides "
                f"({q.name}: '{overrides_json(q)}'); a cross-encoder reranker (bge-reranker, "
                "*ForSequenceClassification) --task score alone.")
    return ("Serve it with --runner pooling and the conversion for what the model is (nothing here names it; its "
            "config.json architectures and its card tell): an embedding model --runner pooling --convert embed; an "
            f"LLM reranker --convert classify with its card's --hf-overrides ({q.name}: '{overrides_json(q)}', "
            f"{m.name}: '{overrides_json(m)}'); a cross-encoder reranker (bge-reranker, *ForSequenceClassification) "
            "--runner pooling alone.")


def release_has_task(cfg: Any) -> bool:
    """The deployment's release predates --runner/--convert (0.10.2): its reranker fix is --task score."""
    from triage.catalogue.versions import parse_version  # noqa: PLC0415 - keeps this module import-light

    if cfg is not None and cfg.get("task_resolution_line"):  # the log's 0.7 … 0.9 'Defaulting to …' line
        return True
    v = parse_version(cfg.get("vllm_version")) if cfg is not None else None
    low = parse_version("0.10.2")
    return v is not None and low is not None and v < low


IDENTITY_KEYS = ("model", "served_model_name", "model_id", "architecture", "resolved_architecture", "architectures",
                 "hf_overrides", "supported_tasks", "vllm_version", "task_resolution_line",
                 "base_weights_no_head", "family", "family_why")


def llm_rerankers_on(causal_cls: str) -> list[Family]:
    """The LLM-reranker families whose checkpoint is this causal-LM class (their card's overrides turn
    ``XForCausalLM`` into ``XForSequenceClassification``): Qwen3ForCausalLM -> Qwen3-Reranker."""
    out = []
    for f in families():
        archs = f.hf_overrides.get("architectures") or ()
        if f.style == "llm" and any(str(a).replace("ForSequenceClassification", "ForCausalLM") == causal_cls
                                    for a in archs):
            out.append(f)
    return out


def identity_keys(cfg: Any) -> dict[str, Any]:
    """The values `identify` reads, for a finding's ``cfg`` (so its record's fix can tell what the model is)."""
    if cfg is None:
        return {}
    return {k: cfg.get(k) for k in IDENTITY_KEYS if cfg.get(k) is not None}
