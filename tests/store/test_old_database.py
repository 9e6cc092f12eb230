"""A database written by the code before issue 34 (tests/fixtures/store/make_old_db.py wrote it with that code's own
Store and ProbeOutcome) still opens: its samples read back typed, the fields it kept in extra_json lifted back to
their fields, its probe rows' renamed keys read, its runs render."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from triage.export import render
from triage.sample import EngineSample
from triage.store import Store

OLD = Path(__file__).resolve().parents[1] / "fixtures" / "store" / "old-shape-v1.sql"  # the old file, as SQL text


@pytest.fixture()
def old(tmp_path: Path) -> Store:
    copy = tmp_path / "old.db"
    with sqlite3.connect(copy) as con:  # the database the old code wrote, rebuilt from its dump (sqlite3 .dump)
        con.executescript(OLD.read_text())
    con.close()
    return Store(str(copy))


def _run(store: Store, kind: str) -> int:
    [(run, _)] = [(r, t) for r, t in store.list_runs() if r.kind == kind]
    return run.id


def test_watch_samples_read_back_typed_with_their_fields(old: Store) -> None:
    samples = old.engine_samples(_run(old, "watch"))
    assert len(samples) == 5 and all(isinstance(s, EngineSample) for s in samples)
    s = samples[3]
    assert (s.num_requests_running, s.prompt_tokens_total, s.prefix_cache_queries_total) == (1.0, 300.0, 30.0)
    assert (s.process_cpu_seconds_total, s.kv_cache_size_tokens, s.model_name) == (7.5, 131072.0, "tiny-qwen3")
    assert s.observer_gap_s == 12.5 and samples[2].observer_gap_s is None
    assert dict(s.extra) == {"e2e_p50": 0.03}  # only the real extras stay extras


def test_log_samples_keep_their_line_and_merge_count(old: Store) -> None:
    samples = old.engine_samples(_run(old, "logs"))
    assert [s.line for s in samples] == [40, 41, 42] and {s.merged for s in samples} == {2}
    assert samples[0].generation_throughput == 0.0 and samples[0].throughput_progress is False
    assert dict(samples[0].extra) == {"kv_device": "GPU"}


def test_probe_rows_of_the_old_shape_read_back_typed(old: Store) -> None:
    [series] = old.probe_series(_run(old, "probe"))
    assert series.outcome == "livelock" and series.samples
    assert all(isinstance(s, EngineSample) for s in series.samples)
    assert any(s.num_requests_running == 1 for s in series.samples)  # "running" read as the field
    assert [s.ts for s in series.samples] == sorted(s.ts for s in series.samples) and series.samples[-1].ts > 0


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_old_runs_render(old: Store, fmt: str) -> None:
    for kind in ("watch", "probe", "logs"):
        rec = old.get_run(_run(old, kind))
        assert rec is not None and render(rec, fmt)


def test_an_old_run_exports_in_the_one_shape_and_imports_again(old: Store, tmp_path: Path) -> None:
    import json

    from triage.export.json_ import import_run

    rec = old.get_run(_run(old, "watch"))
    assert rec is not None
    doc = json.loads(render(rec, "json"))
    assert doc["samples"][3]["prefix_cache_queries_total"] == 30.0 and doc["samples"][3]["observer_gap_s"] == 12.5
    fresh = Store(str(tmp_path / "fresh.db"))
    again = fresh.engine_samples(import_run(fresh, doc))
    assert again == rec.samples and [dict(s.extra) for s in again] == [dict(s.extra) for s in rec.samples]
