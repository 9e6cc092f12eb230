"""Vector verdicts on responses recorded from real lab servers (tests/fixtures/real/vectors/README.md).

Every assertion on wording or fixes reads the catalogue record, never a copied sentence.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from triage.catalogue import MODES, get, mode_for_check
from triage.http import Reply
from triage.findings import Status
from triage.probes import vector_findings as vc
from triage.probes import vector_reference as vr
from triage.probes.runner import OK, ProbeOutcome
from triage.sources.model_files import ModelPooling, read_model_pooling

from .recorded import VECTORS, recording, reply_of

HEALTHY = VECTORS / "0.32.0-tiny-qwen3-livelock" / "vectors.json"
MEAN = VECTORS / "0.32.0-tiny-qwen3-pooling-mean" / "vectors.json"


def files_of(rec: dict) -> ModelPooling:
    return ModelPooling.from_dict(rec["model_files"])


@pytest.fixture(scope="module")
def healthy() -> dict:
    return recording(HEALTHY)


@pytest.fixture(scope="module")
def mean() -> dict:
    return recording(MEAN)


def test_records_are_registered() -> None:
    for check in ("vectors-model-pooling", "vectors-reference", "vectors-finite", "vectors-eos",
                  "clients-langchain-defaults", "clients-openwebui", "vectors-repeat"):
        assert mode_for_check(check) is not None, check
    assert {"client-token-ids", "pooling-mismatch", "nan-vectors", "missing-eos", "dimensions-not-matryoshka",
            "base64-truncated", "openwebui-misconfig"} <= set(MODES)


def test_healthy_recording_passes_every_vector_check(healthy: dict) -> None:
    files = files_of(healthy)
    dims = [reply_of(d) for d in healthy["dimension"]]
    assert vc.check_dimension(dims, files.dimension, files.source).status == Status.PASS
    assert vc.check_norm(reply_of(healthy["norm"]), files.normalize, files.source).status == Status.PASS
    a, b = (reply_of(d) for d in healthy["repeat"])
    assert vc.check_pair("vectors-repeat", a, b, vc.REPEAT_MIN, "same").status == Status.PASS
    a, b = (reply_of(d) for d in healthy["batch"])
    assert vc.check_pair("vectors-batch-invariance", a, b, vc.BATCH_MIN, "batch", index_b=1).status == Status.PASS
    outs = [ProbeOutcome("vectors-long-repeat", "vectors", OK, exchanges=[reply_of(d)]) for d in healthy["long"]]
    assert vc.check_long_repeat(outs, 255).status == Status.PASS
    assert vc.check_finite(dims).status == Status.PASS
    t, e = (reply_of(d) for d in healthy["tokenize"])
    pooling, source = healthy["server_pooling"]
    assert pooling == "LAST"
    assert vc.check_eos(t, e, pooling, files.eos_token_id, source).status == Status.PASS
    assert vc.check_model_pooling(files, pooling, source, files.path).status == Status.PASS
    ref = vr.check_reference(reply_of(healthy["reference_server"]), healthy["reference"], files, pooling, "", "py")
    assert ref.status == Status.PASS, ref.title
    assert ref.evidence["cosine"] >= vc.REFERENCE_MIN


def test_random_weight_model_ranking_is_unknown_not_a_false_alarm(healthy: dict) -> None:
    f = vc.check_ranking(reply_of(healthy["ranking"]), "built with random weights")
    assert f.status == Status.UNKNOWN
    assert f.evidence["of"] == len(vc.PAIRS)


def test_pooling_mean_recording_fails_naming_both_poolings(mean: dict) -> None:
    files = files_of(mean)
    pooling, source = mean["server_pooling"]
    assert (files.pooling, pooling) == ("LAST", "MEAN")
    f = vc.check_model_pooling(files, pooling, source, files.path)
    assert f.status == Status.FAIL
    assert "LAST" in f.title and "MEAN" in f.title
    assert f.fix == get("pooling-mismatch").fix({"model_pooling": "LAST", "server_pooling": "MEAN"})
    assert "--pooler-config" in f.fix
    r = vr.check_reference(reply_of(mean["reference_server"]), mean["reference"], files, pooling, "", "py")
    assert r.status == Status.FAIL
    assert r.evidence["by_pooling"]["MEAN"] >= vc.REFERENCE_MIN > r.evidence["by_pooling"]["LAST"]
    assert r.refs == list(get("pooling-mismatch").refs)


def test_nan_and_out_of_range_fail() -> None:
    body = {"data": [{"index": 0, "embedding": [0.1, float("nan"), 0.2]}]}
    f = vc.check_finite([Reply("POST", "/v1/embeddings", {}, 200, body)])
    assert f.status == Status.FAIL and f.fix == get("nan-vectors").fix()
    err = {"error": {"message": "Out of range float values are not JSON compliant"}}
    assert vc.check_finite([Reply("POST", "/v1/embeddings", {}, 500, err)]).status == Status.FAIL


def test_missing_eos_fails_for_last_pooling(healthy: dict) -> None:
    t, e = (reply_of(d) for d in healthy["tokenize"])
    cut = copy.deepcopy(t)
    cut.body["tokens"] = cut.body["tokens"][:-1]
    f = vc.check_eos(cut, e, "LAST", files_of(healthy).eos_token_id, "log")
    assert f.status == Status.FAIL and f.fix == get("missing-eos").fix()
    assert vc.check_eos(cut, e, "MEAN", None, "log").status == Status.PASS


def test_dimension_other_than_declared_fails(healthy: dict) -> None:
    dims = [reply_of(d) for d in healthy["dimension"]]
    f = vc.check_dimension(dims, 256, "config.json")
    assert f.status == Status.FAIL and f.fix == get("dimensions-not-matryoshka").fix()


def test_model_files_sentence_transformers(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertModel"], "hidden_size": 384}))
    (tmp_path / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 384, "pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False}))
    m = read_model_pooling(str(tmp_path))
    assert m is not None and (m.pooling, m.normalize, m.dimension) == ("MEAN", True, 384)
    assert read_model_pooling(str(tmp_path / "absent")) is None


def test_cosine_rows_for_the_plot(healthy: dict) -> None:
    a, b = (reply_of(d) for d in healthy["repeat"])
    rows = vc.cosine_rows([vc.check_pair("vectors-repeat", a, b, vc.REPEAT_MIN, "same")])
    assert rows and rows[0]["check"] == "vectors-repeat" and rows[0]["status"] == "pass"


def test_server_pooling_from_the_recorded_start_up_log() -> None:
    from triage.probes.server_facts import pooling_from_log
    log = MEAN.parent / "server.log"
    if not log.exists():
        pytest.skip("no recorded log")
    pooling, source = pooling_from_log(log.read_text(), "start-up log")
    assert pooling == "MEAN" and "--pooler-config" in source
