"""What the target's start-up log, command line and model directory say, read from the ``ProbeContext``.

The probe sets (vectors, rerank) judge the server's answers against what it resolved at start-up. They learn
it from the context's fields only (``log_text``, ``cmdline``, ``model_path``), which every face fills from
its ``Target`` the same way (``python -m triage probe --log-file/--cmdline-file/--model-path``, the dashboard's
session target): no environment variable, context variable or lab registry is read here.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional

from triage.catalogue import vector_causes as vcs
from triage.probes.context import ProbeContext

UNTRAINED_MARKER = ".built"  # written by `triage lab models` next to its random-weight models
GIVE_LOG = "give the start-up log: --log-file, or the Target page's log"
GIVE_MODEL_DIR = "give the model directory: --model-path, or the Vectors page's model directory"


def wanted(name: str, only: Iterable[str] | None) -> bool:
    """Whether probe ``name`` runs under ``--only`` globs (none: all run)."""
    pats = list(only or [])
    return not pats or any(fnmatch.fnmatch(name, p) for p in pats)


def model_dir(ctx: ProbeContext) -> Optional[str]:
    """The model directory readable here: the one given, else /v1/models' root; None when neither has config.json."""
    for d in (ctx.model_path, ctx.model_root):
        if d and (Path(d) / "config.json").exists():
            return d
    return None


def untrained(model_root: Optional[str]) -> Optional[str]:
    """Why the model is known to have random weights (then ranking cannot be judged), or None."""
    if model_root and (Path(model_root) / UNTRAINED_MARKER).exists():
        return f"{model_root} was built by `triage lab models` with random weights (seed 0)"
    return None


def pooling_from_log(text: str, where: str) -> tuple[Optional[str], str]:
    """The pooling type the start-up log resolved (upper case, or None) and where that was read."""
    from triage.logs import extract_startup_config
    from triage.vllm import logformats as lf
    cfg = extract_startup_config(text)
    pt = cfg.get("pooling_type")
    m = lf.RESOLVED_POOLING_RE.search(text)
    tail = text[m.end():m.end() + 40] if m else ""
    # "pooling_type=MEAN(source=user)": user = --pooler-config; model_default = the architecture/files
    origin = tail[len("(source="):tail.index(")")] if tail.startswith("(source=") and ")" in tail else ""
    via = {"user": " (source=user: --pooler-config)"}.get(origin, f" (source={origin})" if origin else "")
    return (str(pt).upper() if pt else None), f"{where}: Resolved pooling config{via}"


def resolved_facts(log_text: Optional[str], cmdline: Optional[str], where: str = "") -> dict[str, Any]:
    """What the server resolved beyond its pooling (triage.catalogue.vector_causes SERVER_* keys): use_activation
    (log line 'Resolved pooling config', else --pooler-config), --hf-overrides is_causal, a dropped ST projector."""
    from triage.vllm import logformats as lf
    out: dict[str, Any] = {}
    if log_text:
        m = lf.POOLER_ACTIVATION_RE.search(log_text)
        if m:
            out[vcs.SERVER_USE_ACTIVATION] = m["v"] == "True"
            out[vcs.SERVER_USE_ACTIVATION_SOURCE] = f"{where}: Resolved pooling config (source={m['src']})"
        m = lf.HF_OVERRIDES_IS_CAUSAL_RE.search(log_text)
        if m:
            out[vcs.SERVER_IS_CAUSAL] = m["v"] == "True"
        out[vcs.SERVER_ST_PROJECTOR_FAILED] = bool(lf.ST_PROJECTOR_FAILED_RE.search(log_text))
    if cmdline:
        from triage.sources.cmdline import collect
        fact = collect(cmdline).facts.get("cmdline_args")
        args = fact.value if fact is not None and isinstance(fact.value, dict) else {}
        pc, hf = args.get("pooler_config"), args.get("hf_overrides")
        if isinstance(pc, dict) and vcs.SERVER_USE_ACTIVATION not in out:
            ua = pc.get("use_activation", pc.get("normalize"))
            if isinstance(ua, bool):
                out[vcs.SERVER_USE_ACTIVATION] = ua
                out[vcs.SERVER_USE_ACTIVATION_SOURCE] = "the command line given: --pooler-config"
        if isinstance(hf, dict) and isinstance(hf.get("is_causal"), bool):
            out.setdefault(vcs.SERVER_IS_CAUSAL, hf["is_causal"])
    return out


def server_resolved(ctx: ProbeContext) -> dict[str, Any]:
    """``resolved_facts`` of the context's start-up log and command line ({} when neither was given)."""
    if ctx.log_text or ctx.cmdline:
        return resolved_facts(ctx.log_text, ctx.cmdline, "the start-up log given")
    return {}


def server_pooling(ctx: ProbeContext) -> tuple[Optional[str], str]:
    """The pooling the server resolved and where that was read: the start-up log, else its command line."""
    got: tuple[Optional[str], str] = (None, "")
    if ctx.log_text:
        got = pooling_from_log(ctx.log_text, "the start-up log given")
        if got[0]:
            return got
    if ctx.cmdline:
        from triage.sources.cmdline import collect
        fact = collect(ctx.cmdline).facts.get("pooling_type")
        if fact is not None:
            return str(fact.value).upper(), "the command line given: --pooler-config"
    if ctx.log_text:
        return got
    return None, f"no start-up log or command line ({GIVE_LOG})"
