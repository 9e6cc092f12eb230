"""Issue 43, inputs: files that are no command line (tab-indented YAML, a ``!!python`` tag, a JSON manifest, a
deeply nested file), the twin refusing the user's own bad option, and run numbers no database holds. Each input is
the attack as the round-4 attacker sent it; each test asserts what is said instead.

The deployment files are the recorded fixtures (tests/fixtures/deploy, README there), bent into the attack.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from triage.lab.server import KEEP_ENV

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import assert_clean, cli  # noqa: E402

from tests.redaction import forget_secrets  # noqa: E402

FIX = Path(__file__).resolve().parents[1] / "fixtures"
SEED = (FIX / "deploy" / "seed-deployment.yaml").read_text()


@pytest.fixture(autouse=True)
def _fresh() -> None:
    forget_secrets()
    yield
    forget_secrets()


def _deployment() -> dict:
    return [d for d in yaml.safe_load_all(SEED) if d and d["kind"] == "Deployment"][0]


UNREADABLE = {
    "tab-indented": (SEED.replace("      containers:\n        - name: log-shipper",
                                  "      containers:\n\t- name: log-shipper"), "a tab indents a line"),
    "python-tag": (SEED.replace("  replicas: 1", "  replicas: !!python/object/apply:os.system ['id']"),
                   "!!python tag"),
    "python-tag-top": ("!!python/object/apply:os.system ['echo hi']\nkind: Pod\n", "!!python tag"),
    "broken-json": ('{"apiVersion": "apps/v1", "kind": "Deployment", "spec": {', "JSON document that cannot be read"),
    "json-not-a-deployment": (json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}),
                              "kind ConfigMap"),
    "yaml-not-a-deployment": ("model: Qwen/Qwen3-Embedding-0.6B\nmax_model_len: 2048\n", "keys max_model_len, model"),
    "deep-yaml": ("kind: Deployment\nspec: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    "deep-block-yaml": ("a:\n" + "".join(" " * (2 * i + 2) + "a:\n" for i in range(600)), "nested too deeply"),
    "deep-json": ('{"kind": "Deployment", "spec": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
}


@pytest.mark.parametrize("case", list(UNREADABLE))
def test_a_file_that_is_no_command_line_is_said_so(case: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """main: each was judged as a command line (the model `kind:` or `{`, exit 0), or (deep) a RecursionError."""
    text, says = UNREADABLE[case]
    f = tmp_path / "dep.yaml"
    f.write_text(text)
    r = cli(capsys, "check", "--cmdline-file", str(f), "--db", str(tmp_path / "t.db"), "--format", "json")
    assert_clean(r)
    assert r.rc == 2 and says in r.err and "RecursionError" not in r.err, r.err
    assert len(r.err) < 600 and r.out == ""


def test_a_json_manifest_is_read_as_the_deployment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """main: `kubectl get deployment -o json` was split as shell words: model `{"apiVersion":`."""
    f = tmp_path / "dep.json"
    f.write_text(json.dumps(_deployment(), indent=2))
    r = cli(capsys, "check", "--cmdline-file", str(f), "--truncate", "2048", "--db", str(tmp_path / "t.db"),
            "--format", "json")
    assert_clean(r)
    cfg = json.loads(r.out)["config"]
    assert cfg["model"]["value"] == "Qwen/Qwen3-Embedding-0.6B" and cfg["max_model_len"]["value"] == 2048
    assert cfg["deploy_target"]["value"]["target"] == "Deployment/qwen3-embedding container vllm"
    assert cfg["vllm_version"]["value"] == "0.28.0"


def test_kubectl_describe_given_as_the_command_line_names_the_right_flag(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "describe.txt"
    f.write_text((FIX / "kube" / "describe-crashloop.txt").read_text())
    r = cli(capsys, "check", "--cmdline-file", str(f), "--db", str(tmp_path / "t.db"))
    assert r.rc == 2 and "kubectl describe" in r.err and "--kube-file" in r.err, r.err


def test_a_plain_command_line_is_still_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = cli(capsys, "check", "--cmdline", "vllm serve Qwen/Qwen3-Embedding-0.6B --runner pooling --max-model-len 2048",
            "--db", str(tmp_path / "t.db"), "--format", "json")
    assert r.rc in (0, 1) and json.loads(r.out)["config"]["model"]["value"] == "Qwen/Qwen3-Embedding-0.6B"


@pytest.mark.parametrize("case", ["deep-yaml", "deep-json", "tab-indented", "python-tag"])
def test_a_hostile_upload_is_an_error_message(case: str) -> None:
    """main: a deeply nested upload raised RecursionError through the drop's callback (a traceback on the page)."""
    from ui.components import deploy_upload

    text, (kind, msg) = deploy_upload.read_upload("dep.yaml", UNREADABLE[case][0].encode())
    assert text is None and kind == "error" and UNREADABLE[case][1] in msg, msg


# -- the twin refusing the user's own bad option ----------------------------------------------------------------------
def test_reproduce_with_a_bad_option_could_not_run_the_twin(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """main: the twin started with `--max-num-seqs banana`, vLLM exited (a minute later), and reproduce printed
    "reproduced: False", exit 0 — as if the deployment were safe. Now nothing starts: "could not run the twin: …",
    exit 2, and the stored run says the same (an error finding, no "not reproduced")."""
    from triage.lab import status
    from triage.store import Store

    before = {s.pid for s in status()}
    db = str(tmp_path / "t.db")
    r = cli(capsys, "reproduce", "--cmdline", "vllm serve Qwen/Qwen3-Embedding-0.6B --runner pooling "
            "--max-num-seqs banana --max-model-len 2048", "--truncate", "2048", "--db", db)
    assert r.rc == 2 and "could not run the twin: --max-num-seqs 'banana'" in r.err, r.err
    assert "reproduced" not in r.out
    # nothing was started by this process (kept under its own token, or not kept); the other lab lane starts and
    # stops its own servers meanwhile (CI 2026-12-06: a set equality failed on another lane's stopped server)
    mine = os.environ.get(KEEP_ENV, "")
    assert {s.pid for s in status() if s.pid not in before and s.kept in ("", mine)} == set()
    rec = Store(db).get_run(Store(db).latest_run_id() or 0)
    assert rec is not None and [(f.check, f.status.value) for f in rec.findings] == [("twin-reproduce", "error")]
    assert rec.findings[0].title.startswith("could not run the twin: ")


def test_a_twin_that_failed_to_start_could_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The other way a twin cannot run: vLLM itself refuses at start (the recorded LabError of a real 0.32.0 start,
    tests/fixtures/real/twin/). Test double on purpose: ``ensure`` raises that recorded error instead of starting
    vLLM again (a real refusal takes a minute of importing vLLM); every other part is the real path."""
    import triage.lab as lab
    from triage.twin.plan import plan_twin
    from triage.twin.reproduce import reproduce

    recorded = (FIX / "real" / "twin" / "0.32.0-max-num-seqs-banana.txt").read_text()

    def refuse(*_a: object, **_k: object) -> None:
        raise lab.LabError(recorded)

    monkeypatch.setattr(lab, "ensure", refuse)
    vals = {"vllm_version": "0.32.0", "model": "Qwen/Qwen3-Embedding-0.6B", "runner": "pooling",
            "max_model_len": 2048, "max_num_batched_tokens": 2048}
    events: list = []
    res = reproduce(plan_twin(vals, 2048, ["0.32.0"]), ["0.32.0"], events.append)
    assert not res.reproduced and res.fixes == []
    assert res.error == "vllm serve: error: argument --max-num-seqs: invalid int value: 'banana'"
    titles = [e.finding.title for e in events if e.finding is not None]
    assert titles == [f"could not run the twin: {res.error}"], titles  # no "not reproduced" verdict


# -- run numbers no database holds ----------------------------------------------------------------------------------
@pytest.mark.parametrize("raw", ["99999999999999999999999", str(2**63), "0", "-5", "9" * 5000],
                         ids=["23-digits", "2**63", "zero", "negative", "5000-digits"])
def test_a_run_number_no_database_holds_is_no_such_run(raw: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """main: `report 99999999999999999999999` was "could not run: OverflowError: Python int too large to convert to
    SQLite INTEGER"."""
    from triage.store import Store

    db = str(tmp_path / "t.db")
    assert Store(db).get_run(int(raw) if len(raw) < 100 else 2**80) is None
    r = cli(capsys, "report", raw, "--db", db)
    assert r.rc == 2 and "Overflow" not in r.err and len(r.err) < 400, r.err
