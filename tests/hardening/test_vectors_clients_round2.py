"""Issue 22: the vectors and clients sets within caps, and never PASS over nothing.

Parsed-size caps (10 million ``{}`` as vectors, a million-dimension vector, 10 million /tokenize ids) and the client
libraries' byte cap (a 400 MB answer to the OpenAI SDK, LangChain, LiteLLM and Open WebUI's request) run against the
hostile server (tests/hardening/hostile.py, a test double on purpose) in a child process whose peak RSS is measured.
The verdicts on empty, non-JSON and 1e308 answers are checked on the recorded real answer
(tests/fixtures/real/0.32.0-tiny-qwen3-livelock/embed-float.json) with its vectors replaced.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import REAL, Behaviour, HostileServer, assert_clean, measured  # noqa: E402

from triage.http import Reply  # noqa: E402
from triage.findings import Status  # noqa: E402
from triage.probes import client_libraries as clients, vector_findings  # noqa: E402

LIMIT_MB = 600
RECORDED = json.loads((REAL / "embed-float.json").read_text())

BIG = {
    "10M-empty-objects": (Behaviour(bodies={"/v1/embeddings": b'{"data": [' + b"{}," * 10_000_000 + b"{}]}"}),
                          "items cap"),
    "1M-dimensions": (Behaviour(bodies={"/v1/embeddings": b'{"data": [{"index": 0, "embedding": ['
                                        + b"0.1," * 1_000_000 + b"0.1]}]}"}), "dimensions cap"),
    "10M-token-ids": (Behaviour(bodies={"/tokenize": b'{"count": 3, "max_model_len": 256, "tokens": ['
                                        + b"1," * 10_000_000 + b"1]}"}), "items cap"),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", list(BIG))
def test_vectors_set_answers_are_parsed_within_caps(case: str, tmp_path: Path) -> None:
    behaviour, cap = BIG[case]
    with HostileServer(behaviour) as s:
        r = measured("probe", "--url", s.url, "--set", "vectors", "--deadline", "5", "--format", "json", "--db",
                     str(tmp_path / "t.db"), timeout=90)
    assert_clean(r)
    assert r.peak_mb < LIMIT_MB, r.peak_mb
    assert r.elapsed_s < 60, r.elapsed_s
    assert cap in r.out, r.out[-800:]


@pytest.mark.timeout(180)
def test_client_libraries_read_within_the_byte_cap(tmp_path: Path) -> None:
    with HostileServer(Behaviour(huge={"/v1/embeddings": 400 << 20}, huge_for_libraries=True)) as s:
        r = measured("probe", "--url", s.url, "--set", "clients", "--deadline", "5", "--format", "json", "--db",
                     str(tmp_path / "t.db"), timeout=150, env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert_clean(r)
    assert r.peak_mb < LIMIT_MB, r.peak_mb  # was 7.5 GB (400 MB of base64 read whole by each library)
    doc = json.loads(r.out)
    found = {f["check"]: f for f in doc["findings"]}
    assert not any(f["status"] == "pass" for f in found.values()), found
    assert "bytes cap" in json.dumps(found.get("clients-openwebui")), found.get("clients-openwebui")


def _answer(vectors: object, status: int = 200) -> Reply:
    body = json.loads(json.dumps(RECORDED["body"]))
    if vectors is None:
        return Reply("POST", "/v1/embeddings", RECORDED["request"], status=status, body="<html>ok</html>")
    body["data"] = [{"index": i, "object": "embedding", "embedding": v} for i, v in enumerate(vectors)]  # type: ignore
    return Reply("POST", "/v1/embeddings", RECORDED["request"], status=status, body=body)


@pytest.mark.parametrize("ex", [_answer([]), _answer(None)], ids=["empty-data", "not-json"])
def test_no_vectors_is_never_a_pass(ex: Reply) -> None:
    for f in (vector_findings.check_dimension([ex, ex], None, ""), vector_findings.check_norm(ex, None, "default"),
              vector_findings.check_finite([ex]), vector_findings.check_pair("vectors-repeat", ex, ex, 0.999, "twice")):
        assert f.status != Status.PASS, (f.check, f.title)
    res = clients.ClientResult(vectors=[])
    plain = vector_findings.vectors(_answer([[0.1] * 32, [0.2] * 32]))
    f = clients.verdict(clients.CASES[0], res, plain, "http://h/v1", "m")
    assert f.status == Status.ERROR, f.title


def test_vectors_near_the_float_limit_are_not_finite_pass() -> None:
    real = RECORDED["body"]["data"][0]["embedding"]
    ex = _answer([[1e308] * len(real)])
    f = vector_findings.check_finite([ex])
    assert f.status == Status.FAIL and "overflow" in f.title, f.title
    assert vector_findings.check_norm(ex, None, "default").status != Status.PASS


def test_a_rust_panic_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    """pyo3's PanicException derives from BaseException; it cannot be raised on cue from a real extension, so a
    BaseException subclass of the same name stands in for it (a test double of the type only)."""
    import triage.cli.logs as logs_cli
    from triage.cli import main

    class PanicException(BaseException):
        pass

    def boom(_args: object) -> int:
        raise PanicException("called `Option::unwrap()` on a `None` value")

    monkeypatch.setattr(logs_cli, "run", boom)
    rc = main(["logs", "-"])
    err = capsys.readouterr().err
    assert rc == 2 and "PanicException" in err and "Traceback" not in err and err.strip().count("\n") == 0, err
