"""The reference verdict: the server's vectors against the model's own pipeline, and which variant they equal.

The reference (triage.sources.model_files.reference_vectors) computes the model's pipeline as sentence-
transformers runs it, and its variants: each pooling, with and without the Dense layers, causal and
bidirectional attention for decoders. The variant the server's vectors equal (cosine >= REFERENCE_MIN) names
the cause by how it differs from the model's own: the pooling (pooling-mismatch), the Dense layer
(st-dense-not-applied), the attention (causal-attention-mismatch). None equal: the vectors differ and the cause
is not singled out (the finding says which variants were tried; the differential weighs the other clues).
"""
from __future__ import annotations

import math
from typing import Any, Optional

from triage.catalogue import get
from triage.catalogue import vector_causes as vcs
from triage.http import Reply
from triage.findings import Finding, Status
from triage.probes.conformance_findings import cosine
from triage.probes.vector_findings import (REFERENCE_MIN, REFERENCE_TEXTS, _ev, _failed, _finding, _none_back,
                                        files_facts, vectors)
from triage.sources.model_files import ModelPooling, own_reference_key


def _parts(key: str) -> tuple[str, bool, bool]:
    """(pooling, dense, bidirectional) of a reference variant's name."""
    return key.split("/")[0].split("+")[0], "+dense" in key, "/bidirectional" in key


def how_differs(own: str, match: Optional[str]) -> Optional[str]:
    """'pooling' | 'dense' | 'attention' when ``match`` differs from ``own`` in that one part; 'several'; None."""
    if match is None or match == own:
        return None
    diff = [name for name, a, b in zip(("pooling", "dense", "attention"), _parts(own), _parts(match), strict=True)
            if a != b]
    return diff[0] if len(diff) == 1 else "several"


def _attention(key: str) -> str:
    return "bidirectional" if _parts(key)[2] else "causal"


def check_reference(ex: Reply, refs: Optional[dict[str, list[list[float]]]], files: Optional[ModelPooling],
                    server: Optional[str], why: str, python: Optional[str],
                    server_facts: Optional[dict[str, Any]] = None) -> Finding:
    """``server_facts``: what the server resolved beyond its pooling (vector_causes SERVER_* keys)."""
    mode = get("pooling-mismatch")
    if not ex.ok:
        return _failed("vectors-reference", mode, [ex], "an embedding request failed")
    if refs is None or files is None or files.pooling is None:
        return _finding("vectors-reference", mode, Status.UNKNOWN, f"no reference vectors: {why or 'model files'}",
                        _ev(ex, why=why))
    got = vectors(ex)
    if not got:
        return _none_back("vectors-reference", mode, [ex])
    own_key = own_reference_key(files) or files.pooling
    cos = {k: round(min(cosine(a, b) for a, b in zip(got, v, strict=False)), 5) for k, v in refs.items()}
    own = cos.get(own_key, float("nan"))
    ranked = sorted((k for k, c in cos.items() if math.isfinite(c) and c >= REFERENCE_MIN), key=lambda k: -cos[k])
    match = own_key if own >= REFERENCE_MIN else (ranked[0] if ranked else None)
    differs = how_differs(own_key, match)
    sf = server_facts or {}
    facts = {**files_facts(files), **sf, vcs.VECTORS_DIM: len(got[0]), vcs.REFERENCE_COSINE: own,
             vcs.REFERENCE_OWN: own_key, vcs.REFERENCE_MATCH: match, vcs.REFERENCE_MATCH_DIFFERS: differs,
             vcs.SERVER_POOLING: server}
    ev = _ev(ex, cosine=own, by_pooling=cos, model_pooling=files.pooling, model_source=files.source,
             own_variant=own_key, server_pooling=server, reference_python=python, texts=list(REFERENCE_TEXTS),
             minimum=REFERENCE_MIN)
    if own >= REFERENCE_MIN:
        return _finding("vectors-reference", mode, Status.PASS, f"the server's vectors equal transformers' with the "
                        f"model's own pipeline, {own_key} (cosine {own:.4f})", ev, facts=facts)
    shown = "nan (another dimension)" if not math.isfinite(own) else f"{own:.4f}"
    if differs == "dense":
        d = files.dense[-1]
        failed = " (the start-up log says 'ST projector loading failed')" if sf.get(vcs.SERVER_ST_PROJECTOR_FAILED) \
            else ""
        return _finding("vectors-reference", get("st-dense-not-applied"), Status.FAIL,
                        f"the server's vectors equal the model's pipeline without its Dense layer ({match}, cosine "
                        f"{cos[match]:.4f}; with it {shown}): {d.path} ({d.in_features} -> {d.out_features}) is not "
                        f"applied{failed}", ev, {"why": failed.strip(" ()")}, facts=facts)
    if differs == "attention":
        override = sf.get(vcs.SERVER_IS_CAUSAL)
        status = Status.WARN if override is not None else Status.FAIL  # the user chose it: maybe on purpose
        said = f" (--hf-overrides is_causal: {str(override).lower()})" if override is not None else ""
        return _finding("vectors-reference", get("causal-attention-mismatch"), status,
                        f"the server attends {_attention(match)}{said}, the model's files say {_attention(own_key)}: "
                        f"its vectors equal the {match} variant (cosine {cos[match]:.4f}; own {own_key} {shown})", ev,
                        {"server_is_causal": override}, facts=facts)
    if differs == "pooling":
        return _finding("vectors-reference", mode, Status.FAIL,
                        f"pooling mismatch: the server's vectors differ from the model's own {files.pooling} pooling "
                        f"(cosine {shown}); they match {_parts(match)[0]} pooling (cosine {cos[match]:.4f})", ev,
                        {"model_pooling": files.pooling, "server_pooling": server or _parts(match)[0]}, facts=facts)
    tried = ", ".join(sorted(cos))
    return _finding("vectors-reference", mode, Status.FAIL,
                    f"the server's vectors differ from the model's own pipeline {own_key} (cosine {shown}); they "
                    f"match {match if match else 'none of the variants tried'} ({tried})", ev,
                    {"model_pooling": files.pooling, "server_pooling": server}, facts=facts)
