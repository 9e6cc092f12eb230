"""The conformance set (safe, on by default): what the server's API really does, probe by probe.

Only short inputs, or inputs the server rejects before scheduling, are sent plainly; the one
long input that is scheduled (max_model_len - 1 tokens) goes under watch and is aborted if it
stalls. Verdicts live in conformance_findings.py / conformance_deploy.py (pure functions); a verdict that is not a
pass stands only on the server's own answers: a request that got none (a time-out on a starved box, a refused
connection) or got a proxy's 502/504 makes it "unknown" with the reason (``not_judged``), never a FAIL with an
empty reason.
"""
from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from dataclasses import replace
from typing import Any

from triage.findings import Finding, Status
from triage.probes import conformance_findings as cc
from triage.probes import conformance_deploy as cd
from triage.http import Reply, trim_for_storage
from triage.probes.context import ProbeContext
from triage.probes.runner import HTTP_ERROR, OK, PROXY_ERROR, SLOW, UNREACHABLE, ProbeOutcome

SET = "conformance"
QUERY_TASK = "Given a web search query, retrieve relevant passages that answer the query"


def as_outcome(probe: str, exchanges: list[Reply], finding: Finding | None = None) -> ProbeOutcome:
    """A plain (unwatched) probe as a stored outcome: the first exchange is the request of record.

    An expected rejection (a 400 the finding passes) is outcome ok: the outcome says whether the
    server answered as the facts say, the http_status keeps what it answered.
    """
    first = exchanges[0]
    bad = next((x for x in exchanges if not x.ok), None)
    description = finding.title if finding is not None else ""
    if any(x.status is None for x in exchanges):
        outcome = UNREACHABLE if any("Connect" in (x.error or "") for x in exchanges) else SLOW
    elif any(x.proxy for x in exchanges) and (finding is None or finding.status != Status.PASS):
        outcome = PROXY_ERROR
    elif bad is None or (finding is not None and finding.status == Status.PASS):
        outcome = OK
    else:
        outcome = HTTP_ERROR
    return ProbeOutcome(probe=probe, set=SET, outcome=outcome, description=description,
                        duration_s=round(sum(x.elapsed_s or 0 for x in exchanges), 4),
                        time_to_verdict_s=first.elapsed_s, http_status=(bad or first).status,
                        request={"method": first.method, "path": first.path, "body": trim_for_storage(first.request)},
                        response={"status": first.status, "body": trim_for_storage(first.body), "error": first.error,
                                  "all": [{"path": x.path, "status": x.status} for x in exchanges]},
                        exchanges=exchanges)


def missing_answer(exchanges: list[Reply]) -> str | None:
    """Why the server's answer is missing from these exchanges (no answer: time-out, refused, cut; or a proxy's
    502/504 instead of it), else None."""
    for x in exchanges:
        if x.proxy:
            return f"{x.method} {x.path}: {x.proxy}, a proxy's answer, not the server's"
        if x.status is None:
            kind = f" ({x.error_kind})" if x.error_kind else ""
            return f"{x.method} {x.path}: no answer{kind}: {(x.error or 'no error text')[:200]}"
    return None


def not_judged(finding: Finding, exchanges: list[Reply]) -> Finding:
    """A verdict that is not a pass, made without the server's own answer to one of its requests, as UNKNOWN with
    the reason (missing data is no evidence: a 30 s time-out on a starved box is not a failed claim)."""
    why = missing_answer(exchanges) if finding.status not in (Status.PASS, Status.UNKNOWN) else None
    if why is None:
        return finding
    return replace(finding, status=Status.UNKNOWN, title=f"not judged: {why}", fix="", explanation="",
                   evidence={**finding.evidence, "not_judged": why, "would_have_said": finding.title})


def _only(name: str, only: Iterable[str] | None) -> bool:
    import fnmatch
    pats = list(only or [])
    return not pats or any(fnmatch.fnmatch(name, p) for p in pats)


async def run(ctx: ProbeContext, only: Iterable[str] | None = None) -> AsyncIterator[ProbeOutcome | Finding]:
    pc, model, mml = ctx.pc, ctx.model, ctx.max_model_len

    async def emb(input_: Any, path: str = "/v1/embeddings", **params: Any) -> Reply:
        return await pc.embed(ctx.body(input_, **params), path=path, timeout_s=ctx.cfg.deadline_s)

    steps: list[tuple[str, Any]] = []

    async def v1() -> tuple[list[Reply], Finding]:
        text = ctx.short()
        a, b = await emb(text), await emb(text, path="/embeddings")
        models = await pc.models()
        return [a, b, models], cc.v1_prefix(a, b)
    steps.append(("conformance-v1-prefix", v1))

    async def openai() -> tuple[list[Reply], Finding]:
        models = await pc.models()
        return [models], cc.openai_server(models, ctx.vllm_version)
    steps.append(("conformance-openai-server", openai))

    async def array() -> tuple[list[Reply], Finding]:
        a = await emb([ctx.short(), ctx.short()])
        return [a], cc.array_input(a, 2)
    steps.append(("conformance-array-input", array))

    async def tok_ids() -> tuple[list[Reply], Finding]:
        t1, t2 = await pc.tokenize(model, ctx.short()), await pc.tokenize(model, ctx.short())
        ids1, ids2 = t1.obj().get("tokens", [1, 2]), t2.obj().get("tokens", [1, 2])
        a, b = await emb(ids1), await emb([ids1, ids2])
        return [a, b], cc.token_ids(a, b)
    steps.append(("conformance-token-ids", tok_ids))

    async def order() -> tuple[list[Reply], Finding]:
        texts = [ctx.short() for _ in range(3)]
        batch = await emb(texts)
        singles = [await emb(t) for t in texts]
        return [batch, *singles], cc.index_order(batch, singles)
    steps.append(("conformance-index-order", order))

    async def b64() -> tuple[list[Reply], Finding]:
        text = ctx.short()
        a, b = await emb(text), await emb(text, encoding_format="base64")
        return [a, b], cc.base64_equals_float(a, b)
    steps.append(("conformance-base64", b64))

    async def dim_norm() -> tuple[list[Reply], Finding]:
        a = await emb([ctx.short(), ctx.short(), ctx.short()])
        return [a], cc.dimension_norm([a])
    steps.append(("conformance-dimension-norm", dim_norm))

    async def determinism() -> tuple[list[Reply], Finding]:
        text = ctx.short()
        a, b = await emb(text), await emb(text)
        return [a, b], cc.determinism(a, b)
    steps.append(("conformance-determinism", determinism))

    async def usage() -> tuple[list[Reply], Finding]:
        text = ctx.short() + " " + " ".join(ctx.short() for _ in range(4))
        a, t = await emb(text), await pc.tokenize(model, text)
        return [a, t], cc.usage_tokens(a, t)
    steps.append(("conformance-usage-tokens", usage))

    async def overlong() -> tuple[list[Reply], Finding]:
        lt = await ctx.long()
        a = await emb(lt.text)
        return [a], cc.overlong_400(a, mml, lt.token_count)
    steps.append(("conformance-overlong-400", overlong))

    async def too_big() -> tuple[list[Reply], Finding]:
        a = await emb(ctx.short(), truncate_prompt_tokens=mml + 1)
        return [a], cc.truncate_too_big_400(a, mml)
    steps.append(("conformance-truncate-too-big-400", too_big))

    async def dims() -> tuple[list[Reply], Finding]:
        probe = await emb(ctx.short())
        full = len(cc.vectors(probe)[0]) if cc.vectors(probe) else 64
        asked = 32 if full > 32 else max(1, full // 2)
        a = await emb(ctx.short(), dimensions=asked)
        conf = cd.read_model_config(ctx.model_root)
        declared = None if conf is None else bool(conf.get("matryoshka_dimensions") or conf.get("is_matryoshka"))
        return [a], cc.dimensions(a, asked, declared)
    steps.append(("conformance-dimensions", dims))

    async def normalize() -> tuple[list[Reply], Finding]:
        a = await emb(ctx.short(), normalize=True)
        return [a], cc.normalize_removed(a)
    steps.append(("conformance-normalize-removed", normalize))

    async def instruction() -> tuple[list[Reply], Finding]:
        q = f"what is a {ctx.short()}"
        instr = f"Instruct: {QUERY_TASK}\nQuery:{q}"
        p, im, qt = (await pc.tokenize(model, "Retrieve: "), await pc.tokenize(model, "<|im_start|>"),
                     await pc.tokenize(model, instr))
        a, b = await emb(instr), await emb(q)
        return [p, im, qt, a, b], cc.query_instruction(p, im, qt, a, b)
    steps.append(("conformance-query-instruction", instruction))

    async def batching() -> tuple[list[Reply], Finding]:
        a = await emb([ctx.short() for _ in range(64)])
        info = await pc.call("GET", "/server_info")
        return [a, info], cd.batch_flag(a, 64, info)
    steps.append(("conformance-batching-flags", batching))

    async def native() -> tuple[list[Reply], Finding]:
        models, a = await pc.models(), await emb(ctx.short())
        return [models, a], cd.remote_code(models, cd.read_model_config(ctx.model_root), a.ok)
    steps.append(("conformance-native-architecture", native))

    for name, step in steps:
        if not _only(name, only):
            continue
        exchanges, finding = await step()
        finding = not_judged(finding, exchanges)
        yield as_outcome(name, exchanges, finding)
        yield finding

    if _only("conformance-kv-cache-sizing", only):
        page = await pc.scrape()
        yield cd.kv_sizing(page.cache if page else {}, mml)

    if _only("conformance-chunked-prefill-shapes", only):
        lt = await ctx.long()
        short = await emb(ctx.short())
        out = await ctx.monitored("conformance-chunked-prefill-shapes", SET,
                                  [ctx.body(lt.text, truncate_prompt_tokens=mml - 1)],
                                  f"[LONG] truncate_prompt_tokens={mml - 1} under watch")
        yield out
        yield cc.chunked_shapes(out, short, lt.token_count)
