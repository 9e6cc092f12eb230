"""Issue 33, secrets: every secret shape the attack of 2026-12-01 got through, and no redaction that can freeze.

Unit tests of the one redaction point (triage.redact). The inputs are hand-written in the documented
formats of vLLM's argparse (``--api-key`` is ``nargs='+'``), its start-up log lines (``non-default args:``
dict repr, ``Namespace(...)`` repr), Kubernetes/Compose manifests, HTTP headers, URLs and curl.
"""
from __future__ import annotations

import time

import pytest

from tests.redaction import forget_secrets
from triage import redact
from triage.redact import REDACTED, redact_text

SHAPES = {  # text -> the secrets it holds
    "multi-value --api-key": ("vllm serve m --api-key k1-aaaa k2-bbbb --port 8000", ["k1-aaaa", "k2-bbbb"]),
    "start-up log dict": ("non-default args: {'api_key': ['k1-xxxx', 'k2-yyyy'], 'port': 1}", ["k1-xxxx", "k2-yyyy"]),
    "Namespace repr": ("Namespace(api_key=['k1-nnnn', 'k2-mmmm'], port=8000)", ["k1-nnnn", "k2-mmmm"]),
    "k8s flow args": ('args: ["--api-key","K8s-flow-1","K8s-flow-2"]', ["K8s-flow-1", "K8s-flow-2"]),
    "k8s block args": ("args:\n  - --api-key\n  - K8s-block-1\n  - --port\n  - \"8000\"", ["K8s-block-1"]),
    "k8s env": ("env:\n  - name: VLLM_API_KEY\n    value: K8s-env-1\n  - name: HF_TOKEN\n    value: \"hf-env-2\"",
                ["K8s-env-1", "hf-env-2"]),
    "env json": ('[{"name": "VLLM_API_KEY", "value": "json-env-1"}]', ["json-env-1"]),
    "headers": ("curl -H 'x-api-key: xak-1111' -H 'api-key: ak-22222' http://h", ["xak-1111", "ak-22222"]),
    "query names": ("http://h/v1?key=qk-11111&api-key=qk-22222&x-api-key=qk-33333&model=m",
                    ["qk-11111", "qk-22222", "qk-33333"]),
    "curl -u": ("curl -u user:pw-curl-1 http://h && curl -uuser:pw-curl-2 http://h", ["pw-curl-1", "pw-curl-2"]),
    "hf-overrides json": ('--hf-overrides \'{"token": "tk-11111", "auth": "au-22222", "apiKey": "ak-33333", '
                          '"x-api-key": "xk-44444"}\'', ["tk-11111", "au-22222", "ak-33333", "xk-44444"]),
    "authorization": ("Authorization: Bearer tok-abc-123, \"Authorization\": \"Basic YWJjOmRlZg==\"",
                      ["tok-abc-123", "YWJjOmRlZg=="]),
}


@pytest.fixture(autouse=True)
def _fresh() -> None:
    forget_secrets()
    yield
    forget_secrets()


@pytest.mark.parametrize("case", list(SHAPES))
def test_every_shape_redacted_and_registered(case: str) -> None:
    text, secrets = SHAPES[case]
    out = redact_text(text)
    for s in secrets:
        assert s not in out, out
        # registered for the rest of the run: the bare value elsewhere is caught too
        assert s not in redact.redact_exact(f"later: {s}"), s
    assert REDACTED in out


def test_what_is_no_secret_stays() -> None:
    for text in ('OpenAI(api_key="EMPTY")', "kv_bytes_per_token=147456", "postgresql://triage@h/db",
                 '{"bos_token": "<s>", "api_key_required": true}'):
        assert redact_text(text) == text
    # our own detail line is a sentence, not a command line
    assert redact_text("--api-key on the command line") == "--api-key on the command line"


ADVERSARIAL = {  # one hostile 100 KB input per reader
    "continuations after --api-key": "--api-key" + " \\\n" * 33_000,
    "authorization + spaces": "authorization:" + " " * 100_000,
    "bearer + spaces": "Bearer" + " " * 100_000 + "x",
    "repeated option": "--api-key " * 10_000,
    "unclosed quotes": "api_key='" * 11_000,
    "list without end": "api_key=[" + "'a'," * 25_000,
    "url userinfo": "://" + "a:" * 50_000,
    "many urls": "http://a:b" * 10_000,
    "query names": "?token=" * 14_000,
    "env names": "- name: HF_TOKEN\n" * 6_000,
    "curl -u": " -u " * 25_000,
    "one long identifier": "key" * 33_000,
    "hf_ and sk-": "hf_sk-" * 16_000,
    "escaped quotes": '"api_key": "' + "\\\"" * 50_000,
    "shell word": "--api-key " + "'a'\"b\"$'c'\\ " * 8_000,
}


@pytest.mark.parametrize("case", list(ADVERSARIAL))
def test_each_reader_is_linear_on_100_kb(case: str) -> None:
    text = ADVERSARIAL[case][:100_000]
    redact_text(text[:1000])  # warm
    best = min(_timed(text) for _ in range(3))
    assert best < 0.05, f"{case}: {best * 1000:.0f} ms"


def _timed(text: str) -> float:
    """CPU seconds of this process (not wall time): a loaded box delays the test, it does not add CPU to it; a
    quadratic reader still takes seconds of CPU on 100 KB."""
    t0 = time.process_time()
    redact_text(text)
    return time.process_time() - t0


def test_the_command_line_source_registers_every_key_it_parsed() -> None:
    from triage.sources import cmdline

    cmdline.collect("vllm serve m --runner pooling --api-key parsed-key-1 parsed-key-2")
    for k in ("parsed-key-1", "parsed-key-2"):
        assert k not in redact.redact_exact(f"echoed by the server: {k}")


def test_the_command_line_splitter_is_linear_on_a_long_quoted_token() -> None:
    from triage.redact import shell_split

    assert shell_split("vllm serve m --x 'a b' c\\ d \"a\"K") == ["vllm", "serve", "m", "--x", "a b", "c d", "aK"]
    text = "vllm serve m --hf-overrides '" + "a" * 700_000 + "'"
    t0 = time.process_time()  # CPU, not wall time: the bound holds on a loaded box
    words = shell_split(text)
    assert len(words[-1]) == 700_000 and time.process_time() - t0 < 1.0  # shlex: 15 s


def test_a_json_field_named_key_is_a_name_not_a_secret() -> None:
    """Our own documents (a question's {"key": "max_model_len"}) were redacted, and the config name registered as a
    secret for the rest of the run; "token"/"apiKey" fields and ?key= queries stay secrets."""
    from triage import redact as r

    forget_secrets()
    out = r.redact_text('{"key": "max_model_len", "token": "abcdefgh123", "apiKey": "zzzzzz123"} ?key=secretvalue1')
    assert '"key": "max_model_len"' in out
    assert "abcdefgh123" not in out and "zzzzzz123" not in out and "secretvalue1" not in out
    assert "max_model_len" in r.redact_text("max_model_len")  # not registered
    forget_secrets()
