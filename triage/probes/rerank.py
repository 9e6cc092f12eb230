"""The rerank set (safe, bounded) and the rerank-seed set (opt-in: can hang <= 0.31.0): rerankers and /score.

rerank: which of /rerank, /v1/rerank, /v2/rerank, /score answer; /rerank's shape; /score vs /rerank on
the same pairs; top_n; a document longer than max_model_len with and without truncation (the truncated
one at max_model_len - 1, under watch); which pooling task scores the pairs (classifier or embedding
cosine, from /v1/embeddings and /classify); the ranking sanity check on RANKING_CASES (the relevant
document first, by a margin; "unknown" on random weights); the reranker template warning from the
start-up log; then real client libraries (triage/probes/rerank_clients.py).
rerank-seed: [SHORT, LONG] documents through /rerank with truncate_prompt_tokens = max_model_len, and
-1, and the workaround max_model_len - 1, under watch, always aborted and checked for recovery (the pooling livelock's
reach to scoring, issue 25). Verdicts: triage/probes/rerank_findings.py; wording: triage/catalogue/rerank.py.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any, Optional

from triage.catalogue import get
from triage.catalogue import rerank_clues as k
from triage.http import Reply
from triage.findings import Finding, Status
from triage.lab.rerank_models import CONSTRUCTED_MARKER_KEY, RANKING_CASES
from triage.probes import rerank_findings as rc
from triage.probes.context import ProbeContext
from triage.probes.runner import ProbeOutcome
from triage.probes.server_facts import wanted as _want

SET = "rerank"
SEED_SET = "rerank-seed"
RERANK_PATH = "/rerank"
QUERY, DOCS = rc.QUERY, rc.DOCS  # one definition, beside the checks that read them


def _outcome(probe: str, exchanges: list[Reply], f: Finding, set_name: str = SET) -> ProbeOutcome:
    from triage.probes.conformance import as_outcome
    return dataclasses.replace(as_outcome(probe, exchanges, f), set=set_name)


def model_files(root: Optional[str]) -> tuple[list[str], Optional[str]]:
    """(architectures from config.json, why the ranking is unknown) for a readable model directory."""
    if not root or not (Path(root) / "config.json").exists():
        return [], None
    try:
        arch = json.loads((Path(root) / "config.json").read_text()).get("architectures") or []
    except (OSError, ValueError):
        arch = []
    marker = Path(root) / ".built"
    why = None
    if marker.exists():
        try:
            built = json.loads(marker.read_text() or "{}")
        except ValueError:
            built = {}
        if built.get(CONSTRUCTED_MARKER_KEY) != "constructed":
            why = f"{root} was built by `triage lab models` with random weights (seed 0)"
    return [str(a) for a in arch], why


def rerank_body(ctx: ProbeContext, query: str, documents: list[str], **params: Any) -> dict[str, Any]:
    return {"model": ctx.model, "query": query, "documents": documents,
            **{k: v for k, v in params.items() if v is not None}}


def _supported_tasks_from_log(ctx: ProbeContext) -> tuple[Optional[list[str]], str]:
    """'Supported tasks: [...]' and the whole start-up log text given with the target ("" when none was)."""
    from triage.vllm import logformats as lf
    text = ctx.log_text or ""
    m = lf.SUPPORTED_TASKS_RE.search(text)
    tasks = [t.strip().strip("'\"") for t in m.group("tasks").split(",") if t.strip()] if m else None
    return tasks, text


def log_facts(log_text: str) -> dict[str, Any]:
    """What the start-up log tells the rerank clues: the classifier overrides ({} when the log's non-default args
    have none), the server's default use_activation (as vLLM resolved it) and the template warning."""
    from triage.logs import extract_startup_config
    from triage.vllm import logformats as lf
    if not log_text:
        return {}
    cfg = extract_startup_config(log_text)
    hf = cfg.get("hf_overrides")
    facts: dict[str, Any] = {k.TEMPLATE_WARNING: "without a --chat-template" in log_text}
    if any(lf.NON_DEFAULT_ARGS_RE.search(line) for line in log_text.splitlines()):
        facts[k.OVERRIDES] = hf if isinstance(hf, dict) else {}
    m = lf.POOLER_ACTIVATION_RE.search(log_text)
    if m:
        facts[k.POOLER_ACTIVATION] = m.group("v") == "True"
        facts[k.POOLER_ACTIVATION_SOURCE] = m.group("src")
    return facts


async def run(ctx: ProbeContext, only: Iterable[str] | None = None) -> AsyncIterator[ProbeOutcome | Finding]:
    pc, mml = ctx.pc, ctx.max_model_len
    docs = list(DOCS)
    base = rerank_body(ctx, QUERY, docs)

    async def post(path: str, body: dict[str, Any]) -> Reply:
        return await pc.call("POST", path, body, timeout_s=ctx.cfg.deadline_s)

    full = await post(RERANK_PATH, base)
    if _want("rerank-paths", only):
        exs = {RERANK_PATH: full}
        for p in ("/v1/rerank", "/v2/rerank"):
            exs[p] = await post(p, base)
        exs["/score"] = await post("/score", {"model": ctx.model, "queries": QUERY, "documents": docs})
        cls = None if any(x.ok for x in exs.values()) else await post("/classify", {"model": ctx.model,
                                                                                  "input": [QUERY]})
        f = rc.check_paths(exs, pc.url, cls)
        yield _outcome("rerank-paths", list(exs.values()), f)
        yield f
        if f.status in (Status.FAIL, Status.UNKNOWN):  # no score path: nothing below can answer (a classifier)
            return
    if _want("rerank-shape", only):
        f = rc.check_rerank_shape(full, docs)
        yield _outcome("rerank-shape", [full], f)
        yield f
    if _want("score-shape", only):
        sx = await post("/score", {"model": ctx.model, "queries": QUERY, "documents": docs})
        f = rc.check_score_consistent(sx, full)
        yield _outcome("score-shape", [sx, full], f)
        yield f
    if _want("rerank-top-n", only):
        tx = await post(RERANK_PATH, {**base, "top_n": 1})
        f = rc.check_top_n(tx, full, 1)
        yield _outcome("rerank-top-n", [tx], f)
        yield f
    if _want("rerank-long-document", only):
        lt = await ctx.long()
        plain = await post(RERANK_PATH, rerank_body(ctx, QUERY, [docs[1], lt.text]))
        body = rerank_body(ctx, QUERY, [docs[1], lt.text], truncate_prompt_tokens=mml - 1)  # never the hanging length
        watched = await ctx.monitored_path("rerank-long-document", SET, [body], f"[SHORT, LONG] documents, "
                                           f"truncate_prompt_tokens {mml - 1}", RERANK_PATH)
        truncated = watched.exchanges[0] if watched.exchanges else Reply("POST", RERANK_PATH, body,
                                                                          error=f"outcome {watched.outcome}")
        f = rc.check_long_document(plain, truncated, mml, mml - 1)
        yield dataclasses.replace(watched, description=f.title)
        yield f
    arch, untrained = model_files(ctx.model_root)
    tasks, log_text = _supported_tasks_from_log(ctx)
    facts = log_facts(log_text)
    served_ok: Optional[bool] = None
    if _want("rerank-served-task", only):
        ex_e = await post("/v1/embeddings", {"model": ctx.model, "input": [QUERY]})
        ex_c = await post("/classify", {"model": ctx.model, "input": [QUERY]})
        f = rc.check_served_task(ex_e, ex_c, ctx.model, arch, tasks)
        served_ok = f.status != Status.FAIL
        facts[k.SERVED_TASK] = ("classify" if ex_c.ok or tasks and "classify" in tasks else
                                "embed" if ex_e.ok or tasks and "embed" in tasks else None)
        f = dataclasses.replace(f, evidence={**f.evidence, "facts": dict(facts)})
        yield _outcome("rerank-served-task", [ex_e, ex_c], f)
        yield f
    if _want("rerank-ranking", only) or _want("rerank-activation", only):
        cases, exs = [], []
        variants: dict[str, list[Optional[list[float]]]] = {"default": [], "false": [], "true": []}
        errors: list[str] = []
        for query, relevant, others in RANKING_CASES:
            documents = [relevant, *others]
            for name, extra in (("default", {}), ("false", {"use_activation": False}),
                                ("true", {"use_activation": True})):
                if name != "default" and not _want("rerank-activation", only):
                    continue
                ex = await post(RERANK_PATH, rerank_body(ctx, query, documents, **extra))
                exs.append(ex)
                # the server's indices, checked before use (out of range, negative, a string: was KeyError,
                # "could not run: 0" for the whole set)
                why = rc.rerank_problem(ex, len(documents)) if ex.ok else None
                sc = rc.rerank_scores(ex) if why is None else None
                if sc is not None and len(sc) != len(documents):
                    why = f"{len(sc)} results for the {len(documents)} documents sent"
                scores = [sc[i] for i in range(len(documents))] if sc is not None and why is None else None
                variants[name].append(scores)
                if not ex.ok:
                    errors.append(f"{name}: HTTP {ex.status or ex.error} {ex.error_message()[:200]}")
                elif why is not None:
                    errors.append(f"{name}: the answer is not a ranking of the inputs: {why}")
                if name == "default":
                    cases.append({"query": query, "documents": documents, "scores": scores,
                                  "error": errors[-1] if scores is None and errors else None})
        if _want("rerank-activation", only):
            f = rc.check_activation(variants["default"], variants["false"], variants["true"], errors)
            facts.update(f.evidence.get("facts") or {})
            yield _outcome("rerank-activation", exs, f)
            yield f
        if _want("rerank-ranking", only):
            f = rc.check_ranking(cases, untrained, served_ok, facts, ctx.model)
            yield _outcome("rerank-ranking", exs, f)
            yield f
    if _want("rerank-template", only):
        mode = get("reranker-template-missing")
        hit = "without a --chat-template" in log_text
        if log_text:
            yield Finding.of(mode, "rerank-template", Status.WARN if hit else Status.PASS,
                             mode.title if hit else "no reranker-template warning in the start-up log",
                             # a risk read from the log: the ranking probe shows the symptom when it is seen
                             {"source": "start-up log", "symptoms": []})
    from triage.probes import rerank_clients
    async for item in rerank_clients.run(ctx, only, full):
        yield item


async def run_seed(ctx: ProbeContext, only: Iterable[str] | None = None) -> AsyncIterator[ProbeOutcome | Finding]:
    """[SHORT, LONG] documents through /rerank at max_model_len, -1 and max_model_len - 1 (may hang <= 0.31.0)."""
    from triage.probes.seed import seed_findings
    mml = ctx.max_model_len
    outcomes = []
    for trunc in (mml, -1, mml - 1):
        name = f"rerank-seed-short-long-t{trunc}"
        if not _want(name, only):
            continue
        lt = await ctx.long()
        body = rerank_body(ctx, ctx.short(), [ctx.short(), lt.text], truncate_prompt_tokens=trunc)
        out = await ctx.monitored_path(name, SEED_SET, [body], f"/rerank [SHORT, LONG] documents "
                                       f"truncate_prompt_tokens={trunc}", RERANK_PATH)
        out.extra.update({"inputs": ["SHORT", "LONG"], "truncate_prompt_tokens": trunc, "concurrency": 1,
                          "input_tokens_before_truncation": [None, lt.token_count], "path": RERANK_PATH})
        outcomes.append(out)
        yield out
    for f in seed_findings(outcomes, mml, ctx.vllm_version):
        yield dataclasses.replace(f, evidence={**f.evidence, "path": RERANK_PATH})
