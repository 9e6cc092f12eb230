"""The classify set (issue 29): what /classify's ``probs`` are, probabilities or raw logits.

Three unrelated texts through /classify without ``use_activation``, with false and with true (vLLM 0.31/0.32
read that field per request; --pooler-config's is the server's default), and once with the old spelling
``activation: false``, which those releases do not read. The verdict (``check_classify``) is pure; the wording
and fix are the catalogue's (scores-are-logits, triage/catalogue/rerank.py); the facts it records are the
keys of triage/catalogue/rerank_clues.py.
"""
from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any, Optional

from triage.catalogue import get
from triage.catalogue import rerank_clues as k
from triage.http import Reply
from triage.findings import Finding, Status
from triage.probes.context import ProbeContext
from triage.probes.runner import ProbeOutcome

SET = "classify"
TEXTS = ("the service was quick and the staff were kind", "the parcel arrived on tuesday",
         "the screen cracked after one day and support never answered")


def class_probs(ex: Reply) -> Optional[list[list[float]]]:
    """data[i].probs in input order, or None when the answer is not a /classify one."""
    data = ex.body.get("data") if ex.ok and isinstance(ex.body, dict) else None
    if not isinstance(data, list) or not data:
        return None
    rows = []
    for d in sorted(data, key=lambda d: d.get("index", 0) if isinstance(d, dict) else 0):
        probs = d.get("probs") if isinstance(d, dict) else None
        if not isinstance(probs, list) or not all(isinstance(p, (int, float)) for p in probs):
            return None
        rows.append([float(p) for p in probs])
    return rows


def _same(a: Optional[list[list[float]]], b: Optional[list[list[float]]], tol: float = 1e-4) -> Optional[bool]:
    if a is None or b is None or len(a) != len(b):
        return None
    return all(len(x) == len(y) and all(abs(p - q) <= tol * max(1.0, abs(q)) for p, q in zip(x, y, strict=True))
               for x, y in zip(a, b, strict=True))


def check_classify(default: Reply, raw: Reply, on: Reply, old_field: Optional[Reply] = None) -> Finding:
    """/classify's probs: softmax (or sigmoid) probabilities by default, or the raw logits (scores-are-logits)."""
    mode = get("scores-are-logits")
    d, r, o = class_probs(default), class_probs(raw), class_probs(on)
    ev: dict[str, Any] = {"default": default.to_dict(), "use_activation_false": raw.to_dict(),
                          "use_activation_true": on.to_dict()}
    if old_field is not None:
        ev["activation_false"] = old_field.to_dict()
    if d is None:
        facts = {k.CLASSIFY_OK: False}
        status = Status.UNKNOWN if default.status in (400, 404) else Status.ERROR
        return Finding("classify-semantics", status, f"/classify did not answer: HTTP {default.status or default.error}"
                       f" {default.error_message()[:200]} (not a classifier deployment?)",
                       {**ev, "facts": facts, "source": "live probe"}, failure_mode="")
    flat = [p for row in d for p in row]
    n = len(d[0])
    sum_error = max(abs(sum(row) - 1.0) for row in d)
    use = None
    if r is not None and o is not None:
        as_raw, as_on = _same(d, r), _same(d, o)
        use = True if as_on and not as_raw else False if as_raw and not as_on else None
    facts = {k.CLASSIFY_OK: True, k.CLS_USE_ACTIVATION: use, k.CLS_NUM: n,
             k.CLS_RANGE: [round(min(flat), 6), round(max(flat), 6)], k.CLS_SUM_ERROR: round(sum_error, 6),
             k.CLS_CONSTANT: len(d) > 1 and all(_same([row], [d[0]]) for row in d[1:])}
    ev["facts"] = facts
    if old_field is not None and class_probs(old_field) is not None:
        ev["activation_false_ignored"] = _same(class_probs(old_field), d)
    cfg = {"num_classes": n}
    lo, hi = facts[k.CLS_RANGE]
    bad = Finding.of(mode, "classify-semantics", Status.WARN, "", {**ev, "source": "live probe"}, cfg=cfg)
    if use is False:
        return dataclasses.replace(bad, title=f"/classify's probs are raw logits ({lo:.4g} .. {hi:.4g}, sums off by up "
                                   f"to {sum_error:.3g}): the server's default is use_activation false")
    if lo < -1e-6 or hi > 1 + 1e-6:
        return dataclasses.replace(bad, title=f"/classify's probs {lo:.4g} .. {hi:.4g} are not probabilities")
    how = (f"softmax probabilities over {n} labels (each row sums to 1)" if n > 1 and sum_error <= k.SUM_TOL
           else f"per-label sigmoid probabilities ({n} labels, multi-label: rows need not sum to 1)" if n > 1
           else "a sigmoid probability (one label)")
    return Finding("classify-semantics", Status.PASS, f"/classify's probs are {how}",
                   {**ev, "source": "live probe"}, failure_mode=mode.id)


async def run(ctx: ProbeContext, only: Iterable[str] | None = None) -> AsyncIterator[ProbeOutcome | Finding]:
    from triage.probes.conformance import as_outcome

    async def post(**extra: Any) -> Reply:
        return await ctx.pc.call("POST", "/classify", {"model": ctx.model, "input": list(TEXTS), **extra},
                                 timeout_s=ctx.cfg.deadline_s)

    exs: Sequence[Reply] = [await post(), await post(use_activation=False), await post(use_activation=True),
                               await post(activation=False)]
    f = check_classify(*exs)
    yield dataclasses.replace(as_outcome("classify-semantics", list(exs), f), set=SET)
    yield f
