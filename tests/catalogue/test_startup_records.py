"""The ten start-up/configuration/throughput records (issue 14): registered, complete, and read by the checks."""

from __future__ import annotations

import pytest

from checks import flags
from triage.catalogue import MODES, mode_for_check
from triage.catalogue.startup import (
    GENERATE_RUNNER,
    LOG_STATS_DISABLED,
    REMOVED_FLAG,
    STARTUP_MODES,
    STARTUP_OOM,
)
from triage.config import merge
from triage.findings import Status
from triage.sources import cmdline


@pytest.mark.parametrize("mode", STARTUP_MODES, ids=[m.id for m in STARTUP_MODES])
def test_record_is_registered_and_complete(mode) -> None:  # noqa: ANN001
    assert MODES[mode.id] is mode
    assert mode.refs and mode.mechanism and mode.title
    assert len(mode.evidence) >= 2, "each mode is judged from more than one source"
    fix = mode.fix({})
    assert "--" in fix or "truncate_prompt_tokens" in fix or "dimensions" in fix, "a fix names a flag or client setting"
    for check in mode.findings:
        assert mode_for_check(check) is mode
    assert not mode.affected, "not version-bound bugs: the version check must not list them"


def test_ten_modes() -> None:
    from triage.catalogue.startup import MATRYOSHKA

    assert len(STARTUP_MODES) == 11 and len({m.id for m in STARTUP_MODES}) == 11  # + issue 20's two 0.33 refusals
    assert MODES[MATRYOSHKA.id] is MATRYOSHKA and "--hf-overrides" in MATRYOSHKA.fix()  # mode 4, one record


def _flags(text: str) -> dict:
    return {f.check: f for f in flags.check(merge([cmdline.collect(text)]))}


def test_removed_flags_from_a_pasted_command_line() -> None:
    line = ("Qwen/Qwen3-Embedding-4B --task embed --override-pooler-config '{\"pooling_type\": \"MEAN\"}'"
            " --pooler-config '{\"normalize\": false}'")
    unknown_release = _flags("vllm serve " + line)["flags-removed"]
    # judged on the newest release read, not the deployment's own: an older release takes --task (the threads of
    # 2025 ran it), so the verdict waits for the release, with how to read it (issue 42: no alarm on a started server)
    assert unknown_release.status == Status.UNKNOWN
    assert "checked against" in unknown_release.title and "vllm --version" in unknown_release.title
    by = _flags("docker run vllm/vllm-openai:v0.31.0 " + line)
    f = by["flags-removed"]
    assert f.status == Status.FAIL and f.refs == list(REMOVED_FLAG.refs)
    removed = [r["option"] for r in f.evidence["removed"]]
    assert removed == ["--task", "--override-pooler-config", "--pooler-config normalize"]
    assert "--runner pooling" in f.fix and "--pooler-config (same JSON)" in f.fix and "use_activation" in f.fix
    assert "flags-unknown" not in by  # a removed option is reported once, with its replacement


def test_generate_runner_and_log_stats_from_the_command_line() -> None:
    by = _flags("vllm serve m --runner generate --disable-log-stats")
    assert by["flags-runner"].fix == GENERATE_RUNNER.fix()
    assert by["flags-log-stats"].status == Status.WARN and by["flags-log-stats"].fix == LOG_STATS_DISABLED.fix()


def test_large_budget_oom_risk_reads_the_catalogue() -> None:
    f = _flags("vllm serve m --runner pooling --max-num-batched-tokens 65536")["flags-oom-risk"]
    assert f.refs == list(STARTUP_OOM.refs) and "65536" in f.fix


def test_generator_from_the_start_up_log_fails_the_flags_check() -> None:
    """Mode 2 in the checklist: the real 0.31.0 log's `Supported tasks: ['generate']` (log source)."""
    from pathlib import Path

    from triage.sources import startup_log

    log = Path(__file__).resolve().parents[1] / "fixtures/real/startup/0.31.0-generate-runner/server.log"
    f = {f.check: f for f in flags.check(merge([startup_log.collect(log.read_text())]))}["flags-runner"]
    assert f.status == Status.FAIL and f.fix == GENERATE_RUNNER.fix() and f.evidence["supported_tasks"]


def test_generate_runner_fix_for_an_embedder_is_spelled_by_the_release() -> None:
    """Issue 42 (gpustack#2170: a pasted traceback, no release): both spellings of the task, by release; a stated
    release gets its own spelling only."""
    from triage.catalogue.startup import GENERATE_RUNNER

    base = {"model": "Qwen/Qwen3-Embedding-0.6B"}
    both = GENERATE_RUNNER.fix(base)
    assert "--task embed" in both and "--runner pooling --convert embed" in both and "0.10.2" in both
    assert "--task embed" in GENERATE_RUNNER.fix({**base, "vllm_version": "0.8.5"})
    assert "--runner pooling" not in GENERATE_RUNNER.fix({**base, "vllm_version": "0.8.5"})
    assert "--task" not in GENERATE_RUNNER.fix({**base, "vllm_version": "0.32.0"})
