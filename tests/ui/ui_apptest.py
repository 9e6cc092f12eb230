"""Helpers for the dashboard's AppTest page tests (imported by tests/ui/test_*.py)."""
from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from triage.target import Target
from ui.components import session
from ui_fakes import MODEL, URL

ROOT = Path(__file__).resolve().parents[2]


def page(name: str, timeout: float = 30) -> AppTest:
    """AppTest for ui/pages/<name>_page.py (absolute path: AppTest resolves relative to the caller)."""
    return AppTest.from_file(str(ROOT / "ui" / "pages" / f"{name}_page.py"), default_timeout=timeout)


def with_target(name: str, target: Target | None = None, timeout: float = 30) -> AppTest:
    """page(name) with ``target`` (default: the fakes' server and model, truncate 256) as the session's target;
    not run yet."""
    at = page(name, timeout)
    at.session_state[session.TARGET_KEY] = target or Target(URL, MODEL, 256)
    return at


def no_exception(at: AppTest) -> None:
    """A page never shows a traceback: no exception element, whatever happened."""
    assert not at.exception, [e.value for e in at.exception]


def shown(source: str) -> str:
    """A Markdown source as the characters it renders when only backslash escapes and code spans are in play
    (ui.components.md escapes every outside string): what a reader sees, for assertions on text."""
    return re.sub(r"\\(.)|`+", lambda m: m.group(1) or "", source, flags=re.DOTALL)


def says_empty(name: str, text: str) -> bool:
    """The page, run without a target, shows its empty state (an info box with ``text``) and no traceback."""
    at = page(name).run()
    no_exception(at)
    return any(text in i.value for i in at.info)
