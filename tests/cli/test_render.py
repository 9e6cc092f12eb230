"""triage.cli.render: every CLI command prints a finding the same way (one rule for when the fix shows)."""
from __future__ import annotations

import pytest

from triage.cli.render import INDENT, finding_lines, label
from triage.findings import Finding, Status


@pytest.mark.parametrize("status", list(Status), ids=[s.value for s in Status])
def test_the_fix_and_refs_show_for_everything_but_a_pass(status: Status) -> None:
    shown = status != Status.PASS  # an unknown's fix says what to give, an error's how to retry
    lines = finding_lines(Finding("c", status, "t", fix="do it", refs=["vllm#1"]))
    assert lines[0] == f"[{label(status)}] c: t"
    assert (f"{INDENT}fix: do it" in lines) is shown
    assert (f"{INDENT}refs: vllm#1" in lines) is shown


def test_details_sit_under_the_title_and_blocks_after_the_fix() -> None:
    f = Finding("c", Status.FAIL, "t", fix="f")
    lines = finding_lines(f, ["window: a → b"], ["  yaml: x"], suffix=" (after x)")
    assert lines == ["[FAIL] c (after x): t", f"{INDENT}window: a → b", f"{INDENT}fix: f", "  yaml: x"]


def test_a_repeated_fix_reads_as_above() -> None:
    shown: set[str] = set()
    finding_lines(Finding("a", Status.FAIL, "t", fix="same"), shown=shown)
    assert f"{INDENT}fix: as above" in finding_lines(Finding("b", Status.WARN, "t", fix="same"), shown=shown)


def test_an_outside_newline_never_starts_a_line() -> None:
    lines = finding_lines(Finding("c", Status.FAIL, "model x\n[PASS] forged", fix="a\nb"), ["line 3: x\ny"])
    assert len(lines) == 3 and all("\n" not in ln for ln in lines)
    assert not any(ln.startswith("[PASS]") for ln in lines)


def test_labels() -> None:
    assert [label(s) for s in Status] == ["PASS", "WARN", "FAIL", "????", "ERR!"]
