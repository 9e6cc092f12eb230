"""Golden outputs of the log post-mortem: what ``analyze_log`` gives for each recorded log and each built one.

They replace a frozen copy of the pre-chunk parser that used to serve as the oracle: each golden is the
analysis the parser gave when it was written, as JSON in tests/logs/goldens/ (one file per log), and the tests
compare the chunked scan and the per-line reading of the same input with it. Kept: findings (check, status,
title, evidence), config and where each value came from, summary, stall episodes, samples (the fields a log gave;
``extra`` included, which EngineSample equality leaves out) and the order of levels and config keys. Not kept:
a finding's fix, refs and explanation: the catalogue owns those words and tests/catalogue asserts them; a copy
here would be the copied sentence the project avoids.

Regenerate after an intended change of the output, then read the diff before committing it:

    python3 -m tests.logs.golden            # rewrite every golden
    python3 -m tests.logs.golden --check    # only say which differ
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from tests.logs import synthetic_logs as synth
from tests.logs.real_logs import REAL
from triage.logs import analyze_log, chunks, lines
from triage.logs.episodes import EngineTrack, episode_dict
from triage.sample import EngineSample

GOLDENS = Path(__file__).resolve().parent / "goldens"
RECORDED = sorted(REAL.rglob("*.log"))
FINDING_KEYS = ("check", "status", "title", "evidence")
YEAR = 2026  # the recorded logs carry no year


@dataclass(frozen=True)
class Built:
    """A built log: how to write it, the parser limits it is read under, analyze_log's keyword arguments."""

    write: Callable[[Path], None]
    limits: tuple[tuple[Any, str, Any], ...] = ()  # (module, attribute, value)
    kwargs: dict[str, Any] = field(default_factory=dict)


BUILT: dict[str, Built] = {
    "bench-1mb": Built(synth.write_bench),
    "bench-1mb-max-samples-50": Built(synth.write_bench, kwargs={"max_samples": 50}),  # the series merges pairwise
    "adversarial": Built(synth.write_adversarial),
    # a block holds whole lines only below MAX_LINE: the block is cut below it too (chunks.BLOCK's comment)
    "long-line": Built(synth.write_long_line,
                       ((lines, "MAX_LINE", 1000), (chunks, "MAX_LINE", 1000), (chunks, "BLOCK", 300))),
    "access-blocks": Built(synth.write_access_blocks),
}
STATS_RUNS = "stats-runs"  # the episodes EngineTrack.add_values gives on synth.stats_runs()
DERIVED = ("engine", "lines", "duration_s", "possible_duration_s")  # one engine, no text lines, end - start


def name_of(path: Path) -> str:
    """The golden's name for a recorded log: its path under tests/fixtures/real, '/' as '__'."""
    return str(path.relative_to(REAL)).replace("/", "__")


def _sample(p: EngineSample) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(p):
        v = getattr(p, f.name)
        if v is None or (f.name in ("extra", "histograms") and not v):
            continue  # a field a log does not give (a new one included) changes no golden
        out[f.name] = {k: dict(x) if hasattr(x, "items") else x for k, x in v.items()} if hasattr(v, "items") else v
    return out


def normal(doc: Any) -> Any:
    """JSON's view of a value (tuples as lists, keys as strings): what a golden file holds."""
    return json.loads(json.dumps(doc))


def view(a: Any) -> dict[str, Any]:
    """What a golden keeps of one LogAnalysis."""
    d = a.to_dict()
    return normal({
        "findings": [{k: f[k] for k in FINDING_KEYS} for f in d["findings"]],
        "config": d["config"],
        "config_provenance": d["config_provenance"],
        "summary": d["summary"],
        "episodes": [episode_dict(e) for e in a.episodes],
        "samples": [_sample(p) for p in a.samples],
        "levels_order": list(a.summary["levels"]),
        "config_order": list(a.config),
    })


def analyze(source: Any, **kwargs: Any) -> dict[str, Any]:
    return view(analyze_log(source, year=YEAR, **kwargs))


def stats_runs_view() -> list[dict[str, Any]]:
    """Per stats run: its episodes and the track's state after it."""
    out = []
    for threshold, rows in synth.stats_runs():
        track = EngineTrack("000", threshold)
        ts = None
        for ts, line, running, waiting, prompt, gen in rows:
            track.add_values(ts, line, running, waiting, prompt, gen)
        track.finish(ts, 200)
        eps = [{k: v for k, v in episode_dict(e).items() if k not in DERIVED} for e in track.episodes]
        out.append({"threshold": threshold, "episodes": eps,
                    "state": [track.n, track.min_gap, track.last_ts, list(track._busy)]})
    return normal(out)


@contextlib.contextmanager
def limits(pairs: tuple[tuple[Any, str, Any], ...]) -> Iterator[None]:
    """Set parser limits for a while (the golden writer's monkeypatch)."""
    saved = [(mod, attr, getattr(mod, attr)) for mod, attr, _v in pairs]
    try:
        for mod, attr, v in pairs:
            setattr(mod, attr, v)
        yield
    finally:
        for mod, attr, v in saved:
            setattr(mod, attr, v)


def path(name: str) -> Path:
    return GOLDENS / f"{name}.json"


def dump(doc: Any) -> str:
    """A golden's text: indented for a readable diff; a list of runs one compact line per run."""
    if isinstance(doc, list):
        return "[\n" + ",\n".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) for x in doc) + "\n]\n"
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def load(name: str) -> Any:
    return json.loads(path(name).read_text())


def current() -> dict[str, Any]:
    """Every golden as the parser gives it now."""
    out: dict[str, Any] = {name_of(p): analyze(p) for p in RECORDED}
    with tempfile.TemporaryDirectory() as tmp:
        for name, b in BUILT.items():
            log = Path(tmp) / f"{name}.log"
            b.write(log)
            with limits(b.limits):
                out[name] = analyze(log, **b.kwargs)
    out[STATS_RUNS] = stats_runs_view()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.logs.golden", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; list the goldens that differ")
    args = ap.parse_args(argv)
    now = current()
    differ = [n for n, v in now.items() if not path(n).exists() or load(n) != v]
    stale = sorted(p.stem for p in GOLDENS.glob("*.json") if p.stem not in now)
    if args.check:
        for n in differ + stale:
            print(f"differs: {n}")
        return 1 if differ or stale else 0
    GOLDENS.mkdir(exist_ok=True)
    for n in differ:
        path(n).write_text(dump(now[n]))
        print(f"wrote {path(n).relative_to(GOLDENS.parent)}")
    for n in stale:
        path(n).unlink()
        print(f"removed {n} (no such log any more)")
    print(f"{len(now)} goldens, {len(differ)} written, {len(stale)} removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
