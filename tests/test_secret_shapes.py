"""triage.secret_shapes: the values the shapes find (with their spans) and the shell's word split."""
from __future__ import annotations

from triage.secret_shapes import find_shapes, scan_secrets, shell_split


def test_a_pasted_api_key_is_found_with_its_span():
    text = "vllm serve m --api-key sk-abcdef123456 --port 8000"
    (span, value), = find_shapes(text)
    assert value == "sk-abcdef123456" and text[span[0]:span[1]] == "sk-abcdef123456"
    assert scan_secrets(text) == ["sk-abcdef123456"]


def test_prose_is_not_a_secret():
    assert find_shapes("the key is given on the Target page") == []


def test_shell_split_quotes_and_escapes():
    assert shell_split("vllm serve 'a b' \"c d\" e\\ f") == ["vllm", "serve", "a b", "c d", "e f"]
