"""Pure verdicts of the vectors set: recorded exchanges (and the model's files) in, a Finding out.

Thresholds: the same text twice >= 0.999 (fp16 noise stays far above it); alone vs in a batch >= 0.99
(batch-invariance noise is not an alarm); reference vectors >= 0.99. Wording, refs and fixes are the
catalogue's (triage/catalogue/vectors.py); the cosine a check judged is ``evidence["cosine"]`` so the
dashboard can plot it.
"""
from __future__ import annotations

import binascii
import dataclasses
import math
import struct
from collections.abc import Sequence
from typing import Any, Optional

from triage.catalogue import get
from triage.catalogue import vector_causes as vcs
from triage.catalogue.model import FailureMode
from triage.catalogue.symptoms import REJECTED, UNSTABLE, WRONG_DIMENSION, WRONG_DIRECTION, WRONG_NORM
from triage.http import Reply
from triage.findings import Finding, Status
from triage.probes.conformance_findings import cosine, norm
from triage.probes.conformance_findings import vectors as _all_vectors
from triage.probes.runner import OK, ProbeOutcome
from triage.sources.model_files import ModelPooling

REPEAT_MIN = 0.999
BATCH_MIN = 0.99
REFERENCE_MIN = 0.99
NORM_TOL = 1e-2

# (paraphrase, paraphrase, unrelated): a trained embedding model ranks cos(a, b) above cos(a, c).
PAIRS: tuple[tuple[str, str, str], ...] = (
    ("A man is playing a guitar.", "Someone is playing the guitar.", "The stock market fell sharply today."),
    ("How do I reset my password?", "I forgot my password and need to change it.",
     "The recipe needs two cups of flour."),
    ("The cat sleeps on the sofa.", "A cat is napping on the couch.", "Quarterly revenue grew by ten percent."),
    ("Where is the nearest train station?", "How can I get to the closest railway station?",
     "Photosynthesis turns light into chemical energy."),
)
REFERENCE_TEXTS = ("The quick brown fox jumps over the lazy dog.", "Embeddings map text to vectors.",
                   "What is the capital of France?")


def vectors(ex: Reply) -> list[list[float]]:
    """The answer's vectors that are lists of numbers (a string, a null or an object inside one drops it; a base64
    string that does not decode gives none): what every check here judges."""
    try:
        vs = _all_vectors(ex)
    except (TypeError, ValueError, AttributeError, struct.error, binascii.Error):
        return []
    return [v for v in vs if all(type(y) in (int, float) for y in v)]


def _none_back(check: str, mode: FailureMode, exs: Sequence[Reply]) -> Finding:
    """Status 200 and no vectors (an empty list, not JSON): an error, never a PASS over nothing ("norms []")."""
    body = exs[0].body if exs else None
    return _finding(check, mode, Status.ERROR, "the server answered 200 but no vectors came back (empty or not "
                    f"JSON: {str(body)[:80]!r})", _ev(*exs[:1]))


def _ev(*exchanges: Reply, **more: Any) -> dict[str, Any]:
    return {"exchanges": [x.to_dict() for x in exchanges], "source": "live probe", **more}


# What each check's failing finding shows (evidence["symptoms"]): a record of several symptoms (pooling-mismatch:
# direction and norm) is shown only in the one its check saw.
SHOWS: dict[str, tuple[str, ...]] = {
    "vectors-dimension": (WRONG_DIMENSION,), "vectors-norm": (WRONG_NORM,), "vectors-reference": (WRONG_DIRECTION,),
    "vectors-model-pooling": (WRONG_DIRECTION,), "vectors-eos": (WRONG_DIRECTION,),
    "vectors-repeat": (UNSTABLE,), "vectors-batch-invariance": (UNSTABLE,), "vectors-long-repeat": (UNSTABLE,),
}


def _finding(check: str, mode: FailureMode, status: Status, title: str, evidence: dict[str, Any],
             cfg: Optional[dict[str, Any]] = None, facts: Optional[dict[str, Any]] = None) -> Finding:
    """A finding of ``mode`` (``Finding.of``) with what the vectors set adds to its evidence: ``facts``
    (triage.catalogue.vector_causes keys) for the clues, and the symptoms its check saw (``SHOWS``)."""
    bad = status in (Status.FAIL, Status.WARN)
    if facts:
        evidence = {**evidence, "facts": {k: v for k, v in facts.items() if v is not None}}
    if bad and check in SHOWS:
        evidence = {**evidence, "symptoms": list(SHOWS[check])}
    elif bad and check == "vectors-finite":
        evidence = {**evidence, "symptoms": [REJECTED if evidence.get("non_finite") == 0 else WRONG_NORM]}
    return Finding.of(mode, check, status, title, evidence, cfg=cfg)


def files_facts(files: Optional[ModelPooling]) -> dict[str, Any]:
    """What the model's files say, as the clues read it (triage.catalogue.vector_causes)."""
    if files is None:
        return {}
    from triage.sources.model_files import is_encoder
    return {vcs.MODEL_HIDDEN: files.hidden_size, vcs.MODEL_ST_DENSE: bool(files.dense) if files.files else None,
            vcs.MODEL_ST_DENSE_OUT: files.dense_out, vcs.MODEL_NORMALIZE: files.normalize,
            vcs.MODEL_POOLING: files.pooling, vcs.MODEL_IS_CAUSAL: files.is_causal,
            vcs.MODEL_DECODER: (not is_encoder(files.architectures)) if files.architectures else None}


def _failed(check: str, mode: FailureMode, exs: Sequence[Reply], what: str) -> Finding:
    bad = next((x for x in exs if not x.ok), exs[0])
    return _finding(check, mode, Status.ERROR, f"{what}: HTTP {bad.status or bad.error} "
                    f"{bad.error_message()[:200]}", _ev(*exs))


def check_dimension(exs: Sequence[Reply], declared: Optional[int], declared_source: str,
                    files: Optional[ModelPooling] = None) -> Finding:
    """One dimension for every input, the model's; the transformer's hidden size where the model's sentence-
    transformers pipeline projects with a Dense layer is that layer not applied (st-dense-not-applied)."""
    mode = get("dimensions-not-matryoshka")
    if not all(x.ok for x in exs):
        return _failed("vectors-dimension", mode, exs, "an embedding request failed")
    dims = sorted({len(v) for x in exs for v in vectors(x)})
    if not dims or not all(vectors(x) for x in exs):
        return _none_back("vectors-dimension", mode, exs)
    if len(dims) != 1:
        return _finding("vectors-dimension", mode, Status.FAIL, f"vector lengths differ across input lengths: {dims}",
                        _ev(*exs, dimensions=dims))
    facts = {**files_facts(files), vcs.VECTORS_DIM: dims[0]}
    if declared is not None and dims[0] != declared:
        ev = _ev(*exs, dimension=dims[0], declared=declared, declared_source=declared_source)
        if files is not None and files.dense and dims[0] == files.hidden_size:
            dense = files.dense[-1]
            return _finding("vectors-dimension", get("st-dense-not-applied"), Status.FAIL,
                            f"vectors have {dims[0]} dimensions, the transformer's hidden size: the model's "
                            f"sentence-transformers Dense layer ({dense.path}, {dense.in_features} -> "
                            f"{dense.out_features}) is not applied", ev, facts=facts)
        return _finding("vectors-dimension", mode, Status.FAIL,
                        f"vectors have {dims[0]} dimensions, the model declares {declared} ({declared_source})",
                        ev, facts=facts)
    said = f", as the model declares ({declared_source})" if declared is not None else \
        " (the model's files are not readable: its declared dimension is unknown)"
    return _finding("vectors-dimension", mode, Status.PASS, f"{dims[0]} dimensions for short, long and batched "
                    f"inputs{said}", _ev(*exs, dimension=dims[0], declared=declared), facts=facts)


def check_finite(exs: Sequence[Reply]) -> Finding:
    mode = get("nan-vectors")
    out_of_range = [x for x in exs if x.status == 500 and "out of range float" in x.error_message().lower()]
    bad = sum(1 for x in exs for v in vectors(x) for y in v if not math.isfinite(y))
    n = sum(len(v) for x in exs for v in vectors(x))
    if out_of_range or bad:
        what = (f"{bad} of {n} values are NaN/inf" if bad else
                "HTTP 500 'Out of range float values are not JSON compliant'")
        return _finding("vectors-finite", mode, Status.FAIL, what, _ev(*(out_of_range or exs[:1]), non_finite=bad),
                        facts={vcs.NON_FINITE: bad or None})
    if not n:
        return _finding("vectors-finite", mode, Status.UNKNOWN, "no vectors came back to inspect", _ev(*exs[:1]))
    overflow = sum(1 for x in exs for v in vectors(x) if not math.isfinite(norm(v)))
    if overflow:  # every value finite, yet |v| is inf (values near 1e308): no cosine or normalisation survives it
        return _finding("vectors-finite", mode, Status.FAIL, f"all {n} values are finite, but {overflow} vector norms "
                        "overflow to inf (values near the float limit)", _ev(*exs[:1], norm_overflow=overflow))
    return _finding("vectors-finite", mode, Status.PASS, f"all {n} values of {len(exs)} responses are finite",
                    {"values": n, "source": "live probe"}, facts={vcs.NON_FINITE: 0})


def check_norm(ex: Reply, expect_normalized: Optional[bool], source: str,
               use_activation: tuple[Optional[bool], str] = (None, "")) -> Finding:
    """Norms as the model's files say; ``use_activation`` is the server's resolved pooler config (value, where
    read): unnormalized vectors under use_activation=False are that override (pooler-normalize-off)."""
    mode = get("pooling-mismatch")
    if not ex.ok:
        return _failed("vectors-norm", mode, [ex], "an embedding request failed")
    norms = [round(norm(v), 5) for v in vectors(ex)]
    if not norms:
        return _none_back("vectors-norm", mode, [ex])
    unit = all(abs(n - 1.0) <= NORM_TOL for n in norms)  # an inf or NaN norm is not unit length
    expect = True if expect_normalized is None else expect_normalized
    ev = _ev(ex, norms=norms, expected="L2-normalized" if expect else "not normalized", expected_from=source)
    ua, ua_where = use_activation
    facts = {vcs.VECTORS_NORMS: norms, vcs.VECTORS_UNIT: unit, vcs.MODEL_NORMALIZE: expect_normalized,
             vcs.SERVER_USE_ACTIVATION: ua, vcs.SERVER_USE_ACTIVATION_SOURCE: ua_where or None}
    if unit == expect:
        return _finding("vectors-norm", mode, Status.PASS, f"norms {norms}: "
                        f"{'unit length' if unit else 'not normalized'}, as {source} says", ev, facts=facts)
    status = Status.FAIL if expect_normalized is not None else Status.WARN
    if expect and not unit and ua is False:
        return _finding("vectors-norm", get("pooler-normalize-off"), status, f"norms {norms}: not normalized, "
                        f"because the server's pooler config says use_activation=False ({ua_where}); {source} says "
                        "L2-normalized", ev, facts=facts)
    return _finding("vectors-norm", mode, status, f"norms {norms}, but {source} says "
                    f"{'L2-normalized' if expect else 'not normalized'}", ev, facts=facts)


def _vec(ex: Reply, i: int) -> Optional[list[float]]:
    vs = vectors(ex)
    return vs[i] if len(vs) > i else None


def check_pair(check: str, a: Reply, b: Reply, minimum: float, what: str, index_b: int = 0) -> Finding:
    mode = get("unstable-vectors")
    if not (a.ok and b.ok):
        return _failed(check, mode, [a, b], "an embedding request failed")
    va, vb = _vec(a, 0), _vec(b, index_b)
    if va is None or vb is None:
        return _none_back(check, mode, [a if va is None else b])
    c = cosine(va, vb)
    ev = _ev(a, b, cosine=round(c, 6), minimum=minimum)
    facts = {vcs.REPEAT_COSINE: round(c, 6)} if check == "vectors-repeat" and math.isfinite(c) else None
    if math.isfinite(c) and c >= minimum:
        return _finding(check, mode, Status.PASS, f"{what}: cosine {c:.5f} (>= {minimum})", ev, facts=facts)
    return _finding(check, mode, Status.FAIL, f"{what}: cosine {c:.5f} (< {minimum})", ev, facts=facts)


def check_long_repeat(outs: Sequence[ProbeOutcome], tokens: int) -> Finding:
    mode = get("unstable-vectors")
    if any(o.outcome != OK for o in outs) or len(outs) != 2:
        return _finding("vectors-long-repeat", mode, Status.UNKNOWN,
                        f"the long input did not answer both times: {[o.outcome for o in outs]}",
                        {"outcomes": [o.outcome for o in outs], "tokens": tokens})
    a, b = outs[0].exchanges[0], outs[1].exchanges[0]
    f = check_pair("vectors-long-repeat", a, b, REPEAT_MIN, f"a {tokens}-token input (chunked-prefill path) twice")
    return dataclasses.replace(f, evidence={**f.evidence, "tokens": tokens,
                                            "durations_s": [o.duration_s for o in outs]})


def check_ranking(ex: Reply, untrained: Optional[str]) -> Finding:
    mode = get("unstable-vectors")
    if not ex.ok:
        return _failed("vectors-ranking", mode, [ex], "an embedding request failed")
    vs = vectors(ex)
    if len(vs) < 3 * len(PAIRS):
        return _none_back("vectors-ranking", mode, [ex])
    rows = []
    for i, (a, b, c) in enumerate(PAIRS):
        va, vb, vc_ = vs[3 * i], vs[3 * i + 1], vs[3 * i + 2]
        rows.append({"pair": [a, b], "unrelated": c, "paraphrase": round(cosine(va, vb), 4),
                     "unrelated_cosine": round(cosine(va, vc_), 4)})
    ok = sum(1 for r in rows if r["paraphrase"] > r["unrelated_cosine"])
    ev = _ev(ex, pairs=rows, ranked=ok, of=len(rows),
             cosine=min(r["paraphrase"] for r in rows))
    if untrained:
        return _finding("vectors-ranking", mode, Status.UNKNOWN, f"not judged: {untrained}; paraphrases ranked "
                        f"above unrelated in {ok} of {len(rows)} pairs (chance)", {**ev, "untrained": untrained})
    if ok == len(rows):
        return _finding("vectors-ranking", mode, Status.PASS,
                        f"paraphrases rank above unrelated texts in all {len(rows)} pairs", ev)
    return _finding("vectors-ranking", mode, Status.WARN, f"paraphrases rank above unrelated texts in only {ok} of "
                    f"{len(rows)} pairs: the vectors may not be the model's (check pooling and the client)", ev)


def check_eos(t_text: Reply, t_empty: Reply, pooling: Optional[str], eos_id: Optional[int],
              source: str) -> Finding:
    mode = get("missing-eos")
    if pooling and pooling != "LAST":
        return _finding("vectors-eos", mode, Status.PASS, f"pooling is {pooling}: no EOS needed",
                        {"pooling": pooling, "pooling_from": source})
    if not t_text.ok:
        return _finding("vectors-eos", mode, Status.UNKNOWN, f"/tokenize answered {t_text.status or t_text.error}",
                        _ev(t_text))
    toks = t_text.obj().get("tokens") or []
    suffix = (t_empty.obj().get("tokens") or [None])[-1] if t_empty.ok else None
    want, how = (eos_id, "config.json eos_token_id") if eos_id is not None else (suffix, "the token /tokenize "
                                                                                          "adds to an empty text")
    ev = _ev(t_text, t_empty, last_token=toks[-1] if toks else None, eos=want, eos_from=how, pooling=pooling,
             pooling_from=source)
    if want is None:
        status = Status.WARN if pooling == "LAST" else Status.UNKNOWN
        return _finding("vectors-eos", mode, status, "the tokenizer appends no special token at the end of a text"
                        + (" while pooling is LAST" if pooling == "LAST" else ""), ev)
    facts = {vcs.EOS_LAST: bool(toks) and toks[-1] == want, vcs.SERVER_POOLING: pooling}
    if toks and toks[-1] == want:
        return _finding("vectors-eos", mode, Status.PASS, f"/tokenize ends with EOS id {want} ({how})", ev, facts=facts)
    status = Status.FAIL if pooling == "LAST" else Status.WARN
    return _finding("vectors-eos", mode, status, f"/tokenize ends with {toks[-1] if toks else None}, not EOS {want} "
                    f"({how}); pooling {pooling or 'unknown'}", ev, facts=facts)


def check_model_pooling(files: Optional[ModelPooling], server: Optional[str], server_source: str,
                        root: Optional[str]) -> Finding:
    mode = get("pooling-mismatch")
    if files is None or files.pooling is None:
        return _finding("vectors-model-pooling", mode, Status.UNKNOWN,
                        f"the model's files are not readable here ({root!r}): its own pooling is unknown",
                        {"model_root": root, "server_pooling": server, "server_source": server_source})
    ev = {"model_pooling": files.pooling, "model_source": files.source, "server_pooling": server,
          "server_source": server_source, "files": files.files, "model_root": files.path}
    facts = {**files_facts(files), vcs.SERVER_POOLING: server}
    if server is None:
        return _finding("vectors-model-pooling", mode, Status.UNKNOWN, f"the model pools {files.pooling} "
                        f"({files.source}); what the server resolved is unknown ({server_source})", ev, facts=facts)
    if server == files.pooling:
        return _finding("vectors-model-pooling", mode, Status.PASS,
                        f"the server pools {server}, as the model does ({files.source})", ev, facts=facts)
    return _finding("vectors-model-pooling", mode, Status.FAIL,
                    f"pooling mismatch: the server pools {server} ({server_source}), the model's own pooling is "
                    f"{files.pooling} ({files.source})", ev,
                    {"model_pooling": files.pooling, "server_pooling": server}, facts=facts)


_COLOUR = {"pass": "#2e7d32", "unknown": "#9e9e9e", "warn": "#f9a825", "error": "#6a1b9a", "fail": "#c62828"}


def cosine_rows(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """One row per finding that judged a cosine (check, cosine, status, colour): the dashboard's plot data."""
    out = []
    for f in findings:
        c = (f.evidence or {}).get("cosine")
        if isinstance(c, (int, float)) and math.isfinite(c):
            st = Status(f.status).value
            out.append({"check": f.check, "cosine": float(c), "status": st, "colour": _COLOUR.get(st, "#9e9e9e")})
    return out
