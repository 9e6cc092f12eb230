"""The vectors set (safe, bounded, on by default): are the vectors the server returns the model's vectors?

Steps: dimension across input lengths and vs the model's files; no NaN/Inf; norm as the pooling
config says; the same text twice; alone vs inside a batch; a long input (the chunked-prefill path,
under watch and aborted if it stalls) twice; paraphrases ranked above unrelated pairs; EOS at the
end of /tokenize output for LAST pooling; the model's own pooling (files) vs the server's (start-up
log, command line); reference vectors computed with transformers vs the server's. Verdicts are the
pure ``check_*`` functions in triage/probes/vector_checks.py; wording, refs and fixes come from the
catalogue (triage/catalogue/vectors.py).
"""
from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import AsyncIterator, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlparse

from triage.catalogue import vector_causes as vcs
from triage.client import Exchange
from triage.findings import Finding
from triage.probes import vector_checks as vc
from triage.probes.context import ProbeContext
from triage.probes.runner import ProbeOutcome
from triage.probes.vector_reference import check_reference
from triage.sources import model_files as mf

SET = "vectors"
MODEL_PATH_ENV = "VLLM_TRIAGE_MODEL_PATH"  # the model directory, when /v1/models' root is not readable here
SERVER_LOG_ENV = "VLLM_TRIAGE_SERVER_LOG"  # the server's start-up log file
UNTRAINED_MARKER = ".built"  # written by `triage lab models` next to its random-weight models


def _outcome(probe: str, exchanges: list[Exchange], finding: Finding) -> ProbeOutcome:
    from triage.probes.conformance import as_outcome
    return dataclasses.replace(as_outcome(probe, exchanges, finding), set=SET)


def _only(name: str, only: Iterable[str] | None) -> bool:
    import fnmatch
    pats = list(only or [])
    return not pats or any(fnmatch.fnmatch(name, p) for p in pats)


def model_dir(ctx: ProbeContext) -> Optional[str]:
    for d in (_evidence().model_path, os.environ.get(MODEL_PATH_ENV), ctx.model_root):
        if d and (Path(d) / "config.json").exists():
            return d
    return None


def untrained(model_root: Optional[str]) -> Optional[str]:
    """Why the model is known to have random weights (then ranking cannot be judged), or None."""
    if model_root and (Path(model_root) / UNTRAINED_MARKER).exists():
        return f"{model_root} was built by `triage lab models` with random weights (seed 0)"
    return None


def _lab_log(url: str) -> Optional[str]:
    """The start-up log of a lab server on this URL's port (the lab records it), if any."""
    try:
        from triage.lab.server import status
        port = urlparse(url).port
        for srv in status():
            if srv.port == port and urlparse(url).hostname in ("127.0.0.1", "localhost"):
                return srv.log_path
    except (OSError, ValueError, ImportError):
        return None
    return None


@dataclass(frozen=True)
class ServerEvidence:
    """What the caller knows beyond the API (the dashboard's pasted log and command line, a model path).

    Set with ``EVIDENCE.set(...)`` before run_probes: a context variable, so the probe sets keep their
    one signature and concurrent dashboard sessions do not see each other's evidence.
    """

    log_text: Optional[str] = None
    cmdline: Optional[str] = None
    model_path: Optional[str] = None
    reference_python: Optional[str] = None


EVIDENCE: ContextVar[Optional[ServerEvidence]] = ContextVar("vectors_evidence", default=None)


def _evidence() -> ServerEvidence:
    return EVIDENCE.get() or ServerEvidence()


def _from_log(text: str, where: str) -> tuple[Optional[str], str]:
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
    """``resolved_facts`` of this server's evidence: the given log and command line, else the lab's log file."""
    ev = _evidence()
    if ev.log_text or ev.cmdline:
        return resolved_facts(ev.log_text, ev.cmdline, "the start-up log given")
    path = os.environ.get(SERVER_LOG_ENV) or _lab_log(ctx.pc.url)
    try:
        return resolved_facts(Path(path).read_text(errors="replace"), None, f"start-up log {path}") if path else {}
    except OSError:
        return {}


def server_pooling(ctx: ProbeContext, log_path: Optional[str] = None) -> tuple[Optional[str], str]:
    """The pooling the server resolved and where that was read: start-up log, else its command line."""
    ev = _evidence()
    if ev.log_text:
        got = _from_log(ev.log_text, "the start-up log given")
        if got[0]:
            return got
    if ev.cmdline:
        from triage.sources.cmdline import collect
        fact = collect(ev.cmdline).facts.get("pooling_type")
        if fact is not None:
            return str(fact.value).upper(), "the command line given: --pooler-config"
    path = log_path or os.environ.get(SERVER_LOG_ENV) or _lab_log(ctx.pc.url)
    if not path:
        return None, f"no start-up log or command line (give one, or set {SERVER_LOG_ENV})"
    try:
        return _from_log(Path(path).read_text(errors="replace"), f"start-up log {path}")
    except OSError as e:
        return None, f"start-up log unreadable: {e}"


async def run(ctx: ProbeContext, only: Iterable[str] | None = None,
              reference_python: Optional[str] = None) -> AsyncIterator[ProbeOutcome | Finding]:
    pc, model, mml = ctx.pc, ctx.model, ctx.max_model_len

    async def emb(input_: Any, **params: Any) -> Exchange:
        return await pc.embed(ctx.body(input_, **params), timeout_s=ctx.cfg.deadline_s)

    root = model_dir(ctx)
    files = mf.read_model_pooling(root)
    pooling, pooling_source = server_pooling(ctx)
    resolved = server_resolved(ctx)
    seen: list[Exchange] = []

    if _only("vectors-dimension", only):
        # up to 12 pieces, fewer under a small max_model_len: a tokenizer that splits the salt finely (the lab's
        # Qwen2) made 12 pieces of [short, mid] exceed 256 tokens, an error on a healthy server
        short, mid = ctx.short(), " ".join(ctx.short() for _ in range(max(2, min(12, mml // 64))))
        exs = [await emb(short), await emb(mid), await emb([short, mid])]
        seen += exs
        declared = (files.dimension, files.source) if files and files.dimension else (None, "")
        f = vc.check_dimension(exs, *declared, files=files)
        yield _outcome("vectors-dimension", exs, f)
        yield f

    if _only("vectors-norm", only):
        ex = await emb([ctx.short() for _ in range(3)])
        seen.append(ex)
        expect = files.normalize if files and files.normalize is not None else None
        f = vc.check_norm(ex, expect, files.source if files else "vLLM's default for embed (use_activation=True)",
                          (resolved.get(vcs.SERVER_USE_ACTIVATION), resolved.get(vcs.SERVER_USE_ACTIVATION_SOURCE, "")))
        yield _outcome("vectors-norm", [ex], f)
        yield f

    if _only("vectors-repeat", only):
        text = ctx.short()
        a, b = await emb(text), await emb(text)
        seen += [a, b]
        f = vc.check_pair("vectors-repeat", a, b, vc.REPEAT_MIN, "the same text twice")
        yield _outcome("vectors-repeat", [a, b], f)
        yield f

    if _only("vectors-batch-invariance", only):
        text = ctx.short()
        alone, batch = await emb(text), await emb([ctx.short(), text, " ".join(ctx.short() for _ in range(8))])
        seen += [alone, batch]
        f = vc.check_pair("vectors-batch-invariance", alone, batch, vc.BATCH_MIN,
                          "a text alone vs the same text inside a batch of 3", index_b=1)
        yield _outcome("vectors-batch-invariance", [alone, batch], f)
        yield f

    if _only("vectors-long-repeat", only):
        lt = await ctx.long()
        body = ctx.body(lt.text, truncate_prompt_tokens=mml - 1)  # mml - 1: never the livelock's length
        outs = [await ctx.monitored("vectors-long-repeat", SET, [body], f"[LONG] {mml - 1} tokens, twice")
                for _ in range(2)]
        f = vc.check_long_repeat(outs, mml - 1)
        yield dataclasses.replace(outs[-1], description=f.title)
        yield f

    if _only("vectors-ranking", only):
        texts = [t for triple in vc.PAIRS for t in triple]
        ex = await emb(texts)
        seen.append(ex)
        f = vc.check_ranking(ex, untrained(root))
        yield _outcome("vectors-ranking", [ex], f)
        yield f

    if _only("vectors-finite", only):
        f = vc.check_finite(seen)
        if seen:
            yield _outcome("vectors-finite", seen[:1], f)
        yield f

    if _only("vectors-eos", only):
        text = ctx.short()
        t_text, t_empty = await pc.tokenize(model, text), await pc.tokenize(model, "")
        f = vc.check_eos(t_text, t_empty, pooling or (files.pooling if files else None), files.eos_token_id
                         if files else None, pooling_source if pooling else (files.source if files else ""))
        yield _outcome("vectors-eos", [t_text, t_empty], f)
        yield f

    if _only("vectors-model-pooling", only):
        yield vc.check_model_pooling(files, pooling, pooling_source, root or ctx.model_root)

    if _only("vectors-reference", only):
        texts = list(vc.REFERENCE_TEXTS)
        ex = await emb(texts)
        py = reference_python or _evidence().reference_python or mf.reference_python()
        refs: Optional[dict[str, list[list[float]]]] = None
        why = ""
        if root is None:
            why = f"the model's files are not readable here (root {ctx.model_root!r}; set {MODEL_PATH_ENV})"
        elif py is None:
            why = f"no Python with torch and transformers (set {mf.REFERENCE_PYTHON_ENV})"
        else:
            try:
                refs = await asyncio.to_thread(mf.reference_vectors, root, texts, py, files=files)
            except mf.ReferenceError_ as e:
                why = f"reference vectors failed in {py}: {e}"
        f = check_reference(ex, refs, files, pooling, why, py, resolved)
        yield _outcome("vectors-reference", [ex], f)
        yield f
