"""docs/FAILURE-MODES.md is what ``python -m triage catalogue --markdown`` prints (regenerate it when this fails)."""
from __future__ import annotations

from pathlib import Path

from triage.catalogue import MODES
from triage.catalogue import survey
from triage.catalogue.document import DOC_PATH, REGENERATE, failure_modes_markdown, readers_of
from triage.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_committed_document_is_generated() -> None:
    assert (ROOT / DOC_PATH).read_text(encoding="utf-8") == failure_modes_markdown(), \
        f"{DOC_PATH} is stale: regenerate it with `{REGENERATE}` and commit it"


def test_every_record_and_survey_row_is_in_it() -> None:
    text = failure_modes_markdown()
    for m in MODES.values():
        assert f"### `{m.id}`:" in text
        for d in readers_of(m):
            assert f"`{d.id}` (" in text
    for r in survey.ROWS:
        assert " ".join(r.name.split()).replace("|", "\\|") in text


def test_a_record_not_landed_shows_not_yet() -> None:
    text = failure_modes_markdown({k: v for k, v in MODES.items() if k != "stuck-waiting"})
    assert f"`stuck-waiting` ({survey.NOT_YET})" in text


def test_cli_check(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    good, bad = tmp_path / "good.md", tmp_path / "bad.md"
    good.write_text(failure_modes_markdown(), encoding="utf-8")
    bad.write_text("# Failure modes\n", encoding="utf-8")
    assert main(["catalogue", "--check", str(good)]) == 0
    assert main(["catalogue", "--check", str(bad)]) == 1
    assert REGENERATE in capsys.readouterr().err
    assert main(["catalogue", "--check", str(tmp_path / "absent.md")]) == 2
