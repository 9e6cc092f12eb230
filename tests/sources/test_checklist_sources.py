"""triage.sources.checklist_sources: every checklist source meets the Source protocol; each is wanted only when the
target gives it something to read, and collects a result named as it is."""
from __future__ import annotations

from triage.sources import Source, SourceInput
from triage.sources.checklist_sources import SOURCES
from triage.target import Target

CMDLINE = "vllm serve m --max-model-len 256"
LOG = "INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.31.0\n"


def test_every_source_meets_the_protocol_with_a_distinct_name():
    names = [s.name for s in SOURCES]
    assert names == ["server", "process", "log", "cmdline", "kube", "nvml"]
    for s in SOURCES:
        assert isinstance(s.name, str) and callable(s.wanted) and callable(s.collect)
        _typed: Source = s  # the protocol, checked by the type checker


def test_nothing_given_nothing_wanted():
    assert [s.name for s in SOURCES if s.wanted(SourceInput(Target()))] == []


def test_text_sources_are_wanted_and_collect_under_their_name():
    given = SourceInput(Target(cmdline=CMDLINE, log_text=LOG, kube=(("describe.txt", "Name: pod"),)),
                        local_gpu=True, nvml_recorded={"gpus": []})
    wanted = [s for s in SOURCES if s.wanted(given)]
    assert [s.name for s in wanted] == ["log", "cmdline", "kube", "nvml"]
    for s in wanted:
        assert s.collect(given).source == s.name


def test_the_process_is_read_only_for_a_local_url():
    assert not SOURCES[1].wanted(SourceInput(Target(url="http://127.0.0.1:8000")))
    assert SOURCES[1].wanted(SourceInput(Target(url="http://127.0.0.1:8000"), local_process=True))
