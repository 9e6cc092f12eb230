"""Helpers for the dashboard's AppTest page tests (imported by tests/ui/test_*.py)."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def page(name: str, timeout: float = 30) -> AppTest:
    """AppTest for ui/pages/<name>_page.py (absolute path: AppTest resolves relative to the caller)."""
    return AppTest.from_file(str(ROOT / "ui" / "pages" / f"{name}_page.py"), default_timeout=timeout)


def no_exception(at: AppTest) -> None:
    """A page never shows a traceback: no exception element, whatever happened."""
    assert not at.exception, [e.value for e in at.exception]
