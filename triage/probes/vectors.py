"""The vectors set (safe, bounded, on by default): are the vectors the server returns the model's vectors?

Steps: dimension across input lengths and vs the model's files; no NaN/Inf; norm as the pooling
config says; the same text twice; alone vs inside a batch; a long input (the chunked-prefill path,
under watch and aborted if it stalls) twice; paraphrases ranked above unrelated pairs; EOS at the
end of /tokenize output for LAST pooling; the model's own pooling (files) vs the server's (start-up
log, command line: the context's fields, read by triage/probes/server_facts.py); reference vectors computed
with transformers vs the server's. Verdicts are the pure ``check_*`` functions in
triage/probes/vector_findings.py; wording, refs and fixes come from the catalogue (triage/catalogue/vectors.py).
"""
from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Iterable
from typing import Any, Optional

from triage.catalogue import vector_causes as vcs
from triage.http import Reply
from triage.findings import Finding
from triage.probes import vector_findings as vc
from triage.probes.context import ProbeContext
from triage.probes.runner import ProbeOutcome
from triage.probes.server_facts import GIVE_MODEL_DIR, model_dir, server_pooling, server_resolved, untrained
from triage.probes.server_facts import wanted as _only
from triage.probes.vector_reference import check_reference
from triage.sources import model_files as mf

SET = "vectors"


def _outcome(probe: str, exchanges: list[Reply], finding: Finding) -> ProbeOutcome:
    from triage.probes.conformance import as_outcome
    return dataclasses.replace(as_outcome(probe, exchanges, finding), set=SET)


async def run(ctx: ProbeContext, only: Iterable[str] | None = None,
              reference_python: Optional[str] = None) -> AsyncIterator[ProbeOutcome | Finding]:
    pc, model, mml = ctx.pc, ctx.model, ctx.max_model_len

    async def emb(input_: Any, **params: Any) -> Reply:
        return await pc.embed(ctx.body(input_, **params), timeout_s=ctx.cfg.deadline_s)

    root = model_dir(ctx)
    files = mf.read_model_pooling(root)
    pooling, pooling_source = server_pooling(ctx)
    resolved = server_resolved(ctx)
    seen: list[Reply] = []

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
        py = reference_python or mf.reference_python()
        refs: Optional[dict[str, list[list[float]]]] = None
        why = ""
        if root is None:
            why = f"the model's files are not readable here (root {ctx.model_root!r}; {GIVE_MODEL_DIR})"
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
