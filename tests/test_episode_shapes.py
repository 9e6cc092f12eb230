"""One stall-episode value and one gap rule (issue 44: "a stall is five shapes and two gap rules").

Read with ``ast`` over triage/, checks/ and ui/:

- no class is an episode but ``triage.episode.Episode``: a class whose fields name a stall's kind, where it started
  and where it ended (or was confirmed) is another shape of it, unless it is listed below with why;
- a stored episode shape is written in one place per source (its edge): the dict keys that only a stored episode
  has (a log's ``start_ts``, watch's ``cleared_at``, the fleet's ``ongoing``) appear in one function each;
- the gap rule's thresholds (``LATE_FACTOR``, ``LATE_MIN_S``) are read only by ``triage.sample.observer_gap``, and the
  charts' scrape gaps are that rule's (``scrape_gaps`` calls ``observer_gap``).
"""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("triage", "checks", "ui")

KIND = {"kind"}
STARTS = {"start", "start_ts", "since"}
ENDS = {"end", "end_ts", "cleared_at", "confirmed_at", "confirmed", "ongoing"}

# classes that carry a kind, a start and an end without being an episode: file:class -> why
NOT_EPISODES = {
    "triage/episode.py:Episode": "the value itself",
    "triage/stall.py:StallState": "the rule's state between samples (an episode is made of it: of_window)",
    "triage/logs/episodes.py:StatsWindow": "the log track's builder, line by line; closed, it is an Episode",
    "triage/recurrence.py:Span": "recurrence's reading of an episode (Episode.span()): start, end, how it ended",
}

# the keys only a stored episode shape has -> the one function that writes them (its source's storage edge)
STORED_KEYS = {
    "start_ts": "triage/logs/episodes.py:episode_dict",
    "last_stall_ts": "triage/logs/episodes.py:episode_dict",
    "cleared_at": "triage/watch/episodes.py:alert_dict",
    "ongoing": "triage/fleet/replicas.py:episode_dict",
}
# recurrence's summary counts its ongoing episodes under the same word: a count, not an episode
STORED_KEYS_ALSO = {("ongoing", "triage/recurrence.py:summarize")}


def _files() -> list[Path]:
    return sorted(p for d in SCANNED for p in (ROOT / d).rglob("*.py"))


@functools.cache
def _tree(p: Path) -> ast.Module:
    return ast.parse(p.read_text())


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def _fields(cls: ast.ClassDef) -> set[str]:
    """The names a class declares in its body (annotated fields, assignments) and its properties."""
    out: set[str] = set()
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list):
            out.add(node.name)
    return out


def _episode_classes() -> set[str]:
    found = set()
    for p in _files():
        for node in ast.walk(_tree(p)):
            if isinstance(node, ast.ClassDef):
                f = _fields(node)
                if f & KIND and f & STARTS and f & ENDS or node.name.endswith("Episode"):
                    found.add(f"{_rel(p)}:{node.name}")
    return found


def test_one_episode_class() -> None:
    found = _episode_classes()
    assert found - set(NOT_EPISODES) == set(), "another stall-episode shape: make it a triage.episode.Episode"
    assert set(NOT_EPISODES) <= found, "a listed class is gone or changed: shrink NOT_EPISODES"


def _writers(key: str) -> set[str]:
    """file:function of every dict display that has ``key`` as a literal key."""
    out = set()
    for p in _files():
        for fn in ast.walk(_tree(p)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Dict) and any(
                        isinstance(k, ast.Constant) and k.value == key for k in node.keys):
                    out.add(f"{_rel(p)}:{fn.name}")
    return out


def test_each_stored_episode_shape_is_written_at_one_edge() -> None:
    for key, where in STORED_KEYS.items():
        allowed = {where} | {w for k, w in STORED_KEYS_ALSO if k == key}
        assert _writers(key) <= allowed and where in _writers(key), (key, _writers(key))


def _names(p: Path) -> set[str]:
    return {n.id for n in ast.walk(_tree(p)) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(_tree(p)) if isinstance(n, ast.Attribute)}


def test_one_gap_rule() -> None:
    readers = {_rel(p) for p in _files() if {"LATE_FACTOR", "LATE_MIN_S"} & _names(p)}
    assert readers == {"triage/sample.py"}, readers
    charts = _tree(ROOT / "triage" / "charts.py")
    fn = next(n for n in ast.walk(charts) if isinstance(n, ast.FunctionDef) and n.name == "scrape_gaps")
    calls = {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "observer_gap" in calls


def test_the_removed_shapes_are_gone() -> None:
    """The log's StallEpisode, the fleet's Episode and watch's alert dicts (Watcher.alerts are values now)."""
    text = "\n".join(p.read_text() for p in _files())
    assert "StallEpisode" not in text
    assert len(re.findall(r"^class Episode\b", text, re.MULTILINE)) == 1
    assert "self.alerts: list[Episode]" in (ROOT / "triage" / "watch" / "loop.py").read_text()
