"""Issue 33, deliver 5: each input that crashed or misled a command in round 3 is a finding or a clear exit-2
message now. Each test failed on main (the message it saw is in its docstring).

The hostile servers are tests/hardening/hostile.py's look-alike (test doubles on purpose: no real vLLM answers
out-of-range rerank indices or infinite scores); the verdict functions are fed the recorded real 0.32.0 answers
(tests/fixtures/real/rerank/) bent one field at a time.
"""
from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import Behaviour, HostileServer, assert_clean, cli  # noqa: E402

from tests.redaction import forget_secrets  # noqa: E402
from triage.http import Reply  # noqa: E402
from triage.findings import Status  # noqa: E402
from triage.probes import rerank_findings as rc  # noqa: E402

REC = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "rerank" / "0.32.0-rerank"


@pytest.fixture(autouse=True)
def _no_secret_left_behind() -> Any:
    """The CLI runs in-process here: what one test registers as a secret (redact's registry lasts a process)
    must not blank words in the next test's output."""

    yield
    forget_secrets()


def recorded(name: str) -> Reply:
    d = json.loads((REC / f"{name}.json").read_text())
    return Reply(d["request"]["method"], d["request"]["path"], d["request"]["body"], d["status"], d["body"])


def bent(name: str, **per_result: Any) -> Reply:
    """The recorded answer with field=value set in its first result (value per index when a list)."""
    ex = recorded(name)
    body = copy.deepcopy(ex.body)
    for k, v in per_result.items():
        if isinstance(v, list):
            for r, x in zip(body["results"], v, strict=False):
                r[k] = x
        else:
            body["results"][0][k] = v
    return Reply(ex.method, ex.path, ex.request, ex.status, body)


# -- rerank: indices and scores a server made up ---------------------------------------------------------------
BAD_INDICES = [pytest.param(7, id="out-of-range"), pytest.param(-1, id="negative"), pytest.param("0", id="string"),
               pytest.param(None, id="null"), pytest.param(True, id="bool")]


def hostile_rerank(index: Any, n: int = 4) -> dict[str, Any]:
    """A /rerank answer for the ranking cases (4 documents) whose first result's index is ``index``."""
    return {"id": "rerank-x", "model": "tiny-qwen3",
            "results": [{"index": index, "relevance_score": 0.9}] +
                       [{"index": i, "relevance_score": 0.5 - i / 10} for i in range(1, n)]}


@pytest.mark.parametrize("index", BAD_INDICES)
def test_rerank_index_a_server_made_up_is_a_finding_not_an_abort(index: Any, capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    """main: index 7 among 4 results -> KeyError 0 -> 'the rerank set could not run: 0' (the ranking and
    activation findings lost); a string or null index -> 'ranking requests failed: None'."""
    ans = hostile_rerank(index)
    with HostileServer(Behaviour(bodies={"/rerank": ans, "/v1/rerank": ans, "/v2/rerank": ans})) as s:
        r = cli(capsys, "probe", "--url", s.url, "--set", "rerank", "--only", "rerank-ranking", "rerank-top-n",
                "rerank-activation", "--db", str(tmp_path / "t.db"), "--deadline", "5", "--format", "json")
    assert_clean(r)
    found = {f["check"]: f for f in json.loads(r.out)["findings"]}
    assert "probe-setup" not in found, found.get("probe-setup")
    ranking = found["rerank-ranking"]
    assert ranking["status"] == "error" and "not a ranking of the inputs: index" in ranking["title"]
    assert repr(index) in ranking["title"] or str(index) in ranking["title"]
    assert found["rerank-activation"]["status"] == "error"
    assert found["rerank-top-n"]["status"] in ("unknown", "fail")


@pytest.mark.parametrize("index", BAD_INDICES)
def test_rerank_shape_names_the_bad_index(index: Any) -> None:
    f = rc.check_rerank_shape(bent("rerank", index=index), recorded("rerank").request["documents"])
    assert f.status == Status.FAIL and "index" in f.title


def test_duplicate_indices_fail_top_n() -> None:
    """main: top_n 1 answered [{index 1}, {index 1}] -> {1: s}, one result, the best one: PASS."""
    top = recorded("rerank-top-n")
    body = copy.deepcopy(top.body)
    body["results"] = body["results"] * 2
    f = rc.check_top_n(Reply(top.method, top.path, top.request, 200, body), recorded("rerank"), 1)
    assert f.status == Status.FAIL and "appears twice" in f.title


def test_duplicate_indices_fail_the_shape() -> None:
    ex = bent("rerank", index=[0, 0, 1])
    f = rc.check_rerank_shape(ex, recorded("rerank").request["documents"])
    assert f.status == Status.FAIL and "appears twice" in f.title


@pytest.mark.parametrize("score", [math.inf, -math.inf, math.nan])
def test_infinite_scores_do_not_pass_the_ranking(score: float) -> None:
    """main: scores [inf, 0.1, 0.0] -> PASS 'the relevant document ranks first … (score spread >= inf)'."""
    cases = [{"query": "q", "documents": ["a", "b", "c"], "scores": [score, 0.1, 0.0], "error": None}]
    f = rc.check_ranking(cases, None, True)
    assert f.status == Status.UNKNOWN and "not a finite number" in f.title


def test_infinite_score_on_the_wire_is_not_a_score() -> None:
    """JSON's Infinity parses in Python: the answer is not a ranking, with the reason."""
    ex = bent("rerank", relevance_score=math.inf)
    assert rc.rerank_scores(ex) is None
    assert "not a finite number" in (rc.rerank_problem(ex, 3) or "")


# -- a config argument too deep or too long to read ---------------------------------------------------------------
@pytest.mark.parametrize("cmdline", [
    pytest.param("vllm serve m --pooler-config " + "[" * 100_000 + "]" * 100_000, id="deep-json"),
    pytest.param("vllm serve m --pooler-config '" + "{\"a\": " * 50_000 + "1" + "}" * 50_000 + "'", id="deep-object"),
    pytest.param("vllm serve m --pooler-config" + ".a" * 500_000 + " 1", id="dotted-500000"),
    pytest.param("vllm serve m --pooler-config '[" + "1," * 400_000 + "1]'", id="huge-json"),
])
def test_a_config_argument_too_deep_is_not_read(cmdline: str, capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    """main: 'check: could not finish the run: RecursionError: maximum recursion depth exceeded while decoding a
    JSON array' (and 'while getting the repr of an object' for 500,000 dotted levels)."""
    r = cli(capsys, "check", "--cmdline", cmdline, "--db", str(tmp_path / "t.db"), "--format", "json", within_s=60)
    assert_clean(r)
    assert "could not finish" not in r.err
    pooler = json.loads(r.out)["config"]["pooler_config"]
    assert pooler["value"].startswith("(not read: ") and len(pooler["value"]) < 200, pooler


# -- an import with a time the database cannot store ------------------------------------------------------------
@pytest.mark.parametrize("field, when", [
    pytest.param("started_at", "9999-12-31T23:59:59-14:00", id="run-past-9999-in-utc"),
    pytest.param("finished_at", "0001-01-01T00:00:00+14:00", id="run-before-year-1-in-utc"),
    pytest.param("probe", "9999-12-31T23:00:00-01:00", id="probe-started-at"),
])
def test_an_import_with_a_time_the_database_cannot_store(field: str, when: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """main: 'import: cannot import …: (builtins.OverflowError) date value out of range [SQL: INSERT INTO run …
    [parameters: …]' (540 characters of SQL and parameters), exit 2 only by the catch-all's luck."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "export"))
    import export_runs

    from triage.export import render
    from triage.store import Store

    src = Store(str(tmp_path / "src.db"))
    doc = json.loads(render(src.get_run(export_runs.build(src)), "json"))
    if field == "probe":
        doc["probes"][0]["started_at"] = when
    else:
        doc["run"][field] = when
    f = tmp_path / "run.json"
    f.write_text(json.dumps(doc))
    r = cli(capsys, "import", str(f), "--db", str(tmp_path / "dest.db"))
    assert r.rc == 2
    assert "a time the database cannot store" in r.err and when in r.err
    assert "SQL" not in r.err and "Overflow" not in r.err and len(r.err) < 400, r.err
    assert Store(str(tmp_path / "dest.db")).count_runs() == 0


# -- fleet rules: values written into a rules file --------------------------------------------------------------
@pytest.mark.parametrize("args, says", [
    pytest.param(["--for", "banana"], "not a Prometheus duration", id="for-banana"),
    pytest.param(["--for", "5m\n        labels:\n          team: x"], "not a Prometheus duration", id="for-newline"),
    pytest.param(["--match", '{job="vllm"}\n      - alert: Injected'], "not a label selector", id="match-newline"),
    pytest.param(["--match", '{job="vllm"} or vector(1)'], "not a label selector", id="match-expression"),
    pytest.param(["--match", '{job="vllm\n"}'], "not a label selector", id="match-newline-in-value"),
])
def test_fleet_rules_refuses_what_would_break_the_file(args: list[str], says: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """main: exit 0 and a rules file with 'for: banana' (promtool: not a valid duration string) or with the
    newline's own YAML lines (an injected label or alert)."""
    out = tmp_path / "rules.yml"
    r = cli(capsys, "fleet", "rules", "-o", str(out), *args)
    assert r.rc == 2 and says in r.err, r
    assert not out.exists()


@pytest.mark.skipif(not __import__("shutil").which("promtool"), reason="promtool not installed (apt: prometheus)")
@pytest.mark.parametrize("args", [["--for", "1h30m"], ["--for", "0"], ["--match", 'job="vllm",instance=~"10\\\\..*"'],
                                  ["--match", "{ job = 'vllm' , }"]])
def test_fleet_rules_accepts_what_prometheus_accepts(args: list[str], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    out = tmp_path / "rules.yml"
    assert cli(capsys, "fleet", "rules", "-o", str(out), *args).rc == 0
    p = subprocess.run(["promtool", "check", "rules", str(out)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


# -- a base URL with a query string or a fragment ------------------------------------------------------------------
@pytest.mark.parametrize("suffix", ["/?token=x", "?a=1", "/#frag", "/?"])
@pytest.mark.parametrize("command", [["check"], ["probe"], ["watch", "--duration", "1"]])
def test_a_url_with_a_query_is_refused(suffix: str, command: list[str], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """main: paths were appended after the query (GET /?token=x/v1/models: the server's root, asked with an odd
    query), and every verdict read that answer."""
    with HostileServer() as s:
        r = cli(capsys, *command[:1], "--url", s.url + suffix, *command[1:], "--db", str(tmp_path / "t.db"))
        assert r.rc == 2 and "--url" in r.err and ("query string" in r.err or "fragment" in r.err), r.err
        assert s.b.seen == []  # nothing was asked of the server


def test_the_dashboard_refuses_a_url_with_a_query() -> None:
    from ui.services import ServiceError, Services

    with pytest.raises(ServiceError, match="query string"):
        Services.check_url(None, "http://127.0.0.1:8000/?x=1")  # type: ignore[arg-type]  # uses no state
    assert Services.check_url(None, "http://127.0.0.1:8000/")[0] == "http://127.0.0.1:8000"  # type: ignore[arg-type]


def test_fleet_prometheus_url_with_a_query_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    r = cli(capsys, "fleet", "rules", "--prometheus", "http://127.0.0.1:9/?x=1")
    assert r.rc == 2 and "query string" in r.err


# -- the config detail of a key given on the command line ------------------------------------------------------
def test_the_api_key_detail_reads_as_words_in_every_output(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    """main (round 3): "--api-key [REDACTED] the command line" (the detail's next word taken for the key); the
    detail now names the option last, and reads the same after redaction in JSON and in the Markdown report."""
    import re

    from triage.redact import redact_text

    key = "sk-" + "q" * 24
    db = str(tmp_path / "t.db")
    r = cli(capsys, "check", "--cmdline", f"vllm serve m --api-key {key}", "--db", db, "--format", "json")
    detail = json.loads(r.out)["config"]["api_key_required"]["detail"]
    assert detail == redact_text(detail) and not re.search(r"--api-key\s+\S", detail), detail
    md = cli(capsys, "report", "latest", "--db", db, "--format", "md")
    assert "[REDACTED] the command line" not in md.out and detail in md.out and key not in md.out
