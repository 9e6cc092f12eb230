"""One streaming pass over a server log: stats series, stall episodes, errors, access lines, config.

Memory is bounded whatever the log size: the series is downsampled (PointSeries), evidence
keeps the first few lines per kind plus a count, access lines are counted, not kept, stall
episodes (triage.logs.episodes: the shared stall rule plus the silence rule) are capped, and the
memos of what a line or a message says are bounded (triage.logs.memo).

``LogPass`` is the pass (the sink of every line); triage.logs.classify says what each record asks of it
(msg_class, the error rules); triage.logs.driver's ``analyze_log`` feeds it: a file path through the chunked
scan (triage.logs.chunks), any other source line by
line (LogPass.line). Both give the same analysis (tests/logs/test_fast_paths.py).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from triage.findings import Finding
from triage.logs.classify import ACCESS, FULL, LONG_STEP, REQUEST, STATS, TAIL, count_error, error_of, msg_class
from triage.logs.lines import FAST_RECORD_RE, Clock, frame
from triage.logs.startup import StartupConfigReader
from triage.logs.startup_plan import message_plan
from triage.logs.episode_endings import RequestNotes, in_step
from triage.episode import Episode
from triage.logs.episodes import EVIDENCE_LINES, LOG_STALL_S, EngineTrack, episode_dict
from triage.logs.hits import ErrorHits
from triage.logs.memo import Memo
from triage.logs.stats import PointSeries, StatsValues, stats_values
from triage.logs.tracebacks import Tracebacks
from triage.logs.postmortem_findings import build_findings
from triage.differential import diagnose
from triage.sample import EngineSample
from triage.vllm import logformats as lf


@dataclass
class LogAnalysis:
    """What a log says: findings, start-up config, the stats series (downsampled) and a summary."""

    findings: list[Finding]
    config: dict[str, Any]  # canonical keys → plain values
    samples: list[EngineSample]  # the stats lines (source "log"), downsampled for charts
    summary: dict[str, Any]
    config_provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    episodes: list[Episode] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (what `python -m triage logs --format json` prints, less schema/run_id)."""
        return {
            "findings": [f.to_dict() for f in self.findings],
            "config": self.config,
            "config_provenance": self.config_provenance,
            "summary": self.summary,
        }


_MERGED_1 = (1,)  # a raw point's count of stats lines
_RECORD_FIRST = frozenset("(DIWEC")  # the first character of a line FAST_RECORD_RE can match


class LogPass:
    """The state of one pass over a log: feed physical lines in order (``line``), then ``finish``."""

    def __init__(self, stall_s: float = LOG_STALL_S, year: int | None = None, max_samples: int = 20_000) -> None:
        self.stall_s = stall_s
        self.max_samples = max_samples
        self.reader = StartupConfigReader()
        self.series: dict[str, PointSeries] = {}
        self.tracks: dict[str, EngineTrack] = {}
        self.errors: dict[str, ErrorHits] = {}
        self.access: Counter[tuple[str, str, str]] = Counter()
        self.access_overflow = 0
        self.levels: Counter[str] = Counter()
        self.n_lines = self.n_records = 0
        self.first_ts: Optional[float] = None
        self.last_ts: Optional[float] = None
        self.kv_device: Optional[str] = None
        self.clock = Clock(year)
        self._stats_memo = Memo()  # message -> its stats values
        self._line_memo = Memo()  # physical line without a vLLM timestamp -> its reading
        self._engines: dict[str, tuple[EngineTrack, PointSeries]] = {}
        self.notes = RequestNotes()  # request-lifecycle and long-step lines (issue 21)
        self.traces = Tracebacks()  # traceback lines (issue 42)

    def stats(self, msg: str, lineno: int, ts: Optional[float]) -> bool:
        """Feed a record's stats (the tracks and the series); False when the message holds no stats record."""
        vals = self._stats_memo.get(msg)
        if vals is None:
            vals = stats_values(msg)
            self._stats_memo.put(msg, vals)
        self.feed_stats(vals, msg, lineno, ts)
        return bool(vals)

    def feed_stats(self, vals: list[StatsValues], msg: str, lineno: int, ts: Optional[float]) -> None:
        """A stats record's points; chunks._Scan.chunk inlines this on a planned record (the hot path): a change
        here is made there too (tests/logs/test_chunk_replays.py compares the two readings)."""
        for v in vals:
            engine = v[0]
            got = self._engines.get(engine)
            if got is None:
                got = self.engine(engine)
            tr, series = got
            tr.add_values(ts, lineno, v[3], v[4], v[1], v[2], v[5])
            ep = tr.open
            if ep is not None and len(ep.lines) < EVIDENCE_LINES:  # tr.add_line(lineno, msg[:400])
                ep.lines.append((lineno, msg[:400]))
            series.add((ts, lineno) + v + _MERGED_1)  # the point (ts, line, *v, 1), without a list built on the way
            if not self.kv_device:
                self.kv_device = v[7].get("kv_device")

    def engine(self, engine: str) -> tuple[EngineTrack, PointSeries]:
        """A new engine's track and series (``_engines`` holds them by name once made)."""
        tr = self.tracks[engine] = EngineTrack(engine, self.stall_s)
        series = self.series[engine] = PointSeries(self.max_samples)
        got = self._engines[engine] = (tr, series)
        return got

    def count_access(self, key: tuple[str, str, str], n: int = 1) -> None:
        if key in self.access or len(self.access) < 500:
            self.access[key] += n
        else:
            self.access_overflow += n

    def line(self, raw: str, lineno: int) -> None:
        """One physical line (with its line end). A line whose reading does not move the clock (no vLLM
        timestamp: uvicorn lines, tracebacks, progress bars) is read once per distinct text."""
        memo = self._line_memo
        got = memo.get(raw)
        if got is None:
            calls = self.clock.calls
            got = self._read_line(raw, lineno)
            if self.clock.calls == calls:  # a reading that used the clock is not kept
                memo.put(raw, got)
        if got[0] is None:  # an access line
            self.n_records += 1
            self.n_lines = lineno
            self.levels["INFO"] += 1
            self.count_access(got[1])
            return
        for line, msg, ts, level, proc, pid in got:
            self.record(lineno, line, msg, ts, level, proc, pid)

    def _read_line(self, raw: str, lineno: int) -> tuple[Any, ...]:
        """(None, access key) or the line's framed records (line, msg, ts, level, process, pid); counts nothing."""
        # prefilter: an access line (most of a busy server's log) is counted without framing the record
        if "HTTP/" in raw and "\x1b" not in raw:
            c = raw[:1]
            if c == "(":
                a = _FAST_ACCESS_PREFIXED_RE.match(raw) if raw.count(" pid=") == 1 else None
            else:
                a = (_ACCESS_INFO_RE.match(raw) or _FAST_ACCESS_RE.match(raw)) if c == "I" else None
            if a is not None:  # (method, path, status) of a `[(APIServer pid=N) ]INFO: … "POST /p HTTP/1.1" 200` line
                method, path, status = a.group("method", "path", "status")
                return (None, (method, path.partition("?")[0][:120], status))
        # the common record `(Proc pid=N) LEVEL MM-DD HH:MM:SS [src] msg` is read in one match; anything else is
        # framed step by step (frame())
        if "\x1b" not in raw and raw.count(" pid=") < 2 and not raw[:1].isdigit():
            line = raw.rstrip("\r\n")
            f = FAST_RECORD_RE.match(line) if line[:1] in _RECORD_FIRST else None
            if f is not None:
                proc, pid, level, md, hms, msg = f.group("proc", "pid", "level", "md", "hms", "msg")
                return ((line, msg, self.clock.vllm(md, hms), level, proc, pid),)
        return tuple((r.raw, r.msg, r.ts, r.level, r.process, r.pid) for r in frame(raw, lineno, self.clock))

    def record(
        self, lineno: int, line: str, msg: str, ts: Optional[float], level: Optional[str], proc: Any, pid: Any
    ) -> None:
        """One framed record."""
        self.n_records += 1
        self.n_lines = lineno
        if ts is not None:
            self.first_ts = ts if self.first_ts is None else self.first_ts
            self.last_ts = ts
        if level:
            self.levels[level] += 1
        cls = msg_class(msg, self._stats_memo)
        kind = cls[0]
        if kind == STATS:
            self.stats(msg, lineno, ts)
        elif kind == ACCESS:
            self.count_access(cls[1])
        elif kind == TAIL:
            self.reader.events.tail(lineno, line)
        elif kind == REQUEST or kind == LONG_STEP:
            self.note(cls, lineno, ts)
        elif kind == FULL:
            self.rest(lineno, line, msg, ts, cls)

    def note(self, cls: tuple[Any, ...], lineno: int, ts: Optional[float]) -> None:
        """A request-lifecycle or long-step record (msg_class REQUEST / LONG_STEP): the notes the episodes read."""
        if cls[0] == LONG_STEP:
            self.notes.long_step(ts, lineno, cls[1])
            return
        event, rid = cls[1]
        if event == "added":
            self.notes.add(rid, ts)
        else:
            self.notes.aborted_line(rid, ts, lineno)

    def rest(self, lineno: int, line: str, msg: str, ts: Optional[float], cls: tuple[Any, ...]) -> None:
        """A record a start-up or error rule reads (msg_class FULL): what reader.feed and the error rules do."""
        reader = self.reader
        _kind, _key, long, marked, startish, hint, trace = cls
        if long:
            if marked or (startish and reader.events.started is None):  # reader.reads(msg)
                # = reader.feed(LogLine(lineno, line, msg, ts, …))
                reader.feed_plan(message_plan(msg), lineno, line, ts)
            else:
                reader.events.tail(lineno, line)  # what reader.feed(rec) does with this record
        if hint:
            count_error(error_of(msg), lineno, line, ts, self.errors)
        if trace:
            self.traces.feed(lineno, msg, _process(line))

    def finish(self) -> LogAnalysis:
        tracks, reader = self.tracks, self.reader
        for tr in tracks.values():
            tr.finish(self.last_ts, self.n_lines)
        config = reader.config
        kv_device = self.kv_device
        if kv_device and "device" not in config:
            dev = {"GPU": "cuda", "CPU": "cpu"}.get(kv_device, kv_device.lower())
            reader.provenance["device"] = {
                "value": dev,
                "source": "log",
                "detail": f"{kv_device} KV cache usage in stats lines",
            }
            config = reader.config
        # a window in which vLLM said its workers waited on a long step was a step in progress, never a stall
        episodes = [ep for tr in tracks.values() for ep in tr.episodes if not in_step(ep, self.notes)]
        episodes.sort(key=lambda e: e.detail["start_line"])
        series = list(self.series.values())
        # one engine's points are in line order already (each keeps its first line): sorting them was ~4 % of finish
        samples = series[0].finish() if len(series) == 1 else sorted(
            (p for s in series for p in s.finish()), key=lambda p: p.line or 0)
        summary = _summary(
            self.n_lines,
            self.n_records,
            self.first_ts,
            self.last_ts,
            self.levels,
            tracks,
            samples,
            self.access,
            self.access_overflow,
            episodes,
            self.stall_s,
        )
        summary["requests"] = self.notes.to_dict()
        traces = self.traces.done()
        if traces:  # only a log with tracebacks says so (the goldens of logs without one are unchanged)
            summary["tracebacks"] = {"count": self.traces.count, "kept": [t.to_dict() for t in traces]}
        findings = build_findings(config, episodes, self.errors, summary, startup=reader.events, notes=self.notes,
                                  traces=traces)
        findings = [*findings, *diagnose(findings, config)]  # the differential after the log's own (issue 29)
        return LogAnalysis(
            findings=findings,
            config=config,
            samples=samples,
            summary=summary,
            config_provenance=reader.provenance,
            episodes=episodes,
        )


def _process(line: str) -> Optional[str]:
    """The `(EngineCore_DP0 pid=…)` process of a record's line (None: no prefix): tracebacks are read per process."""
    if "pid=" not in line:
        return None
    m = lf.PROC_PREFIX_RE.search(line)
    return m["proc"] if m else None


# `INFO:` then ACCESS_RE anywhere after it (what `ACCESS_RE.search(raw, after INFO:)` finds), in one match
_FAST_ACCESS_RE = re.compile(r"(?=INFO:).*?" + lf.ACCESS_RE.pattern, re.S)
# uvicorn's own shape, `INFO:` + spaces + the access line, at half the cost: when it matches, no earlier start
# can (a client ending inside `INFO:` needs ` - "` right after it, which this shape then fails on), so it reads
# what _FAST_ACCESS_RE reads; when it does not match, _FAST_ACCESS_RE is asked
_ACCESS_INFO_RE = re.compile(r"INFO: +" + lf.ACCESS_RE.pattern)
_FAST_ACCESS_PREFIXED_RE = re.compile(lf.PROC_PREFIX_RE.pattern + r"(?=INFO:).*?" + lf.ACCESS_RE.pattern, re.S)


def _summary(
    n_lines: int,
    n_records: int,
    first_ts: Optional[float],
    last_ts: Optional[float],
    levels: Counter[str],
    tracks: dict[str, EngineTrack],
    samples: list[EngineSample],
    access: Counter[tuple[str, str, str]],
    access_overflow: int,
    episodes: list[Episode],
    stall_s: float,
) -> dict[str, Any]:
    by_status: Counter[str] = Counter()
    for (_m, _p, st), n in access.items():
        by_status[st] += n
    top = [{"method": m, "path": p, "status": int(st), "count": n} for (m, p, st), n in access.most_common(15)]
    stats_lines = sum(t.n for t in tracks.values())
    return {
        "lines": n_lines,
        "records": n_records,
        "first_ts": first_ts,
        "last_ts": last_ts,
        "span_s": (last_ts - first_ts) if first_ts is not None and last_ts is not None else None,
        "levels": dict(levels),
        "stats": {
            "lines": stats_lines,
            "engines": sorted(tracks),
            "interval_s": {e: t.interval() for e, t in tracks.items()},
            "points_kept": len(samples),
            "max_running": _max(p.num_requests_running for p in samples),
            "max_waiting": _max(p.num_requests_waiting for p in samples),
            "max_kv_cache_usage_perc": max(
                (p.kv_cache_usage_perc for p in samples if p.kv_cache_usage_perc is not None), default=None
            ),
            "max_prompt_throughput": _max(p.prompt_throughput for p in samples),
            "mean_prompt_throughput": (
                sum((p.prompt_throughput or 0.0) * p.merged for p in samples) / max(1, sum(p.merged for p in samples))
            )
            if samples
            else None,
            "last": _point_dict(samples[-1]) if samples else None,
        },
        "access": {"total": sum(access.values()) + access_overflow, "by_status": dict(by_status), "top": top},
        "stall_threshold_s": stall_s,
        "episodes": [episode_dict(e) for e in episodes],
        "episodes_dropped": sum(t.dropped for t in tracks.values()),
    }


def _max(vals: Any) -> Optional[float]:
    return max((v for v in vals if v is not None), default=None)


def _point_dict(p: EngineSample) -> dict[str, Any]:
    return {
        "line": p.line,
        "ts": p.ts,
        "engine": p.engine,
        "prompt_throughput": p.prompt_throughput,
        "generation_throughput": p.generation_throughput,
        "running": p.num_requests_running,
        "waiting": p.num_requests_waiting,
        "kv_cache_usage_perc": p.kv_cache_usage_perc,
    }
