"""The twin planner (pure): release choice from the per-release knowledge, lengths scaled with their relations kept,
candidates from the deployment's facts. No server: the installed releases are given."""
from __future__ import annotations

import pytest

from triage.twin.models import shape_of
from triage.twin.plan import PlanError, choose_release, plan_twin, scale_lengths

SEED = {"vllm_version": "0.28.0", "model": "Qwen/Qwen3-Embedding-4B", "runner": "pooling", "convert": "embed",
        "max_model_len": 2048, "max_num_batched_tokens": 2048}
LAB = ["0.31.0", "0.32.0"]


def test_seed_deployment_twin_is_the_nearest_agreeing_release() -> None:
    p = plan_twin(SEED, 2048, LAB)
    assert p.release.chosen == "0.31.0" and not p.release.exact
    assert "0.28.0" in p.release.why and "0.31.0" in p.release.why and "not 0.32.0" in p.release.why
    assert p.server.model == "tiny-qwen3"
    args = list(p.server.extra_args)
    assert args[args.index("--max-model-len") + 1] == "256" == args[args.index("--max-num-batched-tokens") + 1]
    assert "--enable-chunked-prefill" in args
    (c,) = p.candidates
    assert c.mode == "pooling-livelock" and c.truncation == 256 and "seed-concurrent4-short-long-t256" in c.only


def test_fixed_release_is_served_as_is() -> None:
    p = plan_twin(dict(SEED, vllm_version="0.32.0"), 2048, LAB)
    assert p.release.chosen == "0.32.0" and p.release.exact


def test_no_agreeing_release_says_what_to_install() -> None:
    with pytest.raises(PlanError, match="lab install --vllm 0.28.0"):
        choose_release("0.28.0", ["0.32.0"], ["pooling-livelock"])


@pytest.mark.parametrize("mml,budget,trunc,want_b,want_t", [
    pytest.param(2048, 2048, 2048, 256, 256, id="equal-stays-equal"),
    pytest.param(4096, 2048, -1, 128, -1, id="below-stays-below"),
    pytest.param(2048, 8192, 2047, 1024, 255, id="above-and-minus-one"),
    pytest.param(32768, 2048, 1000, 32, 8, id="tiny-budget-floored-below"),
])
def test_scaling_keeps_relations(mml: int, budget: int, trunc: int, want_b: int, want_t: int) -> None:
    s = scale_lengths(mml, budget, trunc)
    assert s["max_model_len"]["twin"] == 256
    assert s["max_num_batched_tokens"]["twin"] == want_b and s["truncate_prompt_tokens"]["twin"] == want_t
    assert (budget < mml) == (want_b < 256) and (budget == mml) == (want_b == 256)


def test_pooling_override_is_a_pooling_mismatch_candidate() -> None:
    vals = {"vllm_version": "0.31.0", "model": "Qwen/Qwen3-Embedding-0.6B", "runner": "pooling",
            "pooler_config": {"pooling_type": "MEAN"}, "pooling_type": "MEAN"}
    p = plan_twin(vals, None, LAB)
    assert [c.mode for c in p.candidates] == ["pooling-mismatch"]
    assert "--pooler-config" in p.server.extra_args


def test_model_table_entries_name_their_source() -> None:
    s = shape_of("Qwen/Qwen3-Embedding-4B")
    assert s is not None and s.pooling == "LAST" and s.source.startswith("https://huggingface.co/")
    assert shape_of("someone/unknown-model") is None
    with pytest.raises(PlanError, match="not in the table"):
        plan_twin(dict(SEED, model="someone/unknown-model"), 2048, LAB)


def test_cli_plan_only_for_the_seed_deployment(capsys, tmp_path) -> None:
    """``reproduce --plan-only``: check's inputs in, the twin's plan out (no server started)."""
    import json

    from triage.cli import main

    rc = main(["reproduce", "--db", str(tmp_path / "t.db"), "--cmdline",
               "docker run --gpus all -p 8094:8000 vllm/vllm-openai:v0.28.0 Qwen/Qwen3-Embedding-4B --runner pooling "
               "--convert embed --max-model-len 2048", "--truncate", "2048", "--answer",
               "gpu_name=NVIDIA GeForce RTX 3080 Ti", "gpu_memory_total_bytes=12GiB", "--plan-only",
               "--format", "json"])
    assert rc == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert plan["release"]["requested"] == "0.28.0"
    assert plan["scale"]["max_num_batched_tokens"] == {"user": 2048, "twin": 256, "relation": "= max_model_len"}


def test_shape_from_a_served_models_files(tmp_path) -> None:
    """A model id that is a local folder: its config.json and sentence-transformers Pooling config give the shape
    (the lab's own folders stand for themselves; a bidirectional decoder gets the bidirectional lab model)."""
    import json

    from triage.twin.models import shape_from_files

    qwen = tmp_path / "tiny-qwen3"
    qwen.mkdir()
    (qwen / "config.json").write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"], "torch_dtype": "float32"}))
    s = shape_from_files(str(qwen))
    assert (s.architecture, s.pooling, s.causal, s.head, s.lab_model) == ("Qwen3ForCausalLM", "LAST", True, "embed",
                                                                         "tiny-qwen3")
    gte = tmp_path / "gte"
    (gte / "1_Pooling").mkdir(parents=True)
    (gte / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"], "is_causal": False}))
    pool = {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}
    (gte / "modules.json").write_text(json.dumps([pool]))
    (gte / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_lasttoken": True}))
    g = shape_from_files(str(gte))
    assert (g.pooling, g.causal, g.lab_model) == ("LAST", False, "tiny-qwen2-bidir")
    assert shape_from_files(str(tmp_path / "nothing")) is None and shape_from_files(None) is None
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{" * 100_000)
    assert shape_from_files(str(tmp_path / "bad")).architecture == "?"


def test_facts_of_a_stored_probe_run(tmp_path) -> None:
    """``reproduce --run N`` of a probe run: the server's facts from the run's meta, the truncation of the seed case
    that hung, the record its failing finding names."""
    from triage.findings import Finding, Status
    from triage.store import Store
    from triage.twin.plan import facts_of_run

    store = Store(str(tmp_path / "t.db"))
    tid = store.add_target("http://127.0.0.1:1", model="/models/Qwen3-Embedding-4B").id
    run = store.start_run(tid, "probe", {"model": "/models/Qwen3-Embedding-4B", "max_model_len": 2048,
                                         "vllm_version": "0.31.0"})
    store.add_probe_result(run.id, "seed-short-long-t2048", "livelock",
                           detail={"set": "seed", "truncate_prompt_tokens": 2048})
    store.add_finding(run.id, Finding("probe-livelock", Status.FAIL, "hang", {}, failure_mode="pooling-livelock"))
    vals, trunc, modes = facts_of_run(store.get_run(run.id))
    assert vals == {"model": "/models/Qwen3-Embedding-4B", "max_model_len": 2048, "vllm_version": "0.31.0"}
    assert trunc == 2048 and modes == ["pooling-livelock"]
    plan = plan_twin(vals, trunc, ["0.31.0", "0.32.0"], modes)
    assert plan.release.exact and plan.candidates[0].mode == "pooling-livelock"
