"""The ranking check as a picture: scores per document, the expected order beside the served one.

Reads only the ``rerank-ranking`` finding's evidence (``cases``: query, documents, scores, expected_order,
served_order; triage/probes/rerank_findings.py). ``figure`` is pure (tests call it without Streamlit);
``show`` draws one chart and one order table per case.
"""
from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go

from ui.components import md

EXPECTED_COLOUR = "#2e7d32"  # the document the inputs were built to put first, when the ranking check passed
FAILED_COLOUR = "#c62828"  # … when it did not: a green bar beside "scores do not rank" reads as fine (issue 32)
UNJUDGED_COLOUR = "#ef6c00"
OTHER_COLOUR = "#9e9e9e"


def _short(text: str, n: int = 48) -> str:
    """Cut to ``n`` characters, as text: Plotly reads tags in labels (``<a href>`` would be a link), so they
    are entities (issue 33: an imported run's documents are outside strings)."""
    return html.escape(text if len(text) <= n else text[: n - 1] + "…", quote=False)


def figure(case: dict[str, Any], status: str = "pass", flat_spread: float | None = None) -> go.Figure:
    """Horizontal bars: each document's score, labelled with both ranks; the expected first one coloured by the
    ranking check's verdict (``status``: green only when it passed). Scores closer than ``flat_spread`` are said
    to not separate the documents, whatever order they happen to come in."""
    docs = [str(d) for d in case.get("documents") or []]
    scores = list(case.get("scores") or [])
    served = list(case.get("served_order") or [])
    expected = list(case.get("expected_order") or range(len(docs)))
    rank = {i: served.index(i) + 1 for i in served}
    want = {i: expected.index(i) + 1 for i in expected}
    labels = [f"#{want.get(i, '?')} expected · #{rank.get(i, '?')} served — {_short(d)}" for i, d in enumerate(docs)]
    fig = go.Figure(go.Bar(
        x=scores, y=labels, orientation="h",
        marker_color=[_COLOURS.get(status, UNJUDGED_COLOUR) if expected and i == expected[0] else OTHER_COLOUR
                      for i in range(len(docs))],
        text=[f"{s:.3f}" for s in scores], textposition="auto"))
    numbers = [float(x) for x in scores if isinstance(x, (int, float))]
    spread = max(numbers) - min(numbers) if numbers else None
    flat = flat_spread is not None and spread is not None and spread < flat_spread
    title = _short(f"query: {case.get('query', '')}", 90)
    if flat:
        title += f" — scores within {spread:.3f}: they do not separate the documents"
    fig.update_layout(height=60 + 40 * len(docs), margin={"t": 30, "b": 20, "l": 10, "r": 10},
                      title=title, xaxis_title="relevance score", yaxis={"autorange": "reversed"})
    return fig


_COLOURS = {"pass": EXPECTED_COLOUR, "fail": FAILED_COLOUR, "error": FAILED_COLOUR}


def order_rows(case: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per rank: the document expected there and the one the server put there."""
    docs = [str(d) for d in case.get("documents") or []]
    served = list(case.get("served_order") or [])
    expected = list(case.get("expected_order") or range(len(docs)))
    scores = list(case.get("scores") or [])
    rows = []
    for r in range(len(docs)):
        e = expected[r] if r < len(expected) else None
        s = served[r] if r < len(served) else None
        rows.append({"rank": r + 1, "expected": _short(docs[e]) if e is not None else "",
                     "served": _short(docs[s]) if s is not None else "",
                     "score": round(scores[s], 4) if s is not None and s < len(scores) else None,
                     "same": e == s})
    return rows


def show(evidence: dict[str, Any], key: str = "rerank.ranking", status: str = "pass") -> None:
    """Each case's chart (coloured by the check's ``status``) and its order table."""
    import streamlit as st

    cases = evidence.get("cases") or []
    if not cases:
        st.info("No ranking cases in this finding.")
        return
    for i, case in enumerate(cases):
        left, right = st.columns([3, 2])
        if case.get("scores"):
            left.plotly_chart(figure(case, status, evidence.get("flat_spread")), key=f"{key}.{i}", width="stretch")
        else:
            left.warning(f"no scores: {md.text(case.get('error'))}")
        right.dataframe(order_rows(case), hide_index=True, width="stretch")
