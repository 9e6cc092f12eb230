"""Stall episodes as production sees them: how each ended (client abort, recovered, ongoing), which one was
a client's retry of the one before, how often they recur, and whether the series is the pooling livelock *with client
time-outs* (the catalogue's `explain_episodes`). Every reader (watch, fleet, the log post-mortem) turns its
episodes into `Span` values and reads the same `summarize`.

How an episode ended is read from the last stalled sample and the first one after it (recorded on 0.31.0,
tests/fixtures/real/client-timeouts): the held request *left* (running fell, or the KV usage fell) without
its prompt being counted (an aborted request is neither a success nor prompt tokens) = client abort; the
engine moved on with the request (KV grew, or the prompt tokens rose by at least the blocks it freed) =
recovered. A client's retry starts within its back-off of the abort (the OpenAI SDK: 0.5-8 s).
Caveat, seen in that recording at 2 s samples: an abort followed by a retry that did not hang (the livelock's
hang is timing-dependent) inside one sample interval reads as "recovered"; 1 s samples (watch) tell them apart.
The pattern (`recurring`) therefore counts every episode that ended, however: on a release with the livelock a held
request cannot finish on its own, and the catalogue decides by version (`explain_episodes`).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Optional

from triage.sample import EngineSample

CLIENT_ABORT = "client abort"
RECOVERED = "recovered"
ONGOING = "ongoing"
CONTINUED = "continued"  # another request joined the held one (KV and running rose): the same hang goes on
MERGE_GAP_S = 3.0  # a continued episode and the next one that starts this close are one hang
RETRY_GAP_S = 12.0  # the SDK's longest back-off (8 s) plus a scrape or two
MIN_RECURRING = 2  # ended episodes that make a pattern


@dataclass(frozen=True)
class Span:
    start: float
    end: float
    ended: str  # client abort | recovered | ongoing
    kind: str = "livelock"


def ended_by(last: Optional[EngineSample], after: Optional[EngineSample]) -> str:
    """How the episode whose last stalled sample is ``last`` ended, seen in ``after`` (None: it did not)."""
    if last is None or after is None:
        return ONGOING
    r0, r1 = last.num_requests_running or 0.0, after.num_requests_running or 0.0
    k0, k1 = last.kv_cache_usage_perc, after.kv_cache_usage_perc
    if k0 is not None and k1 is not None and k1 > k0:
        return CONTINUED if r1 > r0 else RECOVERED  # a request joined it / it computed a chunk
    left = r1 < r0 or (k0 is not None and k1 is not None and k1 < k0)
    if not left:
        return RECOVERED
    dp = _delta(last.prompt_tokens_total, after.prompt_tokens_total)
    size = after.kv_cache_size_tokens or last.kv_cache_size_tokens
    if dp is not None and k0 is not None and k1 is not None and size:
        freed = (k0 - k1) * size  # the held request's computed tokens, about
        return RECOVERED if freed > 0 and dp >= 0.9 * freed else CLIENT_ABORT
    ds = _delta(last.request_success_total, after.request_success_total)
    return RECOVERED if ds is not None and ds >= r0 - r1 > 0 else CLIENT_ABORT


# How each ending reads on a page or in a report (the words of ``ended_by``'s answers)
ENDED_WORDS = {
    CLIENT_ABORT: "client abort: the held request left the engine without finishing (its client gave up)",
    RECOVERED: "recovered: the engine moved on with the request",
    CONTINUED: "continued: another request joined the held one",
    ONGOING: "still stalled",
}


def ended_words(ended: Optional[str]) -> str:
    """How an episode ended (``ended_by``'s answer, None when not known yet), in words."""
    return ENDED_WORDS.get(ended or ONGOING, str(ended))


def _delta(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return None if a is None or b is None or b < a else b - a


def retries(spans: list[Span], gap_s: float = RETRY_GAP_S) -> list[Optional[int]]:
    """For each episode, the index of the one before when it started within a client's back-off (``gap_s``)
    of that one's end: the client's retry (or its next document), else None."""
    out: list[Optional[int]] = []
    for i, sp in enumerate(spans):
        prev = spans[i - 1] if i else None
        out.append(i - 1 if prev is not None and prev.ended != ONGOING and 0 <= sp.start - prev.end <= gap_s
                   else None)
    return out


def _merged(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for s in spans:
        if out and out[-1].ended == CONTINUED and s.start - out[-1].end <= MERGE_GAP_S:
            out[-1] = Span(out[-1].start, s.end, s.ended, s.kind)
        else:
            out.append(s)
    return [Span(s.start, s.end, ONGOING, s.kind) if s.ended == CONTINUED else s for s in out]


def summarize(spans: list[Span]) -> dict[str, Any]:
    """Counts, recurrence and the pattern: {episodes, client_aborts, retries, recovered, ongoing, per_hour,
    median_gap_s, recurring, spans: [{start, end, duration_s, ended, retry_of}]}."""
    spans = _merged(sorted(spans, key=lambda s: s.start))
    links = retries(spans)
    aborts = sum(1 for s in spans if s.ended == CLIENT_ABORT)
    gaps = [b.start - a.end for a, b in zip(spans, spans[1:], strict=False)]
    span_s = spans[-1].end - spans[0].start if len(spans) > 1 else 0.0
    return {
        "episodes": len(spans),
        "client_aborts": aborts,
        "retries": sum(1 for x in links if x is not None),
        "recovered": sum(1 for s in spans if s.ended == RECOVERED),
        "ongoing": sum(1 for s in spans if s.ended == ONGOING),
        "per_hour": round(len(spans) * 3600 / span_s, 1) if span_s > 0 else None,
        "median_gap_s": round(statistics.median(gaps), 1) if gaps else None,
        "recurring": sum(1 for s in spans if s.ended != ONGOING) >= MIN_RECURRING,
        "spans": [{"start": s.start, "end": s.end, "duration_s": round(s.end - s.start, 3), "ended": s.ended,
                   "retry_of": link, "kind": s.kind} for s, link in zip(spans, links, strict=True)],
    }


def headline(summary: dict[str, Any]) -> str:
    """'14 episodes in 2.4 min (350/h, median gap 4 s): 12 ended by a client abort, 9 of them retried at once'."""
    n = summary["episodes"]
    span = ""
    if summary["spans"] and n > 1:
        mins = (summary["spans"][-1]["end"] - summary["spans"][0]["start"]) / 60
        span = f" in {mins:.1f} min ({summary['per_hour']:g}/h, median gap {summary['median_gap_s']:g} s)"
    return (f"{n} episode{'s' if n != 1 else ''}{span}: {summary['client_aborts']} ended by a client abort, "
            f"{summary['retries']} a retry of the one before, {summary['recovered']} recovered"
            + (f", {summary['ongoing']} ongoing" if summary["ongoing"] else ""))
