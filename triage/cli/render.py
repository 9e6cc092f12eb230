"""The one text renderer of findings: every command (check, probe, logs, fleet) prints a finding through it.

One rule for every face of the CLI: the status label, the check id and the title on one line; the command's own
evidence lines under it; then the fix and the refs whenever the finding is not a pass (an unknown's fix says what
to give, an error's how to retry); a fix already printed in the same listing reads "as above". Every outside string
is put on one line (``triage.textsafe.one_line``): a newline in a model id or a label never starts a line of its own.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Optional

from triage.findings import Finding, Status
from triage.textsafe import one_line

LABEL = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "unknown": "????", "error": "ERR!"}
INDENT = " " * len("[PASS] ")  # detail lines sit under the title


def label(status: Status | str) -> str:
    """The four-character status label: PASS, WARN, FAIL, ???? (unknown), ERR! (could not run)."""
    value = Status(status).value
    return LABEL.get(value, value)


def tells_fix(status: Status | str) -> bool:
    """Whether a finding's fix and refs are printed: for everything but a pass."""
    return Status(status) != Status.PASS


def finding_lines(f: Finding, details: Iterable[str] = (), after: Iterable[str] = (), *,
                  shown: Optional[set[str]] = None, suffix: str = "") -> list[str]:
    """A finding as text lines. ``details``: the command's evidence lines (indented here); ``after``: lines printed
    as given after the fix (copyable blocks); ``shown``: the fixes already printed in this listing (updated);
    ``suffix``: words after the check id (", after the experiment")."""
    lines = [one_line(f"[{label(f.status)}] {f.check}{suffix}: {f.title}")]
    lines += [INDENT + one_line(d) for d in details]
    if tells_fix(f.status) and f.fix:
        if shown is not None and f.fix in shown:
            lines.append(f"{INDENT}fix: as above")
        else:
            lines.append(INDENT + one_line(f"fix: {f.fix}"))
        if shown is not None:
            shown.add(f.fix)
    if tells_fix(f.status) and f.refs:
        lines.append(INDENT + one_line(f"refs: {', '.join(map(str, f.refs))}"))
    lines += list(after)
    return lines


def print_finding(f: Finding, details: Iterable[str] = (), after: Iterable[str] = (), *,
                  shown: Optional[set[str]] = None, suffix: str = "") -> None:
    """Print ``finding_lines`` (stdout, which the CLI wraps in ``triage.redact.SafeStream``)."""
    print("\n".join(finding_lines(f, details, after, shown=shown, suffix=suffix)))
