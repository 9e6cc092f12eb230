"""The exported Markdown and HTML of a run say the same verdict and fix as the page that made it (issue 32).

Per scenario, on recorded real evidence (tests/fixtures/real: the lab's servers' own logs), the page runs under
AppTest with the real Services on a temp database (nothing faked): the Checklist page for a 0.32.0 reranker served
without --hf-overrides, the 0.31.0 livelock and a healthy 0.32.0; the Logs page for start-up failure logs (and a
generator-served log, whose fix has blocks). Then the run the page saved is exported (the Report page's service)
and read back as text: the status, the root cause, the fix in words and every copyable block must be the page's.
The same on real servers in real Chromium: tests/ui/test_e2e_live_gap.py.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.sources import replay
from triage.catalogue import POOLING_LIVELOCK, get
from triage.target import Target, Truncation
from ui.services import Services
from ui_apptest import no_exception, page, with_target

REAL = replay.REAL
STATUSES = ("pass", "warn", "fail", "unknown", "error")


def plain(text: str) -> str:
    """Markdown (the page's or the report's) as the words a reader sees: links, escapes and code marks gone."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\\(.)", r"\1", text).replace("`", "").replace("**", "")
    return re.sub(r"\s+", " ", text).strip()


def untag(text: str) -> str:
    return plain(html.unescape(re.sub(r"<[^>]+>", "", text)))


@dataclass(frozen=True)
class Said:
    """What one face says of a run: status, the headline (report) or banner (page), the first root cause, its
    fix in words, the copyable blocks."""

    status: str
    headline: str
    cause: str
    fix: str
    blocks: tuple[str, ...]


def markdown(text: str) -> Said:
    status, headline = re.search(r"\*\*Verdict: (\w+)\*\* \([^)]*\): (.*)", text).groups()
    fixes = text[text.find("## Fix: copy and paste"):text.find("## Findings")] if "## Fix: copy" in text else ""
    blocks = tuple(b.strip("\n") for b in re.findall(r"```[a-z]*\n(.*?)```", fixes, flags=re.S))
    group = re.search(r"### \w+: (.*?) \(`[^`]*`\): shown by", text)
    fix = re.search(r"shown by .*?\*\*Fix:\*\* (.*?)\n\n", text, flags=re.S)
    return Said(status.lower(), plain(headline), plain(group.group(1)) if group else "",
                plain(fix.group(1)) if fix else "", blocks)


def report_html(text: str) -> Said:
    status, headline = re.search(r'<p class="verdict">Verdict: <[^>]*>(\w+)</[^>]*> \([^)]*\): (.*?)</p>',
                                 text).groups()
    blocks = tuple(html.unescape(b) for b in re.findall(r'<pre class="fix"><code>(.*?)</code></pre>', text, re.S))
    group = re.search(r'<div class="group"><h3>.*?</span> (.*?) \(<code>', text)
    fix = re.search(r'<div class="group">.*?<p><b>Fix:</b> (.*?)</p>', text, flags=re.S)
    return Said(status.lower(), untag(headline), untag(group.group(1)) if group else "",
                untag(fix.group(1)) if fix else "", blocks)


def _banner(at) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """(status, the banner's words) of the page's verdict banner: the first alert that leads with a status."""
    for box in (*at.error, *at.warning, *at.success, *at.info):
        m = re.match(r"\*\*(\w+)\*\* — (.*)", box.value, flags=re.S)
        if m and m.group(1).lower() in STATUSES:
            return m.group(1).lower(), plain(m.group(2))
    raise AssertionError([b.value for b in (*at.error, *at.warning, *at.success)])


def checklist_page(svc: Services, target: Target) -> tuple[Said, int]:
    at = with_target("checklist", target, timeout=120).run()
    at.button(key="checklist.run").click().run()
    no_exception(at)
    status, banner = _banner(at)
    why = [e for e in at.expander if e.label == "Why, and the fix in words"]
    fix = plain(why[0].markdown[0].value) if why else ""
    result = at.session_state["checklist.result"]
    head = svc.headline(result["findings"], result["config"], target)
    return Said(status, banner, plain(head.cause) if status != "pass" else "", fix,
                tuple(c.value.strip("\n") for c in at.code)), int(result["run_id"])


def logs_page(svc: Services, log: Path) -> tuple[Said, int, str]:
    """The Logs page's verdict, its run, and all its Markdown as read (its root cause's card carries the fix)."""
    at = page("logs", timeout=120).run()
    at.text_area(key="logs.input.paste").set_value(log.read_text())
    at.button(key="logs.analyze").click().run()
    no_exception(at)
    status, banner = _banner(at)
    return (Said(status, banner, "", "", tuple(c.value.strip("\n") for c in at.code)),
            int(at.session_state["logs.result"].run_id), plain(" ".join(m.value for m in at.markdown)))


def exports(svc: Services, run_id: int) -> tuple[Said, Said]:
    md = svc.export(run_id, "md")[0].decode()
    page_html = svc.export(run_id, "html")[0].decode()
    return markdown(md), report_html(page_html)


def same_verdict(shown: Said, md: Said, htm: Said) -> None:
    """The report's verdict is the page's: one status, the page's root cause the report's first, the headline never a
    status other than the run's (issue 32: "FAIL …: pass: vLLM 0.32.0 carries the fix"), the same fix and blocks."""
    assert shown.status == md.status == htm.status, (shown.status, md.status, htm.status)
    assert md.headline == htm.headline
    said = md.headline.split(":", 1)[0].strip().lower()
    assert said not in STATUSES or said == md.status, md.headline
    if shown.status == "pass":
        assert not md.blocks and not htm.blocks and not shown.blocks
        return
    if shown.cause:
        assert shown.cause in shown.headline
        assert md.cause == htm.cause == shown.cause, (shown.cause, md.cause, htm.cause)
    else:  # the Logs page: its banner names the report's root cause (and leads with the log's own line)
        assert md.cause == htm.cause and (md.cause in shown.headline or md.headline in shown.headline), \
            (shown.headline, md.cause, md.headline)
    if shown.fix:
        assert md.fix == htm.fix == shown.fix, (shown.fix, md.fix, htm.fix)
    assert md.blocks == htm.blocks == shown.blocks[:len(md.blocks)], (shown.blocks, md.blocks, htm.blocks)


RERANK_LOG = REAL / "rerank" / "0.32.0-rerank-no-overrides" / "server.log"
LOG_031 = REAL / "0.31.0-tiny-qwen3-livelock" / "server.log"
LOG_032 = REAL / "0.32.0-tiny-qwen3-livelock" / "server.log"
CMD_031 = ("vllm serve /root/.cache/vllm-triage/lab/models/tiny-qwen3 --runner pooling --convert embed --host "
           "127.0.0.1 --port 8001 --max-model-len 256 --max-num-batched-tokens 128 --enable-chunked-prefill "
           "--enforce-eager")


@pytest.mark.parametrize("target, kind", [
    pytest.param(Target(log_text=RERANK_LOG.read_text()), "rerank", id="reranker-without-overrides-0.32.0"),
    pytest.param(Target(log_text=LOG_031.read_text(), truncation=Truncation.parse("256")), "livelock",
                 id="livelock-0.31.0-log"),
    pytest.param(Target(url="http://127.0.0.1:9", cmdline=CMD_031, log_text=LOG_031.read_text(),
                        truncation=Truncation.parse("256")), "livelock", id="livelock-0.31.0-url-and-cmdline"),
    pytest.param(Target(log_text=LOG_032.read_text(), truncation=Truncation.parse("255")), "healthy",
                 id="healthy-0.32.0"),
])
def test_checklist_and_its_exports_say_the_same(use_services, temp_db, target, kind) -> None:  # type: ignore[no-untyped-def]
    svc = use_services(Services(temp_db))
    shown, run_id = checklist_page(svc, target)
    md, htm = exports(svc, run_id)
    same_verdict(shown, md, htm)
    assert tuple(b.code.strip("\n") for b in svc.get_run(run_id).blocks) == md.blocks  # History's run view
    if kind == "rerank":  # the overrides, nothing of the livelock
        assert shown.cause == plain(get("reranker-overrides-missing").title)
        assert "--hf-overrides" in md.blocks[0] and not any("chunked-prefill" in b.split("\n")[0] or
                                                            "truncate_prompt_tokens" in b for b in md.blocks)
    elif kind == "livelock":  # ordered by risk: the client's change first, the restart after
        assert shown.cause == plain(POOLING_LIVELOCK.title) and shown.status == "fail"
        assert "truncate_prompt_tokens" in md.blocks[0] and "offline" not in " ".join(md.blocks)
        if target.cmdline:
            assert any(b.startswith("vllm serve ") and "--port 8001" in b for b in md.blocks)
    else:
        assert shown.status == md.status == "pass"


@pytest.mark.parametrize("log", [
    pytest.param(REAL / "startup" / "0.31.0-max-model-len-too-big" / "server.log", id="max-model-len-too-big-0.31.0"),
    pytest.param(REAL / "logs" / "0.32.0-tiny-qwen3-startup-killed.log", id="engine-killed-0.32.0"),
    pytest.param(REAL / "logs" / "0.32.0-tiny-qwen3-kv-too-small.log", id="kv-cache-too-small-0.32.0"),
    pytest.param(REAL / "startup" / "0.31.0-generate-runner" / "server.log", id="generate-runner-0.31.0"),
])
def test_a_start_up_log_and_its_exports_say_the_same(use_services, temp_db, log) -> None:  # type: ignore[no-untyped-def]
    svc = use_services(Services(temp_db))
    shown, run_id, words = logs_page(svc, log)
    md, htm = exports(svc, run_id)
    assert shown.status == "fail"
    same_verdict(shown, md, htm)
    assert md.fix and md.fix in words, (md.fix, words[:2000])  # the root cause's fix in words, as the page has it
    # History's view of the same run (the run view): the same blocks
    assert tuple(b.code.strip("\n") for b in svc.get_run(run_id).blocks) == md.blocks
    if "generate" in log.name or "generate" in str(log.parent):  # a stored log run's own config gives the blocks
        assert md.blocks and "--runner pooling" in md.blocks[0]
