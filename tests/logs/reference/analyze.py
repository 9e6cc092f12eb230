"""One streaming pass over a server log: stats series, stall episodes, errors, access lines, config.

Memory is bounded whatever the log size: the series is downsampled (BoundedSeries), evidence
keeps the first few lines per kind plus a count, access lines are counted, not kept, and stall
episodes (triage.logs.episodes: the shared stall rule plus the silence rule) are capped.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from triage.findings import Finding
from tests.logs.reference.lines import FAST_RECORD_RE, Clock, LogLine, LogSource, frame, physical_lines
from tests.logs.reference.startup import StartupConfigReader
from tests.logs.reference.episodes import EVIDENCE_LINES, LOG_STALL_S, StallEpisode, EngineTrack
from triage.logs.hits import ErrorHits
from tests.logs.reference.stats import BoundedSeries, parse_stats
from triage.logs.verdicts import build_findings
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
    episodes: list[StallEpisode] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (what `python -m triage logs --format json` prints, less schema/run_id)."""
        return {
            "findings": [f.to_dict() for f in self.findings],
            "config": self.config,
            "config_provenance": self.config_provenance,
            "summary": self.summary,
        }


_ERROR_RULES: tuple[tuple[str, tuple[Any, ...]], ...] = (
    ("log-kv-cache-too-small", (lf.KV_TOO_SMALL_RE,)),
    ("log-unsupported-head-dim", lf.HEAD_DIM_RES),
    ("log-oom", lf.OOM_RES),
    ("log-engine-dead", lf.ENGINE_DEAD_RES),
    ("signal", lf.SIGNAL_RES),  # not a finding alone: context for log-engine-dead
)
_RECORD_FIRST = frozenset("(DIWEC")  # the first character of a line FAST_RECORD_RE can match
_ERROR_HINTS = ("memory", "Engine", "head", "KV cache", "oom", "Killed", "rror", "signal")
_ERROR_HINT_RE = re.compile("|".join(map(re.escape, _ERROR_HINTS)))
# the same test as `_ERROR_HINT_RE.search(msg)`, as one `or` chain of substring tests (several times cheaper)
_has_error_hint = eval("lambda msg: " + " or ".join(f"{h!r} in msg" for h in _ERROR_HINTS))  # noqa: S307


def analyze_log(
    source: LogSource, *, stall_s: float = LOG_STALL_S, year: int | None = None, max_samples: int = 20_000
) -> LogAnalysis:
    """Analyse a log (path, text, bytes, file object or iterable of lines) in one streaming pass."""
    reader = StartupConfigReader()
    series: dict[str, BoundedSeries] = {}
    tracks: dict[str, EngineTrack] = {}
    errors: dict[str, ErrorHits] = {}
    access: Counter[tuple[str, str, str]] = Counter()
    access_overflow = 0
    levels: Counter[str] = Counter()
    n_lines = n_records = 0
    first_ts = last_ts = None
    kv_device: Optional[str] = None

    clock = Clock(year)
    for lineno, raw in enumerate(physical_lines(source), start=1):
        # prefilter: an access line (most of a busy server's log) is counted without framing the record
        if "HTTP/" in raw and "\x1b" not in raw:
            c = raw[:1]
            if c == "(":
                a = _FAST_ACCESS_PREFIXED_RE.match(raw) if raw.count(" pid=") == 1 else None
            else:
                a = (_ACCESS_INFO_RE.match(raw) or _FAST_ACCESS_RE.match(raw)) if c == "I" else None
            if a is not None:  # (method, path, status) of a `[(APIServer pid=N) ]INFO: … "POST /p HTTP/1.1" 200` line
                method, path, status = a.group("method", "path", "status")
                key = (method, path.partition("?")[0][:120], status)
                n_records += 1
                n_lines = lineno
                levels["INFO"] += 1
                if key in access or len(access) < 500:
                    access[key] += 1
                else:
                    access_overflow += 1
                continue
        # the common record `(Proc pid=N) LEVEL MM-DD HH:MM:SS [src] msg` is read in one match, and a LogLine is
        # built only for a line a start-up or error rule reads; anything else is framed step by step (frame())
        recs: Any = None
        if "\x1b" not in raw and raw.count(" pid=") < 2 and not raw[:1].isdigit():
            line = raw.rstrip("\r\n")
            f = FAST_RECORD_RE.match(line) if line[:1] in _RECORD_FIRST else None
            if f is not None:
                proc, pid, level, md, hms, msg = f.group("proc", "pid", "level", "md", "hms", "msg")
                recs = ((line, msg, clock.vllm(md, hms), level, proc, pid),)
        if recs is None:
            recs = [(r.raw, r.msg, r.ts, r.level, r.process, r.pid) for r in frame(raw, lineno, clock)]
        for line, msg, ts, level, proc, pid in recs:
            n_records += 1
            n_lines = lineno
            if ts is not None:
                first_ts = ts if first_ts is None else first_ts
                last_ts = ts
            if level:
                levels[level] += 1
            if "throughput:" in msg:
                found = False
                for p in parse_stats(msg, lineno, ts):
                    found = True
                    tr = tracks.get(p.engine)
                    if tr is None:
                        tr = tracks[p.engine] = EngineTrack(p.engine, stall_s)
                        series[p.engine] = BoundedSeries(max_samples)
                    tr.add(p)
                    tr.add_line(lineno, msg[:400])
                    series[p.engine].add(p)
                    kv_device = kv_device or p.extra.get("kv_device")
                if found:
                    continue
            if '" ' in msg and "HTTP/" in msg:
                m = lf.ACCESS_RE.search(msg)
                if m:
                    key = (m["method"], m["path"].split("?")[0][:120], m["status"])
                    if key in access or len(access) < 500:
                        access[key] += 1
                    else:
                        access_overflow += 1
                    continue
            rec = None
            if len(msg) >= 12:
                if reader.reads(msg):
                    rec = LogLine(lineno, line, msg, ts, level, proc, int(pid) if pid is not None else None)
                    reader.feed(rec)
                else:
                    reader.events.tail(lineno, line)  # what reader.feed(rec) does with this record
            if _has_error_hint(msg):
                if rec is None:
                    rec = LogLine(lineno, line, msg, ts, level, proc, int(pid) if pid is not None else None)
                _match_errors(rec, errors)

    for tr in tracks.values():
        tr.finish(last_ts, n_lines)
    config = reader.config
    if kv_device and "device" not in config:
        dev = {"GPU": "cuda", "CPU": "cpu"}.get(kv_device, kv_device.lower())
        reader.provenance["device"] = {
            "value": dev,
            "source": "log",
            "detail": f"{kv_device} KV cache usage in stats lines",
        }
        config = reader.config
    episodes = [ep for tr in tracks.values() for ep in tr.episodes]
    episodes.sort(key=lambda e: e.start_line)
    samples = sorted((p for s in series.values() for p in s.finish()), key=lambda p: p.line or 0)
    summary = _summary(
        n_lines,
        n_records,
        first_ts,
        last_ts,
        levels,
        tracks,
        series,
        samples,
        access,
        access_overflow,
        episodes,
        stall_s,
    )
    findings = build_findings(config, episodes, errors, summary, startup=reader.events)
    return LogAnalysis(
        findings=findings,
        config=config,
        samples=samples,
        summary=summary,
        config_provenance=reader.provenance,
        episodes=episodes,
    )


# `INFO:` then ACCESS_RE anywhere after it (what `ACCESS_RE.search(raw, after INFO:)` finds), in one match
_FAST_ACCESS_RE = re.compile(r"(?=INFO:).*?" + lf.ACCESS_RE.pattern, re.S)
# uvicorn's own shape, `INFO:` + spaces + the access line, at half the cost: when it matches, no earlier start
# can (a client ending inside `INFO:` needs ` - "` right after it, which this shape then fails on), so it reads
# what _FAST_ACCESS_RE reads; when it does not match, _FAST_ACCESS_RE is asked
_ACCESS_INFO_RE = re.compile(r"INFO: +" + lf.ACCESS_RE.pattern)
_FAST_ACCESS_PREFIXED_RE = re.compile(lf.PROC_PREFIX_RE.pattern + r"(?=INFO:).*?" + lf.ACCESS_RE.pattern, re.S)


# a substring every match of each pattern contains (None: always run it), in _ERROR_RULES order; a line without a
# pattern's marker cannot match it, so its regex is skipped (tests/logs/test_fast_paths.py checks the table)
_ERROR_MARKERS: dict[str, tuple[Optional[str], ...]] = {
    "log-kv-cache-too-small": ("max seq len",),
    "log-unsupported-head-dim": ("head_dim=", "head dim size", "head_size", "head_dim to be", "ead size", "head_size"),
    "log-oom": ("OutOfMemoryError", "out of memory", "out of memory", None, "Cannot allocate memory",
                "Available memory", None),
    "log-engine-dead": ("EngineCore encountered", "EngineCore encountered", "died unexpectedly", "EngineDeadError",
                        "EngineCore failed", "initialization failed"),
    "signal": ("received signal",),
}
_ERROR_RULES_MARKED = tuple(
    (check, tuple(zip(_ERROR_MARKERS[check], rxs, strict=True))) for check, rxs in _ERROR_RULES
)


def _match_errors(rec: LogLine, errors: dict[str, ErrorHits]) -> None:
    msg = rec.msg
    for check, rxs in _ERROR_RULES_MARKED:
        for marker, rx in rxs:
            if marker is not None and marker not in msg:
                continue
            m = rx.search(msg)
            if m:
                hit = errors.get(check)
                if hit is None:
                    groups = {k: v for k, v in m.groupdict().items() if v is not None}
                    groups["matched"] = m.group(0)
                    hit = errors[check] = ErrorHits(check, first_ts=rec.ts, groups=groups)
                hit.count += 1
                if len(hit.lines) < EVIDENCE_LINES:
                    hit.lines.append((rec.lineno, rec.raw[:500]))
                return  # one kind per line: the first rule that matches owns it


def _summary(
    n_lines: int,
    n_records: int,
    first_ts: Optional[float],
    last_ts: Optional[float],
    levels: Counter[str],
    tracks: dict[str, EngineTrack],
    series: dict[str, BoundedSeries],
    samples: list[EngineSample],
    access: Counter[tuple[str, str, str]],
    access_overflow: int,
    episodes: list[StallEpisode],
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
        "episodes": [e.to_dict() for e in episodes],
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
