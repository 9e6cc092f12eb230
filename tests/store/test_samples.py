"""The store's sample boundary: an EngineSample in, the same EngineSample out; no renamed key on the way."""
from __future__ import annotations

import json
from pathlib import Path

from triage.sample import EngineSample, LOG
from triage.store import Store
from triage.store.samples import COLUMNS, sample_columns, sample_of

FULL = EngineSample(ts=5.0, engine="1", model_name="m", num_requests_running=1.0, num_requests_waiting=2.0,
                    kv_cache_usage_perc=0.5, prompt_tokens_total=10.0, request_success_total=3.0,
                    num_preemptions_total=0.0, prefix_cache_queries_total=7.0, prefill_seconds_total=0.25,
                    kv_cache_size_tokens=4096.0, prompt_throughput=12.0, process_cpu_seconds_total=1.5,
                    observer_gap_s=9.0, extra={"e2e_p50": 0.1})


def test_columns_carry_the_fields_names_and_the_rest_rides_in_extra_json_by_name() -> None:
    row = sample_columns(FULL, run_id=1, target_id=2)
    assert {k: row[k] for k in COLUMNS} == {k: getattr(FULL, k) for k in COLUMNS}
    extra = json.loads(row["extra_json"])
    assert extra == {"e2e_p50": 0.1, "model_name": "m", "prefix_cache_queries_total": 7.0,
                     "prefill_seconds_total": 0.25, "kv_cache_size_tokens": 4096.0,
                     "process_cpu_seconds_total": 1.5, "observer_gap_s": 9.0}


def test_a_row_reads_back_as_the_sample_it_was() -> None:
    back = sample_of(sample_columns(FULL))
    assert back == FULL and dict(back.extra) == {"e2e_p50": 0.1}
    log = EngineSample(ts=1.0, source=LOG, line=3, merged=4, generation_throughput=0.0)
    assert sample_of(sample_columns(log)) == log


def test_a_store_round_trip_is_typed(tmp_path: Path) -> None:
    st = Store(str(tmp_path / "t.db"))
    run = st.start_run(None, "watch")
    assert st.add_samples([FULL, FULL.with_(ts=6.0)], run_id=run.id) == 2
    got = st.engine_samples(run.id)
    assert got == [FULL, FULL.with_(ts=6.0)]
    rec = st.get_run(run.id)
    assert rec is not None and rec.samples == got
    assert st.get_run(run.id, with_samples=False).samples == []  # type: ignore[union-attr]
    assert [s.ts for s in st.samples_for(run_id=run.id, since=5.5)] == [6.0]


def test_a_bad_extra_json_is_no_crash() -> None:
    assert sample_of({"ts": 1.0, "engine": "0", "source": "scrape", "extra_json": "{not json"}).ts == 1.0
