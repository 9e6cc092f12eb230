"""The one redaction point (triage.redact) and the command deadline, unit by unit: pasted command lines lose their
keys, escapes are neutralised, a secret split over writes is caught. (The HTTP client's own tests, which were here,
are tests/http/test_client.py.)"""

from __future__ import annotations

import time

import pytest

from triage import redact
from triage.redact import REDACTED, SafeStream, dumps_json, redact_text


@pytest.mark.parametrize("line", [
    'vllm serve m --api-key "two words"',
    "vllm serve m --api-key='quoted-val'",
    "vllm serve m --api-key=bare-val",
    "vllm serve m \\\n  --api-key \\\n  continued-val",
    "vllm serve m --api-key escaped\\ space",
    "curl -H 'Authorization: Bearer tok-abc-123' http://x",
    "error: invalid token Bearer tok-abc-123",
    'docker run -e VLLM_API_KEY="two words" img',
])
def test_pasted_command_lines_lose_their_keys(line: str) -> None:
    out = redact_text(line)
    for secret in ("two words", "words", "quoted-val", "bare-val", "continued-val", "escaped", "space",
                   "tok-abc-123"):
        assert secret not in out, out


def test_escapes_neutralised_and_json_stays_json() -> None:
    assert "\x1b" not in redact_text("id\x1b[2J\x1b]0;t\x07") and "\x07" not in redact_text("a\x07")
    assert redact_text("keep\ttabs\nand lines") == "keep\ttabs\nand lines"
    assert dumps_json({"a": float("inf"), "b": [float("nan")]}) == '{"a": null, "b": [null]}'


def test_safe_stream_catches_a_secret_split_over_writes() -> None:
    redact.add_secret("split-secret-42")

    class Sink:
        def __init__(self) -> None:
            self.text = ""

        def write(self, s: str) -> None:
            self.text += s

        def flush(self) -> None:
            pass

    sink = Sink()
    s = SafeStream(sink)
    s.write("a split-sec")
    s.write("ret-42 b\n")
    s.flush()
    assert sink.text == f"a {REDACTED} b\n"


@pytest.mark.timeout(10)
def test_the_command_deadline_interrupts_a_blocked_main_thread() -> None:
    from triage.cli import DeadlineExceeded, command_deadline

    t0 = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="within 0.5 s"), command_deadline(0.5, "check"):
        time.sleep(5)
    assert time.monotonic() - t0 < 2


def test_the_no_key_placeholder_survives_redaction_issue_32() -> None:
    """A snippet's api_key="EMPTY" (vLLM's documented no-key placeholder) stays runnable; real keys do not."""
    from triage.redact import redact_text

    line = 'OpenAI(base_url="http://h/v1", api_key="EMPTY")'
    assert redact_text(line) == line
    assert "EMPTYsecret" not in redact_text('api_key="EMPTYsecret"')
    assert "sk-live-1234" not in redact_text('api_key="sk-live-1234"')
