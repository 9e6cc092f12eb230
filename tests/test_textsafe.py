"""triage/textsafe.py: outside strings on one line (text output) and inert in Markdown (the dashboard, exports)."""
from __future__ import annotations

import re

import pytest

from triage.textsafe import md_code, md_text, one_line

FORGED = "10.0.0.7:8000\n[PASS] forged\r\nline\u2028sep\x1b[2J"


def test_one_line_shows_every_line_end_and_escape() -> None:
    out = one_line(FORGED)
    assert len(out.splitlines()) == 1 and "\x1b" not in out
    assert "[PASS] forged" in out  # shown, on the same line
    assert one_line("x" * 50, limit=10) == "x" * 9 + "…"


@pytest.mark.parametrize("s", ["a`b", "``x", "x`", "[a](http://e)", "![i](http://e/p.png)", "<img src=x>", FORGED])
def test_markdown_helpers_keep_outside_strings_inert(s: str) -> None:
    code = md_code(s)
    fence = code[: len(code) - len(code.lstrip("`"))]
    inner = code[len(fence):-len(fence)]
    assert fence not in inner and "\n" not in code  # the string cannot close its own code span
    text = md_text(s)
    assert not re.search(r"(?<!\\)[<>\[\]()`]", text) and "\n" not in text  # every special escaped
