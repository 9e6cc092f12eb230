"""Issue 22, secrets: every secret form the first round missed reaches no stored, printed or exported byte.

URL userinfo of any shape (``:PASS@``, ``TOKEN@``) and the Basic-auth header httpx builds from it (the
hostile server echoes it: tests/hardening/hostile.py, a test double on purpose), ``--hf-token`` and
``HF_TOKEN`` in a command line and a start-up log (the real 0.32.0 log with ``hf_token`` added to its
non-default args line, as vLLM prints a given token), every ``--api-key`` spelling vLLM's parser
accepts, and database URL passwords (``?password=``, an un-encoded ``@``). Each CLI call runs in a child
process (nothing registered by an earlier call can help it) and is bounded.
"""

from __future__ import annotations

import base64
import sys
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import REAL, Behaviour, HostileServer, assert_clean, db_bytes, triage  # noqa: E402

PASS = "pw-round2-5e81c0aa"
TOKEN = "tok-round2-0d9b7a61"
HF = "hf_Round2TokenAbCdEfGh1234"
KEYS = {  # one spelling each, every one accepted by vLLM's FlexibleArgumentParser (shell-level quoting)
    "underscore": ("--api_key kq-under-41f0", "kq-under-41f0"),
    "equals": ("--api-key=kq-equal-93aa", "kq-equal-93aa"),
    "dollar-quote": ("--api-key $'kq-dollar-7c2e'", "kq-dollar-7c2e"),
    "quote-then-bare": ('--api-key "a"kq-glued-55d1', "kq-glued-55d1"),
    "single-then-double": ("--api-key 'a'\"kq-mixed-0b3c\"", "kq-mixed-0b3c"),
}


def _exports(db: Path, tmp: Path) -> list[bytes]:
    parts: list[bytes] = []
    for fmt in ("md", "html", "json", "bundle"):
        out = tmp / f"latest.{fmt}"
        r = triage("report", "latest", "--format", fmt, "-o", str(out), "--db", str(db), timeout=60)
        assert r.rc == 0, r.err
        data = out.read_bytes()
        if fmt == "bundle":
            with zipfile.ZipFile(BytesIO(data)) as zf:
                parts += [zf.read(n) for n in zf.namelist()]
        else:
            parts.append(data)
    return parts


def _nowhere(secret: str, db: Path, tmp: Path, *printed: str) -> None:
    for text in printed:
        assert secret not in text, f"{secret!r} printed"
    assert secret.encode() not in db_bytes(db), f"{secret!r} stored"
    for p in _exports(db, tmp):
        assert secret.encode() not in p, f"{secret!r} exported"


@pytest.mark.timeout(180)
@pytest.mark.parametrize("userinfo,secret", [(f":{PASS}", PASS), (TOKEN, TOKEN), (f"triage:{PASS}", PASS)],
                         ids=["empty-user", "token-only", "user-and-password"])
def test_url_userinfo_of_any_shape_and_its_basic_auth_echo(userinfo: str, secret: str, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    user, _, pw = userinfo.partition(":")
    basic = base64.b64encode(f"{user}:{pw}".encode()).decode()
    with HostileServer(Behaviour(echo_key=True)) as s:  # echoes the Authorization value: here Basic base64
        url = s.url.replace("http://", f"http://{userinfo}@")
        r = triage("check", "--url", url, "--db", str(db), "--timeout", "5", timeout=60)
        assert_clean(r, secret, basic)
        assert r.elapsed_s < 3 * 5 + 15 + 5
        for s_ in (secret, basic):
            _nowhere(s_, db, tmp_path, r.out, r.err)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", list(KEYS))
def test_every_api_key_spelling_vllm_accepts(case: str, tmp_path: Path) -> None:
    flag, key = KEYS[case]
    db = tmp_path / "t.db"
    cmd = f"vllm serve /models/tiny-qwen3 --runner pooling {flag} --max-model-len 256"
    r = triage("check", "--cmdline", cmd, "--db", str(db), "--format", "json", timeout=60)
    assert_clean(r, key)
    _nowhere(key, db, tmp_path, r.out, r.err)


@pytest.mark.timeout(120)
def test_hf_token_in_command_line_environment_and_startup_log(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    head = "non-default args: {"
    log = (REAL / "server.log").read_text().replace(head, f"{head}'hf_token': '{HF}', ", 1)
    assert HF in log
    (tmp_path / "server.log").write_text(log)
    cmd = f"HF_TOKEN={HF} vllm serve /models/tiny-qwen3 --runner pooling --hf-token {HF} --max-model-len 256"
    r = triage("check", "--cmdline", cmd, "--log-file", str(tmp_path / "server.log"), "--db", str(db), timeout=60)
    assert_clean(r, HF)
    r2 = triage("logs", str(tmp_path / "server.log"), "--db", str(db), timeout=60)
    assert_clean(r2, HF)
    _nowhere(HF, db, tmp_path, r.out, r.err, r2.out, r2.err)


@pytest.mark.timeout(120)
def test_database_url_passwords_never_printed(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    url = f"sqlite:///{db}?password={PASS}"
    r = triage("check", "--cmdline", "vllm serve m --runner pooling", timeout=60, env={"VLLM_TRIAGE_DB": url})
    assert_clean(r, PASS)
    (tmp_path / "run.json").write_bytes(
        triage("report", "latest", "--format", "json", timeout=60, env={"VLLM_TRIAGE_DB": url}).out.encode())
    r = triage("import", str(tmp_path / "run.json"), timeout=60, env={"VLLM_TRIAGE_DB": url})
    assert_clean(r, PASS)
    # an un-encoded "@" in the password: the part after it must not reach the error line as a host name
    bad = "postgresql://triage:pw-left@pw-right-3f9c@127.0.0.1:1/triage"
    for args in (("check", "--cmdline", "vllm serve m"), ("import", str(tmp_path / "run.json"))):
        r = triage(*args, timeout=60, env={"VLLM_TRIAGE_DB": bad})
        assert_clean(r, "pw-left", "pw-right-3f9c")
        assert r.rc == 2 and r.err.strip().count("\n") == 0, r.err
