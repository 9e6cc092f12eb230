"""Issue 43, secrets: a Kubernetes Secret beside the Deployment, a key on the line after ``--api-key`` in ``kubectl
describe``'s Args, environment names judged by their parts, a credential sent to an imported document's URL, and two
offline runs sharing one target. After each attack the database, every export of every run and the bundle are
searched (tests/hardening/nowhere.py) and hold no secret.

The manifests are the recorded fixtures (tests/fixtures/deploy, tests/fixtures/kube: READMEs there) with the secret
added in the documented formats (Kubernetes' Secret: ``stringData``, base64 ``data``; ``kubectl describe pod``'s
Args, one argument a line).
"""
from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import KEY, HostileServer, assert_clean, cli  # noqa: E402
from nowhere import assert_nowhere  # noqa: E402

from tests.redaction import forget_secrets  # noqa: E402
from triage.redact import drop_secret_documents, redact_obj, redact_text, secret_env_name  # noqa: E402

FIX = Path(__file__).resolve().parents[1] / "fixtures"
DEPLOY = FIX / "deploy"
TOKEN = "hf_Round4SecretTokenAbCdEf12"  # stringData
B64_PLAIN = "db-password-round4-5a7c"  # base64 in data
B64 = base64.b64encode(B64_PLAIN.encode()).decode()
LOWER = "lowercase-token-round4-9e1f"  # a lowercase `token:` key
SECRET_DOC = f"""apiVersion: v1
kind: Secret
metadata:
  name: hf-token
type: Opaque
stringData:
  HF_TOKEN: {TOKEN}
  token: {LOWER}
data:
  password: {B64}
"""
ALL = [TOKEN, B64, B64_PLAIN, LOWER]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    forget_secrets()
    yield
    forget_secrets()


def _seed() -> str:
    return (DEPLOY / "seed-deployment.yaml").read_text()


@pytest.mark.timeout(240)
@pytest.mark.parametrize("where", ["after", "json-list", "tab-indented"])
def test_a_secret_beside_the_deployment_is_never_stored(where: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """main: the Secret was stored whole as the target's command line and copied raw into the bundle."""
    if where == "after":
        text = _seed() + "---\n" + SECRET_DOC
    elif where == "before":
        text = SECRET_DOC + "---\n" + _seed()
    elif where == "json-list":  # kubectl get -o json of a namespace: a List holding the Secret
        items = [yaml.safe_load(SECRET_DOC), *[d for d in yaml.safe_load_all(_seed()) if d]]
        text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2)
    else:  # a Secret that cannot be read as YAML is dropped whole
        text = _seed() + "---\n" + SECRET_DOC.replace("  token:", "\ttoken:")
    f = tmp_path / "all.yaml"
    f.write_text(text)
    db = tmp_path / "t.db"
    r = cli(capsys, "check", "--cmdline-file", str(f), "--truncate", "2048", "--db", str(db), "--format", "json")
    assert_clean(r, *ALL)
    assert "dropped" in r.err and ("hf-token" in r.err or "could not be read" in r.err), r.err
    doc = json.loads(r.out)
    assert doc["config"]["model"]["value"] == "Qwen/Qwen3-Embedding-0.6B"  # the Deployment is still judged
    r2 = cli(capsys, "report", "latest", "--format", "md", "--db", str(db))
    assert_nowhere(ALL, db, tmp_path, r.out, r.err, r2.out)


def test_the_drop_keeps_the_line_numbers_the_facts_cite() -> None:
    text = SECRET_DOC + "---\n" + _seed()
    kept, gone = drop_secret_documents(text)
    assert gone == ['Secret "hf-token"'] and kept.count("\n") == text.count("\n")
    assert kept.splitlines()[SECRET_DOC.count("\n") + 1:] == _seed().splitlines()
    assert drop_secret_documents(_seed()) == (_seed(), [])  # nothing else is touched


def test_an_upload_with_a_secret_says_it_was_dropped() -> None:
    from ui.components import deploy_upload

    text, (kind, msg) = deploy_upload.read_upload("all.yaml", (_seed() + "---\n" + SECRET_DOC).encode())
    assert kind == "success" and 'Dropped Secret "hf-token"' in msg
    assert text is not None and not any(s in text for s in ALL)


@pytest.mark.timeout(240)
def test_an_imported_document_with_a_secret_in_its_command_line(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from triage import SCHEMA

    doc = {"schema": SCHEMA, "document": "run", "run_format": 1,
           "run": {"kind": "check", "status": "pass", "started_at": "2026-12-04T10:00:00+00:00", "config": {},
                   "meta": {}},
           "target": {"url": "offline", "cmdline": _seed() + "---\n" + SECRET_DOC},
           "findings": [], "probes": [], "samples": [],
           "captures": [{"kind": "cmdline", "name": "command line", "content": SECRET_DOC}]}
    f = tmp_path / "doc.json"
    f.write_text(json.dumps(doc))
    db = tmp_path / "t.db"
    r = cli(capsys, "import", str(f), "--db", str(db))
    assert r.rc == 0, r.err
    assert_nowhere(ALL, db, tmp_path, r.out, r.err)


# -- kubectl describe: the key on the line after --api-key -----------------------------------------------------------
@pytest.mark.timeout(240)
@pytest.mark.parametrize("keys", [["tk-describe-round4-77aa"], ["tk-describe-round4-77aa", "tk-second-round4-88bb"]],
                         ids=["one-key", "two-keys"])
def test_describe_args_with_the_key_on_the_next_line(keys: list[str], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """main: `Args:` listing `--api-key` then the key on a line of its own (describe's layout): the key reached
    the database's capture table."""
    text = (FIX / "kube" / "describe-crashloop.txt").read_text()
    lines = "".join(f"      {k}\n" for k in keys)
    text = text.replace("      --task\n      embed\n", f"      --task\n      embed\n      --api-key\n{lines}", 1)
    assert keys[0] in text
    f = tmp_path / "describe.txt"
    f.write_text(text)
    db = tmp_path / "t.db"
    r = cli(capsys, "check", "--kube-file", str(f), "--db", str(db), "--format", "json")
    assert_clean(r, *keys)
    assert_nowhere(keys, db, tmp_path, r.out, r.err)


def test_describe_layout_keeps_what_is_no_key() -> None:
    for text in ("    Args:\n      --api-key\n    State:          Waiting\n",  # no value: the next field stays
                 "--api-key\nand the rest of a sentence\n", "--api-key\n\nQwen/Qwen3\n", "--api-key\n--port\n8000\n"):
        assert redact_text(text) == text, text
    assert redact_text("      --api-key\r\n      tk-crlf-round4-1\r\n") == "      --api-key\r\n      [REDACTED]\r\n"


# -- environment names judged by their parts ------------------------------------------------------------------------
SECRET_NAMES = ["HF_AUTH", "HF_AUTH_TOKEN", "MY_API_KEY", "MY_CREDENTIALS", "DB_CREDENTIAL", "HFTOKEN", "DBPASSWORD",
                "AWS_SECRET_ACCESS_KEY", "S3_ACCESS_KEY_ID", "HF_TOKEN_VALUE", "HF_AUTH_TOKEN_V2",
                "VLLM_AUTH_HEADER", "REDIS_PASS", "OAUTH", "hf_auth", "my-api-key", "OPENAI_APIKEY"]
NOT_SECRET_NAMES = ["KEY_CACHE_DTYPE", "VLLM_KEY_CACHE", "TOKENIZERS_PARALLELISM", "VLLM_MAX_TOKENS_PER_EXPERT_FP4_MOE",
                    "VLLM_MULTI_STREAM_GEMM_TOKEN_THRESHOLD", "DB_PASSWORD_FILE", "SSL_KEY_FILE", "VLLM_SSL_KEYFILE",
                    "MONKEY", "PATH", "VLLM_LOG_STATS_INTERVAL", "VLLM_USE_V2_MODEL_RUNNER", "AUTHOR", "KEYBOARD"]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_name_with_a_secret_part_is_a_secret(name: str) -> None:
    """main: only exact names (…_KEY, …_TOKEN endings) were redacted: HF_AUTH=… was kept."""
    assert secret_env_name(name)
    value = "v4lue-round4-" + name.lower()
    if name.isupper():  # environment variables, as a shell, a compose list and a log write them
        for text in (f"{name}={value}", f"export {name}={value}", f"- {name}={value}", f"{name}: {value}"):
            forget_secrets()
            assert value not in redact_text(text), text
        assert redact_obj({name: value}) == {name: "[REDACTED]"}
    forget_secrets()
    assert value not in redact_text(f"env:\n  - name: {name}\n    value: {value}\n")


@pytest.mark.parametrize("name", NOT_SECRET_NAMES)
def test_a_name_that_only_mentions_a_part_is_no_secret(name: str) -> None:
    """A key cache's dtype, a token count, the file a password is in: settings, kept readable."""
    assert not secret_env_name(name)
    assert redact_text(f"{name}=fp8-value") == f"{name}=fp8-value"
    assert redact_obj({name: "fp8-value"}) == {name: "fp8-value"}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("shape", ["manifest", "compose"])
def test_secret_environment_in_a_deployment_is_never_stored(shape: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    auth, api, cache = "hfauth-round4-3c3c3c", "myapikey-round4-4d4d4d", "fp8_e4m3"
    if shape == "manifest":
        docs = list(yaml.safe_load_all(_seed()))
        docs[1]["spec"]["template"]["spec"]["containers"][1]["env"] += [
            {"name": "HF_AUTH", "value": auth}, {"name": "MY_API_KEY", "value": api},
            {"name": "KEY_CACHE_DTYPE", "value": cache}]
        text = yaml.safe_dump_all(docs, sort_keys=False)
    else:
        doc = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
        doc["services"]["embeddings"]["environment"].update(HF_AUTH=auth, MY_API_KEY=api, KEY_CACHE_DTYPE=cache)
        text = yaml.safe_dump(doc, sort_keys=False)
    f = tmp_path / "dep.yaml"
    f.write_text(text)
    db = tmp_path / "t.db"
    r = cli(capsys, "check", "--cmdline-file", str(f), "--db", str(db), "--format", "json")
    assert_clean(r, auth, api)
    env = json.loads(r.out)["config"]["docker_env"]["value"]  # as the facts keep it: the setting readable
    assert env["KEY_CACHE_DTYPE"] == cache and env["HF_AUTH"] == env["MY_API_KEY"] == "[REDACTED]"
    assert_nowhere([auth, api], db, tmp_path, r.out, r.err)


# -- verify: a credential goes only where the user says -------------------------------------------------------------
def _hostile_doc(url: str) -> dict:
    from triage import SCHEMA

    return {"schema": SCHEMA, "document": "run", "run_format": 1,
            "run": {"kind": "check", "status": "fail", "started_at": "2026-12-04T10:00:00+00:00", "config": {},
                    "meta": {"imported": False}},
            "target": {"url": url, "model": "tiny-qwen3"},
            "findings": [{"check": "server-reachable", "status": "fail", "title": "t", "evidence": {}}],
            "probes": [], "samples": [], "captures": []}


@pytest.mark.timeout(240)
def test_verify_of_an_imported_run_sends_no_key_to_its_url(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """main: `import` of a hostile document, then `verify --run N --api-key-env K`: the key went to the document's URL
    (7 requests). Now the URL must come from the user: refused, nothing sent; with `--url` the user names the server."""
    monkeypatch.setenv("HOSTILE_KEY", KEY)
    db = tmp_path / "t.db"
    with HostileServer() as s:
        f = tmp_path / "doc.json"
        f.write_text(json.dumps(_hostile_doc(s.url)))  # meta "imported": False, the file's say: overruled
        assert cli(capsys, "import", str(f), "--db", str(db)).rc == 0
        r = cli(capsys, "verify", "--run", "1", "--api-key-env", "HOSTILE_KEY", "--db", str(db))
        assert_clean(r, KEY)
        assert r.rc == 2 and f"--url {s.url}" in r.err, r.err
        assert s.b.seen == []  # not one request
    assert_nowhere([KEY], db, tmp_path, r.out, r.err)


@pytest.mark.timeout(240)
def test_verify_with_a_key_needs_the_url_even_for_a_run_made_here(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTILE_KEY", KEY)
    db = tmp_path / "t.db"
    with HostileServer() as s:
        assert cli(capsys, "check", "--url", s.url, "--db", str(db), "--timeout", "5", "--no-embed").rc in (0, 1)
        seen = len(s.b.seen)
        r = cli(capsys, "verify", "--run", "1", "--api-key-env", "HOSTILE_KEY", "--db", str(db))
        assert r.rc == 2 and "pass --url" in r.err and len(s.b.seen) == seen, r.err
        r = cli(capsys, "verify", "--run", "1", "--url", s.url, "--api-key-env", "HOSTILE_KEY", "--db", str(db),
                within_s=120)  # named by the user: verified against it
        assert_clean(r, KEY)
        assert len(s.b.seen) > seen
    assert_nowhere([KEY], db, tmp_path, r.out, r.err)


# -- offline runs: one target each ----------------------------------------------------------------------------------
@pytest.mark.timeout(240)
def test_two_offline_checks_do_not_share_a_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """main: two offline `check`s with the same --truncate shared the "offline" target row: run 2's file replaced
    nothing, run 1's report, fix and patch showed run 1's file for run 2 (and the other way round)."""
    from triage import fixblocks
    from triage.store import Store

    db = str(tmp_path / "t.db")
    one = tmp_path / "one.yaml"
    one.write_text(_seed())
    docs = list(yaml.safe_load_all(_seed()))
    c = docs[1]["spec"]["template"]["spec"]["containers"][1]
    c["name"], c["args"][0] = "other", "BAAI/bge-m3"
    two = tmp_path / "two.yaml"
    two.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    for f in (one, two):
        assert cli(capsys, "check", "--cmdline-file", str(f), "--truncate", "2048", "--db", db).rc in (0, 1)
    store = Store(db)
    runs = {r.id: t for r, t in store.list_runs()}
    assert len(runs) == 2 and runs[1].id != runs[2].id, runs
    for run_id, f, name in ((1, one, "container vllm"), (2, two, "container other")):
        rep = json.loads(cli(capsys, "report", str(run_id), "--format", "json", "--db", db).out)
        assert rep["target"]["cmdline"] == f.read_text()
        patch = [b for b in fixblocks.document_blocks(rep) if b.kind == "patch"]
        assert patch and all(name in b.title for b in patch), patch
    # the same file again: the same target (nothing differs)
    assert cli(capsys, "check", "--cmdline-file", str(one), "--truncate", "2048", "--db", db).rc in (0, 1)
    assert {t.id for _r, t in store.list_runs()} == {runs[1].id, runs[2].id}


def test_a_target_row_is_keyed_by_everything_it_holds(tmp_path: Path) -> None:
    from triage.store import Store

    s = Store(str(tmp_path / "t.db"))
    a = s.find_or_add_target("offline", None, 2048, "vllm serve a")
    assert s.find_or_add_target("offline", None, 2048, "vllm serve b").id != a.id
    assert s.find_or_add_target("offline", None, 2048, "vllm serve a", "a label").id != a.id
    assert s.find_or_add_target("offline", None, 2048, "vllm serve a").id == a.id
    assert s.find_or_add_target("http://h:8000", None, 2048, "vllm serve a").id != a.id
