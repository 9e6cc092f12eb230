"""docs/FAILURE-MODES.md as a pure function of the catalogue: every record, the symptom index, the survey's rows.

``failure_modes_markdown()`` reads the records (``MODES``), the check registry (``CHECKS``: who reports each
record, from which source), the symptom vocabulary, the recordings that prove each reader
(``triage.catalogue.coverage``) and the survey (``triage.catalogue.survey``), and returns the document's text.
``python -m triage catalogue --markdown`` prints it; a test compares it with the committed file.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from triage.catalogue import coverage, survey
from triage.catalogue.check_ids import CHECKS, CheckDecl
from triage.catalogue.model import FailureMode
from triage.catalogue.records import MODES
from triage.catalogue.symptoms import SYMPTOMS

DOC_PATH = "docs/FAILURE-MODES.md"
REGENERATE = f"python3 -m triage catalogue --markdown > {DOC_PATH}"
NONE_YET = "none declared yet"


def _cell(text: str) -> str:
    """One Markdown table cell: no pipe or line break of the text ends it."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(items: Iterable[str]) -> str:
    return ", ".join(f"`{i}`" for i in items)


def readers_of(mode: FailureMode, checks: Mapping[str, CheckDecl] = CHECKS) -> list[CheckDecl]:
    """The check ids that can report ``mode``: those declared with it, then the differential's finding of each
    symptom it declares (``diagnosis-<symptom>``, which names the record its evidence singles out)."""
    own = [d for d in checks.values() if mode.id in d.modes]
    return own + [checks[f"diagnosis-{s}"] for s in mode.symptoms if f"diagnosis-{s}" in checks]


def _record(m: FailureMode) -> list[str]:
    readers = readers_of(m)
    symptoms = [f"`{s}` ({SYMPTOMS[s]})" if s in SYMPTOMS else f"`{s}` (not in the vocabulary)" for s in m.symptoms]
    releases = m.affected_text + (f"; fixed in {m.fixed_text}" if m.fixed_text else "")
    probe = m.experiment or NONE_YET
    if m.experiment_probe:
        probe += f" (probe set `{m.experiment_probe}`)"
    lines = [f"### `{m.id}`: {_cell(m.title)}", "",
             f"- Symptoms: {', '.join(symptoms) or NONE_YET}",
             f"- Releases: {releases}",
             f"- Refs: {', '.join(m.refs) or 'none'}",
             "- Evidence readers: " + (", ".join(f"`{d.id}` ({', '.join(d.sources)})" for d in readers)
                                       or "no check reports it"),
             f"- Discriminating probe: {_cell(probe)}"]
    recs = coverage.recordings(m.id)
    if not recs:
        lines.append("- Proven by: no recording yet")
    else:
        lines.append("- Proven by:")
        lines += [f"  - `{r.path}` ({r.kind}{': ' + r.note if r.note else ''}; replayed by `{r.test}`)" for r in recs]
    lines.append("")
    return lines


def _symptom_index(modes: Mapping[str, FailureMode]) -> list[str]:
    lines = ["| symptom | what the user sees | records that declare it |", "| --- | --- | --- |"]
    for s, text in SYMPTOMS.items():
        ids = [m.id for m in modes.values() if s in m.symptoms]
        lines.append(f"| `{s}` | {_cell(text)} | {_code(ids) or NONE_YET} |")
    return [*lines, ""]


def _survey(modes: Mapping[str, FailureMode]) -> list[str]:
    n = survey.counts(modes)
    lines = [f"{len(survey.ROWS)} modes: " + ", ".join(f"{v} {k}" for k, v in n.items()) + ". A row is "
             f"\"{survey.NOT_YET}\" while a record it names is not in the catalogue.", "",
             "| # | mode | refs | records | status | what is missing, or why out of scope |",
             "| --- | --- | --- | --- | --- | --- |"]
    for i, row in enumerate(survey.ROWS, 1):
        own = (r for rid in row.records if rid in modes for r in modes[rid].refs) if row.status == "covered" else ()
        refs = tuple(dict.fromkeys((*own, *row.refs)))  # a covered row's records' refs, then the users' reports
        missing = set(survey.missing_records(row, modes))
        recs = ", ".join(f"`{r}`" + (f" ({survey.NOT_YET})" if r in missing else "") for r in row.records)
        status = survey.shown_status(row, modes)
        shown = status if status == row.status else f"{status} (to be {row.status})"
        lines.append(f"| {i} | {_cell(row.name)} | {_cell(', '.join(refs)) or '-'} | {recs or 'none'} | {shown} | "
                     f"{_cell(row.note) or '-'} |")
    return [*lines, ""]


def failure_modes_markdown(modes: Mapping[str, FailureMode] = MODES) -> str:
    """The whole document (ends with one newline)."""
    lines = ["# Failure modes", "",
             f"Generated from the catalogue (`triage/catalogue/`): do not edit. Regenerate: `{REGENERATE}`.", "",
             f"{len(modes)} records. Each lists the symptoms it produces, the releases it hits, its references, the "
             "check ids that report it (with their sources), the probe that tells it from the other causes of its "
             "symptoms, and the recording that proves its reader (`real`: a real server's output as recorded; "
             "`edited`: a real recording the test changes; `source`: rendered from a release's source; `built`: "
             "made in the test).", "",
             "## Symptoms", "", *_symptom_index(modes),
             "## Records", ""]
    for m in modes.values():
        lines += _record(m)
    lines += ["## The survey: failure modes users report", "", *_survey(modes)]
    return "\n".join(lines).rstrip("\n") + "\n"
