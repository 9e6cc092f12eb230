"""How a log says each stall episode ended (request lifecycle and stats lines), and whether they recur (issue 21):
the log's part of `triage.recurrence`.

Evidence, best first:
- request-lifecycle lines (vLLM's --enable-log-requests): `Request embd-… aborted.` inside an episode names the
  request the client gave up on, and `Added request` before it how long it was held (the client's time-out);
- the stats lines around the end: the held request *left* (running fell, or its KV blocks were freed) without its
  prompt tokens showing in that interval's throughput = client abort; the engine moved on with it = recovered.
A retry is an episode that starts within a client's back-off of the one before (`recurrence.retries`).

Resolution: a stats line every 10 s (vLLM's default VLLM_LOG_STATS_INTERVAL) cannot show a hang that a client's
5 s time-out ends; the post-mortem says so (`resolution`) with the fix: VLLM_LOG_STATS_INTERVAL=1 and a log
collected with timestamps (`docker logs -t`, `kubectl logs --timestamps`).
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Optional

from triage.catalogue import POOLING_LIVELOCK_CLIENT_TIMEOUTS, STALL_CHECKS, explain_episodes, word_stall
from triage.findings import Finding, Status
from triage.episode import Episode
from triage.logs.episodes import FINE_INTERVAL_S
from triage.recurrence import CLIENT_ABORT, CONTINUED, ONGOING, RECOVERED, Span, headline, summarize
from triage.stall import LIVELOCK

RECURRING_CHECK = STALL_CHECKS["log"][2]
MAX_ADDED = 4096  # requests whose start is remembered (the oldest is forgotten first)
MAX_NOTES = 1000
MAX_ID_CHARS = 128  # a vLLM request id is ~40-60 characters (`embd-<16 hex>-<n>-<8 hex>`); a log's may be 1 MiB
MAX_IDS_PER_LINE = 1000  # ids of one `Aborted request(s) a,b,…` line read; the rest only counted


def request_id(rid: str) -> str:
    """A request id as kept from a log: as written up to MAX_ID_CHARS, else its head, its length and a digest of the
    whole (the same long id always gives the same key, so an abort still finds its start)."""
    if len(rid) <= MAX_ID_CHARS:
        return rid
    digest = hashlib.blake2b(rid.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"{rid[:80]}…[{len(rid):,} chars, {digest}]"
ABORT_SLACK_INTERVALS = 1.5  # an abort this many stats intervals after an episode's last stalled line still ends it


@dataclass
class RequestNotes:
    """The request-lifecycle and long-step lines of one log, bounded."""

    added: OrderedDict[str, float] = field(default_factory=OrderedDict)
    n_added: int = 0
    aborts: list[dict[str, Any]] = field(default_factory=list)  # {ts, id, line, held_s}
    n_aborted: int = 0
    long_steps: list[dict[str, Any]] = field(default_factory=list)  # {ts, line, waited_s}

    def add(self, rid: str, ts: Optional[float]) -> None:
        self.n_added += 1
        if ts is None:
            return
        self.added[request_id(rid)] = ts
        if len(self.added) > MAX_ADDED:
            self.added.popitem(last=False)

    def abort(self, rid: str, ts: Optional[float], line: int) -> None:
        self.n_aborted += 1
        rid = request_id(rid)
        start = self.added.pop(rid, None)
        if len(self.aborts) < MAX_NOTES:
            self.aborts.append({"ts": ts, "id": rid, "line": line,
                                "held_s": round(ts - start, 3) if ts is not None and start is not None else None})

    def aborted_line(self, ids: str, ts: Optional[float], line: int) -> None:
        """One `Aborted request(s) a,b,…` line: its first MAX_IDS_PER_LINE ids noted, the rest counted."""
        parts = ids.split(",", MAX_IDS_PER_LINE)
        if len(parts) > MAX_IDS_PER_LINE:
            self.n_aborted += parts.pop().count(",") + 1
        for one in parts:
            self.abort(one, ts, line)

    def long_step(self, ts: Optional[float], line: int, waited_s: int) -> None:
        if len(self.long_steps) < MAX_NOTES:
            self.long_steps.append({"ts": ts, "line": line, "waited_s": waited_s})

    def to_dict(self) -> dict[str, Any]:
        return {"added": self.n_added, "aborted": self.n_aborted, "aborts": self.aborts[:50],
                "long_steps": self.long_steps[:50]}


def in_step(ep: Episode, notes: RequestNotes) -> bool:
    """vLLM's "No available shared memory broadcast block found in 60 seconds" inside the episode's window: the
    engine was computing a step (its workers waited on it), so the quiet stats lines were a step in progress."""
    if ep.start is None:
        d = ep.detail
        return any(d["start_line"] <= n["line"] <= (d["end_line"] or d["last_stall_line"]) for n in notes.long_steps)
    end = ep.end if ep.end is not None else ep.last_seen or ep.start
    # the line comes 60 s into the wait: a step that began before the stall-shaped line counts too
    return any(n["ts"] is not None and ep.start - n["waited_s"] <= n["ts"] <= end + ep.detail["interval_s"]
               for n in notes.long_steps)


def aborts_in(ep: Episode, notes: RequestNotes) -> list[dict[str, Any]]:
    """The aborted requests that ended the episode: logged between its start and one interval and a half after its
    last stalled line (the stats line that shows it gone comes up to an interval after the abort)."""
    if ep.start is None:
        return []
    last = ep.last_seen if ep.last_seen is not None else ep.start
    hi = last + ABORT_SLACK_INTERVALS * ep.detail["interval_s"]
    if ep.end is not None:
        hi = min(hi, ep.end + 0.5 * ep.detail["interval_s"])
    return [a for a in notes.aborts if a["ts"] is not None and ep.start <= a["ts"] <= hi]


def ended(ep: Episode, notes: RequestNotes, kv_size_tokens: Any) -> str:
    """How the episode ended: client abort, recovered, continued (another request joined) or ongoing."""
    if ep.detail["ended_by"] == "silence-to-end":
        return ONGOING
    if aborts_in(ep, notes):
        return CLIENT_ABORT
    if ep.detail["last_values"] is None or ep.detail["end_values"] is None:
        return RECOVERED
    (r0, k0, _p0), (r1, k1, p1) = ep.detail["last_values"], ep.detail["end_values"]
    if k0 is not None and k1 is not None and k1 > k0:
        return CONTINUED if r1 > r0 else RECOVERED
    left = r1 < r0 or (k0 is not None and k1 is not None and k1 < k0)
    if not left:
        return RECOVERED
    if k0 is not None and k1 is not None and isinstance(kv_size_tokens, int) and kv_size_tokens > 0:
        freed = (k0 - k1) * kv_size_tokens  # the held request's computed tokens, about (KV to 0.1 % in a line)
        return RECOVERED if freed > 0 and p1 * ep.detail["interval_s"] >= 0.9 * freed else CLIENT_ABORT
    return CLIENT_ABORT


def spans(eps: list[Episode], notes: RequestNotes, kv_size_tokens: Any) -> list[Span]:
    out = []
    for ep in eps:
        if ep.start is None or ep.kind != LIVELOCK:
            continue
        end = ep.end if ep.end is not None else ep.last_seen or ep.start
        out.append(Span(ep.start, end, ended(ep, notes, kv_size_tokens), ep.kind))
    return out


def resolution(intervals: dict[str, float]) -> Optional[dict[str, Any]]:
    """What the log's stats lines can resolve, when too coarse for hangs that a client's time-out ends."""
    if not intervals:
        return None
    iv = max(intervals.values())
    if iv < FINE_INTERVAL_S:
        return None
    return {"stats_interval_s": iv, "shortest_hang_seen_s": 2 * iv,
            "fix": ("set VLLM_LOG_STATS_INTERVAL=1 on the server (a stats line every second) and collect its log with "
                    "timestamps (`docker logs -t`, `kubectl logs --timestamps`); --enable-log-requests adds a "
                    "'Request … aborted.' line for each request a client gave up on; or run `watch` / `fleet`")}


def recurring_finding(eps: list[Episode], config: dict[str, Any], notes: RequestNotes) -> Optional[Finding]:
    """The catalogue's verdict on the series when the episodes recur, each ended: the pooling livelock with client
    time-outs (the record `pooling-livelock-client-timeouts`).
    Only from stats lines less than FINE_INTERVAL_S apart: 10 s apart, how a hang ended is not in the log."""
    eps = [e for e in eps if e.detail["interval_s"] < FINE_INTERVAL_S]
    if not eps:
        return None
    rec = summarize(spans(eps, notes, config.get("kv_cache_size_tokens")))
    mode = explain_episodes(LIVELOCK, config.get("vllm_version"), rec["recurring"])
    if mode is not POOLING_LIVELOCK_CLIENT_TIMEOUTS:
        return None
    aborts = [a for ep in eps for a in aborts_in(ep, notes)]
    held = sorted(a["held_s"] for a in aborts if a["held_s"] is not None)
    named = ""
    if aborts:
        named = f"; {len(aborts)} requests aborted by their client inside them"
        if held:
            named += f" after {held[len(held) // 2]:.1f} s held (median: the client's time-out)"
    words = word_stall("log", LIVELOCK, config.get("vllm_version"), subject="Engine", recurring=True,
                       seen=f" ({headline(rec)}{named})", note=mode.evidence.get("log", "") + ".")
    return Finding(
        status=Status.FAIL,
        evidence={"recurrence": rec, "aborted_requests": aborts[:20], "requests": notes.to_dict(),
                  "vllm_version": config.get("vllm_version"), "source": "log",
                  "facts": {"stall.recurring": True, "vllm.version": config.get("vllm_version")}},
        **words.finding_args(),
    )
