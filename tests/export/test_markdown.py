"""Markdown: ticket-ready sections, and server/user strings that cannot turn into markup."""
from __future__ import annotations

import re

import export_runs
import pytest

from triage.export import render
from triage.export.markdown import code, text
from triage.store import RunRecord


def test_markdown_has_verdict_findings_config_probes_versions(record: RunRecord) -> None:
    md = render(record, "md").decode()
    assert md.startswith(f"# vLLM embedding triage: run {record.run.id}\n")
    assert "**Verdict: FAIL** (2 fail, 1 warn, 1 pass)" in md
    for heading in ("## Findings", "## Effective config", "## Probes", "## Engine stats", "## Raw captures",
                    "## Versions"):
        assert f"\n{heading}\n" in md
    for f in record.findings:  # every finding, with status, evidence and fix
        assert f"### {f.status.value.upper()}: " in md and f"(`{f.check}`)" in md
    assert "**Fix:** Upgrade to vLLM >= 0.32.0" not in md  # '>' is escaped ...
    assert "**Fix:** Upgrade to vLLM \\>= 0.32.0, or truncate to max_model_len - 1 (255)." in md  # ... and only it
    assert "| `max_model_len` | `256` | `server` | GET /v1/models |" in md
    assert "| `short-long` | `livelock` |  | 12 | 9 |" in md
    assert "| `vllm_version` | `0.31.0` |" in md
    assert '"prompt_tokens_total": [\n    36.0,\n    36.0\n  ]' in md  # evidence from the recorded pages


@pytest.mark.parametrize("raw, expected", [
    pytest.param("<script>x</script>", "\\<script\\>x\\</script\\>", id="html"),
    pytest.param("a | b", "a \\| b", id="pipe-keeps-the-table"),
    pytest.param("line\nbreak", "line break", id="newline-keeps-the-row"),
    pytest.param("1) mid-line", "1) mid-line", id="mid-line-list-marker-kept"),
    pytest.param("max_model_len", "max_model_len", id="intraword-underscore-readable"),
    pytest.param("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))", id="link"),
])
def test_text_escapes(raw: str, expected: str) -> None:
    assert text(raw) == expected


@pytest.mark.parametrize("raw, expected", [
    pytest.param("# not a heading", "\\# not a heading", id="heading"),
    pytest.param("1) not a list", "1\\) not a list", id="ordered-list"),
    pytest.param("- not a bullet", "\\- not a bullet", id="bullet"),
    pytest.param("> not a quote", "\\> not a quote", id="quote"),
])
def test_text_at_line_start_cannot_open_a_block(raw: str, expected: str) -> None:
    assert text(raw, starts_line=True) == expected


@pytest.mark.parametrize("raw, expected", [
    pytest.param("plain", "`plain`", id="plain"),
    pytest.param("a`b", "``a`b``", id="backtick-inside"),
    pytest.param("`edge", "`` `edge ``", id="backtick-at-edge"),
    pytest.param("a|b", "`a\\|b`", id="pipe"),
])
def test_code_spans(raw: str, expected: str) -> None:
    assert code(raw) == expected


def test_hostile_model_name_stays_text(hostile_record: RunRecord) -> None:
    md = render(hostile_record, "md").decode()
    assert "`" + export_runs.served_model() + export_runs.SCRIPT + "`" in md  # inside a code span
    assert "model \\<script\\>window.\\__pwned = 1\\</script\\>" in md  # the summary line, escaped
    outside_code = re.sub(r"(?s)```.*?```|`[^`\n]*`", "", md)
    assert re.search(r"(?<!\\)<", outside_code) is None  # every '<' outside code is escaped


def test_an_interrupted_run_exports_as_interrupted_not_its_findings_worst(store) -> None:  # type: ignore[no-untyped-def]
    """Issue 32: a probe run stopped by the user was stored and exported as PASS ("interrupted: StopException").
    Its Markdown and HTML say INTERRUPTED, with what stopped it, whatever it found before."""
    from triage.findings import Finding, Status

    t = store.add_target("http://127.0.0.1:8000", "m", 256)
    run = store.start_run(t.id, "probe", {})
    store.add_finding(run.id, Finding("probe-target", Status.PASS, "the server answers"))
    store.finish_run(run.id, "interrupted: StopException", "interrupted")
    rec = store.get_run(run.id)
    md = render(rec, "md").decode()
    assert "**Verdict: INTERRUPTED** (1 pass): the run was interrupted (interrupted: StopException)" in md
    assert "Verdict: PASS" not in md
    html = render(rec, "html").decode()
    verdict_line = re.search(r'<p class="verdict">.*?</p>', html)
    assert verdict_line and "INTERRUPTED" in verdict_line.group(0).upper() and "PASS<" not in verdict_line.group(0)


def test_a_healthy_run_exports_what_it_checked_and_what_not(store) -> None:  # type: ignore[no-untyped-def]
    """Issue 32: a healthy verdict lists what was checked and what was not, in the export as on the page. The
    recorded 0.32.0 start-up log and the lab's command line, truncation 256: every finding passes."""
    from tests.sources import replay
    from triage.checklist import CheckOptions, run_checklist
    from triage.target import Target

    log = (replay.REAL / "0.32.0-tiny-qwen3-livelock" / "server.log").read_text()
    cmd = ("vllm serve /root/.cache/vllm-triage/lab/models/tiny-qwen3 --runner pooling --convert embed "
           "--max-model-len 256 --max-num-batched-tokens 128 --enable-chunked-prefill --enforce-eager")
    res = run_checklist(Target(cmdline=cmd, log_text=log, truncation=256), store,
                        options=CheckOptions(local_gpu=False))
    rec = store.get_run(res.run_id)
    assert rec.run.status == "pass"
    md = render(rec, "md").decode()
    section = md.split("## What this verdict covers\n", 1)[1].split("\n## ", 1)[0]
    assert "| checked | The set-up (version, backend, GPU memory, flags, chunked prefill, truncation) | read " \
           "from cmdline |" in section
    assert "| checked | The server's log | read from log |" in section
    for part in ("Real requests (conformance probes)", "The vectors", "Behaviour under load"):
        assert re.search(r"\| not checked \| " + re.escape(part), section), section
    html = render(rec, "html").decode()
    assert "<h2>What this verdict covers</h2>" in html and "<td>not checked</td>" in html
