"""Issue 43 on the dashboard: a `?run=` number no database holds, and a deeply nested file in the command-line field
of the Target page. Real services on a temp database (AppTest): what the page shows is what a user sees."""
from __future__ import annotations

import pytest

from ui.services import Services
from ui_apptest import no_exception, page

DEEP = "kind: Deployment\nspec: " + "[" * 5000 + "]" * 5000 + "\n"


@pytest.mark.parametrize("raw", ["99999999999999999999999", str(2**63), "0", "-3", "9" * 5000],
                         ids=["23-digits", "2**63", "zero", "negative", "5000-digits"])
def test_a_huge_run_number_is_no_such_run(raw: str, use_services, temp_db) -> None:  # type: ignore[no-untyped-def]
    """main: ?run=99999999999999999999999 showed "Opening the run: OverflowError: Python int too large to convert to
    SQLite INTEGER" on the page."""
    use_services(Services(temp_db))
    for name in ("history", "report"):
        at = page(name)
        at.query_params["run"] = raw
        at.run()
        no_exception(at)
        texts = [m.value for m in (*at.warning, *at.error, *at.info)]
        assert not any("Overflow" in t for t in texts), texts
        if name == "history":
            assert any("no such run" in t or "not a run number" in t for t in at_warnings(at)), texts


def at_warnings(at) -> list[str]:  # type: ignore[no-untyped-def]
    return [w.value.replace("\\", "") for w in at.warning]


def test_a_deep_file_in_the_command_line_field(use_services, temp_db) -> None:  # type: ignore[no-untyped-def]
    """main: a deeply nested file reached the reader as a RecursionError traceback."""
    use_services(Services(temp_db))
    at = page("target").run()
    at.text_area(key="target.cmdline").set_value(DEEP)
    at.button(key="target.use").click().run()
    no_exception(at)
