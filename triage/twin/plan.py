"""The twin planner (pure): from what a run knows of a deployment, the lab server that reproduces it.

A run's facts (the effective config's values: release, options, model; the client's truncation) become a
``TwinPlan``: the release to serve (the deployment's own when the lab has it, else the nearest installed release
whose knowledge agrees on every fact the candidate records depend on, said so), the tiny lab model of the same
shape (``triage.twin.models``), the user's options with every length scaled down so that each relation the
catalogue's records read is kept (a truncation equal to max_model_len stays equal, max_model_len - 1 stays
max_model_len - 1, a budget below max_model_len stays below it, one above stays above), and the candidate
records to reproduce, each with the probes that show it. Nothing here starts a server: ``triage.twin.reproduce``
does. The fix of each candidate comes from its record's ``edits``, applied to the twin's own scaled config.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from triage.catalogue import POOLING_LIVELOCK, FailureMode, get
from triage.catalogue.versions import parse_version
from triage.twin.models import ModelShape, shape_from_files, shape_of
from triage.vllm import knowledge

TWIN_MAX_MODEL_LEN = 256  # the livelock profile's length: every seed case is seconds on a CPU box
SEED_ROUNDS = 3  # tries of a seed candidate before "not reproduced"; every one of them for a fix to be "verified"
MIN_BUDGET = 32  # a budget scaled below this chunks a prompt into too many steps to stay quick
# the user's options a CPU twin carries (lengths scaled): the rest are GPU sizing and says so in ``dropped``
CARRIED = ("max_model_len", "max_num_batched_tokens", "enable_chunked_prefill", "enable_prefix_caching",
           "pooler_config", "max_num_seqs")
# the knowledge a record's reproduction depends on: a twin release must agree with the deployment's on these
FACT_SECTIONS = {"pooling-livelock": ("scheduler", "pooling_defaults"), "pooling-mismatch": ("pooling_defaults",)}


class PlanError(ValueError):
    """No twin can be planned (no release, no model of the shape): the message says what is missing."""


@dataclass(frozen=True)
class Candidate:
    """A record the twin tries to reproduce and the probes that show it (``sets``, ``only`` name patterns)."""

    mode: str
    why: str
    sets: tuple[str, ...]
    only: tuple[str, ...] = ()
    truncation: Optional[int] = None  # the (scaled) truncate_prompt_tokens the probes send


@dataclass(frozen=True)
class ServerSpec:
    """One twin server: ``lab up --vllm version --model model -- extra_args``."""

    version: str
    model: str
    extra_args: tuple[str, ...]


@dataclass(frozen=True)
class ReleaseChoice:
    requested: Optional[str]
    chosen: str
    exact: bool
    why: str
    agreed: tuple[str, ...] = ()  # the knowledge sections that agree


@dataclass(frozen=True)
class TwinPlan:
    release: ReleaseChoice
    shape: ModelShape
    model: str  # the user's model id
    config: dict[str, Any]  # the twin's config values (scaled): what the records' edits are computed from
    scale: dict[str, dict[str, Any]]  # key -> {"user": …, "twin": …, "relation": …}
    server: ServerSpec
    candidates: tuple[Candidate, ...]
    dropped: dict[str, str] = field(default_factory=dict)  # user option -> why the twin does not carry it
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"release": vars(self.release) | {"agreed": list(self.release.agreed)},
                "model": self.model, "shape": vars(self.shape), "config": self.config, "scale": self.scale,
                "server": {"version": self.server.version, "model": self.server.model,
                           "args": list(self.server.extra_args)},
                "candidates": [vars(c) | {"sets": list(c.sets), "only": list(c.only)} for c in self.candidates],
                "dropped": self.dropped, "notes": list(self.notes)}


# -- the release ----------------------------------------------------------------------------------

def facts_agree(a: str, b: str, sections: Iterable[str]) -> tuple[bool, list[str]]:
    """Do releases ``a`` and ``b`` agree on each knowledge section? (all agree?, the sections that differ)."""
    ka, kb = knowledge.release(a).snap, knowledge.release(b).snap
    differ = [s for s in sections if _strip(ka.get(s)) != _strip(kb.get(s))]
    return not differ, differ


def _strip(v: Any) -> Any:
    """A section without where it was read (file names move between releases; the facts are what count)."""
    if isinstance(v, Mapping):
        return {k: _strip(x) for k, x in v.items() if k not in ("file", "_file", "files", "function")}
    return v


def choose_release(requested: Optional[str], installed: Sequence[str], modes: Sequence[str] = (),
                   options: Sequence[str] = ()) -> ReleaseChoice:
    """The release a twin serves: ``requested`` when installed; else the nearest installed release that agrees on
    the knowledge ``modes`` depend on, on each record's ``affects``, and accepts every option in ``options``."""
    if not installed:
        raise PlanError("no vLLM release is installed in the lab: run `python -m triage lab install --vllm X`")
    known = knowledge.releases()
    asked = knowledge.for_version(requested).release if requested else None
    if requested and requested in installed:
        return ReleaseChoice(requested, requested, True, f"the deployment's own release {requested} is installed")
    if asked is None:
        newest = max(installed, key=lambda r: parse_version(r) or parse_version("0"))
        return ReleaseChoice(requested, newest, False, "the deployment's release is not known: the newest installed "
                             f"release {newest} serves the twin (stated as an assumption)")
    sections = sorted({s for m in modes for s in FACT_SECTIONS.get(m, ())})
    records = [get(m) for m in modes]
    ok: list[tuple[int, str, list[str]]] = []
    refused: list[str] = []
    for r in installed:
        if r not in known:
            continue
        agree, differ = facts_agree(asked, r, sections)
        aff = [m.id for m in records if m.affects(asked) != m.affects(r)]
        rel = knowledge.release(r)
        missing = [o for o in options if rel.lookup(o) is None]
        if agree and not aff and not missing:
            ok.append((abs(known.index(r) - known.index(asked)), r, sections))
        else:
            why_not = [("differs in " + ", ".join(differ)) if differ else "",
                       ("affected otherwise by " + ", ".join(aff)) if aff else "",
                       ("lacks " + ", ".join(missing)) if missing else ""]
            refused.append(f"{r} ({'; '.join(w for w in why_not if w)})")
    if not ok:
        raise PlanError(f"vLLM {requested} is not installed in the lab and no installed release agrees with it on the "
                        f"facts that matter: {'; '.join(refused) or 'none installed'}; run `python -m triage lab "
                        f"install --vllm {asked}`")
    ok.sort()
    chosen = ok[0][1]
    said = ", ".join(sections) if sections else "no release-specific knowledge"
    why = (f"vLLM {requested} is not installed in the lab: the twin serves {chosen}, the nearest installed release "
           f"whose knowledge agrees on every fact that matters ({said}; "
           f"{', '.join(f'{m.id} affects both' if m.affects(asked) else f'{m.id} affects neither' for m in records)})"
           + (f"; not {', '.join(refused)}" if refused else ""))
    return ReleaseChoice(requested, chosen, False, why, tuple(sections))


# -- lengths --------------------------------------------------------------------------------------

def scale_lengths(max_model_len: Optional[int], budget: Optional[int], truncation: Optional[int],
                  twin_len: int = TWIN_MAX_MODEL_LEN) -> dict[str, dict[str, Any]]:
    """The twin's lengths, each relation to max_model_len kept (equal, minus one, below, above, -1)."""
    user_mml = max_model_len or twin_len
    out: dict[str, dict[str, Any]] = {
        "max_model_len": {"user": max_model_len, "twin": twin_len,
                          "relation": "scaled" if max_model_len else "not stated: the twin's length"}}
    if budget is not None:
        if budget == user_mml:
            b, rel = twin_len, "= max_model_len"
        elif budget < user_mml:
            b, rel = min(twin_len - 1, max(MIN_BUDGET, round(budget * twin_len / user_mml))), "< max_model_len"
        else:
            b, rel = max(twin_len + 1, round(budget * twin_len / user_mml)), "> max_model_len"
        out["max_num_batched_tokens"] = {"user": budget, "twin": b, "relation": rel}
    if truncation is not None:
        if truncation == -1:
            t, rel = -1, "-1 (= max_model_len)"
        elif truncation == user_mml:
            t, rel = twin_len, "= max_model_len"
        elif truncation == user_mml - 1:
            t, rel = twin_len - 1, "= max_model_len - 1"
        elif truncation > user_mml:
            t, rel = twin_len + 1, "> max_model_len (refused)"
        else:
            t, rel = min(twin_len - 2, max(1, round(truncation * twin_len / user_mml))), "< max_model_len - 1"
        out["truncate_prompt_tokens"] = {"user": truncation, "twin": t, "relation": rel}
    return out


# -- candidates -------------------------------------------------------------------------------------

def seed_only(truncation: int, twin_len: int) -> tuple[str, ...]:
    """The seed cases that show the livelock for a client truncating to ``truncation`` (the four shapes, the
    concurrent ones and the load test: under load is how a budget equal to max_model_len hangs)."""
    from triage.probes.seed import CONCURRENCY, STRESS_CONCURRENCY, load_case_name

    t = twin_len if truncation == -1 else truncation
    shapes = ("short", "long", "long-short", "short-long")
    return (*(f"seed-{s}-t{truncation}" for s in shapes),
            *(f"seed-concurrent{c}-short-long-t{t}" for c in (CONCURRENCY, STRESS_CONCURRENCY)),
            load_case_name(truncation))


def candidates(vals: Mapping[str, Any], shape: ModelShape, truncation: Optional[int], scale: Mapping[str, Any],
               run_modes: Iterable[str] = ()) -> list[Candidate]:
    """The records this deployment's facts point at (or a stored run's verdicts named), each with its probes."""
    out: list[Candidate] = []
    modes = set(run_modes)
    twin_t = scale.get("truncate_prompt_tokens", {}).get("twin")
    pooling_runner = vals.get("runner") in (None, "pooling") and shape.head == "embed"
    at_max = truncation is not None and (truncation == -1 or truncation == vals.get("max_model_len"))
    if "pooling-livelock" in modes or (pooling_runner and at_max):
        t = twin_t if isinstance(twin_t, int) and twin_t in (-1, TWIN_MAX_MODEL_LEN) else TWIN_MAX_MODEL_LEN
        out.append(Candidate(POOLING_LIVELOCK.id, "the client truncates to exactly max_model_len on a pooling runner: "
                             "the seed matrix's cases at that truncation", ("seed",),
                             seed_only(t, TWIN_MAX_MODEL_LEN), t))
    if shape.encoder_only and vals.get("enable_prefix_caching") is True:
        out.append(Candidate("encoder-prefix-caching", f"--enable-prefix-caching on an encoder-only model "
                             f"({shape.architecture}): the twin's start-up itself", ("startup",)))
    if shape.head == "rerank" and not vals.get("hf_overrides") and vals.get("convert") in (None, "auto", "embed"):
        out.append(Candidate("reranker-overrides-missing", f"an LLM reranker ({shape.architecture}) served "
                             "without --hf-overrides: the rerank set's ranking check", ("rerank",)))
    stated = str(vals.get("pooling_type") or "").upper()
    if "pooling-mismatch" in modes or (stated and stated != shape.pooling):
        out.append(Candidate("pooling-mismatch", f"the server pools {stated or '?'}; the model was trained with "
                             f"{shape.pooling} ({shape.source})", ("vectors",),
                             ("vectors-model-pooling", "vectors-reference")))
    return out


def plan_twin(vals: Mapping[str, Any], truncation: Optional[int], installed: Sequence[str],
              run_modes: Iterable[str] = (), stated: Optional[Iterable[str]] = None) -> TwinPlan:
    """The twin of a deployment (``vals``: the effective config's values; ``truncation``: the client's
    truncate_prompt_tokens, -1 or None; ``installed``: the lab's releases; ``run_modes``: records a run reported)."""
    model = str(vals.get("model") or vals.get("served_model_name") or "")
    shape = shape_of(model) or shape_from_files(model)
    if shape is None:
        raise PlanError(f"the model {model or '(not stated)'} is not in the table of popular models "
                        "(triage/twin/models.py) and no config.json of it is here: no twin model of its shape")
    if shape.lab_model is None:
        raise PlanError(f"{model} ({shape.architecture}, {shape.pooling} pooling): the lab has no tiny model of this "
                        "shape yet")
    mml = vals.get("max_model_len") if isinstance(vals.get("max_model_len"), int) else None
    budget = vals.get("max_num_batched_tokens") if isinstance(vals.get("max_num_batched_tokens"), int) else None
    notes: list[str] = []
    if budget is None and mml is not None:
        budget = mml
        notes.append("max_num_batched_tokens is not known (no GPU stated): assumed = max_model_len, the default "
                     "budget of a card under 70 GiB")
    scale = scale_lengths(mml, budget, truncation)
    if scale.get("max_num_batched_tokens", {}).get("relation") == "= max_model_len":
        notes.append("the budget equals max_model_len: the hang needs a short and a long input admitted in one "
                     f"scheduler step (a race), so the twin tries the seed cases up to {SEED_ROUNDS} rounds, 16 "
                     "requests at once among them, and a fix counts as verified only if every round stays clear")
    cands = candidates(vals, shape, truncation, scale, run_modes)
    if not cands:
        raise PlanError("nothing to reproduce: no record's preconditions hold for this deployment "
                        "(a pooling runner with truncation at max_model_len, a pooling override, prefix caching on "
                        "an encoder, or an LLM reranker without its overrides)")
    twin_cfg: dict[str, Any] = {k: vals[k] for k in CARRIED if vals.get(k) is not None}
    for k, s in scale.items():
        twin_cfg[k] = s["twin"]
    if twin_cfg.get("enable_chunked_prefill") is None and POOLING_LIVELOCK.id in {c.mode for c in cands}:
        twin_cfg["enable_chunked_prefill"] = True  # the release's default for LAST pooling, stated for the twin
    dropped = {k: "GPU sizing: the twin is a CPU server" for k in ("gpu_memory_utilization", "tensor_parallel_size",
                                                                  "kv_cache_memory_bytes") if vals.get(k) is not None}
    if vals.get("dtype") not in (None, "auto"):
        dropped["dtype"] = "the tiny model's own dtype serves the twin"
    options = [f"--{k.replace('_', '-')}" for k in twin_cfg if k != "truncate_prompt_tokens"]
    rc = choose_release(_str(vals.get("vllm_version")), installed, [c.mode for c in cands], options)
    twin_cfg["vllm_version"] = rc.chosen
    args = server_args(twin_cfg, rc.chosen)
    return TwinPlan(rc, shape, model, twin_cfg, scale, ServerSpec(rc.chosen, shape.lab_model, tuple(args)),
                    tuple(cands), dropped, tuple(notes))


def _str(v: Any) -> Optional[str]:
    return str(v) if v not in (None, "") else None


def server_args(cfg: Mapping[str, Any], release: str) -> list[str]:
    """The twin's ``vllm serve`` options for ``cfg`` in ``release``'s own spelling (the fix blocks' writer)."""
    from triage.fixblocks import apply_serve

    rel = knowledge.release(knowledge.for_version(release).release)
    return apply_serve([], {k: cfg[k] for k in CARRIED if cfg.get(k) is not None}, rel)


def record(mode_id: str) -> FailureMode:
    return get(mode_id)


def facts_of_run(rec: Any) -> tuple[dict[str, Any], Optional[int], list[str]]:
    """What a stored run (``triage.store.RunRecord``) tells a twin: (config values, the client's truncation, the
    records its failing findings name). A checklist run has its effective config; a probe run its server's facts
    in meta (model, max_model_len, release) and the truncation of the seed case that hung."""
    cfg = rec.config.get("values") if isinstance(rec.config.get("values"), dict) else {}
    vals: dict[str, Any] = {k: (v.get("value") if isinstance(v, dict) else v) for k, v in cfg.items()}
    meta = rec.meta if isinstance(rec.meta, dict) else {}
    for key, mkey in (("model", "model"), ("max_model_len", "max_model_len"), ("vllm_version", "vllm_version")):
        if vals.get(key) in (None, "") and meta.get(mkey) not in (None, ""):
            vals[key] = meta[mkey]
    if vals.get("model") in (None, "") and rec.target is not None and rec.target.model:
        vals["model"] = rec.target.model
    t = vals.get("truncate_prompt_tokens")
    if not isinstance(t, int) and rec.target is not None and isinstance(rec.target.truncate_prompt_tokens, int):
        t = rec.target.truncate_prompt_tokens
    if not isinstance(t, int):
        hung = [p.detail.get("truncate_prompt_tokens") for p in rec.probes
                if p.detail.get("set") == "seed" and p.outcome in ("livelock", "stuck-waiting")]
        t = next((x for x in hung if isinstance(x, int)), None)
    modes = sorted({f.failure_mode for f in rec.findings
                    if f.failure_mode and getattr(f.status, "value", f.status) in ("fail", "warn")})
    return vals, t if isinstance(t, int) else None, modes
